//! Codex CLI: Claude Code's payload (read by `super::claude`) and Claude Code's answer keys, but
//! a strict answer schema. Codex parses its hooks' output with `deny_unknown_fields` and marks
//! a hook *failed* — discarding the whole answer, a deny included, and running the call — when
//! it sees a field it does not support for the event (openai/codex `codex-rs/hooks`
//! `output_parser.rs`, `schema.rs`; its hooks page). So this renderer writes only what Codex
//! accepts on each event, and maps the rest to the safe side:
//!
//! - `ask` (unsupported on `PreToolUse`, #28437) → a deny with the reason;
//! - a bare `allow` (not a grant in Codex) → dropped, Codex's own approval flow applies;
//! - a rewrite is applied only with `permissionDecision: "allow"` and a `{"command": …}` input
//!   for `Bash`/`apply_patch` (PR #20527); a rewrite without an allow, or of the wrong shape,
//!   would make Codex run the *original* call (#46664) → a deny naming the rewrite;
//! - `continue: false` on `PreToolUse`/`PermissionRequest` (unsupported there) → a deny;
//! - contexts on events without `additionalContext` → dropped, with a note.
//!
//! A deny's `permissionDecisionReason` is never empty (Codex fails a deny without one).

use serde_json::{Map, Value, json};

use hookbox_core::event::{Event, EventName};
use hookbox_core::output::PermissionDecision;

use super::plan::{Plan, ask_as_deny, proceed_after_failure, rewrite_as_deny};
use super::{Agent, Answer, Failures, Native};

/// What a PreToolUse/PermissionRequest answer decides, after the safe-side mapping.
enum Decision {
    None,
    Allow(Option<Value>),
    Deny(String),
}

/// The permission decision Codex can carry for `plan`, with notes on what changed.
fn decide(native: &Native, plan: &Plan, notes: &mut Vec<String>, rewrites: bool) -> Decision {
    if plan.denies() {
        return Decision::Deny(plan.deny_reason());
    }
    if plan.stops {
        notes.push("a hook stopped the session; Codex does not take `continue: false` on this event (it would discard the answer), so the call is denied instead".into());
        return Decision::Deny(plan.stop_text());
    }
    if plan.permission == Some(PermissionDecision::Ask) {
        if !rewrites {
            // PermissionRequest fires as Codex is about to ask: its own prompt is the ask.
            return Decision::None;
        }
        notes.push(
            "a hook asked for confirmation; Codex has no `ask`, so the call is denied".into(),
        );
        return Decision::Deny(ask_as_deny(Agent::Codex, plan.reason.as_deref()));
    }
    if let Some(u) = &plan.updated_input {
        if !rewrites {
            notes.push("a hook rewrote the input; Codex takes no rewrite on this event, so the call is denied".into());
            return Decision::Deny(rewrite_as_deny(Agent::Codex, u, "takes no rewrite here"));
        }
        if plan.permission != Some(PermissionDecision::Allow) {
            notes.push("a hook rewrote the input without allowing the call; Codex applies a rewrite only with an allow (and would run the original otherwise), so the call is denied".into());
            return Decision::Deny(rewrite_as_deny(
                Agent::Codex,
                u,
                "applies a rewrite only together with an approval, which no hook gave",
            ));
        }
        let needs_command = matches!(native.tool.as_deref(), Some("Bash" | "apply_patch"));
        if needs_command && !u.get("command").is_some_and(Value::is_string) {
            notes.push("a hook rewrote the input without a `command` string; Codex would reject it and run the original, so the call is denied".into());
            return Decision::Deny(rewrite_as_deny(
                Agent::Codex,
                u,
                "needs `{\"command\": \"…\"}` for this tool",
            ));
        }
        return Decision::Allow(Some(u.clone()));
    }
    if plan.permission == Some(PermissionDecision::Allow) {
        if rewrites {
            notes.push("a hook allowed the call; a bare allow is not a grant in Codex, so its own approval flow applies".into());
            return Decision::None;
        }
        return Decision::Allow(None);
    }
    Decision::None
}

pub(super) fn render(native: &Native, event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let mut out = Map::new();
    let mut specific = Map::new();
    let drop_contexts = |notes: &mut Vec<String>| {
        if !plan.contexts.is_empty() {
            notes.push(format!(
                "{} context(s) dropped: Codex takes no additional context on {}",
                plan.contexts.len(),
                event.name
            ));
        }
    };
    let contexts = |specific: &mut Map<String, Value>| {
        if let Some(c) = plan.context_text() {
            specific.insert("additionalContext".into(), json!(c));
        }
    };
    match event.name {
        EventName::PreToolUse => {
            match decide(native, plan, &mut notes, true) {
                Decision::Deny(r) => {
                    specific.insert("permissionDecision".into(), json!("deny"));
                    specific.insert("permissionDecisionReason".into(), json!(r));
                }
                Decision::Allow(u) => {
                    specific.insert("permissionDecision".into(), json!("allow"));
                    if let Some(r) = &plan.reason {
                        specific.insert("permissionDecisionReason".into(), json!(r));
                    }
                    if let Some(u) = u {
                        specific.insert("updatedInput".into(), u);
                    }
                }
                Decision::None => {}
            }
            contexts(&mut specific);
        }
        EventName::PermissionRequest => {
            let decision = match decide(native, plan, &mut notes, false) {
                Decision::Deny(r) => Some(json!({"behavior": "deny", "message": r})),
                Decision::Allow(_) => Some(json!({"behavior": "allow"})),
                Decision::None => None,
            };
            if let Some(d) = decision {
                specific.insert("decision".into(), d);
            }
            drop_contexts(&mut notes);
        }
        EventName::UserPromptSubmit => {
            if let Some(b) = &plan.block {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(b));
            }
            stop(&mut out, plan);
            contexts(&mut specific);
        }
        EventName::PostToolUse => {
            stop(&mut out, plan);
            contexts(&mut specific);
        }
        EventName::Stop | EventName::SubagentStop => {
            if let Some(f) = &plan.follow_up {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(f));
            } else if let Some(b) = &plan.block {
                // No Stop-level error in Codex: the nearest is ending with a reason.
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(b));
            }
            stop(&mut out, plan);
            drop_contexts(&mut notes);
        }
        EventName::SessionStart | EventName::SubagentStart => {
            if event.name == EventName::SessionStart {
                stop(&mut out, plan);
            } else if plan.stops {
                notes.push(
                    "a hook asked to stop; Codex does not stop a subagent from starting".into(),
                );
            }
            contexts(&mut specific);
        }
        EventName::PreCompact | EventName::PostCompact => {
            stop(&mut out, plan);
            drop_contexts(&mut notes);
        }
        _ => drop_contexts(&mut notes),
    }
    if let Some(m) = &plan.system_message {
        out.insert("systemMessage".into(), json!(m));
    }
    if !specific.is_empty() {
        let mut hso = Map::new();
        hso.insert("hookEventName".into(), json!(event.name.as_str()));
        hso.extend(specific);
        out.insert("hookSpecificOutput".into(), Value::Object(hso));
    }
    if out.is_empty() {
        if !failures.open.is_empty() {
            return proceed_after_failure(Agent::Codex, &failures.open).with_notes(notes);
        }
        // Empty stdout: success, nothing happens.
        return Answer::default().with_notes(notes);
    }
    Answer::json(&Value::Object(out), 0).with_notes(notes)
}

/// `continue: false` and its reason, where the event honours it.
fn stop(out: &mut Map<String, Value>, plan: &Plan) {
    if plan.stops {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(plan.stop_text()));
    }
}
