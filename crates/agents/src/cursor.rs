//! Cursor (cursor.com/docs/hooks, late-2026 text with `failClosed` and `loop_limit`).
//!
//! Payload: snake_case with camelCase event names; the session is `conversation_id`
//! (`session_id` on the session events); the folder is the tool event's `cwd`, else the first of
//! `workspace_roots`. Besides the general `preToolUse`/`postToolUse` (tool types `Shell`,
//! `Read`, `Write`, `Grep`, `Delete`, `Task`, MCP tools) Cursor has per-kind hooks —
//! `beforeShellExecution` (`command`), `beforeMCPExecution` (`tool_input` as a **JSON string**),
//! `beforeReadFile` (`file_path`), `afterFileEdit` (`edits`) — read here as the same hookbox
//! events with Claude Code's tool names and inputs. `tool_output` and `result_json` are JSON
//! text.
//!
//! Answer: top-level snake_case keys — `permission` (`allow`/`deny`, `ask` only on the shell and
//! MCP hooks: on `preToolUse` it is accepted but not enforced, and on `beforeReadFile` absent,
//! so an `ask` is a deny there), `agent_message` (the reason the model sees), `user_message`,
//! `updated_input` (`preToolUse` only), `additional_context` (`postToolUse`, `sessionStart`),
//! `continue` (`beforeSubmitPrompt`), `followup_message` (`stop`, `subagentStop`). A JSON object
//! is always printed and the exit code is 0: with the hook's `failClosed: true` (which `hookbox
//! install` sets when a rule fails closed) anything else — an empty answer, a non-zero exit —
//! would block.

use serde_json::{Map, Value, json};

use hookbox_core::event::Event;
use hookbox_core::output::PermissionDecision;

use super::fields::{Flat, Payload, event_named, finish, native_event};
use super::plan::{Plan, ask_as_deny, proceed_after_failure, rewrite_as_deny};
use super::tools::{canonical_tool, mcp_name, to_agent_keys};
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

pub(super) fn parse(map: Map<String, Value>, opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let mut p = Payload::new(Agent::Cursor, map);
    let native_name = native_event(&mut p, opts.event.as_deref(), "hook_event_name", "")?;
    let name = event_named(Agent::Cursor, &native_name)?;
    let mut native = Native::new(Agent::Cursor, native_name.clone());
    let mut flat = Flat::default();
    let session = match p.str("session_id")? {
        Some(s) => Some(s),
        None => p.str("conversation_id")?,
    };
    flat.set_opt("session_id", session);
    flat.set_opt("transcript_path", p.str("transcript_path")?);
    let cwd = match p.str("cwd")? {
        Some(c) => Some(c),
        None => match p.map.get("workspace_roots") {
            Some(Value::Array(roots)) => roots.first().and_then(Value::as_str).map(str::to_owned),
            _ => None,
        },
    };
    flat.set_opt("cwd", cwd);
    let tool =
        |flat: &mut Flat, native: &mut Native, sent: String, canonical: String, input: Value| {
            flat.set("tool_name", canonical);
            flat.set("tool_input", input);
            native.tool = Some(sent);
        };
    match native_name.as_str() {
        "preToolUse" | "postToolUse" | "postToolUseFailure" => {
            let sent = p.req_str("tool_name")?;
            let (input, _) = p.input("tool_input")?.unwrap_or((json!({}), false));
            let canonical = canonical_tool(&sent).to_owned();
            tool(&mut flat, &mut native, sent, canonical, input);
            flat.set_opt("tool_use_id", p.str("tool_use_id")?);
            if native_name == "postToolUse" {
                flat.set_opt("tool_response", p.output("tool_output")?);
            }
            if native_name == "postToolUseFailure" {
                flat.set_opt("error", p.str("error_message")?);
                flat.set_opt("is_interrupt", p.bool("is_interrupt")?);
            }
        }
        "beforeShellExecution" | "afterShellExecution" => {
            let command = p.req_str("command")?;
            tool(
                &mut flat,
                &mut native,
                "Shell".into(),
                "Bash".into(),
                json!({ "command": command }),
            );
            if let Some(output) = p.str("output")? {
                flat.set("tool_response", json!({ "stdout": output }));
            }
        }
        "beforeMCPExecution" | "afterMCPExecution" => {
            let sent = p.req_str("tool_name")?;
            let (input, _) = p.input("tool_input")?.unwrap_or((json!({}), false));
            let canonical = match p.map.get("mcp_server_name").and_then(Value::as_str) {
                Some(server) => mcp_name(server, &sent),
                None => sent.clone(),
            };
            tool(&mut flat, &mut native, sent, canonical, input);
            flat.set_opt("tool_response", p.output("result_json")?);
        }
        "beforeReadFile" => {
            let path = p.req_str("file_path")?;
            tool(
                &mut flat,
                &mut native,
                "Read".into(),
                "Read".into(),
                json!({ "file_path": path }),
            );
        }
        "afterFileEdit" => {
            let path = p.req_str("file_path")?;
            let edits = p.take("edits").unwrap_or_else(|| json!([]));
            tool(
                &mut flat,
                &mut native,
                "Write".into(),
                "Edit".into(),
                edit_input(path, edits),
            );
        }
        "beforeSubmitPrompt" => flat.set_opt("prompt", p.str("prompt")?),
        "stop" | "subagentStop" => {
            let loops = p.count("loop_count")?.unwrap_or(0);
            native.reentries = loops;
            flat.set("stop_hook_active", loops > 0);
            if native_name == "subagentStop" {
                flat.set_opt("agent_type", p.str("subagent_type")?);
                flat.set_opt("last_assistant_message", p.str("summary")?);
                flat.set_opt("agent_transcript_path", p.str("agent_transcript_path")?);
            }
        }
        "subagentStart" => {
            flat.set_opt("agent_id", p.str("subagent_id")?);
            flat.set_opt("agent_type", p.str("subagent_type")?);
        }
        "sessionEnd" => flat.set_opt("reason", p.str("reason")?),
        "preCompact" => flat.set_opt("trigger", p.str("trigger")?),
        _ => {}
    }
    flat.keep(p.rest());
    let event = finish(Agent::Cursor, name, flat, opts)?;
    Ok(Incoming { event, native })
}

