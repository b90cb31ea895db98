//! A typed answer written back as Claude Code's hook output JSON — what `hookbox exec` prints so
//! Claude Code can run a sandboxed wasm hook as if it were a command hook. Every field maps to
//! the Claude Code key with the same meaning for that event (its hooks reference, §6).

use serde_json::{Map, Value, json};

use super::response::{HookResponse, PermissionDecision};
use crate::event::EventName;

/// The Claude Code JSON for `r` answering `event` (print it on stdout and exit 0).
pub fn to_claude_json(event: EventName, r: &HookResponse) -> Value {
    let mut out = Map::new();
    let mut specific = Map::new();
    let mut stop_reason = r.stop_reason.clone();
    let stops = r.continue_ == Some(false) || r.prevent_continuation;
    match event {
        EventName::PreToolUse | EventName::PreModelSwitch => {
            let decision = r
                .permission_decision
                .or(r.blocking_error.as_ref().map(|_| PermissionDecision::Deny));
            if let Some(d) = decision {
                specific.insert("permissionDecision".into(), json!(d.as_str()));
                let reason = r
                    .permission_decision_reason
                    .clone()
                    .or_else(|| r.blocking_error.clone());
                if let Some(reason) = reason {
                    specific.insert("permissionDecisionReason".into(), json!(reason));
                }
            }
            if let Some(u) = &r.updated_input {
                specific.insert("updatedInput".into(), u.clone());
            }
        }
        EventName::PermissionRequest => {
            let decision = r
                .permission_decision
                .or(r.blocking_error.as_ref().map(|_| PermissionDecision::Deny));
            if let Some(d) = decision
                .filter(|d| matches!(d, PermissionDecision::Allow | PermissionDecision::Deny))
            {
                let mut obj = Map::new();
                obj.insert("behavior".into(), json!(d.as_str()));
                if let Some(m) = r
                    .permission_decision_reason
                    .clone()
                    .or_else(|| r.blocking_error.clone())
                {
                    obj.insert("message".into(), json!(m));
                }
                if let Some(u) = &r.updated_input {
                    obj.insert("updatedInput".into(), u.clone());
                }
                specific.insert("decision".into(), Value::Object(obj));
            }
        }
        EventName::Stop | EventName::SubagentStop => {
            if let Some(f) = &r.follow_up {
                // Claude Code: `decision: block` on Stop means "keep going", reason = next prompt.
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(f));
            } else if let Some(b) = &r.blocking_error {
                // No Stop-level error in Claude Code: the nearest is ending with a reason.
                out.insert("continue".into(), json!(false));
                stop_reason = stop_reason.or_else(|| Some(b.clone()));
            }
        }
        name => {
            if let Some(b) = &r.blocking_error {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(b));
                if !name.can_block()
                    && name != EventName::PostToolUse
                    && name != EventName::PostToolUseFailure
                {
                    out.insert("systemMessage".into(), json!(b));
                }
            }
        }
    }
    if stops {
        out.insert("continue".into(), json!(false));
    }
    if let (Some(s), true) = (stop_reason, out.get("continue") == Some(&json!(false))) {
        out.insert("stopReason".into(), json!(s));
    }
    if !r.additional_contexts.is_empty() {
        specific.insert(
            "additionalContext".into(),
            json!(r.additional_contexts.join("\n\n")),
        );
    }
    if let Some(m) = &r.system_message {
        out.insert("systemMessage".into(), json!(m));
    }
    if r.suppress_output {
        out.insert("suppressOutput".into(), json!(true));
    }
    if !specific.is_empty() {
        let mut hso = Map::new();
        hso.insert("hookEventName".into(), json!(event.as_str()));
        hso.extend(specific);
        out.insert("hookSpecificOutput".into(), Value::Object(hso));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;
    use crate::output::Effect;

    /// Claude's answer read back by our own parser means the same thing as the typed answer.
    fn round_trip(event: EventName, r: &HookResponse) -> Effect {
        let v = to_claude_json(event, r);
        let back = HookResponse::from_json(&v).unwrap();
        Effect::from_response(&Event::new(event, "s", "/"), back)
    }

    #[test]
    fn pre_tool_use_deny_and_rewrite() {
        let r = HookResponse {
            blocking_error: Some("rm -rf /".into()),
            ..Default::default()
        };
        assert_eq!(
            to_claude_json(EventName::PreToolUse, &r),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "rm -rf /"}})
        );
        let r = HookResponse {
            updated_input: Some(json!({"command": "ls -la"})),
            ..Default::default()
        };
        let e = round_trip(EventName::PreToolUse, &r);
        assert_eq!(e.updated_input, Some(json!({"command": "ls -la"})));
        assert!(e.permission.is_none(), "a rewrite is not an approval");
    }

    #[test]
    fn stop_follow_up_continues_and_contexts_ride_along() {
        let r = HookResponse {
            follow_up: Some("answer now".into()),
            additional_contexts: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        let v = to_claude_json(EventName::Stop, &r);
        assert_eq!(v["decision"], "block");
        assert_eq!(v["reason"], "answer now");
        assert_eq!(v["hookSpecificOutput"]["additionalContext"], "a\n\nb");
        assert_eq!(
            round_trip(EventName::Stop, &r).follow_up.as_deref(),
            Some("answer now")
        );
    }

    #[test]
    fn prompt_block_and_stop() {
        let r = HookResponse {
            blocking_error: Some("secret".into()),
            ..Default::default()
        };
        assert_eq!(
            round_trip(EventName::UserPromptSubmit, &r).block.as_deref(),
            Some("secret")
        );
        let r = HookResponse {
            continue_: Some(false),
            stop_reason: Some("quota".into()),
            ..Default::default()
        };
        assert_eq!(
            to_claude_json(EventName::UserPromptSubmit, &r),
            json!({"continue": false, "stopReason": "quota"})
        );
    }

    #[test]
    fn empty_answer_is_an_empty_object() {
        assert_eq!(
            to_claude_json(EventName::PostToolUse, &HookResponse::default()),
            json!({})
        );
    }
}
