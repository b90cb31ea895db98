//! Effects: what one hook's answer means for its event, before aggregation. Both the exit-code
//! tables (`exit_codes`) and typed wasm answers end here, so every runner feeds one pipeline.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::failure::HookFailure;
use super::response::{HookResponse, PermissionDecision, TopDecision};
use crate::event::{Event, EventName};
use crate::rule::FailMode;

/// The default `[Hook stopped]` reason when a hook stops without saying why (main source).
pub const DEFAULT_STOP_REASON: &str = "Hook prevented continuation";

/// The follow-up sent when a Stop hook blocks with exit 2 and prints nothing (main source).
pub const DEFAULT_STOP_FOLLOW_UP: &str = "Stop hook blocked via exit 2";

/// What one hook run asks for.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Effect {
    /// Text to add to the conversation, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<String>,
    /// Block the action (prompt, tool call, …) with this reason; `Stop`: a blocking error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// Stop the agent (`continue: false` / `preventContinuation`) with this reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// A permission decision (`PreToolUse`, `PermissionRequest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionDecision>,
    /// Why, for the permission decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_reason: Option<String>,
    /// Replacement tool input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// `Stop`: keep the turn going with this as the next user message (force-continue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<String>,
    /// Do not echo contexts into the final answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suppress_output: bool,
    /// A message for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// A non-blocking problem (non-zero exit, failed hook under fail-open, ignored field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The classified failure, when the hook failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<HookFailure>,
}

impl Effect {
    /// True when the hook asked for nothing at all.
    pub fn is_empty(&self) -> bool {
        self == &Effect::default()
    }

    /// Blocks `event` with `reason` in the way that event understands blocking: a deny for
    /// permission events (`PreToolUse`, `PermissionRequest`, `PreModelSwitch`), a blocking error
    /// elsewhere.
    pub(crate) fn set_block(&mut self, event: EventName, reason: String) {
        if event.takes_permission_decision() {
            self.permission = Some(PermissionDecision::Deny);
            self.permission_reason = Some(reason);
        } else {
            self.block = Some(reason);
        }
    }

    /// What a failed hook means under `mode`: fail-open makes it a warning, fail-closed a block.
    pub fn from_failure(failure: HookFailure, mode: FailMode, event: EventName) -> Effect {
        let text = format!("hook failed ({}): {}", failure.class, failure.message);
        let mut e = Effect::default();
        match mode {
            FailMode::Allow => e.warnings.push(text),
            FailMode::Block => e.set_block(event, text),
        }
        e.failure = Some(failure);
        e
    }

