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

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::OnceLock;

use super::budget::{BACKTRACK_LIMIT, MatchBudget, QUICK_BACKTRACK_LIMIT};

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
        let translated = translate(pattern).map_err(unsupported)?;
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
        let translated = translate_for(pattern, Target::Fancy).map_err(unsupported)?;
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

/// JavaScript's `\s`: WhiteSpace and LineTerminator (not Unicode `White_Space`: U+FEFF is in,
/// U+0085 is out), as members of a Rust class.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// JavaScript's `\w` (ASCII in every mode without the `u` and `i` flags).
const JS_WORD: &str = "A-Za-z0-9_";

/// A JavaScript pattern, parsed as `regress` parses it without flags (ECMAScript with
/// Annex B), so that it can be re-spelled for Rust without changing its meaning.
#[derive(Debug)]
enum Node {
    Char(u32),
    /// A bracket class (`negated`, items) or a shorthand (`\d` …, one item).
    Class(bool, Vec<ClassItem>),
    Dot,
    Start,
    End,
    /// `\b` (true) or `\B`.
    WordBoundary(bool),
    /// A backreference, 1-based.
    Backref(usize),
    /// `(…)` capturing (`Some(index)`, 1-based) or `(?:…)`.
    Group(Option<usize>, Box<Node>),
    /// `(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`: the opening text, and the body.
    Look(&'static str, Box<Node>),
    /// `(?ims-ims:…)`: the flags text, and the body.
    Modifiers(String, Box<Node>),
    Cat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: usize,
        max: Option<usize>,
        greedy: bool,
    },
}

#[derive(Debug, Clone, Copy)]
enum Shorthand {
    Digit,
    Word,
    Space,
}

#[derive(Debug, Clone, Copy)]
enum ClassItem {
    Range(u32, u32),
    /// `\d`, `\w`, `\s` (true) or their negations.
    Set(Shorthand, bool),
}

