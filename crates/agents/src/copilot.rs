//! GitHub Copilot CLI and cloud agent (github/docs `cli-hooks-reference.md` @ 927566b0; payloads
//! recorded on Copilot CLI 1.0.83 by akasecurity/ai-tc).
//!
//! Payload: the **case of the event name in the config** picks the dialect. A camelCase name
//! (`preToolUse`) gets a camelCase payload — `sessionId`, `timestamp` (epoch ms), `cwd`,
//! `toolName`, `toolArgs` (documented as a JSON string, recorded as an object: both are read),
//! `toolResult` — that names **no event** (only `permissionRequest` carries `hookName`), so the
//! hook's command line must (`hookbox install` writes `--event NAME`). A PascalCase name
//! (`PreToolUse`) gets the "VS Code compatible" snake_case payload with `hook_event_name`, read
//! here too and answered like VS Code (`super::vscode`), with Copilot's keys beside.
//!
//! Answer (camelCase hooks): top-level keys — `preToolUse`: `permissionDecision`
//! (`allow`/`deny`/`ask`), `permissionDecisionReason` (required for a deny), `modifiedArgs`;
//! `permissionRequest`: `behavior`, `message`, `interrupt`; `agentStop`/`subagentStop`:
//! `decision: "block"` + `reason` (another turn); `additionalContext` on `subagentStart`,
//! `notification`, `postToolUse`, (reportedly) `sessionStart` and `userPromptSubmitted` (the
//! model sees it as a system reminder: Copilot CLI 1.0.102 in the real-agent suite);
//! `postToolUseFailure`: exit 2 with the guidance on stderr. `sessionEnd`, `preCompact` and
//! `errorOccurred` outputs are ignored. There is no block on `userPromptSubmitted`, but
//! `modifiedPrompt` replaces the prompt: a blocked prompt is replaced by a note that it was
//! withheld and why, so the user's text never reaches the model (seen in the real-agent suite).
//!
//! MCP tools arrive as `<server>-<tool>` with no server field: they are mapped back to
//! `mcp__<server>__<tool>` from the configured server names ([`ParseOptions::mcp_servers`]),
//! and named in a warning where no name fits.
//!
//! Exit codes: Copilot's reference says non-zero exits and timeouts are logged and skipped; a
//! later third-party reference says a non-zero `preToolUse` exit denies. hookbox answers every
//! decision with **exit 0 and JSON** (the documented, recorded path), and so is read the same
//! under both: a deny denies, and a fail-open failure (`{}`, exit 0) proceeds.

use serde_json::{Map, Value, json};

use hookbox_core::event::{Event, EventName};
use hookbox_core::output::PermissionDecision;

use super::fields::{Flat, Payload, event_named, finish, native_event};
use super::plan::{Plan, proceed_after_failure, rewrite_as_deny, withheld_prompt};
use super::tools::{canonical_tool, mcp_name, to_agent_keys, to_claude_keys};
use super::{Agent, AgentError, Answer, Failures, Incoming, Native, ParseOptions};

