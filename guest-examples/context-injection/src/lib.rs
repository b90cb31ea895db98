//! Per-turn project context (recipe 1): on every `UserPromptSubmit`, adds the rule's
//! `config.context` to the conversation, ahead of the user's message.
//!
//! A prompt hook does the same with no wasm at all; this guest is the starting point for
//! context that depends on the prompt or the mounted project.

use hookbox_guest::{Event, Hook, Response, host};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// The text to add, e.g. "Project ATLAS. Prefer the design docs under docs/atlas/."
    context: String,
}

#[derive(Default)]
struct ContextInjection;

impl Hook for ContextInjection {
    fn on_user_prompt_submit(&self, _event: &Event) -> Result<Response, String> {
        let Config { context } = host::config()?;
        // A rule that injects nothing is misconfigured: say so instead of passing silently.
        if context.trim().is_empty() {
            return Err("config.context is empty".to_owned());
        }
        Ok(Response::context(context))
    }
}

hookbox_guest::export_hook!(ContextInjection);