/// A step of the way from the root of a pattern down to a node, for the backreference check.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// A quantifier, numbered in the walk: whether it repeats (`max > 1`), whether it may
    /// run its body zero times, and whether its body may match the empty string.
    Repeat(usize, bool, bool, bool),
    /// One branch of an alternation with more than one branch.
    Branch,
    Look,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    groups: usize,
    /// Capturing groups by name, with their index.
    names: Vec<(String, usize)>,
    next_group: usize,
    /// The capturing groups the parser is inside.
    open: Vec<usize>,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.chars.len() >= self.pos + n
            && s.chars()
                .eq(self.chars[self.pos..self.pos + n].iter().copied())
        {
            self.pos += n;
            true
        } else {
            false
        }
    }

    /// Counts capturing groups and collects their names (before parsing, as `\1` and `\k`
    /// depend on the whole pattern).
    fn scan_groups(&mut self) {
        let mut in_class = false;
        let mut i = 0;
        while i < self.chars.len() {
            match self.chars[i] {
                '\\' => i += 1,
                '[' if !in_class => in_class = true,
                ']' if in_class => in_class = false,
                '(' if !in_class => {
                    let next = self.chars.get(i + 1).copied();
                    let after = self.chars.get(i + 2).copied();
                    let third = self.chars.get(i + 3).copied();
                    if next != Some('?') {
                        self.groups += 1;
                    } else if after == Some('<') && !matches!(third, Some('=' | '!')) {
                        self.groups += 1;
                        let name: String = self.chars[i + 3..]
                            .iter()
                            .take_while(|&&c| c != '>')
                            .collect();
                        self.names.push((name, self.groups));
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn disjunction(&mut self) -> Result<Node, String> {
        let mut branches = vec![self.alternative()?];
        while self.eat('|') {
            branches.push(self.alternative()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().expect("one branch")
        } else {
            Node::Alt(branches)
        })
    }

    fn alternative(&mut self) -> Result<Node, String> {
        let mut terms: Vec<Node> = Vec::new();
        while let Some(c) = self.peek() {
            let atom = match c {
                ')' | '|' => break,
                '^' => {
                    self.pos += 1;
                    Node::Start
                }
                '$' => {
                    self.pos += 1;
                    Node::End
                }
                '\\' => {
                    self.pos += 1;
                    self.atom_escape(&mut terms)?
                }
                '.' => {
                    self.pos += 1;
                    Node::Dot
                }
                '(' => self.group()?,
                '[' => self.class()?,
                _ => {
                    self.pos += 1;
                    Node::Char(c as u32)
                }
            };
            let atom = match self.quantifier() {
                Some((min, max, greedy)) => Node::Repeat {
                    node: Box::new(atom),
                    min,
                    max,
                    greedy,
                },
                None => atom,
            };
            terms.push(atom);
        }
        Ok(if terms.len() == 1 {
            terms.pop().expect("one term")
        } else {
            Node::Cat(terms)
        })
    }

    fn decimal(&mut self) -> Option<usize> {
        let start = self.pos;
        let mut n: usize = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(d as usize);
            self.pos += 1;
        }
        (self.pos > start).then_some(n)
    }

    fn quantifier(&mut self) -> Option<(usize, Option<usize>, bool)> {
        let (min, max) = match self.peek()? {
            '*' => {
                self.pos += 1;
                (0, None)
            }
            '+' => {
                self.pos += 1;
                (1, None)
            }
            '?' => {
                self.pos += 1;
                (0, Some(1))
            }
            '{' => {
                let start = self.pos;
                self.pos += 1;
                let Some(min) = self.decimal() else {
                    self.pos = start;
                    return None;
                };
                let max = if self.eat(',') {
                    self.decimal()
                } else {
                    Some(min)
                };
                if !self.eat('}') {
                    self.pos = start;
                    return None;
                }
                (min, max)
            }
            _ => return None,
        };
        Some((min, max, !self.eat('?')))
    }

    /// A capturing group's body, its `(` read.
    fn capture(&mut self) -> Result<Node, String> {
        self.next_group += 1;
        let index = self.next_group;
        self.open.push(index);
        let body = self.disjunction()?;
        self.open.pop();
        Ok(Node::Group(Some(index), Box::new(body)))
    }

    /// A backreference. Inside its own group it always matches the empty string in JavaScript
    /// (the capture is set when the group closes, and reset at each repetition): refused, as
    /// pointless, and as `regress` (the reference the fuzz target compares with) reads a stale
    /// capture there after backtracking (`((a|)\1)(a)` on `a`: V8 true, `regress` false).
    fn backref(&self, n: usize) -> Result<Node, String> {
        if self.open.contains(&n) {
            return Err(format!(
                "backreference \\{n} inside group {n} itself (JavaScript matches it empty; \
                 write nothing instead)"
            ));
        }
        Ok(Node::Backref(n))
    }

    fn group(&mut self) -> Result<Node, String> {
        let node = if self.eat_str("(?=") {
            Node::Look("(?=", Box::new(self.disjunction()?))
        } else if self.eat_str("(?!") {
            Node::Look("(?!", Box::new(self.disjunction()?))
        } else if self.eat_str("(?<=") {
            Node::Look("(?<=", Box::new(self.disjunction()?))
        } else if self.eat_str("(?<!") {
            Node::Look("(?<!", Box::new(self.disjunction()?))
        } else if self.eat_str("(?:") {
            Node::Group(None, Box::new(self.disjunction()?))
        } else if self.eat_str("(?<") {
            while self.pos < self.chars.len() && !self.eat('>') {
                self.pos += 1;
            }
            self.capture()?
        } else if self.eat_str("(?") {
            let mut flags = String::new();
            while let Some(c) = self.peek() {
                self.pos += 1;
                if c == ':' {
                    break;
                }
                flags.push(c);
            }
            Node::Modifiers(flags, Box::new(self.disjunction()?))
        } else {
            self.pos += 1;
            self.capture()?
        };
        if !self.eat(')') {
            return Err("unbalanced parenthesis".into());
        }
        Ok(node)
    }

    /// After a `\` outside a class. `terms` takes the `\` of an Annex B `\c`.
    fn atom_escape(&mut self, terms: &mut Vec<Node>) -> Result<Node, String> {
        let Some(c) = self.peek() else {
            return Err("trailing backslash".into());
        };
        let shorthand = |s, positive| Node::Class(false, vec![ClassItem::Set(s, positive)]);
        Ok(match c {
            'b' | 'B' => {
                self.pos += 1;
                Node::WordBoundary(c == 'b')
            }
            'd' | 'D' => {
                self.pos += 1;
                shorthand(Shorthand::Digit, c == 'd')
            }
            'w' | 'W' => {
                self.pos += 1;
                shorthand(Shorthand::Word, c == 'w')
            }
            's' | 'S' => {
                self.pos += 1;
                shorthand(Shorthand::Space, c == 's')
            }
            'c' => {
                self.pos += 1;
                match self.peek() {
                    Some(l) if l.is_ascii_alphabetic() => {
                        self.pos += 1;
                        Node::Char(l as u32 % 32)
                    }
                    // Annex B: a backslash, then `c` (which a quantifier applies to).
                    _ => {
                        terms.push(Node::Char('\\' as u32));
                        Node::Char('c' as u32)
                    }
                }
            }
            '1'..='9' => {
                let start = self.pos;
                let n = self.decimal().unwrap_or(0);
                if n <= self.groups {
                    self.backref(n)?
                } else {
                    self.pos = start;
                    Node::Char(self.character_escape()?)
                }
            }
            'k' if !self.names.is_empty() => {
                self.pos += 1;
                self.eat('<');
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == '>' {
                        break;
                    }
                    name.push(c);
                }
                let mut indices = self.names.iter().filter(|(n, _)| *n == name);
                match (indices.next(), indices.next()) {
                    (Some(&(_, index)), None) => self.backref(index)?,
                    _ => return Err(format!("backreference to a duplicated group name `{name}`")),
                }
            }
            _ => Node::Char(self.character_escape()?),
        })
    }

    /// After a `\`: a CharacterEscape (with Annex B's identity and octal escapes).
    fn character_escape(&mut self) -> Result<u32, String> {
        let c = self.peek().ok_or("trailing backslash")?;
        self.pos += 1;
        let octal = |c: Option<char>| {
            c.filter(|c| ('0'..='7').contains(c))
                .map(|c| c as u32 - '0' as u32)
        };
        Ok(match c {
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            'x' => {
                let hex = |c: Option<char>| c.and_then(|c| c.to_digit(16));
                match (hex(self.peek()), hex(self.peek_at(1))) {
                    (Some(a), Some(b)) => {
                        self.pos += 2;
                        a * 16 + b
                    }
                    _ => 'x' as u32,
                }
            }
            'u' => self.unicode_escape()?.unwrap_or('u' as u32),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => 0,
            '0'..='7' => {
                let first = c as u32 - '0' as u32;
                match octal(self.peek()) {
                    None => first,
                    Some(second) if first >= 4 => {
                        self.pos += 1;
                        first * 8 + second
                    }
                    Some(second) => {
                        self.pos += 1;
                        match octal(self.peek()) {
                            Some(third) => {
                                self.pos += 1;
                                first * 64 + second * 8 + third
                            }
                            None => first * 8 + second,
                        }
                    }
                }
            }
            other => other as u32,
        })
    }

    /// After `\u`: `{X…}` or four hex digits (a surrogate pair joined), as `regress` reads
    /// them; `None` if neither follows (a literal `u`). A lone surrogate has no Rust spelling.
    fn unicode_escape(&mut self) -> Result<Option<u32>, String> {
        let start = self.pos;
        if self.eat('{') {
            let hex: String = self.chars[self.pos..]
                .iter()
                .take_while(|&&c| c != '}')
                .collect();
            if self.pos + hex.chars().count() < self.chars.len()
                && let Ok(v) = u32::from_str_radix(&hex, 16)
                && v <= 0x10_FFFF
            {
                self.pos += hex.chars().count() + 1;
                return Ok(Some(v));
            }
            self.pos = start;
            return Ok(None);
        }
        let Some(high) = self.hex4() else {
            return Ok(None);
        };
        if !(0xD800..=0xDFFF).contains(&high) {
            return Ok(Some(high));
        }
        if (0xD800..=0xDBFF).contains(&high) && self.eat_str("\\u") {
            let after = self.pos;
            if let Some(low) = self.hex4()
                && (0xDC00..=0xDFFF).contains(&low)
            {
                return Ok(Some(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)));
            }
            self.pos = after;
        }
        Err("a lone surrogate (`\\uD800`–`\\uDFFF`) cannot match UTF-8 text".into())
    }

    fn hex4(&mut self) -> Option<u32> {
        let hex: String = self.chars.get(self.pos..self.pos + 4)?.iter().collect();
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        u32::from_str_radix(&hex, 16).ok()
    }

    fn class(&mut self) -> Result<Node, String> {
        self.pos += 1;
        let negated = self.eat('^');
        let mut items = Vec::new();
        loop {
            if self.eat(']') {
                return Ok(Node::Class(negated, items));
            }
            let first = self.class_atom()?;
            if !(self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']')) {
                items.push(first);
                continue;
            }
            self.pos += 1;
            let second = self.class_atom()?;
            match (first, second) {
                (ClassItem::Range(a, _), ClassItem::Range(b, _)) => {
                    items.push(ClassItem::Range(a, b))
                }
                // Annex B: `[\d-a]` is `\d`, `-` and `a`.
                _ => items.extend([first, ClassItem::Range(0x2D, 0x2D), second]),
            }
        }
    }

    fn class_atom(&mut self) -> Result<ClassItem, String> {
        let c = self.peek().ok_or("unterminated class")?;
        self.pos += 1;
        if c != '\\' {
            return Ok(ClassItem::Range(c as u32, c as u32));
        }
        let e = self.peek().ok_or("trailing backslash")?;
        let set = |s, positive| Ok(ClassItem::Set(s, positive));
        let one = |v: u32| Ok(ClassItem::Range(v, v));
        match e {
            'b' => {
                self.pos += 1;
                one(0x08)
            }
            'd' | 'D' => {
                self.pos += 1;
                set(Shorthand::Digit, e == 'd')
            }
            'w' | 'W' => {
                self.pos += 1;
                set(Shorthand::Word, e == 'w')
            }
            's' | 'S' => {
                self.pos += 1;
                set(Shorthand::Space, e == 's')
            }
            'c' => match self.peek_at(1) {
                Some(l) if l.is_ascii_alphanumeric() || l == '_' => {
                    self.pos += 2;
                    one(l as u32 % 32)
                }
                // Annex B: a backslash; the `c` is read next.
                _ => one('\\' as u32),
            },
            _ => one(self.character_escape()?),
        }
    }
}

