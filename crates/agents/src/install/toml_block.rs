//! The block of TOML hookbox keeps in a user's file (Kimi's hooks in `~/.kimi/config.toml`,
//! Codex's trust records in its `config.toml`): everything between two marker comments, appended
//! at the end (a table header is valid anywhere in TOML), replaced whole by a later install and
//! removed whole by uninstall, so the user's own tables and comments are never rewritten.

/// The two marker lines of one block.
pub(super) struct Markers {
    /// The first line.
    pub begin: &'static str,
    /// The last line.
    pub end: &'static str,
}

impl Markers {
    /// The byte range of the block in `text`: its marker lines and the line break after the end.
    pub(super) fn range(&self, text: &str) -> Option<(usize, usize)> {
        let start = text.find(self.begin)?;
        let from_end = text[start..].find(self.end)? + start;
        let mut end = from_end + self.end.len();
        if text[end..].starts_with('\n') {
            end += 1;
        }
        Some((start, end))
    }

    /// `text` without the block.
    pub(super) fn without(&self, text: &str) -> String {
        match self.range(text) {
            Some((s, e)) => format!("{}{}", &text[..s], &text[e..]),
            None => text.to_owned(),
        }
    }

    /// Appends the block holding `body` (TOML lines, each ending in a line break) to `out`;
    /// nothing when `body` is empty.
    pub(super) fn append(&self, out: &mut String, body: &str) {
        if body.is_empty() {
            return;
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(self.begin);
        out.push('\n');
        out.push_str(body);
        out.push_str(self.end);
        out.push('\n');
    }
}

/// A TOML basic string.
pub(super) fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: Markers = Markers {
        begin: "# >>> b",
        end: "# <<< e",
    };

    #[test]
    fn a_block_is_appended_found_and_removed_whole() {
        let user = "a = 1";
        let mut out = M.without(user);
        M.append(&mut out, "x = 2\n");
        assert_eq!(out, "a = 1\n# >>> b\nx = 2\n# <<< e\n");
        assert_eq!(M.without(&out), "a = 1\n");
        let mut none = String::from("a = 1\n");
        M.append(&mut none, "");
        assert_eq!(none, "a = 1\n");
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string("a\"b\\c\nd"), r#""a\"b\\c\u000Ad""#);
        let t: toml::Table = toml::from_str(&format!("k = {}", toml_string("a\"b\\c\nd"))).unwrap();
        assert_eq!(t["k"].as_str(), Some("a\"b\\c\nd"));
    }
}
