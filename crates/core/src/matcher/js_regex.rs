//! JavaScript regular expressions for matchers, as Claude Code evaluates them
//! (`RegExp.prototype.test`: unanchored unless written `^…$`).
//!
//! Why three crates: `regress` parses ECMAScript syntax exactly, so a pattern is accepted or
//! rejected as JavaScript would; but it is a pure backtracking engine with no step limit, and a
//! tenant's `(a+)+$` would hang a shared host. So the pattern, once accepted, is translated and
//! run by the linear-time `regex` crate when it needs no backtracking feature (nearly every
//! matcher), else by `fancy-regex`, whose backtracking is bounded per match
//! ([`BACKTRACK_LIMIT`]) and shared per dispatch ([`MatchBudget`]). The translation keeps
//! JavaScript's meaning of `\d`, `\w`, `\s`, `\b`, `.` and of Annex B's escapes (the pattern is
//! parsed as `regress` parses it, then spelled for Rust). A JavaScript-valid pattern that `fancy-regex`
//! cannot express (e.g. variable-length lookbehind), or that compiles to more than
//! [`REGEX_SIZE_LIMIT`], is rejected at load time, never at dispatch.
//!
//! This file is the compiled type ([`JsRegex`]) and how it runs; the translation is three steps,
//! one module each: `parse` (ECMAScript syntax to a tree), `check` (what Rust would read
//! differently is refused) and `emit` (the tree spelled for `regex` or `fancy-regex`).

mod check;
mod emit;
mod parse;
#[cfg(test)]
mod tests;

use std::fmt;

use super::budget::{BACKTRACK_LIMIT, MatchBudget, QUICK_BACKTRACK_LIMIT};
use emit::Target;
use parse::PatternError;

/// The most heap one compiled matcher may take (the `regex` crate's `size_limit`, and
/// `fancy-regex`'s delegate limit): 128 KiB. Measured: real matchers compile to under 4 KiB
/// (`Bash|Edit|…|TodoWrite` 3.8 KiB, `^mcp__(github|gitlab|linear)__(create|update)_.*$`
/// 3.1 KiB), the Rust class `\p{L}+` to 42 KiB. The regex crate's default, 10 MiB, let Rust's
/// `\p{L}{2000}` (82 MiB) cost 140 ms before being refused; at 128 KiB it is refused in ~1 ms,
/// as is JavaScript's `\S{2000}` (`\p{L}` itself is `p{L}` in JavaScript without the `u` flag).
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
    /// Compiles `pattern` with JavaScript syntax, as `new RegExp(pattern)` does: no flags, so
    /// case-sensitive and without the `u` flag (Annex B: `\A` is `A`, `{,2}` is text, `\01`
    /// is octal).
    pub fn new(pattern: &str) -> Result<JsRegex, RegexError> {
        regress::Regex::new(pattern).map_err(|e| RegexError::Syntax {
            pattern: quoted(pattern),
            reason: e.to_string(),
        })?;
        let unsupported = |reason: String| RegexError::Unsupported {
            pattern: quoted(pattern),
            reason,
        };
        let translated = translate(pattern).map_err(|e| unsupported(e.to_string()))?;
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
        // `fancy-regex` refuses `(?-u:…)`: the word boundaries are spelled with lookaround.
        let translated =
            translate_for(pattern, Target::Fancy).map_err(|e| unsupported(e.to_string()))?;
        let build = |limit: usize| {
            fancy(&translated, limit).map_err(|e| match fancy_too_big(&e) {
                Some(limit) => too_big(limit),
                None => unsupported(e.to_string()),
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

/// Parses a JavaScript pattern (already accepted by `regress`), refuses what Rust would read
/// differently, and spells it for `target`.
fn translate_for(js: &str, target: Target) -> Result<String, PatternError> {
    let ast = parse::parse(js)?;
    check::check(&ast)?;
    Ok(emit::spell(&ast, js.len(), target))
}

/// The pattern in the `regex` crate's syntax (see [`translate_for`]).
fn translate(js: &str) -> Result<String, PatternError> {
    translate_for(js, Target::Regex)
}