/// A character, spelled for Rust (inside or outside a class).
fn push_char(out: &mut String, c: u32) {
    match char::from_u32(c) {
        Some(ch) if "\\.+*?()|[]{}^$#&-~".contains(ch) => {
            out.push('\\');
            out.push(ch);
        }
        Some(ch) if ch.is_ascii_graphic() || ch == ' ' || (!ch.is_ascii() && !ch.is_control()) => {
            out.push(ch)
        }
        _ => out.push_str(&format!("\\x{{{c:X}}}")),
    }
}

fn push_set(out: &mut String, s: Shorthand, positive: bool) {
    let members = match s {
        Shorthand::Digit => "0-9",
        Shorthand::Word => JS_WORD,
        Shorthand::Space => JS_SPACE,
    };
    if positive {
        out.push_str(members);
    } else {
        out.push_str("[^");
        out.push_str(members);
        out.push(']');
    }
}

/// How the emitted pattern will run: `fancy-regex` refuses `(?-u:…)`.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Regex,
    Fancy,
}

/// What applies where a node is emitted: the target, and the flags of the enclosing
/// modifier groups (`(?ims-ims:…)`), which are spelled out rather than left to Rust's flags.
#[derive(Clone, Copy)]
struct Mode {
    target: Target,
    dot_all: bool,
    icase: bool,
    multiline: bool,
}

