//! Telling agents apart by their payloads, only where one field settles it: Cursor's
//! `cursor_version`, VS Code's camelCase `hookEventName`, Windsurf's `agent_action_name`,
//! Copilot's camelCase envelope without an event name, Gemini's own event names, Codex's
//! `turn_id`, Kimi's `tool_call_id`. Anything else is Claude Code's shape, which Codex and Kimi
//! also send, and read as Claude Code's.
//!
//! Some agents read other agents' hook files: VS Code runs the hooks of `.claude/settings.json`
//! and of Copilot's `.github/hooks/`, Cursor imports Claude Code's. A hook installed for Claude
//! Code or Copilot then receives VS Code's or Cursor's payload and must answer in that agent's
//! protocol: [`resolve`] switches to it when the payload says so unambiguously.

use serde_json::{Map, Value};

use super::Agent;

/// The agent whose payload `map` is, when a field settles it; `None` for Claude Code's shape.
pub fn detect(map: &Map<String, Value>) -> Option<Agent> {
    let has = |k: &str| map.contains_key(k);
    if has("cursor_version") || (has("conversation_id") && has("generation_id")) {
        return Some(Agent::Cursor);
    }
    if has("hookEventName") {
        return Some(Agent::VsCode);
    }
    if has("agent_action_name") || has("trajectory_id") {
        return Some(Agent::Windsurf);
    }
    let Some(Value::String(event)) = map.get("hook_event_name") else {
        // Copilot's camelCase payloads carry no event name (only its notification does).
        return ["sessionId", "toolName", "toolArgs", "hookName"]
            .iter()
            .any(|k| has(k))
            .then_some(Agent::Copilot);
    };
    // Gemini CLI's own event names (not Claude Code's): no other agent uses them.
    if Agent::Gemini.own_event_names().any(|n| n == event) {
        return Some(Agent::Gemini);
    }
    if has("turn_id") {
        return Some(Agent::Codex);
    }
    if has("tool_call_id") {
        return Some(Agent::Kimi);
    }
    if event == "ErrorOccurred" || has("tool_result") || has("sessionId") {
        return Some(Agent::Copilot);
    }
    None
}

/// The agent to answer: `given` (from `--agent`), except where the payload is unambiguously
/// another agent's that reads `given`'s files (VS Code's under Claude Code or Copilot, Cursor's
/// under Claude Code); with no `--agent`, the detected agent, else Claude Code.
pub fn resolve(given: Option<Agent>, map: &Map<String, Value>) -> Agent {
    let detected = detect(map);
    match (given, detected) {
        (Some(Agent::Claude | Agent::Copilot), Some(Agent::VsCode)) => Agent::VsCode,
        (Some(Agent::Claude), Some(Agent::Cursor)) => Agent::Cursor,
        (Some(a), _) => a,
        (None, d) => d.unwrap_or(Agent::Claude),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn detection_table() {
        let cases = [
            (
                json!({"hook_event_name": "PreToolUse", "session_id": "s"}),
                None,
            ),
            (
                json!({"hook_event_name": "PreToolUse", "turn_id": "t"}),
                Some(Agent::Codex),
            ),
            (
                json!({"hook_event_name": "BeforeTool"}),
                Some(Agent::Gemini),
            ),
            (
                json!({"hook_event_name": "preToolUse", "cursor_version": "2"}),
                Some(Agent::Cursor),
            ),
            (
                json!({"toolName": "bash", "toolArgs": {}}),
                Some(Agent::Copilot),
            ),
            (
                json!({"hook_event_name": "Stop", "sessionId": "s"}),
                Some(Agent::Copilot),
            ),
            (json!({"hookEventName": "PreToolUse"}), Some(Agent::VsCode)),
            (
                json!({"agent_action_name": "pre_run_command"}),
                Some(Agent::Windsurf),
            ),
            (
                json!({"hook_event_name": "PreToolUse", "tool_call_id": "c"}),
                Some(Agent::Kimi),
            ),
            (json!({}), None),
        ];
        for (payload, want) in cases {
            assert_eq!(detect(&obj(payload.clone())), want, "{payload}");
        }
    }

    #[test]
    fn files_read_by_other_agents_answer_in_the_reader_s_protocol() {
        let vscode = obj(json!({"hookEventName": "PreToolUse"}));
        assert_eq!(resolve(Some(Agent::Claude), &vscode), Agent::VsCode);
        assert_eq!(resolve(Some(Agent::Copilot), &vscode), Agent::VsCode);
        assert_eq!(resolve(Some(Agent::Gemini), &vscode), Agent::Gemini);
        let cursor = obj(json!({"hook_event_name": "preToolUse", "cursor_version": "2"}));
        assert_eq!(resolve(Some(Agent::Claude), &cursor), Agent::Cursor);
        let claude = obj(json!({"hook_event_name": "PreToolUse"}));
        assert_eq!(resolve(None, &claude), Agent::Claude);
        assert_eq!(resolve(Some(Agent::Kimi), &claude), Agent::Kimi);
    }
}
