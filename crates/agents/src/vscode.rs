//! VS Code agent hooks (microsoft/vscode-docs `docs/agents/reference/hooks-reference.md` @
//! 6d3b01a5; microsoft/vscode-copilot-chat `hookExecutor.ts` @ 7333e59e).
//!
//! Payload: a camelCase envelope (`hookEventName`, `sessionId` when known, `timestamp`) around
//! snake_case event fields (`tool_name`, `tool_input`, `tool_use_id`, `tool_response` as a
//! string); VS Code's tool names (`run_in_terminal`, `create_file`, `replace_string_in_file`,
//! `read_file`) with camelCase input keys (`filePath`), mapped to Claude Code's. `cwd` is sent
//! only when the hook entry sets one (the hook then runs there; otherwise in the user's home
//! folder). The snake_case envelope (`hook_event_name`, `session_id`) of Copilot's PascalCase
//! hooks is read too.
//!
//! Answer: Claude Code's shape — `hookSpecificOutput.permissionDecision` (`allow`/`deny`/`ask`;
//! the most restrictive wins), `permissionDecisionReason`, `updatedInput`, `additionalContext`;
//! top-level `decision: "block"` + `reason` on `SubagentStop` (and, per the docs, inside
//! `hookSpecificOutput` on `Stop`: both are written), `continue: false` + `stopReason`,
//! `systemMessage`. Matchers are ignored by VS Code, so hookbox does the matching. Exit 0
//! always. The same answer serves Copilot's PascalCase hooks: their top-level keys
//! (`permissionDecision`, `modifiedArgs`, `decision`, `behavior`) are written beside.

use serde_json::{Map, Value, json};

use hookbox_core::event::{Event, EventName};
use hookbox_core::output::PermissionDecision;

use super::fields::{Flat, Payload, event_named, finish};
use super::plan::{Plan, proceed_after_failure, rewrite_as_deny, withheld_prompt};
use super::tools::{canonical_tool, to_agent_keys, to_claude_keys};
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

/// Takes the first of `keys` present (camelCase envelope first, snake_case second).
fn either(p: &mut Payload, keys: [&str; 2]) -> Result<Option<String>, AgentError> {
    match p.str(keys[0])? {
        Some(v) => Ok(Some(v)),
        None => p.str(keys[1]),
    }
}

pub(super) fn parse(map: Map<String, Value>, opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let mut p = Payload::new(Agent::VsCode, map);
    let named = either(&mut p, ["hookEventName", "hook_event_name"])?;
    let native_name = match (opts.event.as_deref(), named) {
        (Some(g), Some(n)) if g != n => {
            return Err(AgentError::EventMismatch {
                agent: Agent::VsCode.display_name(),
                field: "hookEventName",
                given: g.to_owned(),
                payload: n,
            });
        }
        (_, Some(n)) => n,
        (Some(g), None) => g.to_owned(),
        (None, None) => {
            return Err(AgentError::NoEvent {
                agent: Agent::VsCode.display_name(),
                field: "hookEventName",
                hint: "",
            });
        }
    };
    p.event.clone_from(&native_name);
    // Copilot's PascalCase hooks, answered here too, have a few events VS Code lacks.
    let name = event_named(Agent::VsCode, &native_name)?;
    let mut native = Native::new(Agent::VsCode, native_name);
    let mut flat = Flat::default();
    flat.set_opt("session_id", either(&mut p, ["sessionId", "session_id"])?);
    flat.set_opt(
        "transcript_path",
        either(&mut p, ["transcript_path", "transcriptPath"])?,
    );
    flat.set_opt("cwd", p.str("cwd")?);
    if let Some(sent) = p.str("tool_name")? {
        let canonical = canonical_tool(&sent).to_owned();
        let (mut input, _) = p.input("tool_input")?.unwrap_or((json!({}), false));
        native.renamed = to_claude_keys(Agent::VsCode, &canonical, &mut input);
        flat.set("tool_name", canonical);
        flat.set("tool_input", input);
        native.tool = Some(sent);
    } else if matches!(name, EventName::PreToolUse | EventName::PostToolUse) {
        p.req_str("tool_name")?;
    }
    flat.set_opt("tool_use_id", p.str("tool_use_id")?);
    flat.set_opt(
        "tool_response",
        p.take("tool_response").or_else(|| p.take("tool_result")),
    );
    if matches!(name, EventName::Stop | EventName::SubagentStop) {
        let active = p.bool("stop_hook_active")?.unwrap_or(false);
        native.reentries = u32::from(active);
        flat.set("stop_hook_active", active);
    }
    flat.keep(p.rest());
    let event = finish(Agent::VsCode, name, flat, opts)?;
    Ok(Incoming { event, native })
}