/// An edit's input in Claude Code's shape: `file_path` and `edits`, plus `old_string` and
/// `new_string` when there is exactly one edit (what an `Edit` hook reads).
pub(super) fn edit_input(path: String, edits: Value) -> Value {
    let mut input = json!({ "file_path": path });
    if let Some([only]) = edits.as_array().map(Vec::as_slice) {
        for key in ["old_string", "new_string"] {
            if let Some(v) = only.get(key) {
                input[key] = v.clone();
            }
        }
    }
    input["edits"] = edits;
    input
}

pub(super) fn render(native: &Native, _event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let mut out = Map::new();
    let drop_contexts = |notes: &mut Vec<String>| {
        if !plan.contexts.is_empty() {
            notes.push(format!(
                "{} context(s) dropped: Cursor takes no additional context on {}",
                plan.contexts.len(),
                native.event
            ));
        }
    };
    let deny = |out: &mut Map<String, Value>, reason: String| {
        out.insert("permission".into(), json!("deny"));
        out.insert("agent_message".into(), json!(reason));
        out.insert("user_message".into(), json!(reason));
    };
    match native.event.as_str() {
        "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" => {
            let rewrites = native.event == "preToolUse";
            let asks = matches!(
                native.event.as_str(),
                "beforeShellExecution" | "beforeMCPExecution"
            );
            if plan.denies() {
                deny(&mut out, plan.deny_reason());
            } else if plan.stops {
                notes.push("a hook stopped the session; Cursor cannot stop from this hook, so the call is denied".into());
                deny(&mut out, plan.stop_text());
            } else if plan.permission == Some(PermissionDecision::Ask) {
                if asks {
                    out.insert("permission".into(), json!("ask"));
                    if let Some(r) = &plan.reason {
                        out.insert("agent_message".into(), json!(r));
                        out.insert("user_message".into(), json!(r));
                    }
                } else {
                    notes.push(format!("a hook asked for confirmation; Cursor does not enforce `ask` on {}, so the call is denied", native.event));
                    deny(&mut out, ask_as_deny(Agent::Cursor, plan.reason.as_deref()));
                }
            } else if let Some(u) = &plan.updated_input {
                if rewrites {
                    out.insert("updated_input".into(), to_agent_keys(&native.renamed, u));
                    if plan.permission == Some(PermissionDecision::Allow) {
                        out.insert("permission".into(), json!("allow"));
                    }
                } else {
                    notes.push(format!("a hook rewrote the input; Cursor takes a rewrite only on preToolUse, not {}, so the call is denied", native.event));
                    deny(
                        &mut out,
                        rewrite_as_deny(
                            Agent::Cursor,
                            u,
                            &format!("takes no rewrite on {}", native.event),
                        ),
                    );
                }
            } else if plan.permission == Some(PermissionDecision::Allow) {
                out.insert("permission".into(), json!("allow"));
            }
            drop_contexts(&mut notes);
        }
        "postToolUse" => {
            if let Some(c) = plan.context_text() {
                out.insert("additional_context".into(), json!(c));
            }
        }
        "sessionStart" => {
            if let Some(c) = plan.context_text() {
                out.insert("additional_context".into(), json!(c));
            }
            if plan.stops {
                notes.push(
                    "a hook asked to stop; Cursor does not stop a session from sessionStart".into(),
                );
            }
        }
        "beforeSubmitPrompt" => {
            if let Some(b) = plan
                .block
                .clone()
                .or_else(|| plan.stops.then(|| plan.stop_text()))
            {
                out.insert("continue".into(), json!(false));
                out.insert("user_message".into(), json!(b));
            }
            drop_contexts(&mut notes);
        }
        "stop" | "subagentStop" => {
            if let Some(f) = &plan.follow_up {
                out.insert("followup_message".into(), json!(f));
            }
            drop_contexts(&mut notes);
        }
        _ => drop_contexts(&mut notes),
    }
    if let Some(m) = &plan.system_message {
        out.entry("user_message").or_insert_with(|| json!(m));
    }
    if out.is_empty() && !failures.open.is_empty() {
        return proceed_after_failure(Agent::Cursor, &failures.open).with_notes(notes);
    }
    Answer::json(&Value::Object(out), 0).with_notes(notes)
}
