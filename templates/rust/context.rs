//! {{name}}: context for every prompt (UserPromptSubmit): adds the rule's `config.context` to the
//! conversation, ahead of the user's message. The text lives in hooks/hooks.json, so changing it
//! needs no rebuild.

use hookbox_guest::{Event, Hook, Response, host};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// The text to add.
    context: String,
}

#[derive(Default)]
struct Context;

impl Hook for Context {
    fn on_user_prompt_submit(&self, _event: &Event) -> Result<Response, String> {
        let Config { context } = host::config()?;
        // A rule that adds nothing is misconfigured: say so (a failed hook) instead of passing.
        if context.trim().is_empty() {
            return Err("config.context is empty".to_owned());
        }
        Ok(Response::context(context))
    }
}

hookbox_guest::export_hook!(Context);
