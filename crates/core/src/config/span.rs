//! Locations inside a JSON text: JSON paths as messages print them (`hooks.Stop[0].hooks[1]`)
//! and a small locator that maps such a path back to a line and column of the original text.
//!
//! serde_json's `Value` forgets where things were, and a dependency that keeps spans would be a
//! second JSON parser for one feature. The locator only ever runs on text serde_json already
//! accepted, so its tokenizer can be tiny; it scans each container on a requested path once and
//! caches the children's offsets, so locating every rule of a file costs O(size × depth), not
//! O(size × rules). It never recurses, so no input can overflow the stack.

use std::collections::HashMap;
use std::fmt;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Seg {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// A path from the document root to one value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct JsonPath(Vec<Seg>);

impl JsonPath {
    /// The document root.
    pub(crate) fn root() -> JsonPath {
        JsonPath(Vec::new())
    }

    /// This path, then the member `key`.
    pub(crate) fn key(&self, key: &str) -> JsonPath {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(key.to_owned()));
        JsonPath(segs)
    }

    /// This path, then element `i`.
    pub(crate) fn index(&self, i: usize) -> JsonPath {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(i));
        JsonPath(segs)
    }

    pub(crate) fn segs(&self) -> &[Seg] {
        &self.0
    }

    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for JsonPath {
    /// `hooks.Stop[0]`; keys that are not identifiers are quoted: `extensions["ai.trapezohe.ghast"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(root)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(n) => write!(f, "[{n}]")?,
                Seg::Key(k) if is_identifier(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Seg::Key(k) => write!(f, "[{}]", serde_json::Value::String(k.clone()))?,
            }
        }
        Ok(())
    }
}

fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Byte offsets of a container's direct children.
#[derive(Debug)]
enum Children {
    /// (decoded key, offset of the key's opening quote, offset of the value).
    Object(Vec<(String, usize, usize)>),
    Array(Vec<usize>),
    Scalar,
}

/// Maps JSON paths and byte offsets of one text to 1-based line and column (in characters).
#[derive(Debug)]
pub(crate) struct Locator<'t> {
    text: &'t str,
    line_starts: Vec<usize>,
    cache: HashMap<Vec<Seg>, Children>,
}

impl<'t> Locator<'t> {
    pub(crate) fn new(text: &'t str) -> Locator<'t> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Locator {
            text,
            line_starts,
            cache: HashMap::new(),
        }
    }

