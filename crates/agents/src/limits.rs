//! Bounds on what an agent's payload may cost to read. An agent's payload is not written by an
//! attacker directly, but it carries what one controls — a tool's input, a file's content, a
//! prompt — so reading it is bounded like any other untrusted input.

use std::borrow::Cow;

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
    let value: Value = serde_json::from_slice(&without_lone_surrogates(bytes)).map_err(|e| {
        AgentError::NotJson {
            agent: name,
            message: e.to_string(),
        }
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
    let value: Value = serde_json::from_slice(&without_lone_surrogates(text.as_bytes())).ok()?;
    Some(check_depth(agent, &value, field).map(|()| value))
}

/// `bytes` with every lone UTF-16 surrogate escape in a string (`\ud83d` without its pair,
/// or a pair's second half alone) replaced by `\ufffd`. JavaScript's `JSON.stringify` and
/// Python's `json.dumps` write such escapes for a string cut in the middle of an emoji, and
/// serde_json refuses them: without this, `"rm -rf / #\ud83d"` in a tool input made the whole
/// payload "not JSON" and every guard fail open. The text is scanned once; nothing is copied
/// unless an escape is replaced.
pub(crate) fn without_lone_surrogates(bytes: &[u8]) -> Cow<'_, [u8]> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let unit_at = |i: usize| -> Option<u16> {
        (bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'u'))
            .then(|| hex4(&bytes[i + 2..]))
            .flatten()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' => {
                let Some(unit) = unit_at(i) else {
                    // Any other escape: two bytes (a bad one is serde_json's to report).
                    i += 2;
                    continue;
                };
                let lone = match unit {
                    0xD800..=0xDBFF => match unit_at(i + 6) {
                        Some(0xDC00..=0xDFFF) => {
                            i += 12;
                            continue;
                        }
                        _ => true,
                    },
                    0xDC00..=0xDFFF => true,
                    _ => false,
                };
                if lone {
                    let o = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                    o.extend_from_slice(&bytes[copied..i]);
                    o.extend_from_slice(b"\\ufffd");
                    copied = i + 6;
                }
                i += 6;
            }
            _ => i += 1,
        }
    }
    match out {
        None => Cow::Borrowed(bytes),
        Some(mut o) => {
            o.extend_from_slice(&bytes[copied.min(bytes.len())..]);
            Cow::Owned(o)
        }
    }
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
    fn a_lone_surrogate_is_read_as_the_replacement_character() {
        // What JSON.stringify and json.dumps write for a string cut inside an emoji.
        let m = read_payload(
            Agent::Claude,
            br#"{"tool_input": {"command": "rm -rf / #\ud83d"}, "b": "\udc00x", "c": "\\ud83d"}"#,
        )
        .unwrap();
        assert_eq!(m["tool_input"]["command"], "rm -rf / #\u{fffd}");
        assert_eq!(m["b"], "\u{fffd}x");
        // An escaped backslash is not an escape.
        assert_eq!(m["c"], "\\ud83d");
        // A real pair stays a pair; nothing is copied when nothing is replaced.
        let pair = br#"{"a": "\ud83d\ude00"}"#;
        assert!(matches!(without_lone_surrogates(pair), Cow::Borrowed(_)));
        assert_eq!(read_payload(Agent::Claude, pair).unwrap()["a"], "😀");
        // Inside JSON carried in a string field too.
        let v = read_embedded(Agent::Cursor, "tool_input", r#"{"q": "\udbff"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(v["q"], "\u{fffd}");
        // At the very end of the input, cut short: no panic, serde_json reports it.
        for cut in [&br#"{"a": "\ud83d"#[..], br#"{"a": "\u"#, br#"{"a": "\"#] {
            assert!(read_payload(Agent::Claude, cut).is_err());
        }
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