/// JavaScript's line terminators, as members of a Rust class.
const JS_LINE_END: &str = r"\n\r\x{2028}\x{2029}";

/// `Canonicalize` of ECMAScript without the `u` flag: the upper case of a UTF-16 code unit,
/// unless that is several characters, or ASCII for a non-ASCII one (`ſ` stays `ſ`).
fn js_canonicalize(c: u32) -> u32 {
    let Some(ch) = char::from_u32(c).filter(|_| c <= 0xFFFF) else {
        return c;
    };
    let mut up = ch.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) if !(c >= 128 && (u as u32) < 128) => u as u32,
        _ => c,
    }
}

/// Sets of characters `i` makes equal, and the set of each member.
type CaseSets = (Vec<Vec<u32>>, HashMap<u32, usize>);

/// The characters `i` makes equal, in sets of two or more (from [`js_canonicalize`]), and the
/// set of each such character.
fn case_sets() -> &'static CaseSets {
    static SETS: OnceLock<CaseSets> = OnceLock::new();
    SETS.get_or_init(|| {
        let mut by_canon: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for c in (0..0xD800).chain(0xE000..=0xFFFF) {
            by_canon.entry(js_canonicalize(c)).or_default().push(c);
        }
        let sets: Vec<Vec<u32>> = by_canon.into_values().filter(|s| s.len() > 1).collect();
        let index = sets
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.iter().map(move |&c| (c, i)))
            .collect();
        (sets, index)
    })
}

/// Sorted, merged ranges.
fn normalized(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0;
    for &(a, b) in ranges {
        if a > next {
            out.push((next, a - 1));
        }
        next = b + 1;
    }
    if next <= 0x10_FFFF {
        out.push((next, 0x10_FFFF));
    }
    out
}

fn shorthand_ranges(s: Shorthand) -> Vec<(u32, u32)> {
    let pairs: &[(u32, u32)] = match s {
        Shorthand::Digit => &[(0x30, 0x39)],
        Shorthand::Word => &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
        Shorthand::Space => &[
            (0x09, 0x0D),
            (0x20, 0x20),
            (0xA0, 0xA0),
            (0x1680, 0x1680),
            (0x2000, 0x200A),
            (0x2028, 0x2029),
            (0x202F, 0x202F),
            (0x205F, 0x205F),
            (0x3000, 0x3000),
            (0xFEFF, 0xFEFF),
        ],
    };
    pairs.to_vec()
}

/// The members of a class under `i`: each member with every character `i` makes equal to it.
fn case_closed(items: &[ClassItem]) -> Vec<(u32, u32)> {
    let mut ranges = Vec::new();
    for item in items {
        match *item {
            ClassItem::Range(a, b) => ranges.push((a, b)),
            ClassItem::Set(s, true) => ranges.extend(shorthand_ranges(s)),
            ClassItem::Set(s, false) => ranges.extend(complement(&shorthand_ranges(s))),
        }
    }
    let ranges = normalized(ranges);
    let contains = |c: u32| {
        let i = ranges.partition_point(|&(_, b)| b < c);
        ranges.get(i).is_some_and(|&(a, _)| a <= c)
    };
    let mut closed = ranges.clone();
    for set in &case_sets().0 {
        if set.iter().any(|&c| contains(c)) {
            closed.extend(set.iter().map(|&c| (c, c)));
        }
    }
    normalized(closed)
}

