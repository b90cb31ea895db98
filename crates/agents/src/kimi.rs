//! Kimi Code CLI (MoonshotAI/kimi-cli @ 4a550eff, v1.49.0: `src/kimi_cli/hooks/{events,runner}.py`,
//! `soul/{kimisoul,toolset}.py`, `docs/en/customization/hooks.md`).
//!
//! Payload: Claude Code's event names and envelope (`hook_event_name`, `session_id`, `cwd`), no
//! `transcript_path`; `tool_call_id` for Claude Code's `tool_use_id`, `tool_output` (a string)
//! for `tool_response`; Kimi's tool names (`Shell`, `ReadFile`, `WriteFile`, `StrReplaceFile`,
//! whose file parameter is `path`) mapped to Claude Code's.
//!
//! Answer (the runner's source): **exit 2** blocks with stderr as the reason; exit 0 with
//! `hookSpecificOutput.permissionDecision: "deny"` blocks too; everything else — other fields,
//! other exit codes, crashes, timeouts — is allow. A block on `PreToolUse` fails the tool call
//! with the reason, on `UserPromptSubmit` ends the turn, on `Stop` runs the reason as a new user
//! turn (once). So a deny, a blocked prompt and a Stop continuation are exit 2 with the reason;
//! an `ask` and a rewrite become that deny; an allow and contexts cannot be said (dropped with a
//! note).

use serde_json::{Map, Value, json};

use hookbox_core::event::{Event, EventName};
use hookbox_core::output::PermissionDecision;

use super::fields::{Flat, Payload, event_named, finish, native_event};
use super::plan::{Plan, ask_as_deny, proceed_after_failure, rewrite_as_deny};
use super::tools::{canonical_tool, to_claude_keys};
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

pub(super) fn parse(map: Map<String, Value>, opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let mut p = Payload::new(Agent::Kimi, map);
    let native_name = native_event(&mut p, opts.event.as_deref(), "hook_event_name", "")?;
    let name = event_named(Agent::Kimi, &native_name)?;
    let mut native = Native::new(Agent::Kimi, native_name);
    let mut flat = Flat::default();
    flat.set_opt("session_id", p.str("session_id")?);
    flat.set_opt("cwd", p.str("cwd")?);
    if let Some(sent) = p.str("tool_name")? {
        let canonical = canonical_tool(&sent).to_owned();
        let (mut input, _) = p.input("tool_input")?.unwrap_or((json!({}), false));
        native.renamed = to_claude_keys(Agent::Kimi, &canonical, &mut input);
        if canonical == "Edit" {
            edit_to_claude(&mut input);
        }
        flat.set("tool_name", canonical);
        flat.set("tool_input", input);
        native.tool = Some(sent);
    }
    flat.set_opt("tool_use_id", p.str("tool_call_id")?);
    flat.set_opt("tool_response", p.take("tool_output"));
    match name {
        EventName::StopFailure => {
            flat.set_opt("error", p.str("error_type")?);
            flat.set_opt("error_details", p.str("error_message")?);
        }
        EventName::Stop | EventName::SubagentStop => {
            let active = p.bool("stop_hook_active")?.unwrap_or(false);
            native.reentries = u32::from(active);
            flat.set("stop_hook_active", active);
            flat.set_opt("last_assistant_message", p.str("response")?);
            flat.set_opt("agent_type", p.str("agent_name")?);
        }
        EventName::SubagentStart => flat.set_opt("agent_type", p.str("agent_name")?),
        EventName::Notification => flat.set_opt("message", p.str("body")?),
        _ => {}
    }
    flat.keep(p.rest());
    let event = finish(Agent::Kimi, name, flat, opts)?;
    Ok(Incoming { event, native })
}

/// Kimi's `StrReplaceFile` input, `{path, edit: {old, new, replace_all?}}` (or a list of such
/// edits; kimi-cli 1.52.0 `tools/file/replace.py`), in Claude Code's keys: one edit as `Edit`'s
/// `old_string`/`new_string`/`replace_all`, several as `MultiEdit`'s `edits`. Without this an
/// `Edit` rule reading `new_string` saw nothing. (Kimi cannot apply a rewrite, so nothing is
/// renamed back.)
fn edit_to_claude(input: &mut Value) {
    fn one(e: &Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for (theirs, ours) in [
            ("old", "old_string"),
            ("new", "new_string"),
            ("replace_all", "replace_all"),
        ] {
            if let Some(v) = e.get(theirs) {
                out.insert(ours.into(), v.clone());
            }
        }
        out
    }
    let Value::Object(map) = input else { return };
    match map.get("edit").cloned() {
        Some(Value::Object(e)) => {
            map.remove("edit");
            for (k, v) in one(&e) {
                map.entry(k).or_insert(v);
            }
        }
        Some(Value::Array(list)) => {
            map.remove("edit");
            let edits: Vec<Value> = list
                .iter()
                .map(|e| match e {
                    Value::Object(e) => Value::Object(one(e)),
                    other => other.clone(),
                })
                .collect();
            map.entry("edits").or_insert(Value::Array(edits));
        }
        _ => {}
    }
}

pub(super) fn render(native: &Native, event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let block = match event.name {
        EventName::PreToolUse => {
            if plan.denies() {
                Some(plan.deny_reason())
            } else if plan.stops {
                Some(plan.stop_text())
            } else if plan.permission == Some(PermissionDecision::Ask) {
                Some(ask_as_deny(Agent::Kimi, plan.reason.as_deref()))
            } else {
                plan.updated_input.as_ref().map(|u| {
                    rewrite_as_deny(Agent::Kimi, u, "cannot rewrite a call (as of 1.49.0)")
                })
            }
        }
        EventName::UserPromptSubmit => plan
            .block
            .clone()
            .or_else(|| plan.stops.then(|| plan.stop_text())),
        // A block on Stop is run as the next user turn: Claude Code's continuation.
        EventName::Stop => plan.follow_up.clone(),
        _ => None,
    };
    if let Some(reason) = block {
        return Answer::block_on_stderr(reason);
    }
    if plan.permission == Some(PermissionDecision::Allow) {
        notes.push("a hook allowed the call; Kimi has no allow, so its own flow applies".into());
    }
    if !plan.contexts.is_empty() {
        notes.push(format!(
            "{} context(s) dropped: Kimi reads no context from hooks (as of 1.49.0)",
            plan.contexts.len()
        ));
    }
    if plan.follow_up.is_some() {
        notes.push(format!(
            "a hook asked to continue; Kimi continues only from Stop, not {}",
            native.event
        ));
    }
    if let Some(m) = &plan.system_message {
        notes.push(format!("message for the user: {m}"));
    }
    if !failures.open.is_empty() {
        return proceed_after_failure(Agent::Kimi, &failures.open).with_notes(notes);
    }
    Answer::default().with_notes(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_reads_as_claude_codes() {
        let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
            "tool_name": "StrReplaceFile", "tool_call_id": "c",
            "tool_input": {"path": "/w/a.py", "edit": {"old": "x = 1", "new": "x = 2", "replace_all": true}}});
        let Value::Object(map) = payload else {
            unreachable!()
        };
        let inc = parse(map, &ParseOptions::default()).unwrap();
        assert_eq!(inc.event.tool_name(), Some("Edit"));
        assert_eq!(
            inc.event.tool_input().unwrap(),
            &json!({"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true})
        );
        let mut many =
            json!({"path": "/a", "edit": [{"old": "a", "new": "b"}, {"old": "c", "new": "d"}]});
        edit_to_claude(&mut many);
        assert_eq!(
            many,
            json!({"path": "/a", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]})
        );
    }
}
