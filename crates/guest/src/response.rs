//! Builders for the generated [`Response`] record.
//!
//! Constructors state the one thing a hook decides (`deny`, `block`, `context`, ...); `with_*`
//! methods add the rest. [`Response::none`] — the all-empty record — means "no opinion, carry on"
//! and is what a hook returns for events it does not care about.

use serde_json::Value;

use crate::{Permission, PermissionDecision, Response};

impl Response {
    /// No opinion: nothing to add, carry on. Equal to `Response::default()`.
    pub fn none() -> Self {
        Self::default()
    }

    /// `PreToolUse`/`PermissionRequest`: approve the call.
    ///
    /// This is an active approval — under Claude Code it skips the user's permission prompt. A
    /// guard that merely has no objection returns [`Response::none`] instead.
    pub fn allow() -> Self {
        Self::permission(PermissionDecision::Allow, None)
    }

    /// `PreToolUse`/`PermissionRequest`: refuse the call; `reason` is shown to the model.
    /// Across hooks, deny beats defer, ask and allow.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::permission(PermissionDecision::Deny, Some(reason.into()))
    }

    /// `PreToolUse`/`PermissionRequest`: ask the user; `reason` is shown to the user.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::permission(PermissionDecision::Ask, Some(reason.into()))
    }

    /// `PreToolUse`: leave the decision to the agent's own permission flow.
    pub fn defer() -> Self {
        Self::permission(PermissionDecision::Defer, None)
    }

    /// Block the action: the prompt (`UserPromptSubmit`), the tool call (`PreToolUse`, as a
    /// deny), or report a blocking error (`Stop`). `PreCompact` ignores it (observe-only).
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            block_reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Add `text` to the conversation (`UserPromptSubmit`, `SessionStart`, tool events, ...).
    pub fn context(text: impl Into<String>) -> Self {
        Self::default().with_context(text)
    }

    /// `Stop`: keep the turn going; `follow_up` becomes the next user message.
    ///
    /// Check [`Event::may_force_continue`](crate::Event::may_force_continue) first, or the hook
    /// can keep a turn alive until the host's re-entry cap cuts it.
    pub fn continue_with(follow_up: impl Into<String>) -> Self {
        Self {
            follow_up: Some(follow_up.into()),
            ..Self::default()
        }
    }

    /// Stop the agent after this hook (Claude Code's `continue: false`), with this reason.
    pub fn stop(reason: impl Into<String>) -> Self {
        Self {
            stop_reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// `PreToolUse`: replace the whole tool input with `input`, without approving the call
    /// (combine with [`Response::allow`] via [`Response::with_updated_input`] to approve too).
    pub fn updated_input(input: &Value) -> Self {
        Self::default().with_updated_input(input)
    }

    /// Adds one more context, after those already present.
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        self.additional_contexts.push(text.into());
        self
    }

    /// Sets the replacement tool input.
    pub fn with_updated_input(mut self, input: &Value) -> Self {
        self.updated_input = Some(input.to_string());
        self
    }

    /// Sets a warning shown to the user.
    pub fn with_system_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }

    /// Do not echo this hook's contexts into the final answer (`Stop`).
    pub fn with_suppressed_output(mut self) -> Self {
        self.suppress_output = true;
        self
    }

    /// Whether this is "no opinion" (every field empty).
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    fn permission(decision: PermissionDecision, reason: Option<String>) -> Self {
        Self {
            permission: Some(Permission { decision, reason }),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn none_is_default_and_empty() {
        assert!(Response::none().is_none());
        assert!(!Response::context("x").is_none());
    }

    #[test]
    fn permission_constructors() {
        let deny = Response::deny("dangerous");
        assert_eq!(
            deny.permission,
            Some(Permission {
                decision: PermissionDecision::Deny,
                reason: Some("dangerous".into())
            })
        );
        assert_eq!(
            Response::ask("sure?").permission.map(|p| p.decision),
            Some(PermissionDecision::Ask)
        );
        let allow = Response::allow();
        assert_eq!(
            allow.permission,
            Some(Permission {
                decision: PermissionDecision::Allow,
                reason: None
            })
        );
        assert_eq!(
            Response::defer().permission.map(|p| p.decision),
            Some(PermissionDecision::Defer)
        );
    }

    #[test]
    fn single_field_constructors() {
        assert_eq!(Response::block("no").block_reason.as_deref(), Some("no"));
        assert_eq!(Response::stop("done").stop_reason.as_deref(), Some("done"));
        assert_eq!(
            Response::continue_with("go on").follow_up.as_deref(),
            Some("go on")
        );
        assert_eq!(
            Response::updated_input(&json!({"command": "ls"}))
                .updated_input
                .as_deref(),
            Some(r#"{"command":"ls"}"#)
        );
    }

    #[test]
    fn chaining_keeps_order_and_fields() {
        let response = Response::allow()
            .with_updated_input(&json!({"command": "ls"}))
            .with_context("one")
            .with_context("two")
            .with_system_message("warn")
            .with_suppressed_output();
        assert_eq!(response.additional_contexts, ["one", "two"]);
        assert!(response.permission.is_some());
        assert!(response.updated_input.is_some());
        assert_eq!(response.system_message.as_deref(), Some("warn"));
        assert!(response.suppress_output);
    }
}