    /// 1-based line and character column of a byte offset (clamped to the text).
    pub(crate) fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self
            .line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |s| s.chars().count());
        (to_u32(line + 1), to_u32(col + 1))
    }

    /// Byte offset where a 1-based line and *byte* column point (serde_json counts bytes).
    pub(crate) fn offset_of_line_byte_col(&self, line: usize, byte_col: usize) -> usize {
        let start = self
            .line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        let mut off = (start + byte_col.saturating_sub(1)).min(self.text.len());
        while !self.text.is_char_boundary(off) {
            off -= 1;
        }
        off
    }

    /// Line and column of the value at `path`; for an object member, of its key.
    /// `None` when the path does not exist in the text (it always does for paths built while
    /// walking the parsed value, except for duplicate keys, where the last one is reported).
    pub(crate) fn locate(&mut self, path: &JsonPath) -> Option<(u32, u32)> {
        self.offset(path).map(|o| self.line_col(o))
    }

    fn offset(&mut self, path: &JsonPath) -> Option<usize> {
        let mut at = skip_ws(self.text.as_bytes(), 0);
        let mut prefix: Vec<Seg> = Vec::new();
        let mut report = at;
        for seg in path.segs() {
            if !self.cache.contains_key(&prefix) {
                let children = scan_children(self.text, at);
                self.cache.insert(prefix.clone(), children);
            }
            let (key_at, value_at) = match (self.cache.get(&prefix)?, seg) {
                (Children::Object(members), Seg::Key(k)) => members
                    .iter()
                    .rev()
                    .find(|(name, _, _)| name == k)
                    .map(|(_, ko, vo)| (*ko, *vo))?,
                (Children::Array(items), Seg::Index(i)) => {
                    let v = *items.get(*i)?;
                    (v, v)
                }
                _ => return None,
            };
            report = key_at;
            at = value_at;
            prefix.push(seg.clone());
        }
        Some(report)
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// End of the string starting at `i` (which holds `"`): the offset just past its closing quote.
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

/// End of the value starting at `i`, without recursion.
fn skip_value(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        if depth <= 1 {
                            return j + 1;
                        }
                        depth -= 1;
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

fn decode_key(raw: &str) -> String {
    // Only keys with escapes need serde_json; the common case is a plain slice.
    if raw.contains('\\') {
        serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.trim_matches('"').to_owned())
    } else {
        raw.trim_matches('"').to_owned()
    }
}

fn scan_children(text: &str, at: usize) -> Children {
    let b = text.as_bytes();
    match b.get(at) {
        Some(b'{') => {
            let mut members = Vec::new();
            let mut i = skip_ws(b, at + 1);
            while i < b.len() && b[i] == b'"' {
                let key_at = i;
                let key_end = skip_string(b, i);
                let key = decode_key(text.get(i..key_end).unwrap_or(""));
                i = skip_ws(b, key_end);
                if b.get(i) != Some(&b':') {
                    break;
                }
                let v = skip_ws(b, i + 1);
                members.push((key, key_at, v));
                i = skip_ws(b, skip_value(b, v));
                if b.get(i) == Some(&b',') {
                    i = skip_ws(b, i + 1);
                } else {
                    break;
                }
            }
            Children::Object(members)
        }
        Some(b'[') => {
            let mut items = Vec::new();
            let mut i = skip_ws(b, at + 1);
            while i < b.len() && b[i] != b']' {
                items.push(i);
                i = skip_ws(b, skip_value(b, i));
                if b.get(i) == Some(&b',') {
                    i = skip_ws(b, i + 1);
                } else {
                    break;
                }
            }
            Children::Array(items)
        }
        _ => Children::Scalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &[Seg]) -> JsonPath {
        JsonPath(p.to_vec())
    }
    fn k(s: &str) -> Seg {
        Seg::Key(s.to_owned())
    }

    #[test]
    fn display() {
        let p = JsonPath::root()
            .key("hooks")
            .key("Stop")
            .index(0)
            .key("hooks")
            .index(1);
        assert_eq!(p.to_string(), "hooks.Stop[0].hooks[1]");
        let p = JsonPath::root()
            .key("extensions")
            .key("ai.trapezohe.ghast")
            .key("hooks");
        assert_eq!(p.to_string(), r#"extensions["ai.trapezohe.ghast"].hooks"#);
        assert_eq!(JsonPath::root().to_string(), "(root)");
    }

    #[test]
    fn locates_members_and_elements() {
        let text = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [ {\"a\":1}, {\"b\": \"x\\\"}\"} ]}\n    ]\n  }\n}";
        let mut loc = Locator::new(text);
        assert_eq!(loc.locate(&path(&[k("hooks")])), Some((2, 3)));
        assert_eq!(loc.locate(&path(&[k("hooks"), k("Stop")])), Some((3, 5)));
        assert_eq!(
            loc.locate(&path(&[k("hooks"), k("Stop"), Seg::Index(0)])),
            Some((4, 7))
        );
        let h1 = path(&[
            k("hooks"),
            k("Stop"),
            Seg::Index(0),
            k("hooks"),
            Seg::Index(1),
        ]);
        assert_eq!(loc.locate(&h1), Some((4, 28)));
        let b = h1.key("b");
        assert_eq!(loc.locate(&b), Some((4, 29)));
        assert_eq!(loc.locate(&path(&[k("nope")])), None);
        assert_eq!(loc.locate(&path(&[k("hooks"), Seg::Index(0)])), None);
    }

    #[test]
    fn columns_count_characters_and_escaped_keys_decode() {
        let text = "{\"ü\\u00e9\": [1, \"日本\", {\"x\": 2}]}";
        let mut loc = Locator::new(text);
        let p = path(&[k("üé"), Seg::Index(2), k("x")]);
        // `{"ü\u00e9": [1, "日本", {` is 23 characters.
        assert_eq!(loc.locate(&p), Some((1, 24)));
    }

    #[test]
    fn duplicate_keys_report_the_last_one() {
        let mut loc = Locator::new("{\"a\": 1,\n \"a\": 2}");
        assert_eq!(loc.locate(&path(&[k("a")])), Some((2, 2)));
    }

    #[test]
    fn line_col_of_offsets() {
        let loc = Locator::new("ab\ncé\nd");
        assert_eq!(loc.line_col(0), (1, 1));
        assert_eq!(loc.line_col(3), (2, 1));
        assert_eq!(loc.line_col(6), (2, 3));
        assert_eq!(loc.line_col(999), (3, 2));
        assert_eq!(
            loc.offset_of_line_byte_col(2, 3),
            4,
            "inside é: back to its first byte"
        );
    }

    #[test]
    fn deep_text_does_not_recurse() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let mut loc = Locator::new(&text);
        assert_eq!(loc.locate(&JsonPath::root().index(0)), Some((1, 2)));
    }
}
