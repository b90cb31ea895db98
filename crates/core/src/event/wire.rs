//! Payloads on the wire, per dialect (SPEC §2.1): Claude Code's flat snake_case object (also
//! ghast, and agentao's `Stop`/`PreCompact`), the main source's `{event, data}` envelope, and the
//! simple dialect's `HOOK_*` environment variables.

use serde_json::{Map, Value, json};

use super::model::{Event, EventData, StopData, ToolCall};
use super::name::EventName;
use crate::dialect::Dialect;

/// The simple dialect cuts `HOOK_TOOL_INPUT` / `HOOK_TOOL_OUTPUT` to this many characters.
pub const SIMPLE_ENV_MAX_CHARS: usize = 10_000;

/// Events the main source sends flat rather than in its envelope (its `CLAUDE_FLAT_EVENTS`).
pub const AGENTAO_FLAT_EVENTS: &[EventName] = &[EventName::Stop, EventName::PreCompact];

/// The payload a hook of `dialect` receives on stdin.
pub fn payload(event: &Event, dialect: Dialect) -> Value {
    match dialect {
        Dialect::Agentao if !AGENTAO_FLAT_EVENTS.contains(&event.name) => envelope(event),
        _ => Value::Object(flat(event)),
    }
}

/// Claude Code's flat snake_case object: common fields, the event's fields, then extras.
pub fn flat(event: &Event) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("session_id".into(), json!(event.session_id));
    m.insert("transcript_path".into(), json!(event.transcript_path));
    m.insert("cwd".into(), json!(event.cwd));
    if let Some(mode) = &event.permission_mode {
        m.insert("permission_mode".into(), json!(mode));
    }
    m.insert("hook_event_name".into(), json!(event.name.as_str()));
    let tool = |m: &mut Map<String, Value>, c: &ToolCall| {
        m.insert("tool_name".into(), json!(c.tool_name));
        m.insert("tool_input".into(), c.tool_input.clone());
        if let Some(id) = &c.tool_use_id {
            m.insert("tool_use_id".into(), json!(id));
        }
    };
    let stop = |m: &mut Map<String, Value>, s: &StopData| {
        m.insert("stop_hook_active".into(), json!(s.stop_hook_active));
        m.insert(
            "last_assistant_message".into(),
            json!(s.last_assistant_message),
        );
        m.insert("turn_end_reason".into(), json!(s.turn_end_reason.as_str()));
        m.insert("at_max_iter".into(), json!(s.at_max_iter()));
    };
    match &event.data {
        EventData::SessionStart { source, model } => {
            m.insert("source".into(), json!(source));
            if let Some(model) = model {
                m.insert("model".into(), json!(model));
            }
        }
        EventData::SessionEnd { reason } => {
            m.insert("reason".into(), json!(reason));
        }
        EventData::UserPromptSubmit { prompt } => {
            m.insert("prompt".into(), json!(prompt));
        }
        EventData::PreToolUse(c) => tool(&mut m, c),
        EventData::PostToolUse {
            call,
            tool_response,
        } => {
            tool(&mut m, call);
            m.insert("tool_response".into(), tool_response.clone());
        }
        EventData::PostToolUseFailure {
            call,
            error,
            is_interrupt,
        } => {
            tool(&mut m, call);
            m.insert("error".into(), json!(error));
            if let Some(i) = is_interrupt {
                m.insert("is_interrupt".into(), json!(i));
            }
        }
        EventData::Stop(s) => stop(&mut m, s),
        EventData::PreCompact {
            trigger,
            custom_instructions,
            compaction_type,
        } => {
            m.insert("trigger".into(), json!(trigger));
            m.insert("custom_instructions".into(), json!(custom_instructions));
            if let Some(t) = compaction_type {
                m.insert("compaction_type".into(), json!(t.as_str()));
            }
        }
        EventData::SubagentStart {
            agent_id,
            agent_type,
        } => {
            m.insert("agent_id".into(), json!(agent_id));
            m.insert("agent_type".into(), json!(agent_type));
        }
        EventData::SubagentStop {
            stop: s,
            agent_id,
            agent_type,
            agent_transcript_path,
        } => {
            stop(&mut m, s);
            m.insert("agent_id".into(), json!(agent_id));
            m.insert("agent_type".into(), json!(agent_type));
            if let Some(p) = agent_transcript_path {
                m.insert("agent_transcript_path".into(), json!(p));
            }
        }
        EventData::Notification {
            message,
            title,
            notification_type,
        } => {
            m.insert("message".into(), json!(message));
            if let Some(t) = title {
                m.insert("title".into(), json!(t));
            }
            m.insert("notification_type".into(), json!(notification_type));
        }
        EventData::PermissionRequest {
            tool_name,
            tool_input,
            permission_suggestions,
        } => {
            m.insert("tool_name".into(), json!(tool_name));
            m.insert("tool_input".into(), tool_input.clone());
            if let Some(s) = permission_suggestions {
                m.insert("permission_suggestions".into(), s.clone());
            }
        }
        EventData::Generic => {}
    }
    for (k, v) in &event.extra {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m
}

