//! Typed helpers over the generated [`Event`] record.
//!
//! The record carries the fields hooks use most as plain strings (tool input and response are
//! JSON text, so the WIT stays independent of any one agent's schema). These helpers parse on
//! demand: a hook pays for JSON only when it reads JSON.

use serde_json::Value;

use crate::Event;

/// Tool names of shell tools, as the agents spell them: Claude Code's `Bash`, and
/// `run_shell_command` (Agentao, Gemini CLI). Matching in `hooks.json` resolves aliases both
/// ways; this list is for hooks that look at `tool_name` themselves.
pub(crate) const SHELL_TOOLS: &[&str] = &["Bash", "run_shell_command"];

impl Event {
    /// The tool's input as JSON (`Null` when the event has none or the text is not JSON).
    ///
    /// For Claude Code's `Bash` this is `{"command": "...", "description": "...", ...}`.
    pub fn tool_input_json(&self) -> Value {
        parse_or_null(self.tool_input.as_deref())
    }

    /// `PostToolUse`: the tool's response as JSON (`Null` when absent or not JSON).
    pub fn tool_response_json(&self) -> Value {
        parse_or_null(self.tool_response.as_deref())
    }

    /// The full payload, as Claude Code's flat snake_case JSON object (`Null` if unparsable).
    pub fn payload_json(&self) -> Value {
        parse_or_null(Some(&self.payload))
    }

    /// One field of the full payload, for fields the record does not lift out
    /// (`compaction_type`, `tool_use_id`, `permission_mode`, ...).
    pub fn payload_field(&self, key: &str) -> Option<Value> {
        match self.payload_json() {
            Value::Object(mut map) => map.remove(key),
            _ => None,
        }
    }

    /// Whether the tool is a shell (`Bash`, `run_shell_command`).
    pub fn is_shell_tool(&self) -> bool {
        self.tool_name
            .as_deref()
            .is_some_and(|name| SHELL_TOOLS.contains(&name))
    }

    /// The command line of a shell tool call: `tool_input.command` when it is a string.
    ///
    /// Any tool whose input has a string `command` qualifies, so this also works for a shell
    /// tool this SDK does not know by name; check [`Event::is_shell_tool`] to be strict.
    pub fn command(&self) -> Option<String> {
        match self.tool_input_json() {
            Value::Object(mut map) => match map.remove("command") {
                Some(Value::String(command)) => Some(command),
                _ => None,
            },
            _ => None,
        }
    }

    /// `Stop`/`SubagentStop`: whether the agent already hit its iteration limit.
    ///
    /// True when the payload says `at_max_iter: true`, or when the turn ended because of
    /// `max_iterations` (Agentao's `turn_end_reason`). A Stop hook must not force another round
    /// then: that is how a rescue hook becomes a doom loop.
    pub fn at_max_iter(&self) -> bool {
        self.turn_end_reason.as_deref() == Some("max_iterations")
            || self.payload_field("at_max_iter") == Some(Value::Bool(true))
    }

    /// `Stop`/`SubagentStop`: whether forcing another round is safe — the turn is not already
    /// continuing because of a Stop hook ([`Event::stop_hook_active`](Event#structfield.stop_hook_active))
    /// and the agent is not at its iteration limit ([`Event::at_max_iter`]).
    pub fn may_force_continue(&self) -> bool {
        !self.stop_hook_active && !self.at_max_iter()
    }

    /// `PreCompact`: `microcompact`, `full` or `minimal_history` (Agentao's `compaction_type`),
    /// when the payload carries it.
    pub fn compaction_type(&self) -> Option<String> {
        match self.payload_field("compaction_type") {
            Some(Value::String(kind)) => Some(kind),
            _ => None,
        }
    }
}

impl Default for Event {
    /// An event with every field empty and `payload` = `{}`; tests fill in what they need.
    fn default() -> Self {
        Self {
            name: String::new(),
            session_id: String::new(),
            cwd: String::new(),
            transcript_path: None,
            tool_name: None,
            tool_input: None,
            tool_response: None,
            prompt: None,
            stop_hook_active: false,
            last_assistant_message: None,
            turn_end_reason: None,
            trigger: None,
            source: None,
            reason: None,
            payload: "{}".to_owned(),
        }
    }
}

fn parse_or_null(text: Option<&str>) -> Value {
    text.and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn bash(command: &str) -> Event {
        Event {
            name: "PreToolUse".into(),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({ "command": command, "description": "d" }).to_string()),
            ..Event::default()
        }
    }

    #[test]
    fn command_reads_tool_input_command() {
        let event = bash("ls -la");
        assert_eq!(event.command().as_deref(), Some("ls -la"));
        assert!(event.is_shell_tool());
        assert_eq!(event.tool_input_json()["description"], "d");
    }

    #[test]
    fn command_is_none_without_a_string_command() {
        let mut event = bash("x");
        event.tool_input = Some(r#"{"command": 3}"#.into());
        assert_eq!(event.command(), None);
        event.tool_input = Some("not json".into());
        assert_eq!(event.command(), None);
        assert_eq!(event.tool_input_json(), Value::Null);
        event.tool_input = None;
        assert_eq!(event.command(), None);
        event.tool_name = Some("Edit".into());
        assert!(!event.is_shell_tool());
    }

    #[test]
    fn at_max_iter_from_turn_end_reason_or_payload() {
        let mut event = Event {
            name: "Stop".into(),
            ..Event::default()
        };
        assert!(!event.at_max_iter());
        assert!(event.may_force_continue());

        event.turn_end_reason = Some("max_iterations".into());
        assert!(event.at_max_iter());
        assert!(!event.may_force_continue());

        event.turn_end_reason = Some("final_response".into());
        event.payload = json!({ "at_max_iter": true }).to_string();
        assert!(event.at_max_iter());

        event.payload = "{}".into();
        event.stop_hook_active = true;
        assert!(!event.may_force_continue());
    }

    #[test]
    fn payload_fields() {
        let event = Event {
            name: "PreCompact".into(),
            payload: json!({ "compaction_type": "full", "trigger": "auto" }).to_string(),
            ..Event::default()
        };
        assert_eq!(event.compaction_type().as_deref(), Some("full"));
        assert_eq!(event.payload_field("trigger"), Some(json!("auto")));
        assert_eq!(event.payload_field("missing"), None);
    }
}
