//! Payloads on the wire, per dialect (SPEC §2.1): Claude Code's flat snake_case object (also
//! ghast, and agentao's `Stop`/`PreCompact`), the main source's `{event, data}` envelope, and the
//! simple dialect's `HOOK_*` environment variables.

use serde_json::{Map, Value, json};

use super::json_text;
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

/// [`payload`] as the JSON text a hook gets, byte for byte what serialising [`payload`] gives.
/// The flat form is written straight from the event (no [`Value`] tree built and dropped per
/// event: measured, that was ~7 % of a typed wasm dispatch).
///
/// # Errors
/// Whatever serde_json refuses to encode (nothing an [`Event`] holds, in practice).
pub fn payload_bytes(event: &Event, dialect: Dialect) -> Result<Vec<u8>, serde_json::Error> {
    match dialect {
        Dialect::Agentao if !AGENTAO_FLAT_EVENTS.contains(&event.name) => {
            serde_json::to_vec(&envelope(event))
        }
        _ => flat_payload(event).map(|p| p.bytes),
    }
}

/// The flat payload's JSON text, and where in it the event's `tool_input` value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatPayload {
    /// [`payload_bytes`] of the Claude dialect.
    pub bytes: Vec<u8>,
    /// The bytes of the `tool_input` value within [`FlatPayload::bytes`], when the event has
    /// one: the same text `serde_json::to_string` of it gives (the same serializer wrote it), so
    /// a typed wasm hook's WIT event borrows it instead of serialising the input again.
    pub tool_input: Option<std::ops::Range<usize>>,
}

impl FlatPayload {
    /// The `tool_input` value's JSON text.
    pub fn tool_input_json(&self) -> Option<&str> {
        let range = self.tool_input.clone()?;
        std::str::from_utf8(self.bytes.get(range)?).ok()
    }
}

/// The flat payload (Claude Code's shape), serialised once, with its `tool_input`'s place.
/// Written by [`json_text`](super::json_text), byte for byte what `serde_json` writes for
/// [`flat`] (tested over every event kind and dialect below).
///
/// # Errors
/// None in practice (kept for [`payload_bytes`]'s sake, whose envelope goes through serde_json).
pub fn flat_payload(event: &Event) -> Result<FlatPayload, serde_json::Error> {
    // Room for a typical payload up front: growing from empty reallocated and copied for
    // nearly every event.
    let mut bytes = Vec::with_capacity(PAYLOAD_START_BYTES);
    // Only the event's own `tool_input`: an extra of that name (on an event without one) is
    // not the WIT event's.
    let mut tool_input = None;
    let mut want_tool_input = event.tool_input().is_some();
    bytes.push(b'{');
    let written = fields(event, &mut |k: &str, v: Field<'_>| {
        if bytes.len() > 1 {
            bytes.push(b',');
        }
        json_text::write_str(&mut bytes, k);
        bytes.push(b':');
        let before = bytes.len();
        v.write(&mut bytes);
        if want_tool_input && k == "tool_input" {
            want_tool_input = false;
            tool_input = Some(before..bytes.len());
        }
        Ok::<(), std::convert::Infallible>(())
    });
    match written {
        Ok(()) => {}
        Err(never) => match never {},
    }
    bytes.push(b'}');
    Ok(FlatPayload { bytes, tool_input })
}

/// The room a flat payload's buffer starts with: a tool call with a short command and a
/// project path fits (the bench's is ~200 bytes); a larger one grows as before.
const PAYLOAD_START_BYTES: usize = 512;

/// Claude Code's flat snake_case object: common fields, the event's fields, then extras.
pub fn flat(event: &Event) -> Map<String, Value> {
    let mut m = Map::new();
    let built = fields(event, &mut |k: &str, v: Field<'_>| {
        m.insert(k.to_owned(), v.to_value());
        Ok::<(), std::convert::Infallible>(())
    });
    match built {
        Ok(()) => m,
        Err(never) => match never {},
    }
}

