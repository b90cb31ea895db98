//! Gemini CLI (google-gemini/gemini-cli @ 5411f113, `docs/hooks/reference.md`,
//! `packages/core/src/hooks/{types,hookRunner,hookAggregator}.ts`, `scheduler/hook-utils.ts`).
//!
//! Payload: Claude Code's flat snake_case envelope with Gemini's own event names (`BeforeTool`,
//! `AfterAgent`, …) and tool names (`run_shell_command`, …; MCP tools `mcp_<server>_<tool>`,
//! whose server and tool `mcp_context` names apart). `AfterTool` fires on success and error
//! alike; with `tool_response.error` it is hookbox's `PostToolUseFailure`.
//!
//! Answer: a JSON object on stdout with a **top-level** `decision` (`deny` blocks; `ask`
//! forces the confirmation prompt — a deny with the reason when Gemini CLI runs headless
//! ([`super::Native::headless`]), where nobody can confirm and it would wait, then exit with
//! nothing done and the model never told; `allow` proceeds normally and is not a grant) and `reason`;
//! `hookSpecificOutput.tool_input` is shallow-merged over the tool's arguments (it cannot delete
//! a key), `hookSpecificOutput.additionalContext` adds context on `AfterTool`, `BeforeAgent`
//! and `SessionStart`; `AfterAgent`'s `deny` + `reason` sends the reason as a new prompt.
//!
//! Gemini reads **stderr as the answer when stdout is empty**, and any text with an exit code of
//! 2 or more is a deny, so hookbox always prints a JSON object on stdout and exits 0: stderr is
//! then never read as a verdict.

use serde_json::{Map, Value, json};

use hookbox_core::event::{Event, EventName};
use hookbox_core::output::PermissionDecision;

use super::fields::{Flat, Payload, event_named, finish, native_event};
use super::plan::{Plan, proceed_after_failure, rewrite_as_deny};
use super::tools::{canonical_tool, mcp_name};
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

pub(super) fn parse(map: Map<String, Value>, opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let mut p = Payload::new(Agent::Gemini, map);
    let native_name = native_event(&mut p, opts.event.as_deref(), "hook_event_name", "")?;
    let mut name = event_named(Agent::Gemini, &native_name)?;
    let mut native = Native::new(Agent::Gemini, native_name);
    let mut flat = Flat::default();
    flat.set_opt("session_id", p.str("session_id")?);
    flat.set_opt("transcript_path", p.str("transcript_path")?);
    flat.set_opt("cwd", p.str("cwd")?);
    match name {
        EventName::PreToolUse | EventName::PostToolUse => {
            let tool = p.req_str("tool_name")?;
            let (input, _) = p.input("tool_input")?.unwrap_or((json!({}), false));
            let canonical = match p.map.get("mcp_context") {
                Some(Value::Object(ctx)) => match (
                    ctx.get("server_name").and_then(Value::as_str),
                    ctx.get("tool_name").and_then(Value::as_str),
                ) {
                    (Some(server), Some(t)) => mcp_name(server, t),
                    _ => canonical_tool(&tool).to_owned(),
                },
                _ => canonical_tool(&tool).to_owned(),
            };
            flat.set("tool_name", canonical);
            flat.set("tool_input", input);
            native.tool = Some(tool);
            if name == EventName::PostToolUse {
                let response = p.take("tool_response").unwrap_or(Value::Null);
                let error = match response.get("error") {
                    Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                    Some(Value::Object(o)) => Some(
                        o.get("message")
                            .and_then(Value::as_str)
                            .map_or_else(|| Value::Object(o.clone()).to_string(), str::to_owned),
                    ),
                    _ => None,
                };
                if let Some(error) = error {
                    name = EventName::PostToolUseFailure;
                    flat.set("error", error);
                }
                flat.set("tool_response", response);
            }
        }
        EventName::UserPromptSubmit => flat.set_opt("prompt", p.str("prompt")?),
        EventName::Stop => {
            flat.set_opt("last_assistant_message", p.str("prompt_response")?);
            let active = p.bool("stop_hook_active")?.unwrap_or(false);
            native.reentries = u32::from(active);
            flat.set("stop_hook_active", active);
        }
        EventName::SessionStart => flat.set_opt("source", p.str("source")?),
        EventName::SessionEnd => flat.set_opt("reason", p.str("reason")?),
        EventName::PreCompact => flat.set_opt("trigger", p.str("trigger")?),
        EventName::Notification => {
            flat.set_opt("notification_type", p.str("notification_type")?);
            flat.set_opt("message", p.str("message")?);
        }
        _ => {}
    }
    flat.keep(p.rest());
    let event = finish(Agent::Gemini, name, flat, opts)?;
    Ok(Incoming { event, native })
}