/// A class of ranges (no surrogates: Rust has no spelling for them, and text has none).
fn push_ranges(out: &mut String, negated: bool, ranges: &[(u32, u32)]) {
    let ranges: Vec<(u32, u32)> = ranges
        .iter()
        .flat_map(|&(a, b)| [(a, b.min(0xD7FF)), (a.max(0xE000), b)])
        .filter(|&(a, b)| a <= b)
        .collect();
    if ranges.is_empty() {
        out.push_str(if negated { r"[\s\S]" } else { r"[^\s\S]" });
        return;
    }
    out.push_str(if negated { "[^" } else { "[" });
    for (a, b) in ranges {
        push_char(out, a);
        if a != b {
            out.push('-');
            push_char(out, b);
        }
    }
    out.push(']');
}

fn emit(node: &Node, mode: Mode, out: &mut String) {
    const W: &str = "[A-Za-z0-9_]";
    match node {
        Node::Char(c) if mode.icase => match case_sets().1.get(c) {
            Some(&i) => {
                let set = &case_sets().0[i];
                push_ranges(
                    out,
                    false,
                    &normalized(set.iter().map(|&c| (c, c)).collect()),
                );
            }
            None => push_char(out, *c),
        },
        Node::Char(c) => push_char(out, *c),
        Node::Class(negated, items) if mode.icase => {
            push_ranges(out, *negated, &case_closed(items))
        }
        Node::Class(negated, items) => {
            if let ([ClassItem::Set(s, positive)], false) = (items.as_slice(), negated) {
                // A shorthand alone: one class.
                out.push_str(if *positive { "[" } else { "[^" });
                push_set(out, *s, true);
                out.push(']');
                return;
            }
            if items.is_empty() {
                // `[]` matches nothing, `[^]` anything.
                out.push_str(if *negated { r"[\s\S]" } else { r"[^\s\S]" });
                return;
            }
            out.push('[');
            if *negated {
                out.push('^');
            }
            for item in items {
                match *item {
                    ClassItem::Range(a, b) => {
                        push_char(out, a);
                        if a != b {
                            out.push('-');
                            push_char(out, b);
                        }
                    }
                    ClassItem::Set(s, positive) => push_set(out, s, positive),
                }
            }
            out.push(']');
        }
        Node::Dot if mode.dot_all => out.push_str(r"[\s\S]"),
        Node::Dot => out.push_str(&format!("[^{JS_LINE_END}]")),
        // In multiline mode, after or before any of JavaScript's line terminators.
        Node::Start if mode.multiline => out.push_str(&format!("(?:^|(?<=[{JS_LINE_END}]))")),
        Node::End if mode.multiline => out.push_str(&format!("(?:$|(?=[{JS_LINE_END}]))")),
        Node::Start => out.push('^'),
        Node::End => out.push('$'),
        Node::WordBoundary(b) => match mode.target {
            Target::Regex => out.push_str(if *b { r"(?-u:\b)" } else { r"(?-u:\B)" }),
            Target::Fancy if *b => out.push_str(&format!("(?:(?<={W})(?!{W})|(?<!{W})(?={W}))")),
            Target::Fancy => out.push_str(&format!("(?:(?<={W})(?={W})|(?<!{W})(?!{W}))")),
        },
        // A group that did not take part matches the empty string in JavaScript.
        Node::Backref(n) => out.push_str(&format!(r"(?({n})\{n})")),
        Node::Group(index, body) => {
            out.push_str(if index.is_some() { "(" } else { "(?:" });
            emit(body, mode, out);
            out.push(')');
        }
        Node::Look(open, body) => {
            out.push_str(open);
            emit(body, mode, out);
            out.push(')');
        }
        Node::Modifiers(flags, body) => {
            let on = flags.split('-').next().unwrap_or("");
            let off = flags.split('-').nth(1).unwrap_or("");
            let flag = |was: bool, f: char| (was || on.contains(f)) && !off.contains(f);
            let inner = Mode {
                target: mode.target,
                dot_all: flag(mode.dot_all, 's'),
                icase: flag(mode.icase, 'i'),
                multiline: flag(mode.multiline, 'm'),
            };
            out.push_str("(?:");
            emit(body, inner, out);
            out.push(')');
        }
        Node::Cat(nodes) => {
            for n in nodes {
                emit(n, mode, out);
            }
        }
        Node::Alt(branches) => {
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(b, mode, out);
            }
        }
        // A quantified lookahead (Annex B), which `fancy-regex` refuses to repeat: it is
        // zero-width, so JavaScript runs it once when `min > 0` (more iterations would match
        // empty and are rejected), and never in effect when `min == 0`.
        Node::Repeat { node, min, .. } if matches!(**node, Node::Look(..)) && *min > 0 => {
            emit(node, mode, out);
        }
        Node::Repeat { node, .. } if matches!(**node, Node::Look(..)) && !has_group(node) => {
            out.push_str("(?:)");
        }
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => {
            out.push_str("(?:");
            emit(node, mode, out);
            out.push(')');
            match (min, max) {
                (0, None) => out.push('*'),
                (1, None) => out.push('+'),
                (0, Some(1)) => out.push('?'),
                (n, None) => out.push_str(&format!("{{{n},}}")),
                (n, Some(m)) if n == m => out.push_str(&format!("{{{n}}}")),
                (n, Some(m)) => out.push_str(&format!("{{{n},{m}}}")),
            }
            if !greedy {
                out.push('?');
            }
        }
    }
}