pub(super) fn parse(map: Map<String, Value>, opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let pascal = map.contains_key("hook_event_name") && !map.contains_key("sessionId");
    let mut p = Payload::new(Agent::Copilot, map);
    let native_name = if pascal {
        native_event(&mut p, opts.event.as_deref(), "hook_event_name", "")?
    } else {
        // Only permissionRequest says its name (`hookName`); notification sends Claude's.
        if p.map.get("hook_event_name").and_then(Value::as_str) == Some("Notification") {
            p.map.insert("hookName".into(), json!("notification"));
            p.map.remove("hook_event_name");
        }
        native_event(
            &mut p,
            opts.event.as_deref(),
            "hookName",
            " (Copilot's camelCase payloads do not say which event they are; `hookbox install` writes it)",
        )?
    };
    let name = event_named(Agent::Copilot, &native_name)?;
    let mut native = Native::new(Agent::Copilot, native_name);
    native.camel = !pascal;
    // The two dialects name the same fields differently: (camelCase, snake_case).
    let key = |camel: &'static str, snake: &'static str| if pascal { snake } else { camel };
    let mut flat = Flat::default();
    flat.set_opt("session_id", p.str(key("sessionId", "session_id"))?);
    flat.set_opt("cwd", p.str("cwd")?);
    flat.set_opt(
        "transcript_path",
        p.str(key("transcriptPath", "transcript_path"))?,
    );
    let input_key = match (pascal, name) {
        (false, EventName::PermissionRequest) => "toolInput",
        (false, _) => "toolArgs",
        (true, _) => "tool_input",
    };
    if let Some(sent) = p.str(key("toolName", "tool_name"))? {
        let canonical = match mcp_tool(&sent, &opts.mcp_servers) {
            Some(mapped) => mapped,
            None => {
                if canonical_tool(&sent) == sent && sent.contains('-') {
                    native.warnings.push(format!(
                        "hookbox: GitHub Copilot tool `{sent}` looks like an MCP tool (`<server>-<tool>`), but no configured MCP server's name starts it (~/.copilot/mcp-config.json, .mcp.json, .github/mcp.json); rules for mcp__<server>__<tool> do not see it"
                    ));
                }
                canonical_tool(&sent).to_owned()
            }
        };
        let (mut input, _) = p.input(input_key)?.unwrap_or((json!({}), false));
        native.renamed = to_claude_keys(Agent::Copilot, &canonical, &mut input);
        flat.set("tool_name", canonical);
        flat.set("tool_input", input);
        native.tool = Some(sent);
    } else if matches!(
        name,
        EventName::PreToolUse
            | EventName::PostToolUse
            | EventName::PostToolUseFailure
            | EventName::PermissionRequest
    ) {
        // Reported by name: the event needs it.
        p.req_str(key("toolName", "tool_name"))?;
    }
    flat.set_opt("tool_response", p.take(key("toolResult", "tool_result")));
    flat.set_opt(
        "permission_suggestions",
        p.take(key("permissionSuggestions", "permission_suggestions")),
    );
    flat.set_opt("prompt", p.str("prompt")?);
    flat.set_opt("source", p.str("source")?);
    flat.set_opt("reason", p.str("reason")?);
    flat.set_opt("trigger", p.str("trigger")?);
    flat.set_opt(
        "custom_instructions",
        p.str(key("customInstructions", "custom_instructions"))?,
    );
    flat.set_opt("agent_type", p.str(key("agentName", "agent_name"))?);
    flat.set_opt("last_assistant_message", p.str("response")?);
    flat.set_opt("notification_type", p.str("notification_type")?);
    flat.set_opt("message", p.str("message")?);
    flat.set_opt("title", p.str("title")?);
    if let Some(error) = p.take("error") {
        let text = match &error {
            Value::String(s) => s.clone(),
            other => other
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| other.to_string(), str::to_owned),
        };
        flat.set("error", text);
        flat.set("error_details", error);
    }
    if matches!(name, EventName::Stop | EventName::SubagentStop) {
        let active = p.bool("stop_hook_active")?.unwrap_or(false);
        native.reentries = u32::from(active);
        flat.set("stop_hook_active", active);
    }
    flat.keep(p.rest());
    let event = finish(Agent::Copilot, name, flat, opts)?;
    Ok(Incoming { event, native })
}

/// Claude Code's name for Copilot's MCP tool `sent` (`<server>-<tool>`: Copilot sends no server
/// field), from the configured server names — the longest that starts the name, since server
/// names may hold dashes too. `None` when no server starts it.
fn mcp_tool(sent: &str, servers: &[String]) -> Option<String> {
    servers
        .iter()
        .filter(|s| {
            sent.len() > s.len() + 1
                && sent.starts_with(s.as_str())
                && sent.as_bytes()[s.len()] == b'-'
        })
        .max_by_key(|s| s.len())
        .map(|s| mcp_name(s, &sent[s.len() + 1..]))
}

