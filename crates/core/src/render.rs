//! How the agent shows a verdict (SPEC §5, the main source's §5.7.5): the early-exit markers
//! `[Blocked by hook]` / `[Hook stopped]` and the `<user-prompt-submit-hook>` tags wrapping each
//! injected context. Markers are UserPromptSubmit's only; Stop never renders one.

use serde::{Deserialize, Serialize};

use crate::aggregate::UserPromptSubmitResult;
use crate::output::DEFAULT_STOP_REASON;

/// Prefix of a turn blocked by a hook.
pub const BLOCKED_MARKER: &str = "[Blocked by hook]";
/// Prefix of a turn a hook stopped.
pub const STOPPED_MARKER: &str = "[Hook stopped]";
/// The tag each injected context is wrapped in.
pub const PROMPT_HOOK_TAG: &str = "user-prompt-submit-hook";

/// What the agent does with the user's turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "text", rename_all = "snake_case")]
pub enum UserTurn {
    /// Return this `[Blocked by hook] …` string instead of calling the model.
    Blocked(String),
    /// Return this `[Hook stopped] …` string instead of calling the model.
    Stopped(String),
    /// Send this message (contexts in tags, then the user's message) to the model.
    Proceed(String),
}

impl UserTurn {
    /// The text, whatever the kind.
    pub fn text(&self) -> &str {
        match self {
            UserTurn::Blocked(t) | UserTurn::Stopped(t) | UserTurn::Proceed(t) => t,
        }
    }
}

/// Wraps one context in its tags.
pub fn wrap_context(ctx: &str) -> String {
    format!("<{PROMPT_HOOK_TAG}>\n{ctx}\n</{PROMPT_HOOK_TAG}>")
}

/// Renders the user's turn: a block wins over a stop; otherwise each context in its own tags
/// before the user's message.
pub fn render_user_turn(result: &UserPromptSubmitResult, user_message: &str) -> UserTurn {
    if let Some(msg) = &result.blocking_error {
        return UserTurn::Blocked(format!("{BLOCKED_MARKER} {msg}"));
    }
    if result.prevent_continuation {
        let reason = result.stop_reason.as_deref().unwrap_or(DEFAULT_STOP_REASON);
        return UserTurn::Stopped(format!("{STOPPED_MARKER} {reason}"));
    }
    let mut out = String::new();
    for ctx in &result.additional_contexts {
        out.push_str(&wrap_context(ctx));
        out.push('\n');
    }
    out.push_str(user_message);
    UserTurn::Proceed(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_context_in_its_own_tags() {
        let r = UserPromptSubmitResult {
            additional_contexts: vec!["one".into(), "two".into()],
            ..Default::default()
        };
        assert_eq!(
            render_user_turn(&r, "hi").text(),
            "<user-prompt-submit-hook>\none\n</user-prompt-submit-hook>\n<user-prompt-submit-hook>\ntwo\n</user-prompt-submit-hook>\nhi"
        );
    }

    #[test]
    fn markers() {
        let r = UserPromptSubmitResult {
            blocking_error: Some("secret".into()),
            prevent_continuation: true,
            ..Default::default()
        };
        assert_eq!(
            render_user_turn(&r, "hi"),
            UserTurn::Blocked("[Blocked by hook] secret".into())
        );
        let r = UserPromptSubmitResult {
            prevent_continuation: true,
            ..Default::default()
        };
        assert_eq!(
            render_user_turn(&r, "hi"),
            UserTurn::Stopped("[Hook stopped] Hook prevented continuation".into())
        );
    }
}