/// Whether a backreference is under the `i` modifier (JavaScript compares canonicalized
/// characters, `fancy-regex` folds case its own way).
fn icase_backref(node: &Node, icase: bool) -> bool {
    match node {
        Node::Backref(_) => icase,
        Node::Modifiers(flags, body) => {
            let on = flags.split('-').next().unwrap_or("");
            let off = flags.split('-').nth(1).unwrap_or("");
            icase_backref(body, (icase || on.contains('i')) && !off.contains('i'))
        }
        Node::Group(_, body) | Node::Look(_, body) => icase_backref(body, icase),
        Node::Repeat { node, .. } => icase_backref(node, icase),
        Node::Cat(nodes) | Node::Alt(nodes) => nodes.iter().any(|n| icase_backref(n, icase)),
        _ => false,
    }
}

/// Whether a node may match the empty string.
fn nullable(node: &Node) -> bool {
    match node {
        Node::Char(_) | Node::Class(..) | Node::Dot => false,
        Node::Group(_, body) | Node::Modifiers(_, body) => nullable(body),
        Node::Cat(nodes) => nodes.iter().all(nullable),
        Node::Alt(nodes) => nodes.iter().any(nullable),
        Node::Repeat { node, min, .. } => *min == 0 || nullable(node),
        Node::Start | Node::End | Node::WordBoundary(_) | Node::Backref(_) | Node::Look(..) => true,
    }
}

fn has_group(node: &Node) -> bool {
    match node {
        Node::Group(index, body) => index.is_some() || has_group(body),
        Node::Look(_, body) | Node::Modifiers(_, body) => has_group(body),
        Node::Repeat { node, .. } => has_group(node),
        Node::Cat(nodes) | Node::Alt(nodes) => nodes.iter().any(has_group),
        _ => false,
    }
}

/// Where each group and each backreference sits, for [`check_backrefs`].
fn walk(
    node: &Node,
    path: &mut Vec<Step>,
    loops: &mut usize,
    groups: &mut Vec<(usize, Vec<Step>)>,
    refs: &mut Vec<(usize, Vec<Step>)>,
) {
    match node {
        Node::Backref(n) => refs.push((*n, path.clone())),
        Node::Group(index, body) => {
            if let Some(i) = index {
                groups.push((*i, path.clone()));
            }
            walk(body, path, loops, groups, refs);
        }
        Node::Look(_, body) => {
            path.push(Step::Look);
            walk(body, path, loops, groups, refs);
            path.pop();
        }
        Node::Modifiers(_, body) => walk(body, path, loops, groups, refs),
        Node::Cat(nodes) => {
            for n in nodes {
                walk(n, path, loops, groups, refs);
            }
        }
        Node::Alt(branches) => {
            for b in branches {
                path.push(Step::Branch);
                walk(b, path, loops, groups, refs);
                path.pop();
            }
        }
        Node::Repeat { node, min, max, .. } => {
            *loops += 1;
            path.push(Step::Repeat(
                *loops,
                max.is_none_or(|m| m > 1),
                *min == 0,
                nullable(node),
            ));
            walk(node, path, loops, groups, refs);
            path.pop();
        }
        _ => {}
    }
}

