//! Reading a payload into typed event fields: the flat map's fields taken one by one with their
//! JSON types checked (the rest kept as extras), and the main source's `{event, data}` envelope
//! turned into the flat shape first.

use serde_json::{Map, Value};

use super::model::{PayloadError, StopData, ToolCall, json_type};
use super::name::EventName;

/// Takes typed fields out of a payload map, leaving the rest as `extra`.
pub(super) struct Fields {
    pub(super) map: Map<String, Value>,
    pub(super) event: EventName,
}

impl Fields {
    pub(super) fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|v| !v.is_null())
    }
    pub(super) fn opt_str(&mut self, key: &str) -> Result<Option<String>, PayloadError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(PayloadError::WrongType {
                field: key.to_owned(),
                expected: "a string",
                found: json_type(&other),
            }),
        }
    }
    pub(super) fn str_or_default(
        &mut self,
        key: &str,
        default: &str,
    ) -> Result<String, PayloadError> {
        Ok(self.opt_str(key)?.unwrap_or_else(|| default.to_owned()))
    }
    pub(super) fn req_str(&mut self, key: &'static str) -> Result<String, PayloadError> {
        self.opt_str(key)?.ok_or(PayloadError::MissingField {
            event: self.event,
            field: key,
        })
    }
    pub(super) fn opt_bool(&mut self, key: &str) -> Result<Option<bool>, PayloadError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(PayloadError::WrongType {
                field: key.to_owned(),
                expected: "a boolean",
                found: json_type(&other),
            }),
        }
    }
    pub(super) fn enum_field<T: serde::de::DeserializeOwned>(
        &mut self,
        key: &str,
        expected: &'static str,
    ) -> Result<Option<T>, PayloadError> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => {
                serde_json::from_value(v.clone())
                    .map(Some)
                    .map_err(|_| PayloadError::WrongType {
                        field: key.to_owned(),
                        expected,
                        found: json_type(&v),
                    })
            }
        }
    }
    pub(super) fn tool_call(&mut self) -> Result<ToolCall, PayloadError> {
        Ok(ToolCall {
            tool_name: self.req_str("tool_name")?,
            tool_input: self
                .take("tool_input")
                .unwrap_or_else(|| Value::Object(Map::new())),
            tool_use_id: self.opt_str("tool_use_id")?,
        })
    }
    pub(super) fn stop(&mut self) -> Result<StopData, PayloadError> {
        // `at_max_iter` is derived from `turn_end_reason`; drop a copy sent back to us.
        self.map.remove("at_max_iter");
        Ok(StopData {
            stop_hook_active: self.opt_bool("stop_hook_active")?.unwrap_or(false),
            last_assistant_message: self.opt_str("last_assistant_message")?,
            turn_end_reason: self
                .enum_field(
                    "turn_end_reason",
                    "one of final_response, max_iterations, doom_loop",
                )?
                .unwrap_or_default(),
        })
    }
}

/// Turns the main source's camelCase `{event, data}` envelope into the flat snake_case map.
pub(super) fn envelope_to_flat(mut map: Map<String, Value>) -> Map<String, Value> {
    let event = map.remove("event").unwrap_or(Value::Null);
    let Some(Value::Object(data)) = map.remove("data") else {
        return map;
    };
    let mut flat = Map::new();
    flat.insert("hook_event_name".into(), event);
    for (k, v) in data {
        let key = match k.as_str() {
            "userMessage" => "prompt".to_owned(),
            "toolOutput" => "tool_response".to_owned(),
            _ => camel_to_snake(&k),
        };
        flat.insert(key, v);
    }
    flat
}

/// `toolName` → `tool_name`.
pub(crate) fn camel_to_snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
