//! Qwen Code (`@qwen-code/qwen-code` 0.24.4, driven in the real-agent suite; its hooks page,
//! QwenLM/qwen-code `docs/users/features/hooks.md`).
//!
//! Qwen Code has Claude Code's hook system: Claude Code's payload (read by `super::claude`) with
//! Gemini CLI's tool names (`run_shell_command`, `write_file`, `edit`, …, mapped to Claude Code's
//! by the alias table), and Claude Code's answer — with one gap: on `PreToolUse` it never reads
//! `updatedInput`, so a rewrite would run the *original* call. A rewrite is therefore a deny
//! naming the input the hook wanted. Everything else is Claude Code's answer.

use serde_json::json;

use hookbox_core::aggregate::Verdict;
use hookbox_core::event::{Event, EventName};
use hookbox_core::output::PermissionDecision;

use super::plan::{Plan, rewrite_as_deny};
use super::{Agent, Answer, Failures};

pub(super) fn render(event: &Event, verdict: &Verdict, failures: &Failures) -> Answer {
    let plan = Plan::of(verdict);
    if event.name == EventName::PreToolUse
        && !plan.denies()
        && !plan.stops
        && let Some(u) = &plan.updated_input
    {
        let reason = rewrite_as_deny(Agent::Qwen, u, "does not apply a hook's rewrite");
        let mut out = json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }});
        if let Some(m) = &plan.system_message {
            out["systemMessage"] = json!(m);
        }
        return Answer::json(&out, 0).with_notes(vec![
            "a hook rewrote the input; Qwen Code does not apply a rewrite, so the call is denied"
                .into(),
        ]);
    }
    if plan.permission == Some(PermissionDecision::Defer) {
        // Not in Qwen Code's schema: said as nothing, its own flow applies.
        return super::claude::render(event, &without_defer(verdict), failures);
    }
    super::claude::render(event, verdict, failures)
}

/// `verdict` without a `defer` decision.
fn without_defer(verdict: &Verdict) -> Verdict {
    let mut v = verdict.clone();
    if let Verdict::PreToolUse(r) = &mut v
        && r.decision == Some(PermissionDecision::Defer)
    {
        r.decision = None;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::aggregate::PreToolUseResult;

    #[test]
    fn a_rewrite_is_a_deny_naming_it() {
        let ev = Event::new(EventName::PreToolUse, "s", "/w");
        let v = Verdict::PreToolUse(PreToolUseResult {
            decision: Some(PermissionDecision::Allow),
            updated_input: Some(json!({"command": "git push --force-with-lease"})),
            ..PreToolUseResult::default()
        });
        let a = render(&ev, &v, &Failures::default());
        let out: serde_json::Value = serde_json::from_str(&a.stdout).unwrap();
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(reason.contains("--force-with-lease"), "{reason}");
        assert!(reason.contains("Qwen Code"), "{reason}");
    }
}
