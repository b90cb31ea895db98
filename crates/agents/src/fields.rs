//! Reading an agent's payload field by field: each field is taken out with its JSON type
//! checked, and an error names it as the agent spells it (`toolArgs`, `tool_info.command_line`).
//! What is left over is kept and handed to hooks as extra payload fields.

use serde_json::{Map, Value, json};

use hookbox_core::event::{Event, EventName, json_type};

use super::{Agent, AgentError, limits};

/// The fields of one payload object (or of a nested one, with its dotted prefix).
pub(crate) struct Payload {
    pub(crate) agent: Agent,
    /// The event as the agent names it, for messages.
    pub(crate) event: String,
    pub(crate) map: Map<String, Value>,
    prefix: String,
}

impl Payload {
    pub(crate) fn new(agent: Agent, map: Map<String, Value>) -> Payload {
        Payload {
            agent,
            event: String::new(),
            map,
            prefix: String::new(),
        }
    }

    fn field(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn wrong(&self, key: &str, expected: &'static str, found: &Value) -> AgentError {
        AgentError::WrongType {
            agent: self.agent.display_name(),
            field: self.field(key),
            expected,
            found: json_type(found),
        }
    }

    /// The value of `key`, taken out; `null` counts as absent.
    pub(crate) fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|v| !v.is_null())
    }

    /// A string field.
    pub(crate) fn str(&mut self, key: &str) -> Result<Option<String>, AgentError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(key, "a string", &other)),
        }
    }

    /// A string field the event needs.
    pub(crate) fn req_str(&mut self, key: &str) -> Result<String, AgentError> {
        self.str(key)?.ok_or_else(|| AgentError::MissingField {
            agent: self.agent.display_name(),
            event: self.event.clone(),
            field: self.field(key),
        })
    }

    /// A boolean field.
    pub(crate) fn bool(&mut self, key: &str) -> Result<Option<bool>, AgentError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(self.wrong(key, "a boolean", &other)),
        }
    }

    /// A count (a non-negative integer), saturating at `u32::MAX`.
    pub(crate) fn count(&mut self, key: &str) -> Result<Option<u32>, AgentError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => {
                Ok(Some(n.as_u64().map_or(u32::MAX, |c| {
                    u32::try_from(c).unwrap_or(u32::MAX)
                })))
            }
            Some(other) => Err(self.wrong(key, "a non-negative integer", &other)),
        }
    }

    /// A nested object, read with its own dotted prefix.
    pub(crate) fn object(&mut self, key: &str) -> Result<Option<Payload>, AgentError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(Payload {
                agent: self.agent,
                event: self.event.clone(),
                map: m,
                prefix: format!("{}{key}.", self.prefix),
            })),
            Some(other) => Err(self.wrong(key, "an object", &other)),
        }
    }

    /// A tool's input: an object as it is; a string holding a JSON object (Cursor's MCP input,
    /// Copilot's documented `toolArgs`) parsed, within the payload's depth bound; any other
    /// string or value kept whole under `"value"`, so hooks still see what the agent sent. The
    /// flag says whether the agent sent a string.
    pub(crate) fn input(&mut self, key: &str) -> Result<Option<(Value, bool)>, AgentError> {
        let field = self.field(key);
        match self.take(key) {
            None => Ok(None),
            Some(v @ Value::Object(_)) => Ok(Some((v, false))),
            Some(Value::String(s)) => match limits::read_embedded(self.agent, &field, &s) {
                Some(Ok(v @ Value::Object(_))) => Ok(Some((v, true))),
                Some(Err(e)) => Err(e),
                _ => Ok(Some((json!({ "value": s }), true))),
            },
            Some(other) => Ok(Some((json!({ "value": other }), false))),
        }
    }

    /// A tool's output or result: a string holding JSON parsed (Cursor's `tool_output`,
    /// `result_json`), any other value as it is.
    pub(crate) fn output(&mut self, key: &str) -> Result<Option<Value>, AgentError> {
        let field = self.field(key);
        match self.take(key) {
            Some(Value::String(s)) => match limits::read_embedded(self.agent, &field, &s) {
                Some(r) => r.map(Some),
                None => Ok(Some(Value::String(s))),
            },
            other => Ok(other),
        }
    }

    /// The fields not taken, to keep as extras.
    pub(crate) fn rest(self) -> Map<String, Value> {
        self.map
    }
}

/// Claude Code's flat payload, built up by an adapter.
#[derive(Default)]
pub(crate) struct Flat(pub(crate) Map<String, Value>);

impl Flat {
    pub(crate) fn set(&mut self, key: &str, v: impl Into<Value>) {
        self.0.insert(key.to_owned(), v.into());
    }

    pub(crate) fn set_opt(&mut self, key: &str, v: Option<impl Into<Value>>) {
        if let Some(v) = v {
            self.set(key, v);
        }
    }

    /// Keeps the agent's other fields, under their own names, where they do not collide with
    /// a field already set.
    pub(crate) fn keep(&mut self, rest: Map<String, Value>) {
        for (k, v) in rest {
            self.0.entry(k).or_insert(v);
        }
    }
}

/// The event as the agent names it: the payload's `key`, or `--event` when the payload names
/// none; the two must agree when both are there.
pub(crate) fn native_event(
    p: &mut Payload,
    given: Option<&str>,
    key: &'static str,
    hint: &'static str,
) -> Result<String, AgentError> {
    let named = p.str(key)?;
    let name = match (given, named) {
        (Some(g), Some(n)) if g != n => {
            return Err(AgentError::EventMismatch {
                agent: p.agent.display_name(),
                field: key,
                given: g.to_owned(),
                payload: n,
            });
        }
        (_, Some(n)) => n,
        (Some(g), None) => g.to_owned(),
        (None, None) => {
            return Err(AgentError::NoEvent {
                agent: p.agent.display_name(),
                field: key,
                hint,
            });
        }
    };
    p.event.clone_from(&name);
    Ok(name)
}

/// The hookbox event `native` stands for in `agent`, or an error saying why there is none.
pub(crate) fn event_named(agent: Agent, native: &str) -> Result<EventName, AgentError> {
    agent
        .event_of(native)
        .ok_or_else(|| AgentError::UnknownEvent {
            agent: agent.display_name(),
            name: native.to_owned(),
            why: match agent.unhandled_why(native) {
                Some(why) => why.to_owned(),
                None => format!(
                    "is not a {} hook event hookbox knows ({})",
                    agent.display_name(),
                    agent
                        .events()
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        })
}

/// The event from the flat payload an adapter built.
pub(crate) fn finish(
    agent: Agent,
    name: EventName,
    flat: Flat,
    opts: &super::ParseOptions,
) -> Result<Event, AgentError> {
    let mut map = flat.0;
    map.insert(
        "hook_event_name".into(),
        Value::String(name.as_str().into()),
    );
    Event::from_payload(
        Some(name),
        Value::Object(map),
        &opts.default_session,
        &opts.default_cwd,
    )
    .map_err(|e| AgentError::event(agent, e))
}
