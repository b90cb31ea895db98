//! Claude Code: hookbox's own event model, so its payload is read as it is and the answer is
//! Claude Code's hook output JSON (its hooks reference §5–6). This is also the answer of
//! `hookbox serve`'s Claude Code http-hook endpoint: an http hook's 2xx JSON body is read
//! exactly as a command hook's stdout.
//!
//! Codex sends the same payload (plus `turn_id` and `model`) and is parsed here too; its
//! answer is stricter (`super::codex`).
//!
//! Exit codes: 0 with the JSON, which decides. A hook that failed closed also exits 2 with the
//! reason on stderr where Claude Code's exit 2 blocks the action (not on `Stop`, where exit 2
//! would mean "keep going"), so even a Claude Code that ignores the JSON on exit 2 (before
//! 2.1.x) blocks. A fail-open failure with nothing else to say exits 1: Claude Code's
//! non-blocking error, which shows the user that the hook failed and proceeds.

use serde_json::{Map, Value, json};

use hookbox_core::aggregate::Verdict;
use hookbox_core::event::{Event, EventName};
use hookbox_core::output::{HookResponse, PermissionDecision, to_claude_json};

use super::limits;
use super::plan::{Plan, proceed_after_failure};
use super::tools::canonical_tool;
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

/// Reads a Claude Code (or Codex, or Qwen Code) payload: the flat snake_case object of Claude
/// Code's hooks reference §2, its event in `hook_event_name` (or `--event`). A `tool_input`
/// sent as a string holding a JSON object is read as that object (a hook must not see
/// `{"value": "{\"command\": …}"}` and miss the command); Codex's and Qwen Code's own tool names
/// become Claude Code's (`exec_command`, `run_shell_command` → `Bash`).
pub(super) fn parse(
    agent: Agent,
    mut map: Map<String, Value>,
    opts: &ParseOptions,
) -> Result<Incoming, AgentError> {
    if let Some(Value::String(text)) = map.get("tool_input")
        && let Some(read) = limits::read_embedded(agent, "tool_input", text)
    {
        let v = read?;
        if v.is_object() {
            map.insert("tool_input".into(), v);
        }
    }
    let given = match &opts.event {
        None => None,
        Some(n) => Some(
            n.parse::<EventName>()
                .map_err(|_| AgentError::UnknownEvent {
                    agent: agent.display_name(),
                    name: n.clone(),
                    why: format!("is not a {} event", agent.display_name()),
                })?,
        ),
    };
    let tool = map
        .get("tool_name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(sent) = &tool
        && agent != Agent::Claude
    {
        let canonical = canonical_tool(sent);
        if canonical != sent {
            map.insert("tool_name".into(), Value::String(canonical.to_owned()));
        }
    }
    let event = Event::from_payload(
        given,
        Value::Object(map),
        &opts.default_session,
        &opts.default_cwd,
    )
    .map_err(|e| AgentError::event(agent, e))?;
    let mut native = Native::new(agent, event.name.as_str());
    native.tool = tool;
    native.reentries = u32::from(event.stop_data().is_some_and(|s| s.stop_hook_active));
    Ok(Incoming { event, native })
}

/// The verdict as one Claude Code hook response.
///
/// A stop (`continue: false`) on a permission event is also a deny: Claude Code 2.1.328 runs
/// the tool call and ends the session only afterwards (seen in the real-agent suite), so the
/// call itself must be refused with the stop's reason.
pub fn claude_response(verdict: &Verdict) -> HookResponse {
    let mut p = Plan::of(verdict);
    if matches!(verdict, Verdict::PreToolUse(_))
        && p.stops
        && p.permission != Some(PermissionDecision::Deny)
    {
        p.permission = Some(PermissionDecision::Deny);
        p.reason = Some(p.stop_text());
        p.updated_input = None;
    }
    HookResponse {
        continue_: p.stops.then_some(false),
        stop_reason: if p.stops { p.stop_reason } else { None },
        suppress_output: p.suppress_output,
        system_message: p.system_message,
        permission_decision: p.permission,
        permission_decision_reason: p.reason,
        updated_input: p.updated_input,
        additional_contexts: p.contexts,
        blocking_error: p.block,
        follow_up: p.follow_up,
        ..HookResponse::default()
    }
}

/// What Claude Code should do, as the JSON it reads. Nothing to say is `{}`: Claude Code then
/// proceeds as with an empty answer.
pub fn claude_code_json(event: EventName, verdict: &Verdict) -> Value {
    to_claude_json(event, &claude_response(verdict))
}

/// Whether Claude Code's exit 2 blocks `event` the way hookbox's block does.
fn exit_two_blocks(event: EventName) -> bool {
    event.can_block() && !matches!(event, EventName::Stop | EventName::SubagentStop)
}

pub(super) fn render(event: &Event, verdict: &Verdict, failures: &Failures) -> Answer {
    let out = claude_code_json(event.name, verdict);
    let blocks = verdict.outcome() == hookbox_core::Outcome::Block;
    if blocks && !failures.closed.is_empty() && exit_two_blocks(event.name) {
        return Answer {
            stdout: out.to_string(),
            stderr: failures.closed.join("\n"),
            exit_code: 2,
            stderr_is_reason: true,
            notes: Vec::new(),
        };
    }
    if out == json!({}) && !failures.open.is_empty() {
        return proceed_after_failure(Agent::Claude, &failures.open);
    }
    Answer::json(&out, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::aggregate::{
        Outcome, PreCompactResult, PreToolUseResult, StopHookResult, UserPromptSubmitResult,
    };

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
    fn a_stop_on_a_tool_call_also_denies_it() {
        let v = Verdict::PreToolUse(PreToolUseResult {
            prevent_continuation: true,
            stop_reason: Some("halt".into()),
            ..PreToolUseResult::default()
        });
        let out = claude_code_json(EventName::PreToolUse, &v);
        assert_eq!(out["continue"], false);
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            out["hookSpecificOutput"]["permissionDecisionReason"],
            "halt"
        );
    }

    #[test]
    fn a_deny_keeps_the_hooks_system_message() {
        // hookify explains a deny only in its systemMessage: the user must still see it.
        let v = Verdict::PreToolUse(PreToolUseResult {
            decision: Some(PermissionDecision::Deny),
            reason: Some("no".into()),
            system_messages: vec!["rule X matched".into()],
            ..PreToolUseResult::default()
        });
        assert_eq!(
            claude_code_json(EventName::PreToolUse, &v)["systemMessage"],
            "rule X matched"
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
