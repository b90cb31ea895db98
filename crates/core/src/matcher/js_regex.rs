//! JavaScript regular expressions for matchers, as Claude Code evaluates them
//! (`RegExp.prototype.test`: unanchored unless written `^…$`).
//!
//! Why two crates: `regress` parses ECMAScript syntax exactly, so a pattern is accepted or
//! rejected as JavaScript would; but it is a pure backtracking engine with no step limit, and a
//! tenant's `(a+)+$` would hang a shared host. So the pattern, once accepted, is translated to
//! `fancy-regex`, which runs everything regular on the linear-time `regex` crate and bounds the
//! backtracking of lookaround/backreferences ([`BACKTRACK_LIMIT`]). The translation keeps
//! JavaScript's ASCII meaning of `\d` and `\w`. A JavaScript-valid pattern that `fancy-regex`
//! cannot express (e.g. variable-length lookbehind) is rejected at load time, never at dispatch.

use std::fmt;

/// Backtracking steps a match may take before it gives up and counts as "no match".
pub const BACKTRACK_LIMIT: usize = 100_000;

/// Why a matcher regex was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    /// Not a valid JavaScript regular expression.
    #[error("invalid JavaScript regex `{pattern}`: {reason}")]
    Syntax {
        /// The pattern.
        pattern: String,
        /// The parser's message.
        reason: String,
    },
    /// Valid JavaScript, but uses a feature hookbox's bounded engine does not run.
    #[error("regex `{pattern}` uses a JavaScript feature hookbox cannot run safely: {reason}")]
    Unsupported {
        /// The pattern.
        pattern: String,
        /// The engine's message.
        reason: String,
    },
}

/// A compiled JavaScript regex.
#[derive(Clone)]
pub struct JsRegex {
    source: String,
    /// The pattern in the `regex` crate's syntax, when it needs no backtracking feature: the
    /// rule index can then test many such patterns in one pass (a `RegexSet`).
    regular: Option<String>,
    re: fancy_regex::Regex,
}

impl fmt::Debug for JsRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}/", self.source)
    }
}

