//! The answer of Claude Code's http-hook endpoint: the aggregated verdict as one
//! [`HookResponse`], written with [`to_claude_json`] — the JSON `hookbox exec` prints for a
//! typed hook, so Claude Code reads it exactly as a command hook's stdout (its hooks reference
//! §6). Nothing to say is `{}`: Claude Code then proceeds as with an empty 2xx answer.

use hookbox_core::aggregate::Verdict;
use hookbox_core::event::EventName;
use hookbox_core::output::{HookResponse, PermissionDecision, to_claude_json};
use serde_json::Value;

/// What Claude Code should do, as the JSON it reads.
pub fn claude_code_json(event: EventName, verdict: &Verdict) -> Value {
    to_claude_json(event, &claude_response(verdict))
}

/// The verdict as one hook response.
pub fn claude_response(verdict: &Verdict) -> HookResponse {
    let mut r = HookResponse::default();
    match verdict {
        Verdict::UserPromptSubmit(v) => {
            r.blocking_error.clone_from(&v.blocking_error);
            stop(&mut r, v.prevent_continuation, &v.stop_reason);
            // A blocked prompt is erased: contexts for it would reach nobody.
            if v.blocking_error.is_none() && !v.prevent_continuation {
                r.additional_contexts.clone_from(&v.additional_contexts);
            }
        }
        Verdict::PreToolUse(v) => {
            r.permission_decision = v.decision;
            r.permission_decision_reason = match v.decision {
                Some(PermissionDecision::Deny) => v.reason.clone().or(v.blocking_error.clone()),
                _ => v.reason.clone(),
            };
            r.updated_input.clone_from(&v.updated_input);
            r.additional_contexts.clone_from(&v.additional_contexts);
            stop(&mut r, v.prevent_continuation, &v.stop_reason);
        }
        Verdict::Stop(v) => {
            if v.force_continue {
                r.follow_up.clone_from(&v.follow_up_message);
            } else {
                r.blocking_error.clone_from(&v.blocking_error);
            }
            stop(&mut r, v.stop_reason.is_some(), &v.stop_reason);
            r.additional_contexts.clone_from(&v.additional_contexts);
            r.system_message.clone_from(&v.system_message);
            r.suppress_output = v.suppress_output;
        }
        // Observe-only (SPEC §5): compaction goes ahead whatever the hooks said.
        Verdict::PreCompact(_) => {}
        Verdict::Event(v) => {
            r.blocking_error.clone_from(&v.blocking_error);
            stop(&mut r, v.prevent_continuation, &v.stop_reason);
            r.additional_contexts.clone_from(&v.additional_contexts);
            if !v.system_messages.is_empty() {
                r.system_message = Some(v.system_messages.join("\n"));
            }
        }
    }
    r
}

fn stop(r: &mut HookResponse, stops: bool, reason: &Option<String>) {
    if stops {
        r.continue_ = Some(false);
        r.stop_reason.clone_from(reason);
    }
}

#[cfg(test)]
mod tests {
    use hookbox_core::aggregate::{
        Outcome, PreCompactResult, PreToolUseResult, StopHookResult, UserPromptSubmitResult,
    };
    use serde_json::json;

    use super::*;

    #[test]
    fn nothing_to_say_is_an_empty_object() {
        let v = Verdict::PreToolUse(PreToolUseResult::default());
        assert_eq!(claude_code_json(EventName::PreToolUse, &v), json!({}));
        let v = Verdict::PreCompact(PreCompactResult {
            ignored_block: Some("no".into()),
            ..PreCompactResult::default()
        });
        assert_eq!(claude_code_json(EventName::PreCompact, &v), json!({}));
    }

    #[test]
    fn a_deny_is_claude_codes_permission_decision() {
        let v = Verdict::PreToolUse(PreToolUseResult {
            decision: Some(PermissionDecision::Deny),
            reason: Some("rm -rf /".into()),
            blocking_error: Some("rm -rf /".into()),
            ..PreToolUseResult::default()
        });
        assert_eq!(
            claude_code_json(EventName::PreToolUse, &v),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "rm -rf /"}})
        );
    }

    #[test]
    fn a_blocked_prompt_blocks_and_drops_its_contexts() {
        let v = Verdict::UserPromptSubmit(UserPromptSubmitResult {
            blocking_error: Some("no secrets".into()),
            additional_contexts: vec!["ctx".into()],
            ..UserPromptSubmitResult::default()
        });
        assert_eq!(
            claude_code_json(EventName::UserPromptSubmit, &v),
            json!({"decision": "block", "reason": "no secrets"})
        );
        let v = Verdict::UserPromptSubmit(UserPromptSubmitResult {
            additional_contexts: vec!["a".into(), "b".into()],
            ..UserPromptSubmitResult::default()
        });
        assert_eq!(
            claude_code_json(EventName::UserPromptSubmit, &v),
            json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "a\n\nb"}})
        );
    }

    #[test]
    fn a_stop_that_continues_is_decision_block() {
        let v = Verdict::Stop(StopHookResult {
            blocking_error: None,
            force_continue: true,
            follow_up_message: Some("answer please".into()),
            additional_contexts: vec![],
            stop_reason: None,
            suppress_output: false,
            system_message: None,
            messages: vec![],
            matched_rule_count: 1,
            outcome: Outcome::Continue,
        });
        assert_eq!(
            claude_code_json(EventName::Stop, &v),
            json!({"decision": "block", "reason": "answer please"})
        );
    }
}
