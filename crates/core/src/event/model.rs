//! The event model: one lifecycle occurrence with its common fields and the typed fields of its
//! kind. Payloads arrive as Claude Code's flat snake_case JSON (or the main source's `{event,
//! data}` envelope) and leave in each dialect's wire shape (see `wire`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fields::{Fields, envelope_to_flat};
use super::name::EventName;

/// One occurrence of a lifecycle event, as hooks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Which lifecycle point this is.
    pub name: EventName,
    /// The agent session.
    pub session_id: String,
    /// Path of the transcript file, when the agent keeps one.
    pub transcript_path: Option<String>,
    /// The session's working directory (command hooks run there).
    pub cwd: String,
    /// The agent's permission mode, when it has one.
    pub permission_mode: Option<String>,
    /// The fields of this kind of event.
    pub data: EventData,
    /// Payload fields without a typed slot; handed to hooks unchanged.
    pub extra: Map<String, Value>,
}

/// A tool call, as seen by `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `PermissionRequest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool's name as the agent spells it (`Bash`, `run_shell_command`, `mcp__x__y`).
    pub tool_name: String,
    /// The tool's arguments.
    pub tool_input: Value,
    /// The call's id, when the agent gives one.
    pub tool_use_id: Option<String>,
}

/// Why a turn is ending (the main source's `turn_end_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model gave its final answer.
    #[default]
    FinalResponse,
    /// The loop hit its iteration limit.
    MaxIterations,
    /// The loop detected it was repeating itself.
    DoomLoop,
}

impl TurnEndReason {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEndReason::FinalResponse => "final_response",
            TurnEndReason::MaxIterations => "max_iterations",
            TurnEndReason::DoomLoop => "doom_loop",
        }
    }
}

/// Which kind of compaction is about to happen (the main source's `compaction_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionType {
    /// Drop old tool outputs only.
    Microcompact,
    /// Summarise the whole conversation.
    Full,
    /// Keep a minimal history.
    MinimalHistory,
}

impl CompactionType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionType::Microcompact => "microcompact",
            CompactionType::Full => "full",
            CompactionType::MinimalHistory => "minimal_history",
        }
    }
}

/// The `Stop` / `SubagentStop` fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StopData {
    /// True when the turn is already continuing because a Stop hook asked it to.
    pub stop_hook_active: bool,
    /// The assistant's last message (may be empty: the "empty answer" recipe checks this).
    pub last_assistant_message: Option<String>,
    /// Why the turn is ending.
    pub turn_end_reason: TurnEndReason,
}

impl StopData {
    /// True when the loop already hit its iteration limit (the seed's `at_max_iter`).
    pub fn at_max_iter(&self) -> bool {
        self.turn_end_reason == TurnEndReason::MaxIterations
    }
}

/// The typed fields of each first-class event; every other event keeps its fields in
/// [`Event::extra`].
#[derive(Debug, Clone, PartialEq)]
#[allow(
    missing_docs,
    reason = "fields are the payload keys of the same names, documented on the event names"
)]
pub enum EventData {
    SessionStart {
        source: String,
        model: Option<String>,
    },
    SessionEnd {
        reason: String,
    },
    UserPromptSubmit {
        prompt: String,
    },
    PreToolUse(ToolCall),
    PostToolUse {
        call: ToolCall,
        tool_response: Value,
    },
    PostToolUseFailure {
        call: ToolCall,
        error: String,
        is_interrupt: Option<bool>,
    },
    Stop(StopData),
    PreCompact {
        trigger: String,
        custom_instructions: String,
        compaction_type: Option<CompactionType>,
    },
    SubagentStart {
        agent_id: String,
        agent_type: String,
    },
    SubagentStop {
        stop: StopData,
        agent_id: String,
        agent_type: String,
        agent_transcript_path: Option<String>,
    },
    Notification {
        message: String,
        title: Option<String>,
        notification_type: String,
    },
    PermissionRequest {
        tool_name: String,
        tool_input: Value,
        permission_suggestions: Option<Value>,
    },
    /// Any other Claude Code event: its fields are in [`Event::extra`].
    Generic,
}