/// The answer of a camelCase Copilot hook (PascalCase ones answer like VS Code).
pub(super) fn render(native: &Native, event: &Event, plan: &Plan, failures: &Failures) -> Answer {
    let mut notes = Vec::new();
    let mut out = Map::new();
    let context = |out: &mut Map<String, Value>| {
        if let Some(c) = plan.context_text() {
            out.insert("additionalContext".into(), json!(c));
        }
    };
    let drop_contexts = |notes: &mut Vec<String>| {
        if !plan.contexts.is_empty() {
            notes.push(format!(
                "{} context(s) dropped: Copilot takes no additional context from a {} command hook",
                plan.contexts.len(),
                native.event
            ));
        }
    };
    match event.name {
        EventName::PreToolUse => {
            let deny = |out: &mut Map<String, Value>, reason: String| {
                out.insert("permissionDecision".into(), json!("deny"));
                out.insert("permissionDecisionReason".into(), json!(reason));
            };
            if plan.denies() {
                deny(&mut out, plan.deny_reason());
            } else if plan.stops {
                notes.push("a hook stopped the session; Copilot cannot stop from preToolUse, so the call is denied".into());
                deny(&mut out, plan.stop_text());
            } else {
                if let Some(d) = plan.permission.filter(|d| *d != PermissionDecision::Defer) {
                    // `ask` prompts in the CLI; with nobody to ask it resolves to a denial.
                    out.insert("permissionDecision".into(), json!(d.as_str()));
                    if let Some(r) = &plan.reason {
                        out.insert("permissionDecisionReason".into(), json!(r));
                    }
                }
                if let Some(u) = &plan.updated_input {
                    out.insert("modifiedArgs".into(), to_agent_keys(&native.renamed, u));
                }
            }
            drop_contexts(&mut notes);
        }
        EventName::PermissionRequest => {
            if let Some(reason) = plan
                .denies()
                .then(|| plan.deny_reason())
                .or_else(|| plan.stops.then(|| plan.stop_text()))
            {
                out.insert("behavior".into(), json!("deny"));
                out.insert("message".into(), json!(reason));
                if plan.stops {
                    out.insert("interrupt".into(), json!(true));
                }
            } else if let Some(u) = &plan.updated_input {
                notes.push("a hook rewrote the input; Copilot takes no rewrite on permissionRequest, so the call is denied".into());
                out.insert("behavior".into(), json!("deny"));
                out.insert(
                    "message".into(),
                    json!(rewrite_as_deny(
                        Agent::Copilot,
                        u,
                        "takes no rewrite on permissionRequest"
                    )),
                );
            } else if plan.permission == Some(PermissionDecision::Allow) {
                out.insert("behavior".into(), json!("allow"));
            }
            // An `ask` falls through to Copilot's own permission flow, which asks.
            drop_contexts(&mut notes);
        }
        EventName::Stop | EventName::SubagentStop => {
            if let Some(f) = &plan.follow_up {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(f));
            }
            drop_contexts(&mut notes);
        }
        EventName::PostToolUse
        | EventName::SubagentStart
        | EventName::SessionStart
        | EventName::Notification => context(&mut out),
        EventName::PostToolUseFailure => {
            if let Some(c) = plan.context_text() {
                // Copilot returns a failure hook's stderr on exit 2 to the model as guidance.
                return Answer::block_on_stderr(c).with_notes(notes);
            }
        }
        EventName::UserPromptSubmit => {
            if let Some(b) = plan
                .block
                .clone()
                .or_else(|| plan.stops.then(|| plan.stop_text()))
            {
                // No block on a prompt in Copilot, but a replacement: the prompt never reaches
                // the model.
                out.insert("modifiedPrompt".into(), json!(withheld_prompt(&b)));
            }
            // Copilot CLI 1.0.102 adds a top-level `additionalContext` to the model's input as a
            // system reminder (seen in the real-agent suite).
            context(&mut out);
        }
        _ => drop_contexts(&mut notes),
    }
    if let Some(m) = &plan.system_message {
        notes.push(format!(
            "message for the user (Copilot has no field for it): {m}"
        ));
    }
    if out.is_empty() && !failures.open.is_empty() {
        return proceed_after_failure(Agent::Copilot, &failures.open).with_notes(notes);
    }
    Answer::json(&Value::Object(out), 0).with_notes(notes)
}
