//! Duplicate keys (issue 8 #20): JSON parsers, serde_json included, keep the last of two members
//! with the same name and drop the first without a word — so `"hooks"` written twice loses the
//! first object's rules, and `"command"` written twice runs something the reader did not see.
//! This scanner finds every repeated key in a text serde_json already accepted, with the JSON
//! path and both places, so the loader can say so. It never recurses (no input can overflow
//! the stack) and keeps, per open object, only the keys seen so far.

use std::collections::HashMap;

use super::span::{JsonPath, Seg};

/// A key written twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Duplicate {
    /// Path of the member (the object's path, then the key).
    pub(crate) path: JsonPath,
    /// The key, decoded.
    pub(crate) key: String,
    /// Byte offset of the previous occurrence's opening quote.
    pub(crate) first: usize,
    /// Byte offset of this occurrence's opening quote.
    pub(crate) again: usize,
}

/// One open container.
enum Frame {
    Object {
        /// The step from the parent to this object (`None` for the root).
        seg: Option<Seg>,
        /// Keys seen so far → offset of their last occurrence.
        seen: HashMap<String, usize>,
        /// The key whose value comes next.
        pending: Option<String>,
        /// Whether the next string is a key.
        expect_key: bool,
    },
    Array {
        seg: Option<Seg>,
        index: usize,
    },
}

impl Frame {
    /// The step from this container to the value about to start inside it.
    fn child_seg(&self) -> Option<Seg> {
        match self {
            Frame::Object { pending, .. } => pending.clone().map(Seg::Key),
            Frame::Array { index, .. } => Some(Seg::Index(*index)),
        }
    }

    fn seg(&self) -> Option<&Seg> {
        match self {
            Frame::Object { seg, .. } | Frame::Array { seg, .. } => seg.as_ref(),
        }
    }
}

/// Every repeated key of `text` (valid JSON), in text order.
pub(crate) fn find(text: &str) -> Vec<Duplicate> {
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' | b'[' => {
                let seg = stack.last().and_then(Frame::child_seg);
                stack.push(if b[i] == b'{' {
                    Frame::Object {
                        seg,
                        seen: HashMap::new(),
                        pending: None,
                        expect_key: true,
                    }
                } else {
                    Frame::Array { seg, index: 0 }
                });
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                    Some(Frame::Array { index, .. }) => *index += 1,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let end = skip_string(b, i);
                let is_key = matches!(
                    stack.last(),
                    Some(Frame::Object {
                        expect_key: true,
                        ..
                    })
                );
                if is_key {
                    let key = decode(text.get(i..end).unwrap_or(""));
                    let earlier = match stack.last() {
                        Some(Frame::Object { seen, .. }) => seen.get(&key).copied(),
                        _ => None,
                    };
                    if let Some(first) = earlier {
                        found.push(Duplicate {
                            path: stack_path(&stack).key(&key),
                            key: key.clone(),
                            first,
                            again: i,
                        });
                    }
                    if let Some(Frame::Object {
                        seen,
                        pending,
                        expect_key,
                        ..
                    }) = stack.last_mut()
                    {
                        seen.insert(key.clone(), i);
                        *pending = Some(key);
                        *expect_key = false;
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    found
}

/// The path of the innermost open container.
fn stack_path(stack: &[Frame]) -> JsonPath {
    let mut p = JsonPath::root();
    for f in stack {
        match f.seg() {
            Some(Seg::Key(k)) => p = p.key(k),
            Some(Seg::Index(n)) => p = p.index(*n),
            None => {}
        }
    }
    p
}

/// End of the string starting at `i` (a `"`): the offset just past its closing quote.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

fn decode(raw: &str) -> String {
    if raw.contains('\\') {
        serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.trim_matches('"').to_owned())
    } else {
        raw.trim_matches('"').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_repeats_at_every_depth_with_their_paths() {
        let text = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "command": "b"}]}]},
 "x": [1, {"k": 1, "k\u0041": 2, "kA": 3}], "hooks": {}}"#;
        let d = find(text);
        let got: Vec<(String, &str)> = d
            .iter()
            .map(|d| (d.path.to_string(), d.key.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("hooks.Stop[0].hooks[0].command".to_owned(), "command"),
                ("x[1].kA".to_owned(), "kA"),
                ("hooks".to_owned(), "hooks"),
            ]
        );
        assert_eq!(&text[d[0].first..d[0].first + 9], "\"command\"");
        assert!(d[0].again > d[0].first);
        assert_eq!(d[2].first, 1);
    }

    #[test]
    fn values_that_look_like_keys_are_not_keys() {
        assert!(find(r#"{"a": "a", "b": ["a", "a"], "c": {"a": "b"}}"#).is_empty());
        assert!(
            find(r#"[{"a": 1}, {"a": 1}]"#).is_empty(),
            "siblings, not one object"
        );
    }

    #[test]
    fn deep_text_does_not_recurse() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(find(&text).is_empty());
    }
}