impl PartialEq for JsRegex {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl JsRegex {
    /// Compiles `pattern` with JavaScript syntax (no flags: case-sensitive, `u` assumed).
    pub fn new(pattern: &str) -> Result<JsRegex, RegexError> {
        regress::Regex::new(pattern).map_err(|e| RegexError::Syntax {
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })?;
        let translated = translate(pattern);
        let re = fancy_regex::RegexBuilder::new(&translated)
            .backtrack_limit(BACKTRACK_LIMIT)
            .build()
            .map_err(|e| RegexError::Unsupported {
                pattern: pattern.to_owned(),
                reason: e.to_string(),
            })?;
        let regular = regex::Regex::new(&translated).is_ok().then_some(translated);
        Ok(JsRegex {
            source: pattern.to_owned(),
            regular,
            re,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The equivalent `regex`-crate pattern, when the pattern uses no lookaround or
    /// backreference (most matchers): it runs in linear time and can join a `RegexSet`.
    pub fn regular(&self) -> Option<&str> {
        self.regular.as_deref()
    }

    /// Whether the pattern matches anywhere in `text`. A match that exceeds the backtracking
    /// limit counts as no match: a hostile pattern can cost at most [`BACKTRACK_LIMIT`] steps.
    pub fn is_match(&self, text: &str) -> bool {
        self.re.is_match(text).unwrap_or(false)
    }
}

/// Rewrites JavaScript-only spellings into the `regex`/`fancy-regex` dialect.
fn translate(js: &str) -> String {
    let mut out = String::with_capacity(js.len() + 8);
    let mut chars = js.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    break;
                };
                match (e, in_class) {
                    // JavaScript's \d and \w are ASCII-only; Rust's are Unicode.
                    ('d', false) => out.push_str("[0-9]"),
                    ('D', false) => out.push_str("[^0-9]"),
                    ('w', false) => out.push_str("[A-Za-z0-9_]"),
                    ('W', false) => out.push_str("[^A-Za-z0-9_]"),
                    ('d', true) => out.push_str("0-9"),
                    ('w', true) => out.push_str("A-Za-z0-9_"),
                    ('D', true) => out.push_str("[^0-9]"),
                    ('W', true) => out.push_str("[^A-Za-z0-9_]"),
                    ('u', _) if chars.peek() == Some(&'{') => out.push_str("\\x"),
                    ('u', _) => {
                        let hex: String = chars.by_ref().take(4).collect();
                        out.push_str("\\x{");
                        out.push_str(&hex);
                        out.push('}');
                    }
                    ('0', _) => out.push_str("\\x00"),
                    ('c', _) => {
                        let letter = chars.next().unwrap_or('@');
                        out.push_str(&format!("\\x{{{:02X}}}", (letter as u32) % 32));
                    }
                    ('/', _) => out.push('/'),
                    ('-', _) => out.push_str("\\-"),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                if js_rest_starts(&mut chars, "^]") {
                    out.push_str("[\\s\\S]");
                } else if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("[^\\s\\S]");
                } else {
                    in_class = true;
                    out.push('[');
                    if chars.peek() == Some(&'^') {
                        out.push('^');
                        chars.next();
                    }
                    // A `]` or `[` first in a JavaScript class is... `]` closes an empty class
                    // (handled above); `[` is literal in JavaScript but opens a nested class in Rust.
                    if chars.peek() == Some(&'[') {
                        chars.next();
                        out.push_str("\\[");
                    }
                }
            }
            '[' => out.push_str("\\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            // Rust treats `&&`, `--`, `~~` inside classes as set operators; JavaScript does not.
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// If the upcoming characters are `s`, consumes them and returns true.
fn js_rest_starts(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, s: &str) -> bool {
    let snapshot: String = chars.clone().take(s.chars().count()).collect();
    if snapshot == s {
        for _ in s.chars() {
            chars.next();
        }
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        JsRegex::new(p).unwrap().is_match(t)
    }

    #[test]
    fn unanchored_like_regexp_test() {
        assert!(m("Edit.*", "NotebookEdit"));
        assert!(!m("^Edit.*$", "NotebookEdit"));
        assert!(m("mcp__memory__.*", "mcp__memory__create_entities"));
        assert!(m("^(startup|resume|compact)$", "resume"));
        assert!(m("Notebook.*", "NotebookEdit"));
    }

    #[test]
    fn javascript_semantics_for_classes_and_escapes() {
        assert!(m(r"^\d+$", "123"));
        assert!(!m(r"^\d+$", "١٢٣"), "\\d is ASCII-only in JavaScript");
        assert!(!m(r"^\w+$", "héllo"));
        assert!(m(r"^[\w-]+$", "code-reviewer"));
        assert!(m(r"a\/b", "a/b"));
        assert!(m(r"^\u0041$", "A"));
        assert!(m("[^]", "x"));
        assert!(!m("a[]", "a"));
        assert!(m("[a&&b]", "&"));
        assert!(m(r"(?<v>ab)\k<v>", "abab"));
        assert!(m(r"Bash(?=\()", "Bash(ls)"));
    }

    #[test]
    fn invalid_patterns_fail_at_compile_time() {
        let e = JsRegex::new("Bash(").unwrap_err();
        assert!(matches!(e, RegexError::Syntax { .. }), "{e}");
        assert!(e.to_string().contains("Bash("));
        assert!(JsRegex::new("*Bash").is_err());
        assert!(
            JsRegex::new("(?i)bash").is_err(),
            "inline flags are not JavaScript"
        );
    }

    #[test]
    fn catastrophic_backtracking_is_bounded() {
        // With a backreference the whole pattern runs on the backtracking VM.
        let re = JsRegex::new(r"^(a+)+\1$").unwrap();
        let evil = format!("{}!", "a".repeat(40));
        assert!(!re.is_match(&evil));
        // Regular patterns run on the linear engine.
        let re = JsRegex::new("^(a+)+$").unwrap();
        assert!(!re.is_match(&evil));
    }
}
