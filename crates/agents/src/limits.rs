//! Bounds on what an agent's payload may cost to read. An agent's payload is not written by an
//! attacker directly, but it carries what one controls — a tool's input, a file's content, a
//! prompt — so reading it is bounded like any other untrusted input.

use serde_json::{Map, Value};

use hookbox_core::event::json_type;

use super::{Agent, AgentError};

/// The largest payload an adapter reads: 16 MiB (the same bound as `hookbox exec`'s stdin).
/// Agents' payloads are a few KiB; the largest real ones carry a tool's output or a file's
/// content (Cursor's `beforeReadFile`), well under this. A larger payload is refused before
/// it is parsed.
pub const MAX_PAYLOAD_BYTES: usize = 16 << 20;

/// The deepest nesting of arrays and objects a payload may have: 64 levels, counting the
/// payload object itself. Real payloads nest a handful of levels (an MCP tool's arguments a few
/// more). The JSON parser stops at 128 on its own, which keeps the stack safe; this bound is the
/// one hookbox documents, and it applies to JSON carried inside a string field too (Cursor's MCP
/// `tool_input`, Copilot's `toolArgs`), which the parser's own limit would not see.
pub const MAX_PAYLOAD_DEPTH: usize = 64;

/// Reads `bytes` as one JSON object within the bounds above.
pub(crate) fn read_payload(agent: Agent, bytes: &[u8]) -> Result<Map<String, Value>, AgentError> {
    let name = agent.display_name();
    if bytes.len() > MAX_PAYLOAD_BYTES {
        return Err(AgentError::TooLarge {
            agent: name,
            max: MAX_PAYLOAD_BYTES,
        });
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| AgentError::NotJson {
        agent: name,
        message: e.to_string(),
    })?;
    check_depth(agent, &value, "")?;
    match value {
        Value::Object(m) => Ok(m),
        other => Err(AgentError::NotAnObject {
            agent: name,
            found: json_type(&other),
        }),
    }
}

/// Parses JSON carried in the string field `field`, within the same depth bound.
pub(crate) fn read_embedded(
    agent: Agent,
    field: &str,
    text: &str,
) -> Option<Result<Value, AgentError>> {
    let value: Value = serde_json::from_str(text).ok()?;
    Some(check_depth(agent, &value, field).map(|()| value))
}

/// Refuses `value` when it nests deeper than [`MAX_PAYLOAD_DEPTH`]; iterative, so the check
/// itself cannot run out of stack.
pub(crate) fn check_depth(agent: Agent, value: &Value, field: &str) -> Result<(), AgentError> {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if depth > MAX_PAYLOAD_DEPTH {
            return Err(AgentError::TooDeep {
                agent: agent.display_name(),
                at: if field.is_empty() {
                    String::new()
                } else {
                    format!(" in field `{field}`")
                },
                max: MAX_PAYLOAD_DEPTH,
            });
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!(
            "{{\"a\":{}1{}}}",
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    }

    #[test]
    fn depth_limit_obeyed_and_violated() {
        assert!(read_payload(Agent::Claude, nested(MAX_PAYLOAD_DEPTH).as_bytes()).is_ok());
        let e = read_payload(Agent::Claude, nested(MAX_PAYLOAD_DEPTH + 1).as_bytes()).unwrap_err();
        assert!(
            matches!(
                e,
                AgentError::TooDeep {
                    max: MAX_PAYLOAD_DEPTH,
                    ..
                }
            ),
            "{e}"
        );
        // Deeper than the JSON parser's own limit: still an error, never a stack overflow.
        let e = read_payload(Agent::Claude, nested(100_000).as_bytes()).unwrap_err();
        assert!(matches!(e, AgentError::NotJson { .. }), "{e}");
    }

    #[test]
    fn size_limit_obeyed_and_violated() {
        let mut big = String::from("{\"prompt\":\"");
        big.push_str(&"x".repeat(MAX_PAYLOAD_BYTES - 13));
        big.push_str("\"}");
        assert_eq!(big.len(), MAX_PAYLOAD_BYTES);
        assert!(read_payload(Agent::Claude, big.as_bytes()).is_ok());
        big.insert(2, ' ');
        let e = read_payload(Agent::Claude, big.as_bytes()).unwrap_err();
        assert!(matches!(e, AgentError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn embedded_json_is_bounded_and_named() {
        let inner = nested(MAX_PAYLOAD_DEPTH + 1);
        let e = read_embedded(Agent::Cursor, "tool_input", &inner)
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("in field `tool_input`"), "{e}");
        assert!(read_embedded(Agent::Cursor, "tool_input", "not json").is_none());
    }

    #[test]
    fn non_objects_and_non_json_are_named() {
        let e = read_payload(Agent::Gemini, b"[1]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the Gemini CLI payload must be a JSON object, found an array"
        );
        let e = read_payload(Agent::Gemini, b"\xff").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the Gemini CLI payload is not JSON"),
            "{e}"
        );
    }
}