pub(super) fn render(native: &Native, event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let mut out = Map::new();
    let mut specific = Map::new();
    let contexts = |specific: &mut Map<String, Value>| {
        if let Some(c) = plan.context_text() {
            specific.insert("additionalContext".into(), json!(c));
        }
    };
    let drop_contexts = |notes: &mut Vec<String>| {
        if !plan.contexts.is_empty() {
            notes.push(format!(
                "{} context(s) dropped: Gemini CLI takes no additional context on {}",
                plan.contexts.len(),
                native.event
            ));
        }
    };
    match event.name {
        EventName::PreToolUse => {
            let deny = |out: &mut Map<String, Value>, reason: String| {
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(reason));
            };
            if plan.denies() {
                deny(&mut out, plan.deny_reason());
            } else if plan.stops {
                // The loop stops; the call must not run on the way out.
                deny(&mut out, plan.stop_text());
            } else if plan.permission == Some(PermissionDecision::Ask) && native.headless {
                // Headless, Gemini CLI waits for a confirmation nobody can give and exits 0
                // with nothing done and the model never told: a deny tells it why.
                notes.push("a hook asked for confirmation; Gemini CLI runs headless, so nobody can confirm and the call is denied".into());
                let why = plan
                    .reason
                    .as_deref()
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or("a hook asks for confirmation");
                deny(
                    &mut out,
                    format!(
                        "{why} (hookbox: a hook asked to confirm this call, and Gemini CLI runs headless, so nobody can; it is denied — run it yourself if you approve)"
                    ),
                );
            } else if plan.permission == Some(PermissionDecision::Ask) {
                out.insert("decision".into(), json!("ask"));
                if let Some(r) = &plan.reason {
                    out.insert("reason".into(), json!(r));
                }
            } else if let Some(u) = &plan.updated_input {
                match mergeable(event.tool_input(), u) {
                    Ok(()) => {
                        specific.insert("tool_input".into(), u.clone());
                        if plan.permission == Some(PermissionDecision::Allow) {
                            out.insert("decision".into(), json!("allow"));
                        }
                    }
                    Err(missing) => {
                        notes.push(format!("a hook's rewrite removes `{missing}`; Gemini CLI can only merge a rewrite into the original input, so the call is denied"));
                        deny(
                            &mut out,
                            rewrite_as_deny(
                                Agent::Gemini,
                                u,
                                &format!(
                                    "can only merge a rewrite into the original input and cannot remove `{missing}`"
                                ),
                            ),
                        );
                    }
                }
            } else if plan.permission == Some(PermissionDecision::Allow) {
                out.insert("decision".into(), json!("allow"));
                if let Some(r) = &plan.reason {
                    out.insert("reason".into(), json!(r));
                }
            }
            drop_contexts(&mut notes);
        }
        EventName::PostToolUse | EventName::PostToolUseFailure => contexts(&mut specific),
        EventName::UserPromptSubmit => {
            if let Some(b) = &plan.block {
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(b));
            }
            contexts(&mut specific);
        }
        EventName::Stop => {
            if let Some(f) = &plan.follow_up {
                // AfterAgent: a deny sends the reason back as a new prompt.
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(f));
            } else if let Some(b) = &plan.block {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(b));
            }
            drop_contexts(&mut notes);
        }
        EventName::SessionStart => contexts(&mut specific),
        _ => drop_contexts(&mut notes),
    }
    if plan.stops {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(plan.stop_text()));
    }
    if let Some(m) = &plan.system_message {
        out.insert("systemMessage".into(), json!(m));
    }
    if plan.suppress_output {
        out.insert("suppressOutput".into(), json!(true));
    }
    if !specific.is_empty() {
        let mut hso = Map::new();
        hso.insert("hookEventName".into(), json!(native.event));
        hso.extend(specific);
        out.insert("hookSpecificOutput".into(), Value::Object(hso));
    }
    if out.is_empty() && !failures.open.is_empty() {
        return proceed_after_failure(Agent::Gemini, &failures.open).with_notes(notes);
    }
    Answer::json(&Value::Object(out), 0).with_notes(notes)
}

/// Whether `updated` can be expressed as a shallow merge over `original`: it must keep every key
/// (a merge cannot delete one). Returns the first key it drops.
fn mergeable(original: Option<&Value>, updated: &Value) -> Result<(), String> {
    match (original, updated) {
        (Some(Value::Object(o)), Value::Object(u)) => {
            match o.keys().find(|k| !u.contains_key(*k)) {
                Some(k) => Err(k.clone()),
                None => Ok(()),
            }
        }
        (_, Value::Object(_)) => Ok(()),
        _ => Err("the input object".into()),
    }
}
