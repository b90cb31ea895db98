//! JavaScript regular expressions for matchers, as Claude Code evaluates them
//! (`RegExp.prototype.test`: unanchored unless written `^…$`).
//!
//! Why three crates: `regress` parses ECMAScript syntax exactly, so a pattern is accepted or
//! rejected as JavaScript would; but it is a pure backtracking engine with no step limit, and a
//! tenant's `(a+)+$` would hang a shared host. So the pattern, once accepted, is translated and
//! run by the linear-time `regex` crate when it needs no backtracking feature (nearly every
//! matcher), else by `fancy-regex`, whose backtracking is bounded per match
//! ([`BACKTRACK_LIMIT`]) and shared per dispatch ([`MatchBudget`]). The translation keeps
//! JavaScript's ASCII meaning of `\d` and `\w`. A JavaScript-valid pattern that `fancy-regex`
//! cannot express (e.g. variable-length lookbehind), or that compiles to more than
//! [`REGEX_SIZE_LIMIT`], is rejected at load time, never at dispatch.

use std::fmt;

use super::budget::{BACKTRACK_LIMIT, MatchBudget, QUICK_BACKTRACK_LIMIT};

/// The most heap one compiled matcher may take (the `regex` crate's `size_limit`, and
/// `fancy-regex`'s delegate limit): 128 KiB. Measured: real matchers compile to under 4 KiB
/// (`Bash|Edit|…|TodoWrite` 3.8 KiB, `^mcp__(github|gitlab|linear)__(create|update)_.*$`
/// 3.1 KiB), a Unicode class `\p{L}+` to 42 KiB. The regex crate's default, 10 MiB, let
/// `\p{L}{2000}` (82 MiB) cost 140 ms before being refused; at 128 KiB it is refused in ~1 ms.
pub const REGEX_SIZE_LIMIT: usize = 128 * 1024;

/// The most a matcher's lazy DFA may cache (the `regex` crate's `dfa_size_limit`, per matcher
/// and thread): 256 KiB instead of the default 2 MiB. A match over a tool name visits at most a
/// few hundred states of about a KiB each; a smaller cache only means the engine falls back to
/// its (still linear) NFA simulation.
pub const REGEX_DFA_SIZE_LIMIT: usize = 256 * 1024;

/// The most instructions a backtracking program may have (`fancy-regex`'s `max_prog_size`).
pub const REGEX_MAX_PROGRAM: usize = 100_000;

/// How much of a pattern messages quote.
const QUOTE_CHARS: usize = 120;

/// Why a matcher regex was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    /// Not a valid JavaScript regular expression.
    #[error("invalid JavaScript regex `{pattern}`: {reason}")]
    Syntax {
        /// The pattern (cut to 120 characters).
        pattern: String,
        /// The parser's message.
        reason: String,
    },
    /// Valid JavaScript, but uses a feature hookbox's bounded engine does not run.
    #[error("regex `{pattern}` uses a JavaScript feature hookbox cannot run safely: {reason}")]
    Unsupported {
        /// The pattern (cut to 120 characters).
        pattern: String,
        /// The engine's message.
        reason: String,
    },
    /// Compiles to more than [`REGEX_SIZE_LIMIT`] bytes: refused before it could cost more.
    #[error(
        "regex `{pattern}` is too big: it compiles to more than {limit} bytes, hookbox's limit for one matcher"
    )]
    TooBig {
        /// The pattern (cut to 120 characters).
        pattern: String,
        /// The limit it went over, in bytes.
        limit: usize,
    },
}

/// How a compiled pattern runs.
#[derive(Clone)]
enum Engine {
    /// Linear time; costs nothing from the dispatch budget.
    Regular {
        /// The pattern in the `regex` crate's syntax.
        translated: String,
        re: regex::Regex,
    },
    /// Backtracking (lookaround, backreferences): a quick attempt, then a full one. Boxed:
    /// two programs are large, and rare.
    Backtracking(Box<[fancy_regex::Regex; 2]>),
}

/// A compiled JavaScript regex.
#[derive(Clone)]
pub struct JsRegex {
    source: String,
    engine: Engine,
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

/// `pattern` cut for a message.
fn quoted(pattern: &str) -> String {
    match pattern.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{}…", &pattern[..i]),
        None => pattern.to_owned(),
    }
}

fn fancy(
    translated: &str,
    backtrack_limit: usize,
) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(translated)
        .backtrack_limit(backtrack_limit)
        .delegate_size_limit(REGEX_SIZE_LIMIT)
        .delegate_dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .max_prog_size(REGEX_MAX_PROGRAM)
        .build()
}

/// The size limit a `fancy-regex` compile error went over, if that is what it is.
fn fancy_too_big(e: &fancy_regex::Error) -> Option<usize> {
    match e {
        fancy_regex::Error::CompileError(c) => match &**c {
            fancy_regex::CompileError::InnerError(b) => b.size_limit(),
            _ => None,
        },
        _ => None,
    }
}

