//! Windsurf Cascade hooks (docs.windsurf.com/windsurf/cascade/hooks, the twelve-event text).
//!
//! Payload: `agent_action_name` (the event), `trajectory_id` (the conversation),
//! `execution_id`, `timestamp`, and a `tool_info` object per event — `command_line` and `cwd`
//! for commands, `file_path` and `edits` for reads and writes, `mcp_server_name`,
//! `mcp_tool_name`, `mcp_tool_arguments` for MCP calls, `user_prompt`, `response`. Windsurf has no
//! tool names: the event says the kind, read here as Claude Code's `Bash`, `Read`, `Edit` and
//! `mcp__<server>__<tool>`.
//!
//! Answer: **exit codes only**. Exit 2 blocks the five pre-hooks (`pre_user_prompt`,
//! `pre_read_code`, `pre_write_code`, `pre_run_command`, `pre_mcp_tool_use`) and shows stderr to
//! the agent; any other code proceeds; stdout is never read. So a deny, a blocked prompt, an
//! `ask` and a rewrite are all exit 2 with the reason (an `ask` and a rewrite say what they
//! were); an allow, contexts and a Stop continuation cannot be said and are dropped with a note.

use serde_json::{Map, Value, json};

use hookbox_core::event::Event;
use hookbox_core::output::PermissionDecision;

use super::cursor::edit_input;
use super::fields::{Flat, Payload, event_named, finish, native_event};
use super::plan::{Plan, ask_as_deny, proceed_after_failure, rewrite_as_deny};
use super::tools::mcp_name;
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

pub(super) fn parse(map: Map<String, Value>, opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let mut p = Payload::new(Agent::Windsurf, map);
    let native_name = native_event(&mut p, opts.event.as_deref(), "agent_action_name", "")?;
    let name = event_named(Agent::Windsurf, &native_name)?;
    let mut native = Native::new(Agent::Windsurf, native_name.clone());
    let mut flat = Flat::default();
    flat.set_opt("session_id", p.str("trajectory_id")?);
    let mut info = match p.object("tool_info")? {
        Some(info) => info,
        None => Payload::new(Agent::Windsurf, Map::new()),
    };
    let kind = native_name
        .strip_prefix("pre_")
        .or_else(|| native_name.strip_prefix("post_"))
        .unwrap_or_default();
    let mut tool = |flat: &mut Flat, canonical: String, input: Value| {
        native.tool = Some(canonical.clone());
        flat.set("tool_name", canonical);
        flat.set("tool_input", input);
    };
    match kind {
        "run_command" => {
            let command = info.req_str("command_line")?;
            flat.set_opt("cwd", info.str("cwd")?);
            tool(&mut flat, "Bash".into(), json!({ "command": command }));
        }
        "read_code" => {
            let path = info.req_str("file_path")?;
            tool(&mut flat, "Read".into(), json!({ "file_path": path }));
        }
        "write_code" => {
            let path = info.req_str("file_path")?;
            let edits = info.take("edits").unwrap_or_else(|| json!([]));
            tool(&mut flat, "Edit".into(), edit_input(path, edits));
        }
        "mcp_tool_use" => {
            let server = info.req_str("mcp_server_name")?;
            let t = info.req_str("mcp_tool_name")?;
            let (args, _) = info
                .input("mcp_tool_arguments")?
                .unwrap_or((json!({}), false));
            tool(&mut flat, mcp_name(&server, &t), args);
            flat.set_opt("tool_response", info.take("mcp_result"));
        }
        "user_prompt" => flat.set_opt("prompt", info.str("user_prompt")?),
        "cascade_response" | "cascade_response_with_transcript" => {
            flat.set_opt("last_assistant_message", info.str("response")?);
            flat.set_opt("transcript_path", info.str("transcript_path")?);
        }
        _ => {}
    }
    // What Windsurf sent beside the fields read, for hooks that want it.
    flat.set("tool_info", Value::Object(info.rest()));
    flat.keep(p.rest());
    let event = finish(Agent::Windsurf, name, flat, opts)?;
    Ok(Incoming { event, native })
}

pub(super) fn render(native: &Native, event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let pre = native.event.starts_with("pre_");
    let block = if !pre {
        None
    } else if plan.denies() {
        Some(plan.deny_reason())
    } else if let Some(b) = &plan.block {
        Some(b.clone())
    } else if plan.stops {
        Some(plan.stop_text())
    } else if plan.permission == Some(PermissionDecision::Ask) {
        Some(ask_as_deny(Agent::Windsurf, plan.reason.as_deref()))
    } else {
        plan.updated_input
            .as_ref()
            .map(|u| rewrite_as_deny(Agent::Windsurf, u, "cannot rewrite a call"))
    };
    if let Some(reason) = block {
        return Answer::block_on_stderr(reason);
    }
    if plan.permission == Some(PermissionDecision::Allow) {
        notes
            .push("a hook allowed the call; Windsurf has no allow, so its own flow applies".into());
    }
    if !plan.contexts.is_empty() {
        notes.push(format!(
            "{} context(s) dropped: Windsurf reads no hook output",
            plan.contexts.len()
        ));
    }
    if plan.follow_up.is_some() {
        notes.push(format!(
            "a hook asked the turn to continue; Windsurf cannot continue a turn from {}",
            native.event
        ));
    }
    if !pre && (plan.block.is_some() || plan.denies()) {
        notes.push(format!(
            "a hook blocked {}; Windsurf's {} runs after the fact and cannot block",
            event.name, native.event
        ));
    }
    if let Some(m) = &plan.system_message {
        notes.push(format!("message for the user: {m}"));
    }
    if !failures.open.is_empty() {
        return proceed_after_failure(Agent::Windsurf, &failures.open).with_notes(notes);
    }
    Answer::default().with_notes(notes)
}