/// One value of the flat payload.
#[derive(Clone, Copy)]
enum Field<'a> {
    Str(&'a str),
    /// `null` when absent.
    OptStr(Option<&'a str>),
    Bool(bool),
    Json(&'a Value),
}

impl Field<'_> {
    fn to_value(self) -> Value {
        match self {
            Field::Str(s) | Field::OptStr(Some(s)) => Value::String(s.to_owned()),
            Field::OptStr(None) => Value::Null,
            Field::Bool(b) => Value::Bool(b),
            Field::Json(v) => v.clone(),
        }
    }

    /// Appends the value's JSON text.
    fn write(self, out: &mut Vec<u8>) {
        match self {
            Field::Str(v) | Field::OptStr(Some(v)) => json_text::write_str(out, v),
            Field::OptStr(None) => out.extend_from_slice(b"null"),
            Field::Bool(true) => out.extend_from_slice(b"true"),
            Field::Bool(false) => out.extend_from_slice(b"false"),
            Field::Json(v) => json_text::write_value(out, v),
        }
    }
}

/// Hands every field of the flat payload to `put`, in order: the common fields, the event's
/// own, then each extra whose key is not one of those (an extra never overrides a typed field).
/// The one description of the flat form: [`flat`] builds a map with it, [`flat_payload`] writes JSON.
fn fields<E>(
    event: &Event,
    put: &mut dyn FnMut(&str, Field<'_>) -> Result<(), E>,
) -> Result<(), E> {
    use Field::{Bool, Json, OptStr, Str};
    // The typed fields' keys, for the extras to skip; kept only when there are extras (most
    // events have none, and the vector was an allocation per payload).
    let track = !event.extra.is_empty();
    let mut known: Vec<&'static str> = Vec::new();
    let mut field = |k: &'static str, v: Field<'_>| {
        if track {
            known.push(k);
        }
        put(k, v)
    };
    field("session_id", Str(&event.session_id))?;
    field("transcript_path", OptStr(event.transcript_path.as_deref()))?;
    field("cwd", Str(&event.cwd))?;
    if let Some(mode) = &event.permission_mode {
        field("permission_mode", Str(mode))?;
    }
    field("hook_event_name", Str(event.name.as_str()))?;
    let tool = |field: &mut dyn FnMut(&'static str, Field<'_>) -> Result<(), E>, c: &ToolCall| {
        field("tool_name", Str(&c.tool_name))?;
        field("tool_input", Json(&c.tool_input))?;
        if let Some(id) = &c.tool_use_id {
            field("tool_use_id", Str(id))?;
        }
        Ok(())
    };
    let stop = |field: &mut dyn FnMut(&'static str, Field<'_>) -> Result<(), E>, s: &StopData| {
        field("stop_hook_active", Bool(s.stop_hook_active))?;
        field(
            "last_assistant_message",
            OptStr(s.last_assistant_message.as_deref()),
        )?;
        field("turn_end_reason", Str(s.turn_end_reason.as_str()))?;
        field("at_max_iter", Bool(s.at_max_iter()))
    };
    match &event.data {
        EventData::SessionStart { source, model } => {
            field("source", Str(source))?;
            if let Some(model) = model {
                field("model", Str(model))?;
            }
        }
        EventData::SessionEnd { reason } => field("reason", Str(reason))?,
        EventData::UserPromptSubmit { prompt } => field("prompt", Str(prompt))?,
        EventData::PreToolUse(c) => tool(&mut field, c)?,
        EventData::PostToolUse {
            call,
            tool_response,
        } => {
            tool(&mut field, call)?;
            field("tool_response", Json(tool_response))?;
        }
        EventData::PostToolUseFailure {
            call,
            error,
            is_interrupt,
        } => {
            tool(&mut field, call)?;
            field("error", Str(error))?;
            if let Some(i) = is_interrupt {
                field("is_interrupt", Bool(*i))?;
            }
        }
        EventData::Stop(s) => stop(&mut field, s)?,
        EventData::PreCompact {
            trigger,
            custom_instructions,
            compaction_type,
        } => {
            field("trigger", Str(trigger))?;
            field("custom_instructions", Str(custom_instructions))?;
            if let Some(t) = compaction_type {
                field("compaction_type", Str(t.as_str()))?;
            }
        }
        EventData::SubagentStart {
            agent_id,
            agent_type,
        } => {
            field("agent_id", Str(agent_id))?;
            field("agent_type", Str(agent_type))?;
        }
        EventData::SubagentStop {
            stop: s,
            agent_id,
            agent_type,
            agent_transcript_path,
        } => {
            stop(&mut field, s)?;
            field("agent_id", Str(agent_id))?;
            field("agent_type", Str(agent_type))?;
            if let Some(p) = agent_transcript_path {
                field("agent_transcript_path", Str(p))?;
            }
        }
        EventData::Notification {
            message,
            title,
            notification_type,
        } => {
            field("message", Str(message))?;
            if let Some(t) = title {
                field("title", Str(t))?;
            }
            field("notification_type", Str(notification_type))?;
        }
        EventData::PermissionRequest {
            tool_name,
            tool_input,
            permission_suggestions,
        } => {
            field("tool_name", Str(tool_name))?;
            field("tool_input", Json(tool_input))?;
            if let Some(s) = permission_suggestions {
                field("permission_suggestions", Json(s))?;
            }
        }
        EventData::Generic => {}
    }
    for (k, v) in &event.extra {
        if !known.contains(&k.as_str()) {
            put(k, Json(v))?;
        }
    }
    Ok(())
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

    /// Every event name with every field its payload can carry, plus extras — one of them
    /// reusing a typed field's key, which must not override it.
    fn every_event() -> Vec<Event> {
        EventName::ALL
            .iter()
            .map(|&name| {
                let full = json!({
                    "hook_event_name": name.as_str(), "session_id": "s\u{e9}\"q", "cwd": "/w",
                    "transcript_path": "/t.jsonl", "permission_mode": "plan",
                    "tool_name": "Bash", "tool_input": {"command": "ls", "n": 1.5, "a": [null, true]},
                    "tool_use_id": "t1", "tool_response": {"ok": true}, "error": "boom",
                    "is_interrupt": false, "prompt": "hi\n", "source": "startup", "model": "m",
                    "reason": "exit", "stop_hook_active": true, "last_assistant_message": "done",
                    "trigger": "auto", "custom_instructions": "keep", "compaction_type": "full",
                    "agent_id": "a1", "agent_type": "explore", "agent_transcript_path": "/a.jsonl",
                    "message": "note", "title": "T", "notification_type": "idle",
                    "permission_suggestions": [{"type": "allow"}],
                    "zz_extra": {"deep": [1, 2]}, "aa_extra": "first"
                });
                Event::from_payload(Some(name), full, "d", "/")
                    .unwrap_or_else(|e| panic!("{name}: {e}"))
            })
            .chain([{
                let mut e = pre_tool();
                e.extra.insert("tool_name".into(), json!("Shadow"));
                e.extra.insert("later".into(), json!(null));
                e
            }])
            .collect()
    }

    #[test]
    fn payload_bytes_are_the_serialised_payload_for_every_event_and_dialect() {
        for ev in every_event() {
            for dialect in [
                Dialect::Claude,
                Dialect::Agentao,
                Dialect::Ghast,
                Dialect::Simple,
            ] {
                let want = serde_json::to_vec(&payload(&ev, dialect)).unwrap();
                let got = payload_bytes(&ev, dialect).unwrap();
                assert_eq!(
                    String::from_utf8(got).unwrap(),
                    String::from_utf8(want).unwrap(),
                    "{} in {dialect:?}",
                    ev.name
                );
            }
        }
    }

    #[test]
    fn the_flat_payload_marks_its_tool_input_as_serde_json_writes_it() {
        let mut events = every_event();
        let mut odd = pre_tool();
        if let EventData::PreToolUse(c) = &mut odd.data {
            c.tool_input = json!({"command": "a\"b\\c\n\u{1}é😀", "k": {"x": [1e300, -0.0]}});
        }
        events.push(odd);
        // An extra named `tool_input` on an event that has none is not the event's input.
        let mut prompt = Event::new(EventName::UserPromptSubmit, "s", "/w");
        prompt
            .extra
            .insert("tool_input".into(), json!({"not": "mine"}));
        events.push(prompt);
        for ev in events {
            let p = flat_payload(&ev).unwrap();
            assert_eq!(
                p.bytes,
                payload_bytes(&ev, Dialect::Claude).unwrap(),
                "{}",
                ev.name
            );
            let want = ev.tool_input().map(|v| serde_json::to_string(v).unwrap());
            assert_eq!(p.tool_input_json(), want.as_deref(), "{}", ev.name);
        }
    }

    #[test]
    fn an_extra_never_overrides_a_typed_field_and_keeps_its_place_after_them() {
        let ev = every_event().pop().unwrap();
        let text = String::from_utf8(payload_bytes(&ev, Dialect::Claude).unwrap()).unwrap();
        assert!(text.contains(r#""tool_name":"Bash""#), "{text}");
        assert!(!text.contains("Shadow"), "{text}");
        assert!(text.ends_with(r#""later":null}"#), "{text}");
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