/// Refuses the backreferences `fancy-regex` would read differently from JavaScript. A group
/// that did not take part is handled by the translation (`(?(n)\n)`: empty, as in
/// JavaScript), a reference inside its own group is refused by the parser; what remains is
/// state JavaScript clears and `fancy-regex` keeps: a group in a repeated quantifier, which
/// JavaScript resets at each iteration — observable when the reference is in the same loop,
/// or when an iteration may skip the group.
fn check_backrefs(ast: &Node) -> Result<(), String> {
    let (mut groups, mut refs) = (Vec::new(), Vec::new());
    walk(ast, &mut Vec::new(), &mut 0, &mut groups, &mut refs);
    for (n, ref_path) in &refs {
        let Some((_, group_path)) = groups.iter().find(|(i, _)| i == n) else {
            continue;
        };
        for (i, step) in group_path.iter().enumerate() {
            if let Step::Repeat(_, true, _, body_nullable) = *step {
                // An iteration may skip the group, or (matching empty, which JavaScript
                // rejects and `fancy-regex` keeps) set it to the empty string.
                let skippable = body_nullable
                    || group_path[i + 1..].iter().any(|s| {
                        matches!(s, Step::Branch | Step::Look | Step::Repeat(_, _, true, _))
                    });
                if skippable || ref_path.contains(step) {
                    return Err(format!(
                        "backreference \\{n} to a group in a repeated quantifier (JavaScript resets the group at each repetition)"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Parses a JavaScript pattern (already accepted by `regress`) and spells it for `target`;
/// `Err` with a reason when Rust cannot express it with the same meaning.
fn translate_for(js: &str, target: Target) -> Result<String, String> {
    let mut p = Parser {
        chars: js.chars().collect(),
        pos: 0,
        groups: 0,
        names: Vec::new(),
        next_group: 0,
        open: Vec::new(),
    };
    p.scan_groups();
    let ast = p.disjunction()?;
    if p.pos != p.chars.len() {
        return Err("unbalanced parenthesis".into());
    }
    check_backrefs(&ast)?;
    if icase_backref(&ast, false) {
        return Err("a backreference under the `i` modifier".into());
    }
    let mut out = String::with_capacity(js.len() + 16);
    let mode = Mode {
        target,
        dot_all: false,
        icase: false,
        multiline: false,
    };
    emit(&ast, mode, &mut out);
    Ok(out)
}

/// The pattern in the `regex` crate's syntax (see [`translate_for`]).
fn translate(js: &str) -> Result<String, String> {
    translate_for(js, Target::Regex)
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
    fn identity_escapes_are_the_character() {
        // Without the `u` flag an escape JavaScript gives no meaning is the character itself;
        // Rust reads most of these as anchors, classes or assertions.
        for (p, yes, no) in [
            (r"^\A$", "A", ""),
            (r"^x\z$", "xz", "x"),
            (r"^\Z$", "Z", ""),
            (r"^\G$", "G", ""),
            (r"^\K$", "K", ""),
            (r"^\a$", "a", "\x07"),
            (r"^\e$", "e", "\x1b"),
            (r"^\pL$", "pL", "x"),
            (r"^\Pc$", "Pc", "x"),
            (r"^\p{L}$", "p{L}", "x"),
            (r"^\H\N\O\R$", "HNOR", "x\n\n\n"),
            (r"^\<\>$", "<>", ""),
            (r"^\#\&\~\-\%$", "#&~-%", ""),
            (r"^\k$", "k", ""),
            (r"^\8\9$", "89", ""),
            (r"^[\A\z\B\-]+$", "AzB-", "x"),
        ] {
            assert!(m(p, yes), "{p} on {yes:?}");
            assert!(!m(p, no), "{p} on {no:?}");
        }
    }

    #[test]
    fn annex_b_escapes_read_as_in_javascript() {
        // `\u` needs exactly four hex digits, else it is `u`.
        assert!(m(r"^\u12$", "u12"));
        assert!(m(r"^\u00e9$", "é"));
        assert!(
            m(r"^\uD83D\uDE00$", "😀"),
            "a surrogate pair is one character"
        );
        assert!(
            JsRegex::new(r"\uD83D").is_err(),
            "a lone surrogate matches no UTF-8"
        );
        assert!(m(r"^\x41\x4$", "Ax4"));
        // `\c` takes a letter; otherwise it is a backslash and `c`.
        assert!(m(r"^\cJ$", "\n"));
        assert!(m(r"^\c1$", "\\c1"));
        assert!(m(r"^\c+$", "\\ccc"), "the quantifier applies to the `c`");
        assert!(m(r"^[\c1]$", "\x11"), "in a class, digits and _ too");
        assert!(m(r"^[\c]+$", "c\\"));
        // Legacy octal.
        assert!(m(r"^\01$", "\x01"));
        assert!(m(r"^\0$", "\0"));
        assert!(m(r"^\08$", "\x008"));
        assert!(m(r"^\101$", "A"));
        assert!(m(r"^\1010$", "A0"));
        assert!(m(r"^\477$", "\x277"));
        assert!(m(r"^[\1-\3]$", "\x02"));
        assert!(m(r"^\1$", "\x01"), "no group: octal");
        assert!(m(r"^(a)\1$", "aa"), "a group: a backreference");
        assert!(m(r"^[\b]$", "\x08"));
    }

    #[test]
    fn braces_are_text_unless_a_quantifier() {
        assert!(!m(r"^a{,2}$", "a"));
        assert!(m(r"^a{,2}$", "a{,2}"));
        assert!(m(r"^a{2}$", "aa"));
        assert!(m(r"^a{2,}$", "aaa"));
        assert!(m(r"^a{1,2}?$", "aa"));
        assert!(m(r"^a{x}}$", "a{x}}"));
        assert!(m(r"^]$", "]"));
        assert!(m("^a{", "a{"));
    }

    #[test]
    fn dot_space_and_word_boundary_as_in_javascript() {
        for c in ["\n", "\r", "\u{2028}", "\u{2029}"] {
            assert!(!m("^.$", c), "{c:?}");
        }
        assert!(m("^.$", "\u{85}"));
        assert!(m("^(?s:.)$", "\r"));
        assert!(m(r"^\s$", "\u{FEFF}"));
        assert!(!m(r"^\s$", "\u{85}"));
        assert!(m(r"^\S$", "\u{85}"));
        assert!(m(r"^[\s]$", "\u{FEFF}"));
        assert!(m(r"^[\S]$", "\u{85}"));
        assert!(!m(r"^[^\s]$", "\u{2028}"));
        assert!(
            m(r"^[\s-a]+$", "- a"),
            "Annex B: a class escape is no range end"
        );
        assert!(m(r"^[a-\d]+$", "a-1"));
        assert!(!m(r"\b", "é"));
        assert!(m(r"\B", "é"));
        assert!(m(r"a\b", "aé"));
        // The same through the backtracking engine.
        assert!(!m(r"(?=.)\b", "é"));
        assert!(m(r"(?=a)a\b", "aé"));
        assert!(m(r"(?=.)\B", "é"));
    }

    #[test]
    fn backreferences_to_groups_that_did_not_take_part_match_empty() {
        assert!(m(r"^(?:(a)|\1b)$", "b"));
        assert!(m(r"(a)|\1b", "b"));
        assert!(m(r"^\1(a)$", "a"), "a forward reference is empty");
        assert!(m(r"^(a)?\1b$", "b"));
        assert!(m(r"^(a)?\1b$", "aab"));
        assert!(!m(r"^(a)?\1b$", "ab"));
        assert!(m(r"^(?<n>a)?\k<n>b$", "b"));
        // What `fancy-regex` would keep and JavaScript clears is refused.
        for p in [
            r"(a\1)",
            r"(?<n>a\k<n>)",
            r"(b)(a|)+\1\2",
            r"(?:(a)|b)+\1",
            r"(?:\1(a))+",
            r"(?:(a)?b)*\1",
        ] {
            let e = JsRegex::new(p).unwrap_err();
            assert!(matches!(e, RegexError::Unsupported { .. }), "{p}: {e}");
            assert!(e.to_string().contains("backreference"), "{e}");
        }
        assert!(m(r"^(.|.)*\1$", "abb"));
        // A quantified lookahead (Annex B) is the assertion once, or nothing.
        assert!(m(r"^(?=a)+a$", "a"));
        assert!(!m(r"^(?=b)+a$", "a"));
        assert!(m(r"^(?=b)*a$", "a"));
        assert!(m(r"^(?=b)?a$", "a"));
    }

    #[test]
    fn class_syntax_rust_reads_differently_is_escaped() {
        assert!(m("^[a[]+$", "a["));
        assert!(m("^[a&&b]+$", "&&"));
        assert!(JsRegex::new("[a--]").is_err(), "a reversed range");
        assert!(m("^[~~]$", "~"));
        assert!(m("^[[:alpha:]]+$", ":]]"), "a class, then `]+`");
        assert!(!m("^[]a]$", "a]"), "`[]` matches nothing");
    }

    #[test]
    fn modifier_groups_are_spelled_out() {
        // `i` without the `u` flag: upper case of UTF-16 units, never non-ASCII to ASCII.
        for (p, t, want) in [
            ("^(?i:s)$", "S", true),
            ("^(?i:s)$", "ſ", false),
            ("^(?i:k)$", "\u{212A}", false),
            ("^(?i:[a-z]+)$", "AbC", true),
            ("^(?i:[^a])$", "A", false),
            (r"^(?i:\w)$", "ſ", false),
            (r"^(?i:\W)$", "ſ", true),
            ("^(?i:σ)$", "ς", true),
            ("^(?i:ß)$", "\u{1E9E}", false),
            ("^(?i:\u{10428})$", "\u{10400}", false),
            ("^(?i:a(?-i:a))$", "AA", false),
            ("^(?i:a(?-i:a))$", "Aa", true),
            // `m`: JavaScript's four line terminators.
            ("(?m:^b)", "a\rb", true),
            ("(?m:a$)", "a\u{2028}", true),
            ("^b", "a\nb", false),
            // `s`: `.` takes line terminators too.
            ("^(?s:.)$", "\u{2028}", true),
            ("^(?s:(?-s:.))$", "\n", false),
        ] {
            // (The `i` answers are V8's, `new RegExp(p, "i")` in Node 20; `regress` differs on
            // `ſ` and on astral letters, which it folds.)
            assert_eq!(m(p, t), want, "{p} on {t:?}");
        }
        let e = JsRegex::new(r"(a)(?i:\1)").unwrap_err();
        assert!(e.to_string().contains("`i` modifier"), "{e}");
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
        // `\S` is a large Unicode class (everything but JavaScript's 25 spaces); 2000 of them
        // would take megabytes. (`\p{L}` is no class here: without the `u` flag it is `p{L}`.)
        let e = JsRegex::new(r"\S{2000}").unwrap_err();
        assert_eq!(
            e,
            RegexError::TooBig {
                pattern: r"\S{2000}".into(),
                limit: REGEX_SIZE_LIMIT
            }
        );
        assert!(e.to_string().contains(r"`\S{2000}` is too big"), "{e}");
        // The same through the backtracking engine (a lookahead sends it there).
        let e = JsRegex::new(r"\S{2000}(?=x)").unwrap_err();
        assert!(matches!(e, RegexError::TooBig { .. }), "{e}");
        // Real matchers fit with room to spare.
        for p in [
            r"\S+",
            r"\p{L}{2000}",
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