/// The main source's `{event, data}` envelope with camelCase keys (`userMessage`, `toolName`,
/// `toolInput`, `toolOutput` as a string, `sessionId`, `cwd`).
pub fn envelope(event: &Event) -> Value {
    let mut data = Map::new();
    match &event.data {
        EventData::UserPromptSubmit { prompt } => {
            data.insert("userMessage".into(), json!(prompt));
        }
        EventData::PreToolUse(c) => {
            data.insert("toolName".into(), json!(c.tool_name));
            data.insert("toolInput".into(), c.tool_input.clone());
        }
        EventData::PostToolUse {
            call,
            tool_response,
        } => {
            data.insert("toolName".into(), json!(call.tool_name));
            data.insert("toolInput".into(), call.tool_input.clone());
            data.insert("toolOutput".into(), json!(value_as_text(tool_response)));
        }
        EventData::PostToolUseFailure { call, error, .. } => {
            data.insert("toolName".into(), json!(call.tool_name));
            data.insert("toolInput".into(), call.tool_input.clone());
            data.insert("error".into(), json!(error));
        }
        _ => {
            // Events without an envelope shape of their own carry their flat fields, camelCased.
            for (k, v) in flat(event) {
                if !matches!(
                    k.as_str(),
                    "session_id" | "cwd" | "hook_event_name" | "transcript_path"
                ) {
                    data.insert(snake_to_camel(&k), v);
                }
            }
        }
    }
    if let Some(id) = event.tool_call().and_then(|c| c.tool_use_id.as_ref()) {
        data.insert("toolUseId".into(), json!(id));
    }
    data.insert("sessionId".into(), json!(event.session_id));
    data.insert("cwd".into(), json!(event.cwd));
    json!({ "event": event.name.as_str(), "data": data })
}

/// The simple dialect's environment variables.
pub fn simple_env(event: &Event) -> Vec<(String, String)> {
    let mut env = vec![("HOOK_EVENT".to_owned(), event.name.as_str().to_owned())];
    if let Some(name) = event.tool_name() {
        env.push(("HOOK_TOOL_NAME".into(), name.to_owned()));
    }
    if let Some(input) = event.tool_input() {
        env.push((
            "HOOK_TOOL_INPUT".into(),
            cut_chars(&input.to_string(), SIMPLE_ENV_MAX_CHARS),
        ));
    }
    if let EventData::PostToolUse { tool_response, .. } = &event.data {
        env.push((
            "HOOK_TOOL_OUTPUT".into(),
            cut_chars(&value_as_text(tool_response), SIMPLE_ENV_MAX_CHARS),
        ));
    }
    env
}

/// A string value as itself, anything else as its JSON text.
fn value_as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The first `max` characters of `s` (characters, not bytes: never splits a code point).
pub fn cut_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_owned(),
        None => s.to_owned(),
    }
}

fn snake_to_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut upper = false;
    for c in s.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, TurnEndReason};

    fn pre_tool() -> Event {
        Event::from_payload(
            None,
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
                   "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}),
            "d",
            "/",
        )
        .unwrap()
    }

    #[test]
    fn claude_payload_is_flat_snake_case() {
        let v = payload(&pre_tool(), Dialect::Claude);
        assert_eq!(v["hook_event_name"], "PreToolUse");
        assert_eq!(v["tool_input"]["command"], "ls");
        assert_eq!(v["tool_use_id"], "t1");
        assert!(v.get("event").is_none());
    }

    #[test]
    fn agentao_payload_is_an_envelope_except_stop_and_precompact() {
        let v = payload(&pre_tool(), Dialect::Agentao);
        assert_eq!(v["event"], "PreToolUse");
        assert_eq!(v["data"]["toolName"], "Bash");
        assert_eq!(v["data"]["sessionId"], "s");
        let mut stop = Event::new(EventName::Stop, "s", "/w");
        stop.stop_data_mut().unwrap().turn_end_reason = TurnEndReason::MaxIterations;
        let v = payload(&stop, Dialect::Agentao);
        assert_eq!(v["hook_event_name"], "Stop");
        assert_eq!(v["turn_end_reason"], "max_iterations");
        assert_eq!(v["at_max_iter"], true);
    }

    #[test]
    fn envelope_round_trips_through_from_payload() {
        let ev = pre_tool();
        let back = Event::from_payload(None, envelope(&ev), "d", "/").unwrap();
        assert_eq!(back.tool_name(), Some("Bash"));
        assert_eq!(back.tool_input(), ev.tool_input());
    }

    #[test]
    fn simple_env_cuts_at_ten_thousand_chars() {
        let mut ev = pre_tool();
        if let EventData::PreToolUse(c) = &mut ev.data {
            c.tool_input = json!({"command": "é".repeat(20_000)});
        }
        let env = simple_env(&ev);
        let input = &env.iter().find(|(k, _)| k == "HOOK_TOOL_INPUT").unwrap().1;
        assert_eq!(input.chars().count(), SIMPLE_ENV_MAX_CHARS);
        assert_eq!(env[0], ("HOOK_EVENT".into(), "PreToolUse".into()));
    }
}
