//! Editing an agent's JSON configuration in place: a reader for JSON with comments (Gemini CLI
//! and VS Code allow `//` and `/* */`) that keeps where every member and item is, and edits
//! that splice text at those places — so everything hookbox does not touch, comments and
//! formatting included, stays byte for byte. The file is hostile input: nesting is bounded and
//! every syntax error is located.

use serde_json::Value;

/// Deepest nesting read: a hook configuration is a handful of levels deep.
const MAX_DEPTH: usize = 64;

/// A value and where it is in the text (`end` is exclusive).
#[derive(Debug, Clone)]
pub struct Node {
    /// Its first byte.
    pub start: usize,
    /// The byte after its last.
    pub end: usize,
    /// What it is.
    pub kind: Kind,
}

/// What a node is.
#[derive(Debug, Clone)]
pub enum Kind {
    /// An object, its members in order.
    Object(Vec<Member>),
    /// An array, its items in order.
    Array(Vec<Node>),
    /// A string, number, boolean or `null`.
    Scalar,
}

/// An object member: its key (decoded), where the key starts, and its value.
#[derive(Debug, Clone)]
pub struct Member {
    /// The key, decoded.
    pub key: String,
    /// Where the key's opening quote is.
    pub start: usize,
    /// The value.
    pub value: Node,
}

impl Node {
    /// The members, for an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The items, for an array.
    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(i) => Some(i),
            _ => None,
        }
    }

    /// The member `key` of an object: the **last** one when the key is there twice, since that
    /// is the one every agent's JSON reader keeps (JavaScript's `JSON.parse`, serde_json).
    /// Writing into the first one made `install` report success for entries no agent read.
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().rev().find(|m| m.key == key)
    }
}

/// A syntax error, located (1-based line and column, in characters).
#[derive(Debug)]
pub struct SyntaxError {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
    /// What is wrong there.
    pub message: String,
}

impl std::error::Error for SyntaxError {}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        let before = &self.text[..self.i.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        SyntaxError {
            line,
            column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), SyntaxError> {
        loop {
            match (self.peek(), self.b.get(self.i + 1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let rest = &self.text[self.i + 2..];
                    match rest.find("*/") {
                        Some(n) => self.i += 2 + n + 2,
                        None => return Err(self.error("unterminated /* comment")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), SyntaxError> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected `{}`", c as char)))
        }
    }

    /// A string's span, quotes included.
    fn string(&mut self) -> Result<(usize, usize), SyntaxError> {
        let start = self.i;
        self.expect(b'"')?;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok((start, self.i));
                }
                Some(b'\\') => self.i += 2,
                Some(c) if c < 0x20 => return Err(self.error("control character in a string")),
                Some(_) => self.i += 1,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let start = self.i;
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.skip()?;
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Node {
                        start,
                        end: self.i,
                        kind: Kind::Object(members),
                    });
                }
                loop {
                    self.skip()?;
                    let (ks, ke) = self.string()?;
                    let key: String = serde_json::from_str(&self.text[ks..ke])
                        .map_err(|e| self.error(format!("bad key: {e}")))?;
                    self.skip()?;
                    self.expect(b':')?;
                    self.skip()?;
                    let value = self.value(depth + 1)?;
                    members.push(Member {
                        key,
                        start: ks,
                        value,
                    });
                    self.skip()?;
                    match self.peek() {
                        Some(b',') => {
                            self.i += 1;
                            self.skip()?;
                            if self.peek() == Some(b'}') {
                                return Err(self.error("trailing comma"));
                            }
                        }
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Node {
                                start,
                                end: self.i,
                                kind: Kind::Object(members),
                            });
                        }
                        _ => return Err(self.error("expected `,` or `}`")),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.skip()?;
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Node {
                        start,
                        end: self.i,
                        kind: Kind::Array(items),
                    });
                }
                loop {
                    self.skip()?;
                    items.push(self.value(depth + 1)?);
                    self.skip()?;
                    match self.peek() {
                        Some(b',') => {
                            self.i += 1;
                            self.skip()?;
                            if self.peek() == Some(b']') {
                                return Err(self.error("trailing comma"));
                            }
                        }
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Node {
                                start,
                                end: self.i,
                                kind: Kind::Array(items),
                            });
                        }
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(b'"') => {
                let (s, e) = self.string()?;
                serde_json::from_str::<String>(&self.text[s..e])
                    .map_err(|err| self.error(format!("bad string: {err}")))?;
                Ok(Node {
                    start: s,
                    end: e,
                    kind: Kind::Scalar,
                })
            }
            Some(_) => {
                while self
                    .peek()
                    .is_some_and(|c| !b",:]}[{ \t\r\n/\"".contains(&c))
                {
                    self.i += 1;
                }
                let token = &self.text[start..self.i];
                match serde_json::from_str::<Value>(token) {
                    Ok(v) if !v.is_object() && !v.is_array() && !v.is_string() => Ok(Node {
                        start,
                        end: self.i,
                        kind: Kind::Scalar,
                    }),
                    _ => {
                        self.i = start;
                        Err(self.error(format!(
                            "unexpected `{}`",
                            token.chars().take(20).collect::<String>()
                        )))
                    }
                }
            }
            None => Err(self.error("unexpected end of file")),
        }
    }
}