pub(super) fn render(native: &Native, event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let mut out = Map::new();
    let mut specific = Map::new();
    let context = |specific: &mut Map<String, Value>, out: &mut Map<String, Value>| {
        if let Some(c) = plan.context_text() {
            specific.insert("additionalContext".into(), json!(c));
            // Copilot's PascalCase hooks read it at the top level.
            out.insert("additionalContext".into(), json!(c));
        }
    };
    let drop_contexts = |notes: &mut Vec<String>| {
        if !plan.contexts.is_empty() {
            notes.push(format!(
                "{} context(s) dropped: {} takes no additional context on {}",
                plan.contexts.len(),
                native.agent.display_name(),
                native.event
            ));
        }
    };
    match event.name {
        EventName::PreToolUse => {
            let decision = if plan.denies() {
                Some((PermissionDecision::Deny, Some(plan.deny_reason())))
            } else if plan.stops {
                Some((PermissionDecision::Deny, Some(plan.stop_text())))
            } else {
                plan.permission
                    .filter(|d| *d != PermissionDecision::Defer)
                    .map(|d| (d, plan.reason.clone()))
            };
            let denied = matches!(decision, Some((PermissionDecision::Deny, _)));
            if let Some((d, reason)) = decision {
                for m in [&mut specific, &mut out] {
                    m.insert("permissionDecision".into(), json!(d.as_str()));
                    if let Some(r) = &reason {
                        m.insert("permissionDecisionReason".into(), json!(r));
                    }
                }
            }
            if let Some(u) = plan.updated_input.as_ref().filter(|_| !denied) {
                let theirs = to_agent_keys(&native.renamed, u);
                specific.insert("updatedInput".into(), theirs.clone());
                out.insert("modifiedArgs".into(), theirs);
            }
            context(&mut specific, &mut out);
        }
        EventName::PermissionRequest => {
            if let Some(reason) = plan
                .denies()
                .then(|| plan.deny_reason())
                .or_else(|| plan.stops.then(|| plan.stop_text()))
            {
                out.insert("behavior".into(), json!("deny"));
                out.insert("message".into(), json!(reason));
            } else if let Some(u) = &plan.updated_input {
                notes.push("a hook rewrote the input; no rewrite is taken on PermissionRequest, so the call is denied".into());
                out.insert("behavior".into(), json!("deny"));
                out.insert(
                    "message".into(),
                    json!(rewrite_as_deny(
                        native.agent,
                        u,
                        "takes no rewrite on PermissionRequest"
                    )),
                );
            } else if plan.permission == Some(PermissionDecision::Allow) {
                out.insert("behavior".into(), json!("allow"));
            }
            drop_contexts(&mut notes);
        }
        EventName::PostToolUse | EventName::SessionStart | EventName::SubagentStart => {
            context(&mut specific, &mut out);
        }
        EventName::UserPromptSubmit => {
            if let Some(b) = &plan.block {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(b));
                if native.agent == Agent::Copilot {
                    // Copilot CLI takes no block on a prompt, but a replacement of it.
                    out.insert("modifiedPrompt".into(), json!(withheld_prompt(b)));
                }
            }
            match plan.context_text() {
                // Copilot CLI adds a top-level `additionalContext` to the model's input (its
                // PascalCase `UserPromptSubmit` is what `hookbox install` writes); VS Code takes
                // none here.
                Some(c) if native.agent == Agent::Copilot && plan.block.is_none() => {
                    out.insert("additionalContext".into(), json!(c));
                }
                _ => drop_contexts(&mut notes),
            }
        }
        EventName::Stop | EventName::SubagentStop => {
            if let Some(f) = &plan.follow_up {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(f));
                if event.name == EventName::Stop {
                    specific.insert("decision".into(), json!("block"));
                    specific.insert("reason".into(), json!(f));
                }
            }
            drop_contexts(&mut notes);
        }
        _ => drop_contexts(&mut notes),
    }
    if plan.stops {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(plan.stop_text()));
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
    if out.is_empty() && !failures.open.is_empty() {
        return proceed_after_failure(Agent::VsCode, &failures.open).with_notes(notes);
    }
    Answer::json(&Value::Object(out), 0).with_notes(notes)
}