impl JsRegex {
    /// Compiles `pattern` with JavaScript syntax (no flags: case-sensitive, `u` assumed).
    pub fn new(pattern: &str) -> Result<JsRegex, RegexError> {
        regress::Regex::new(pattern).map_err(|e| RegexError::Syntax {
            pattern: quoted(pattern),
            reason: e.to_string(),
        })?;
        let translated = translate(pattern);
        let too_big = |limit: usize| RegexError::TooBig {
            pattern: quoted(pattern),
            limit,
        };
        // The linear engine first: it takes nearly every matcher, and its size limit stops a
        // huge pattern early. Only what it cannot parse (lookaround, backreferences) goes on.
        match regex::RegexBuilder::new(&translated)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
            .build()
        {
            Ok(re) => {
                return Ok(JsRegex {
                    source: pattern.to_owned(),
                    engine: Engine::Regular { translated, re },
                });
            }
            Err(regex::Error::CompiledTooBig(limit)) => return Err(too_big(limit)),
            Err(_) => {}
        }
        let build = |limit: usize| {
            fancy(&translated, limit).map_err(|e| match fancy_too_big(&e) {
                Some(limit) => too_big(limit),
                None => RegexError::Unsupported {
                    pattern: quoted(pattern),
                    reason: e.to_string(),
                },
            })
        };
        let quick = build(QUICK_BACKTRACK_LIMIT)?;
        let full = build(BACKTRACK_LIMIT)?;
        Ok(JsRegex {
            source: pattern.to_owned(),
            engine: Engine::Backtracking(Box::new([quick, full])),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The equivalent `regex`-crate pattern, when the pattern uses no lookaround or
    /// backreference (most matchers): it runs in linear time and can join a `RegexSet`.
    pub fn regular(&self) -> Option<&str> {
        match &self.engine {
            Engine::Regular { translated, .. } => Some(translated),
            Engine::Backtracking(_) => None,
        }
    }

    /// Whether matching may backtrack, and so draws on a dispatch's [`MatchBudget`].
    pub fn is_backtracking(&self) -> bool {
        matches!(self.engine, Engine::Backtracking(_))
    }

    /// Whether the pattern matches anywhere in `text`. A match that exceeds the backtracking
    /// limit counts as no match: a hostile pattern costs at most [`BACKTRACK_LIMIT`] steps per
    /// call. Matching several patterns for one event should share a budget instead
    /// ([`JsRegex::is_match_within`]).
    pub fn is_match(&self, text: &str) -> bool {
        self.is_match_within(text, &mut MatchBudget::unlimited())
            .unwrap_or(false)
    }

    /// Whether the pattern matches anywhere in `text`, paying backtracking from `budget`:
    /// `None` when it could not tell — the budget could not pay for an attempt, or the match
    /// gave up at [`BACKTRACK_LIMIT`]. Callers count `None` as no match, and report it.
    pub fn is_match_within(&self, text: &str, budget: &mut MatchBudget) -> Option<bool> {
        match &self.engine {
            Engine::Regular { re, .. } => Some(re.is_match(text)),
            Engine::Backtracking(attempts) => {
                let [quick, full] = &**attempts;
                for (re, limit) in [(quick, QUICK_BACKTRACK_LIMIT), (full, BACKTRACK_LIMIT)] {
                    if !budget.charge(limit) {
                        return None;
                    }
                    // The only runtime error is the backtrack limit: try the next attempt.
                    if let Ok(hit) = re.is_match(text) {
                        return Some(hit);
                    }
                }
                None
            }
        }
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
    fn huge_patterns_are_refused_by_the_size_limit() {
        // 82 MiB with the regex crate's default limit; refused at REGEX_SIZE_LIMIT instead.
        let e = JsRegex::new(r"\p{L}{2000}").unwrap_err();
        assert_eq!(
            e,
            RegexError::TooBig {
                pattern: r"\p{L}{2000}".into(),
                limit: REGEX_SIZE_LIMIT
            }
        );
        assert!(e.to_string().contains(r"`\p{L}{2000}` is too big"), "{e}");
        // The same through the backtracking engine (a lookahead sends it there).
        let e = JsRegex::new(r"\p{L}{2000}(?=x)").unwrap_err();
        assert!(matches!(e, RegexError::TooBig { .. }), "{e}");
        // Real matchers fit with room to spare.
        for p in [
            r"\p{L}+",
            "^mcp__(github|gitlab|linear)__(create|update)_.*$",
            "Edit.*",
        ] {
            assert!(JsRegex::new(p).unwrap().regular().is_some(), "{p}");
        }
    }

    #[test]
    fn long_patterns_are_quoted_cut() {
        let long = format!("({}", "a".repeat(500));
        let e = JsRegex::new(&long).unwrap_err();
        let RegexError::Syntax { pattern, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(pattern.chars().count(), QUOTE_CHARS + 1, "{pattern}");
        assert!(pattern.ends_with('…'));
    }

    #[test]
    fn backtracking_is_paid_from_the_budget() {
        let re = JsRegex::new(r"(.|.)*\1Z").unwrap();
        assert!(re.is_backtracking());
        let mut b = MatchBudget::new(1_000_000);
        // 2^17 ways to split `run_shell_command`: the quick attempt and the full one give up.
        assert_eq!(re.is_match_within("run_shell_command", &mut b), None);
        assert_eq!(b.spent(), (QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64);
        // A short subject is decided by the quick attempt alone.
        assert_eq!(re.is_match_within("Bash", &mut b), Some(false));
        assert_eq!(
            b.spent(),
            (2 * QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64
        );
        // A budget that cannot pay for an attempt refuses to run it.
        let mut poor = MatchBudget::new(10);
        assert_eq!(re.is_match_within("Bash", &mut poor), None);
        assert!(poor.exhausted());
        assert_eq!(poor.spent(), 0);
        // Regular patterns are free.
        let re = JsRegex::new("Edit.*").unwrap();
        assert_eq!(re.is_match_within("NotebookEdit", &mut poor), Some(true));
        assert_eq!(poor.spent(), 0);
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