    /// Maps a structured answer onto `event` (Claude Code's and the main source's semantics).
    pub fn from_response(event: &Event, r: HookResponse) -> Effect {
        let name = event.name;
        let mut e = Effect {
            contexts: r.additional_contexts,
            updated_input: r.updated_input,
            suppress_output: r.suppress_output,
            system_message: r.system_message,
            follow_up: r.follow_up,
            ..Effect::default()
        };
        if let Some(d) = r.permission_decision {
            if name.takes_permission_decision() {
                e.permission = Some(d);
                e.permission_reason = r
                    .permission_decision_reason
                    .clone()
                    .or_else(|| r.reason.clone());
            } else {
                e.warnings.push(format!("permissionDecision `{}` is ignored on {name}: only PreToolUse, PermissionRequest and PreModelSwitch take one", d.as_str()));
            }
        }
        if r.continue_ == Some(false) || r.prevent_continuation {
            e.stop = Some(
                r.stop_reason
                    .clone()
                    .unwrap_or_else(|| DEFAULT_STOP_REASON.to_owned()),
            );
        }
        if let Some(b) = r.blocking_error {
            e.set_block(name, b);
        }
        match r.decision {
            Some(TopDecision::Block) => {
                let reason = r.reason.clone();
                match name {
                    // Claude Code: `decision: block` on Stop keeps the turn going; reason required.
                    EventName::Stop | EventName::SubagentStop => match reason {
                        Some(reason) => e.follow_up = Some(reason),
                        None => e.warnings.push(
                            "`decision: \"block\"` on Stop needs a `reason` (the follow-up message) — ignored".into(),
                        ),
                    },
                    // The tool already ran: the reason is feedback next to its result.
                    EventName::PostToolUse | EventName::PostToolUseFailure | EventName::PostToolBatch => {
                        e.contexts.push(reason.unwrap_or_else(|| "Blocked by hook".into()));
                    }
                    n if n.can_block() || n == EventName::PreCompact || n == EventName::PermissionRequest => {
                        // A hook's permissionDecision wins over its deprecated `decision`.
                        if e.permission.is_none()
                            || !matches!(n, EventName::PreToolUse | EventName::PreModelSwitch)
                        {
                            e.set_block(n, reason.unwrap_or_else(|| "Blocked by hook".into()));
                        }
                    }
                    n => e.warnings.push(format!("`decision: \"block\"` is ignored on {n}: it cannot block")),
                }
            }
            Some(TopDecision::Approve)
                if matches!(name, EventName::PreToolUse | EventName::PreModelSwitch)
                    && e.permission.is_none() =>
            {
                e.permission = Some(PermissionDecision::Allow);
                e.permission_reason = r.reason;
            }
            _ => {}
        }
        if let Some(s) = r.stop_reason.filter(|_| e.stop.is_none()) {
            // A stopReason without continue:false is informational only.
            e.warnings.push(format!(
                "`stopReason` without `continue: false` is ignored: {s}"
            ));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::FailureClass;
    use serde_json::json;

    fn ev(name: EventName) -> Event {
        Event::new(name, "s", "/")
    }

    fn resp(v: Value) -> HookResponse {
        HookResponse::from_json(&v).unwrap()
    }

    #[test]
    fn decision_block_means_what_the_event_means() {
        let e = Effect::from_response(
            &ev(EventName::Stop),
            resp(json!({"decision": "block", "reason": "go on"})),
        );
        assert_eq!(e.follow_up.as_deref(), Some("go on"));
        assert!(e.block.is_none());
        let e = Effect::from_response(
            &ev(EventName::UserPromptSubmit),
            resp(json!({"decision": "block", "reason": "no"})),
        );
        assert_eq!(e.block.as_deref(), Some("no"));
        let e = Effect::from_response(
            &ev(EventName::PreToolUse),
            resp(json!({"decision": "block", "reason": "no"})),
        );
        assert_eq!(e.permission, Some(PermissionDecision::Deny));
        let e = Effect::from_response(
            &ev(EventName::PostToolUse),
            resp(json!({"decision": "block", "reason": "lint"})),
        );
        assert_eq!(e.contexts, vec!["lint"]);
        let e = Effect::from_response(
            &ev(EventName::SessionStart),
            resp(json!({"decision": "block"})),
        );
        assert_eq!(e.warnings.len(), 1);
    }

    #[test]
    fn continue_false_stops_with_default_reason() {
        let e = Effect::from_response(
            &ev(EventName::UserPromptSubmit),
            resp(json!({"continue": false})),
        );
        assert_eq!(e.stop.as_deref(), Some(DEFAULT_STOP_REASON));
        let e = Effect::from_response(
            &ev(EventName::UserPromptSubmit),
            resp(json!({"preventContinuation": true, "stopReason": "later"})),
        );
        assert_eq!(e.stop.as_deref(), Some("later"));
    }

    #[test]
    fn blocking_error_on_pre_tool_use_is_a_deny() {
        let e = Effect::from_response(
            &ev(EventName::PreToolUse),
            resp(json!({"blockingError": "rm -rf /"})),
        );
        assert_eq!(e.permission, Some(PermissionDecision::Deny));
        assert_eq!(e.permission_reason.as_deref(), Some("rm -rf /"));
    }

    #[test]
    fn failures_follow_the_fail_mode() {
        let f = HookFailure::new(FailureClass::Timeout, "killed after 2s");
        let open = Effect::from_failure(f.clone(), FailMode::Allow, EventName::PreToolUse);
        assert!(open.permission.is_none() && open.warnings.len() == 1);
        let closed = Effect::from_failure(f, FailMode::Block, EventName::PreToolUse);
        assert_eq!(closed.permission, Some(PermissionDecision::Deny));
        assert_eq!(closed.failure.unwrap().class, FailureClass::Timeout);
    }
}