/// A payload that cannot become an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// The payload is not a JSON object.
    #[error("the payload must be a JSON object, found {found}")]
    NotAnObject {
        /// The JSON type found.
        found: &'static str,
    },
    /// No event name was given and the payload has no `hook_event_name`.
    #[error(
        "the payload has no `hook_event_name` and no event was given; pass --event NAME or add the field"
    )]
    MissingEventName,
    /// The event name is unknown.
    #[error("unknown event `{0}` in `hook_event_name`")]
    UnknownEvent(String),
    /// The given event disagrees with the payload's `hook_event_name`.
    #[error("the payload says `hook_event_name: {payload}` but the event is `{given}`")]
    EventMismatch {
        /// The event asked for.
        given: EventName,
        /// What the payload says.
        payload: String,
    },
    /// A field has the wrong JSON type.
    #[error("field `{field}` must be {expected}, found {found}")]
    WrongType {
        /// The field's key.
        field: String,
        /// What it should be.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A required field is missing.
    #[error("`{event}` payload needs field `{field}`")]
    MissingField {
        /// The event.
        event: EventName,
        /// The missing key.
        field: &'static str,
    },
}

/// The JSON type name of a value, for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Event {
    /// A minimal event of `name` with empty/default fields: the base for builders and tests.
    pub fn new(name: EventName, session_id: impl Into<String>, cwd: impl Into<String>) -> Event {
        let call = || ToolCall {
            tool_name: String::new(),
            tool_input: Value::Object(Map::new()),
            tool_use_id: None,
        };
        let data = match name {
            EventName::SessionStart => EventData::SessionStart {
                source: "startup".into(),
                model: None,
            },
            EventName::SessionEnd => EventData::SessionEnd {
                reason: "other".into(),
            },
            EventName::UserPromptSubmit => EventData::UserPromptSubmit {
                prompt: String::new(),
            },
            EventName::PreToolUse => EventData::PreToolUse(call()),
            EventName::PostToolUse => EventData::PostToolUse {
                call: call(),
                tool_response: Value::Null,
            },
            EventName::PostToolUseFailure => EventData::PostToolUseFailure {
                call: call(),
                error: String::new(),
                is_interrupt: None,
            },
            EventName::Stop => EventData::Stop(StopData::default()),
            EventName::PreCompact => EventData::PreCompact {
                trigger: "auto".into(),
                custom_instructions: String::new(),
                compaction_type: None,
            },
            EventName::SubagentStart => EventData::SubagentStart {
                agent_id: String::new(),
                agent_type: "general-purpose".into(),
            },
            EventName::SubagentStop => EventData::SubagentStop {
                stop: StopData::default(),
                agent_id: String::new(),
                agent_type: "general-purpose".into(),
                agent_transcript_path: None,
            },
            EventName::Notification => EventData::Notification {
                message: String::new(),
                title: None,
                notification_type: String::new(),
            },
            EventName::PermissionRequest => EventData::PermissionRequest {
                tool_name: String::new(),
                tool_input: Value::Object(Map::new()),
                permission_suggestions: None,
            },
            _ => EventData::Generic,
        };
        Event {
            name,
            session_id: session_id.into(),
            transcript_path: None,
            cwd: cwd.into(),
            permission_mode: None,
            data,
            extra: Map::new(),
        }
    }

    /// Builds an event from a JSON payload: Claude Code's flat object, or the main source's
    /// `{"event": ..., "data": {...}}` envelope (camelCase keys are accepted there).
    ///
    /// `name` is the event asked for (e.g. `--event`); when `None`, the payload's
    /// `hook_event_name` decides. Missing `session_id`/`cwd` take `default_session`/`default_cwd`.
    pub fn from_payload(
        name: Option<EventName>,
        payload: Value,
        default_session: &str,
        default_cwd: &str,
    ) -> Result<Event, PayloadError> {
        let Value::Object(mut map) = payload else {
            return Err(PayloadError::NotAnObject {
                found: json_type(&payload),
            });
        };
        if let (Some(Value::String(_)), Some(Value::Object(_))) =
            (map.get("event"), map.get("data"))
        {
            map = envelope_to_flat(map);
        }
        let named = match map.get("hook_event_name") {
            Some(Value::String(s)) => Some(
                s.parse::<EventName>()
                    .map_err(|_| PayloadError::UnknownEvent(s.clone()))?,
            ),
            Some(Value::Null) | None => None,
            Some(other) => {
                return Err(PayloadError::WrongType {
                    field: "hook_event_name".into(),
                    expected: "a string",
                    found: json_type(other),
                });
            }
        };
        let name = match (name, named) {
            (Some(g), Some(p)) if g != p => {
                return Err(PayloadError::EventMismatch {
                    given: g,
                    payload: p.as_str().into(),
                });
            }
            (Some(g), _) => g,
            (None, Some(p)) => p,
            (None, None) => return Err(PayloadError::MissingEventName),
        };
        map.remove("hook_event_name");
        let mut f = Fields { map, event: name };
        let session_id = f.str_or_default("session_id", default_session)?;
        let transcript_path = f.opt_str("transcript_path")?;
        let cwd = f.str_or_default("cwd", default_cwd)?;
        let permission_mode = f.opt_str("permission_mode")?;
        let data = match name {
            EventName::SessionStart => EventData::SessionStart {
                source: f.str_or_default("source", "startup")?,
                model: f.opt_str("model")?,
            },
            EventName::SessionEnd => EventData::SessionEnd {
                reason: f.str_or_default("reason", "other")?,
            },
            EventName::UserPromptSubmit => EventData::UserPromptSubmit {
                prompt: f.str_or_default("prompt", "")?,
            },
            EventName::PreToolUse => EventData::PreToolUse(f.tool_call()?),
            EventName::PostToolUse => {
                let call = f.tool_call()?;
                EventData::PostToolUse {
                    call,
                    tool_response: f.take("tool_response").unwrap_or(Value::Null),
                }
            }
            EventName::PostToolUseFailure => {
                let call = f.tool_call()?;
                EventData::PostToolUseFailure {
                    call,
                    error: f.str_or_default("error", "")?,
                    is_interrupt: f.opt_bool("is_interrupt")?,
                }
            }
            EventName::Stop => EventData::Stop(f.stop()?),
            EventName::PreCompact => EventData::PreCompact {
                trigger: f.str_or_default("trigger", "auto")?,
                custom_instructions: f.str_or_default("custom_instructions", "")?,
                compaction_type: f.enum_field(
                    "compaction_type",
                    "one of microcompact, full, minimal_history",
                )?,
            },
            EventName::SubagentStart => EventData::SubagentStart {
                agent_id: f.str_or_default("agent_id", "")?,
                agent_type: f.str_or_default("agent_type", "general-purpose")?,
            },
            EventName::SubagentStop => {
                let stop = f.stop()?;
                EventData::SubagentStop {
                    stop,
                    agent_id: f.str_or_default("agent_id", "")?,
                    agent_type: f.str_or_default("agent_type", "general-purpose")?,
                    agent_transcript_path: f.opt_str("agent_transcript_path")?,
                }
            }
            EventName::Notification => EventData::Notification {
                message: f.str_or_default("message", "")?,
                title: f.opt_str("title")?,
                notification_type: f.str_or_default("notification_type", "")?,
            },
            EventName::PermissionRequest => EventData::PermissionRequest {
                tool_name: f.req_str("tool_name")?,
                tool_input: f
                    .take("tool_input")
                    .unwrap_or_else(|| Value::Object(Map::new())),
                permission_suggestions: f.take("permission_suggestions"),
            },
            _ => EventData::Generic,
        };
        Ok(Event {
            name,
            session_id,
            transcript_path,
            cwd,
            permission_mode,
            data,
            extra: f.map,
        })
    }

    /// The tool call, for tool events.
    pub fn tool_call(&self) -> Option<&ToolCall> {
        match &self.data {
            EventData::PreToolUse(c) => Some(c),
            EventData::PostToolUse { call, .. } | EventData::PostToolUseFailure { call, .. } => {
                Some(call)
            }
            _ => None,
        }
    }

    /// The tool name, for tool events (including `PermissionRequest`).
    pub fn tool_name(&self) -> Option<&str> {
        match &self.data {
            EventData::PermissionRequest { tool_name, .. } => Some(tool_name),
            _ => self.tool_call().map(|c| c.tool_name.as_str()),
        }
    }

    /// The tool input, for tool events.
    pub fn tool_input(&self) -> Option<&Value> {
        match &self.data {
            EventData::PermissionRequest { tool_input, .. } => Some(tool_input),
            _ => self.tool_call().map(|c| &c.tool_input),
        }
    }

    /// The Stop fields, for `Stop` and `SubagentStop`.
    pub fn stop_data(&self) -> Option<&StopData> {
        match &self.data {
            EventData::Stop(s) | EventData::SubagentStop { stop: s, .. } => Some(s),
            _ => None,
        }
    }

    /// Mutable Stop fields, for the Stop loop to set `stop_hook_active` on re-entry.
    pub fn stop_data_mut(&mut self) -> Option<&mut StopData> {
        match &mut self.data {
            EventData::Stop(s) | EventData::SubagentStop { stop: s, .. } => Some(s),
            _ => None,
        }
    }

    /// The prompt, for `UserPromptSubmit`.
    pub fn prompt(&self) -> Option<&str> {
        match &self.data {
            EventData::UserPromptSubmit { prompt } => Some(prompt),
            _ => None,
        }
    }

    /// A payload field by its flat snake_case key (typed or extra), as a string: what string and
    /// object matchers compare against.
    pub fn field_str(&self, key: &str) -> Option<&str> {
        let typed = match (&self.data, key) {
            (_, "tool_name") => self.tool_name(),
            (EventData::SessionStart { source, .. }, "source") => Some(source.as_str()),
            (EventData::SessionEnd { reason }, "reason") => Some(reason.as_str()),
            (EventData::PreCompact { trigger, .. }, "trigger") => Some(trigger.as_str()),
            (EventData::SubagentStart { agent_type, .. }, "agent_type")
            | (EventData::SubagentStop { agent_type, .. }, "agent_type") => {
                Some(agent_type.as_str())
            }
            (
                EventData::Notification {
                    notification_type, ..
                },
                "notification_type",
            ) => Some(notification_type.as_str()),
            (EventData::PostToolUseFailure { error, .. }, "error") => Some(error.as_str()),
            _ => None,
        };
        typed.or_else(|| self.extra.get(key).and_then(Value::as_str))
    }

    /// What this event's string matcher is tested against (SPEC §2; Claude Code's table).
    pub fn matcher_subject(&self) -> Option<&str> {
        self.name.matcher_field().and_then(|k| self.field_str(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_payload_parses_typed_fields_and_keeps_extras() {
        let ev = Event::from_payload(
            None,
            json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/w",
                   "tool_name": "Bash", "tool_input": {"command": "ls"}, "effort": {"level": "high"}}),
            "d",
            "/",
        )
        .unwrap();
        assert_eq!(ev.name, EventName::PreToolUse);
        assert_eq!(ev.tool_name(), Some("Bash"));
        assert_eq!(ev.session_id, "s1");
        assert_eq!(ev.extra["effort"], json!({"level": "high"}));
    }

    #[test]
    fn envelope_payload_is_accepted() {
        let ev = Event::from_payload(
            None,
            json!({"event": "UserPromptSubmit", "data": {"userMessage": "hi", "sessionId": "s", "cwd": "/x"}}),
            "d",
            "/",
        )
        .unwrap();
        assert_eq!(ev.prompt(), Some("hi"));
        assert_eq!(ev.session_id, "s");
    }

    #[test]
    fn bad_payloads_are_named() {
        let e = Event::from_payload(None, json!([1]), "d", "/").unwrap_err();
        assert_eq!(e, PayloadError::NotAnObject { found: "an array" });
        let e = Event::from_payload(Some(EventName::PreToolUse), json!({}), "d", "/").unwrap_err();
        assert!(e.to_string().contains("tool_name"), "{e}");
        let e = Event::from_payload(
            Some(EventName::Stop),
            json!({"hook_event_name": "PreCompact"}),
            "d",
            "/",
        )
        .unwrap_err();
        assert!(matches!(e, PayloadError::EventMismatch { .. }));
        let e = Event::from_payload(
            Some(EventName::Stop),
            json!({"stop_hook_active": "yes"}),
            "d",
            "/",
        )
        .unwrap_err();
        assert!(e.to_string().contains("stop_hook_active"), "{e}");
    }

    #[test]
    fn matcher_subject_follows_claude_table() {
        let ev = Event::from_payload(
            Some(EventName::SessionStart),
            json!({"source": "resume"}),
            "d",
            "/",
        )
        .unwrap();
        assert_eq!(ev.matcher_subject(), Some("resume"));
        let ev = Event::new(EventName::Stop, "s", "/");
        assert_eq!(ev.matcher_subject(), None);
    }
}
