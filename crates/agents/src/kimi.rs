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