/// Reads `text` as one JSON value with comments.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut r = Reader {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    r.skip()?;
    let node = r.value(0)?;
    r.skip()?;
    if r.i != text.len() {
        return Err(r.error("text after the end of the document"));
    }
    Ok(node)
}

/// `text` with every comment blanked to spaces (strings untouched): plain JSON at the same
/// offsets.
pub fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'"', _) => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                for (j, byte) in out.iter_mut().enumerate().take(end.min(b.len())).skip(i) {
                    // Keep line breaks, so line numbers stay right.
                    if b[j] != b'\n' {
                        *byte = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes outside strings were replaced by ASCII spaces.
    String::from_utf8(out).unwrap_or_default()
}

/// The JSON value of `node`.
pub fn value_of(text: &str, node: &Node) -> Value {
    serde_json::from_str(&strip_comments(&text[node.start..node.end])).unwrap_or(Value::Null)
}

/// Whether `text` holds a comment.
pub fn has_comments(text: &str) -> bool {
    strip_comments(text) != text
}

/// The leading whitespace of the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// The file's indentation step: how much deeper the root's first member sits than the root,
/// else two spaces.
pub fn indent_unit(text: &str, root: &Node) -> String {
    let base = line_indent(text, root.start);
    match root.members().and_then(|m| m.first()) {
        Some(m) if text[root.start..m.start].contains('\n') => {
            let inner = line_indent(text, m.start);
            inner
                .strip_prefix(base)
                .filter(|u| !u.is_empty())
                .unwrap_or("  ")
                .to_owned()
        }
        _ => "  ".to_owned(),
    }
}

/// `v` pretty-printed with `unit` per level, its later lines indented by `base`.
fn render(v: &Value, base: &str, unit: &str) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    // Serialising a Value into a Vec cannot fail.
    let _ = serde::Serialize::serialize(v, &mut ser);
    let text = String::from_utf8(buf).unwrap_or_default();
    text.replace('\n', &format!("\n{base}"))
}

fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..start], &text[end..])
}

/// Adds `"key": v` as the last member of `obj`.
pub fn insert_member(text: &str, obj: &Node, key: &str, v: &Value, unit: &str) -> String {
    let outer = line_indent(text, obj.start);
    let inner = format!("{outer}{unit}");
    let member = format!("{}: {}", Value::String(key.into()), render(v, &inner, unit));
    match obj.members().and_then(<[Member]>::last) {
        Some(last) => splice(
            text,
            last.value.end,
            last.value.end,
            &format!(",\n{inner}{member}"),
        ),
        None => into_empty(text, obj, &member, &inner, outer),
    }
}

/// Adds `v` as the last item of `arr`.
pub fn append_item(text: &str, arr: &Node, v: &Value, unit: &str) -> String {
    let outer = line_indent(text, arr.start);
    let inner = format!("{outer}{unit}");
    let item = render(v, &inner, unit);
    match arr.items().and_then(<[Node]>::last) {
        Some(last) => splice(text, last.end, last.end, &format!(",\n{inner}{item}")),
        None => into_empty(text, arr, &item, &inner, outer),
    }
}

/// `text` with `entry` as the only thing in the empty `container`. Nothing of what was inside is
/// lost, so that removing the entry again ([`remove_at`]) gives the text back: an empty `{}` gets
/// the entry on its own lines; whitespace or comments inside stay, after the entry.
fn into_empty(text: &str, container: &Node, entry: &str, inner: &str, outer: &str) -> String {
    let at = container.start + 1;
    if at == container.end - 1 {
        splice(text, at, at, &format!("\n{inner}{entry}\n{outer}"))
    } else {
        splice(text, at, at, &format!("\n{inner}{entry}"))
    }
}

/// Replaces `node` with `v`.
pub fn replace(text: &str, node: &Node, v: &Value, unit: &str) -> String {
    let base = line_indent(text, node.start).to_owned();
    splice(text, node.start, node.end, &render(v, &base, unit))
}

