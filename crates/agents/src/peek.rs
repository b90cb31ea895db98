//! What can still be read of a payload that cannot be parsed — too large, nested too deep, cut
//! short, or not JSON past its first fields: the event and the tool name, from the top-level
//! members that come before the trouble. A payload that cannot be read must still meet each
//! matching rule's fail mode (a fail-closed guard of `Bash` blocks a `Bash` call whose input is
//! 70 levels deep), and for that the event and the tool are enough.
//!
//! The scan is a flat loop over the bytes — values it does not want are skipped by counting
//! brackets outside strings, never by recursion, so no nesting or length can exhaust the stack
//! — and it stops at the first thing it cannot read. It never decides a verdict on its own; what
//! it finds only picks which rules' fail modes apply.

use hookbox_core::event::EventName;

use super::Agent;
use super::tools::canonical_tool;

/// What a payload says of itself, read without parsing it whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peeked {
    /// The hookbox event.
    pub event: EventName,
    /// The event as the agent named it.
    pub native_event: String,
    /// The tool, in Claude Code's name, for tool events whose payload names it before the
    /// trouble.
    pub tool: Option<String>,
}

/// The top-level string members of a JSON object text, in order, up to the first member that
/// cannot be read (or `max` members).
fn top_level_strings(bytes: &[u8], max: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return out;
    }
    i += 1;
    for _ in 0..max {
        i = skip_ws(bytes, i);
        let Some((key, after)) = string_at(bytes, i) else {
            return out;
        };
        i = skip_ws(bytes, after);
        if bytes.get(i) != Some(&b':') {
            return out;
        }
        i = skip_ws(bytes, i + 1);
        if let Some((value, after)) = string_at(bytes, i) {
            out.push((key, value));
            i = after;
        } else {
            let Some(after) = skip_value(bytes, i) else {
                return out;
            };
            i = after;
        }
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b',') => i += 1,
            _ => return out,
        }
    }
    out
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (after its closing quote).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// The string at `i`, decoded, and where it ends. Strings of more than 64 KiB are not names.
fn string_at(b: &[u8], i: usize) -> Option<(String, usize)> {
    let end = string_end(b, i)?;
    if end - i > 64 * 1024 {
        return None;
    }
    let text = std::str::from_utf8(&b[i..end]).ok()?;
    let s: String = serde_json::from_str(text).ok()?;
    Some((s, end))
}

/// The end of the value at `i`, skipped without recursion: a container by counting its brackets
/// outside strings, a scalar up to the next delimiter.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The event and tool of `agent`'s payload `bytes`, as far as they can be read; `given` is the
/// event from the hook's command line (`--event`), used where the payload names none.
pub fn peek(agent: Agent, bytes: &[u8], given: Option<&str>) -> Option<Peeked> {
    // The members an agent names its event and tool with. Of a member sent twice the last counts,
    // as in the full parse (and the agents' own `JSON.parse`): a payload whose first `tool_name`
    // says `Read` and whose last says `Bash` is a `Bash` call either way.
    const EVENT_KEYS: &[&str] = &[
        "hook_event_name",
        "hookEventName",
        "agent_action_name",
        "hookName",
    ];
    const TOOL_KEYS: &[&str] = &["tool_name", "toolName"];
    let members = top_level_strings(bytes, 64);
    let find = |keys: &[&str]| {
        members
            .iter()
            .rev()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
    };
    let native_event = find(EVENT_KEYS).or_else(|| given.map(str::to_owned))?;
    let event = agent.event_of(&native_event)?;
    let tool = match (agent, native_event.as_str()) {
        // Windsurf has no tool names: the event says the kind.
        (Agent::Windsurf, e) if e.ends_with("run_command") => Some("Bash".to_owned()),
        (Agent::Windsurf, e) if e.ends_with("write_code") => Some("Edit".to_owned()),
        (Agent::Windsurf, e) if e.ends_with("read_code") => Some("Read".to_owned()),
        (Agent::Cursor, "beforeShellExecution" | "afterShellExecution") => Some("Bash".to_owned()),
        (Agent::Cursor, "beforeReadFile") => Some("Read".to_owned()),
        _ => find(TOOL_KEYS).map(|t| canonical_tool(&t).to_owned()),
    };
    Some(Peeked {
        event,
        native_event,
        tool,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_and_tool_before_a_too_deep_input() {
        let deep = format!(
            r#"{{"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {}1{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let p = peek(Agent::Gemini, deep.as_bytes(), None).unwrap();
        assert_eq!(p.event, EventName::PreToolUse);
        assert_eq!(p.tool.as_deref(), Some("Bash"));
    }

    #[test]
    fn a_payload_cut_short_still_names_what_came_first() {
        let cut = br#"{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf / #"#;
        let p = peek(Agent::Claude, cut, None).unwrap();
        assert_eq!(
            (p.event, p.tool.as_deref()),
            (EventName::PreToolUse, Some("Bash"))
        );
        // Copilot names its event only on the command line.
        let p = peek(
            Agent::Copilot,
            br#"{"toolName": "bash", "toolArgs": {"#,
            Some("preToolUse"),
        )
        .unwrap();
        assert_eq!(
            (p.event, p.tool.as_deref()),
            (EventName::PreToolUse, Some("Bash"))
        );
    }

    #[test]
    fn of_a_member_sent_twice_the_last_counts_as_in_the_full_parse() {
        let twice = br#"{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_name": "Bash", "tool_input": [[[["#;
        let p = peek(Agent::Claude, twice, None).unwrap();
        assert_eq!(p.tool.as_deref(), Some("Bash"));
        let whole = br#"{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": "Read", "tool_name": "Bash", "tool_input": {}}"#;
        let inc = crate::parse(Agent::Claude, whole, &crate::ParseOptions::default()).unwrap();
        assert_eq!(inc.event.tool_name(), Some("Bash"));
    }

    #[test]
    fn what_cannot_be_read_is_none() {
        for bytes in [
            &b""[..],
            b"[]",
            b"{",
            br#"{"tool_input": [[[["#,
            br#"{"hook_event_name": 3}"#,
            br#"{"hook_event_name": "NotAnEvent"}"#,
            b"\xff\xfe",
        ] {
            assert_eq!(peek(Agent::Claude, bytes, None), None, "{bytes:?}");
        }
        // A tool named after the trouble is not known.
        let p = peek(
            Agent::Claude,
            br#"{"hook_event_name": "PreToolUse", "tool_input": [[[, "tool_name": "Bash"}"#,
            None,
        )
        .unwrap();
        assert_eq!(p.tool, None);
    }
}
