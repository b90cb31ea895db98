//! How the agent shows a verdict (SPEC §5, the main source's §5.7.5): the early-exit markers
//! `[Blocked by hook]` / `[Hook stopped]` and the `<user-prompt-submit-hook>` tags wrapping each
//! injected context, for a prompt and for a denied tool call; Stop never renders one. Hooks'
//! `systemMessage`s are for the user: they follow a marker, one per line, and never go to the
//! model with a prompt that proceeds.

use serde::{Deserialize, Serialize};

use crate::aggregate::{PreToolUseResult, UserPromptSubmitResult};
use crate::output::{DEFAULT_STOP_REASON, PermissionDecision};

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

/// `head`, then each system message on its own line.
fn with_system_messages(head: String, system_messages: &[String]) -> String {
    let mut out = head;
    for m in system_messages {
        out.push('\n');
        out.push_str(m);
    }
    out
}

/// Renders the user's turn: a block wins over a stop (each followed by the hooks' system
/// messages); otherwise each context in its own tags before the user's message.
pub fn render_user_turn(result: &UserPromptSubmitResult, user_message: &str) -> UserTurn {
    if let Some(msg) = &result.blocking_error {
        return UserTurn::Blocked(with_system_messages(
            format!("{BLOCKED_MARKER} {msg}"),
            &result.system_messages,
        ));
    }
    if result.prevent_continuation {
        let reason = result.stop_reason.as_deref().unwrap_or(DEFAULT_STOP_REASON);
        return UserTurn::Stopped(with_system_messages(
            format!("{STOPPED_MARKER} {reason}"),
            &result.system_messages,
        ));
    }
    let mut out = String::new();
    for ctx in &result.additional_contexts {
        out.push_str(&wrap_context(ctx));
        out.push('\n');
    }
    out.push_str(user_message);
    UserTurn::Proceed(out)
}

/// What the agent shows for a tool call's verdict: `[Blocked by hook] {reason}` when denied
/// (the bare marker when the deny gave no reason),
/// `[Hook stopped] {reason}` when a hook stopped the agent, each followed by the hooks' system
/// messages; the system messages alone when the call goes ahead; `None` when there is nothing
/// to show.
pub fn render_tool_verdict(result: &PreToolUseResult) -> Option<String> {
    let head = if result.prevent_continuation {
        let reason = result.stop_reason.as_deref().unwrap_or(DEFAULT_STOP_REASON);
        Some(format!("{STOPPED_MARKER} {reason}"))
    } else if result.decision == Some(PermissionDecision::Deny) {
        // A deny without a reason (hookify explains only in systemMessage) shows the bare marker.
        Some(match result.reason.as_deref() {
            Some(reason) => format!("{BLOCKED_MARKER} {reason}"),
            None => BLOCKED_MARKER.to_owned(),
        })
    } else {
        None
    };
    match head {
        Some(h) => Some(with_system_messages(h, &result.system_messages)),
        None if result.system_messages.is_empty() => None,
        None => Some(result.system_messages.join("\n")),
    }
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

    #[test]
    fn system_messages_follow_markers_and_never_reach_the_model() {
        let mut r = UserPromptSubmitResult {
            blocking_error: Some("no".into()),
            system_messages: vec!["why one".into(), "why two".into()],
            ..Default::default()
        };
        assert_eq!(
            render_user_turn(&r, "hi").text(),
            "[Blocked by hook] no\nwhy one\nwhy two"
        );
        r.blocking_error = None;
        assert_eq!(render_user_turn(&r, "hi"), UserTurn::Proceed("hi".into()));
        let t = PreToolUseResult {
            decision: Some(PermissionDecision::Deny),
            blocking_error: Some("Blocked by hook".into()),
            system_messages: vec!["rm -rf is not allowed here".into()],
            ..Default::default()
        };
        assert_eq!(
            render_tool_verdict(&t).as_deref(),
            Some("[Blocked by hook]\nrm -rf is not allowed here")
        );
        let t = PreToolUseResult {
            reason: Some("no".into()),
            ..t
        };
        assert_eq!(
            render_tool_verdict(&t).as_deref(),
            Some("[Blocked by hook] no\nrm -rf is not allowed here")
        );
        assert_eq!(render_tool_verdict(&PreToolUseResult::default()), None);
    }
}