/// Removes the `i`-th of `spans` (items, or members from key to value), with its comma.
fn remove_at(text: &str, container: &Node, spans: &[(usize, usize)], i: usize) -> String {
    match (i.checked_sub(1).map(|p| spans[p]), spans.get(i + 1)) {
        // After the previous one: take the comma before it.
        (Some(prev), _) => splice(text, prev.1, spans[i].1, ""),
        // The first of several: take it up to the next one.
        (None, Some(next)) => splice(text, spans[i].0, next.0, ""),
        // The only one: what [`into_empty`] added goes, what was inside before stays.
        (None, None) => {
            let rest = &text[spans[i].1..container.end - 1];
            let added_after = format!("\n{}", line_indent(text, container.start));
            let end = if rest == added_after {
                container.end - 1
            } else {
                spans[i].1
            };
            splice(text, container.start + 1, end, "")
        }
    }
}

/// Removes item `i` of `arr`.
pub fn remove_item(text: &str, arr: &Node, i: usize) -> String {
    let spans: Vec<(usize, usize)> = arr
        .items()
        .unwrap_or(&[])
        .iter()
        .map(|n| (n.start, n.end))
        .collect();
    remove_at(text, arr, &spans, i)
}

/// Removes member `i` of `obj`.
pub fn remove_member(text: &str, obj: &Node, i: usize) -> String {
    let spans: Vec<(usize, usize)> = obj
        .members()
        .unwrap_or(&[])
        .iter()
        .map(|m| (m.start, m.value.end))
        .collect();
    remove_at(text, obj, &spans, i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GEMINI: &str = "{\n  // my settings\n  \"theme\": \"dark\", /* inline */\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"mine.sh\"}]}\n    ]\n  }\n}\n";

    #[test]
    fn reads_comments_and_locates_members() {
        let root = parse(GEMINI).unwrap();
        let hooks = &root.member("hooks").unwrap().value;
        let arr = &hooks.member("BeforeTool").unwrap().value;
        assert_eq!(arr.items().unwrap().len(), 1);
        assert_eq!(value_of(GEMINI, &root)["theme"], "dark");
        assert_eq!(indent_unit(GEMINI, &root), "  ");
        assert!(has_comments(GEMINI));
    }

    #[test]
    fn edits_keep_everything_else_byte_for_byte() {
        let root = parse(GEMINI).unwrap();
        let arr = root
            .member("hooks")
            .unwrap()
            .value
            .member("BeforeTool")
            .unwrap()
            .value
            .clone();
        let added = append_item(GEMINI, &arr, &json!({"hooks": [{"command": "x"}]}), "  ");
        assert!(added.contains("// my settings") && added.contains("/* inline */"));
        let root2 = parse(&added).unwrap();
        let arr2 = &root2
            .member("hooks")
            .unwrap()
            .value
            .member("BeforeTool")
            .unwrap()
            .value;
        assert_eq!(arr2.items().unwrap().len(), 2);
        let back = remove_item(&added, arr2, 1);
        assert_eq!(back, GEMINI, "adding then removing restores the file");
    }

    #[test]
    fn members_are_added_to_empty_and_full_objects() {
        let text = "{}";
        let root = parse(text).unwrap();
        let out = insert_member(text, &root, "hooks", &json!({"a": [1]}), "  ");
        assert_eq!(
            out,
            "{\n  \"hooks\": {\n    \"a\": [\n      1\n    ]\n  }\n}"
        );
        let root = parse(&out).unwrap();
        let out2 = insert_member(&out, &root, "version", &json!(1), "  ");
        assert_eq!(
            serde_json::from_str::<Value>(&out2).unwrap(),
            json!({"hooks": {"a": [1]}, "version": 1})
        );
        let root = parse(&out2).unwrap();
        let out3 = remove_member(&out2, &root, 1);
        assert_eq!(out3, out);
        let root = parse(&out3).unwrap();
        assert_eq!(remove_member(&out3, &root, 0), "{}");
    }

    #[test]
    fn hostile_files_are_located_errors() {
        for (text, want) in [
            ("{\"a\": 1,}", "trailing comma"),
            ("{\"a\": /* x", "unterminated"),
            ("{\"a\" 1}", "expected `:`"),
            ("{\"a\": tru}", "unexpected `tru`"),
            ("{} {}", "after the end"),
            ("\"\u{1}\"", "control character"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.message.contains(want), "{text}: {e}");
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("deeper than 64"), "{e}");
        let e = parse("{\n  \"a\": [1,\n  ]}").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3), "{e}");
    }
}
