//! The ECMAScript side of a matcher: a pattern parsed as `regress` parses it without flags
//! (ECMAScript with Annex B: identity escapes, legacy octal, `\c` without a letter, braces
//! that are text), into a tree that `check` and `emit` read. `regress` has already accepted the
//! pattern; what this parser refuses is what hookbox cannot run with JavaScript's meaning.

/// Why a JavaScript-valid pattern cannot be run with the same meaning (each message quotes
/// the part of the pattern at fault where there is one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum PatternError {
    /// `(a\1)`: a reference to the group it is in.
    #[error(
        "backreference \\{0} inside group {0} itself (JavaScript matches it empty; write nothing instead)"
    )]
    BackrefInOwnGroup(usize),
    /// `\k<n>` where two groups are called `n`.
    #[error("backreference to a duplicated group name `{0}`")]
    DuplicateGroupName(String),
    /// `\1` to a group inside a repeated quantifier that an iteration may skip or repeat.
    #[error(
        "backreference \\{0} to a group in a repeated quantifier (JavaScript resets the group at each repetition)"
    )]
    BackrefInRepeatedGroup(usize),
    /// A backreference under `(?i:…)`.
    #[error("a backreference under the `i` modifier")]
    BackrefUnderIgnoreCase,
    /// `\uD800`: no UTF-8 text holds one.
    #[error("a lone surrogate (`\\uD800`–`\\uDFFF`) cannot match UTF-8 text")]
    LoneSurrogate,
    /// A `(` without its `)`, or the reverse.
    #[error("unbalanced parenthesis")]
    UnbalancedParenthesis,
    /// A `\` at the end.
    #[error("trailing backslash")]
    TrailingBackslash,
    /// A `[` without its `]`.
    #[error("unterminated class")]
    UnterminatedClass,
}

/// A JavaScript pattern, parsed as `regress` parses it without flags (ECMAScript with
/// Annex B), so that it can be re-spelled for Rust without changing its meaning.
#[derive(Debug)]
pub(super) enum Node {
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
pub(super) enum Shorthand {
    Digit,
    Word,
    Space,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum ClassItem {
    Range(u32, u32),
    /// `\d`, `\w`, `\s` (true) or their negations.
    Set(Shorthand, bool),
}

/// Parses `js` (already accepted by `regress`) into its tree.
pub(super) fn parse(js: &str) -> Result<Node, PatternError> {
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
        return Err(PatternError::UnbalancedParenthesis);
    }
    Ok(ast)
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

    fn disjunction(&mut self) -> Result<Node, PatternError> {
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

    fn alternative(&mut self) -> Result<Node, PatternError> {
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
    fn capture(&mut self) -> Result<Node, PatternError> {
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
    fn backref(&self, n: usize) -> Result<Node, PatternError> {
        if self.open.contains(&n) {
            return Err(PatternError::BackrefInOwnGroup(n));
        }
        Ok(Node::Backref(n))
    }

    fn group(&mut self) -> Result<Node, PatternError> {
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
            return Err(PatternError::UnbalancedParenthesis);
        }
        Ok(node)
    }

    /// After a `\` outside a class. `terms` takes the `\` of an Annex B `\c`.
    fn atom_escape(&mut self, terms: &mut Vec<Node>) -> Result<Node, PatternError> {
        let Some(c) = self.peek() else {
            return Err(PatternError::TrailingBackslash);
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
                    _ => return Err(PatternError::DuplicateGroupName(name)),
                }
            }
            _ => Node::Char(self.character_escape()?),
        })
    }

    /// After a `\`: a CharacterEscape (with Annex B's identity and octal escapes).
    fn character_escape(&mut self) -> Result<u32, PatternError> {
        let c = self.peek().ok_or(PatternError::TrailingBackslash)?;
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
    fn unicode_escape(&mut self) -> Result<Option<u32>, PatternError> {
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
        Err(PatternError::LoneSurrogate)
    }

    fn hex4(&mut self) -> Option<u32> {
        let hex: String = self.chars.get(self.pos..self.pos + 4)?.iter().collect();
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        u32::from_str_radix(&hex, 16).ok()
    }

    fn class(&mut self) -> Result<Node, PatternError> {
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

    fn class_atom(&mut self) -> Result<ClassItem, PatternError> {
        let c = self.peek().ok_or(PatternError::UnterminatedClass)?;
        self.pos += 1;
        if c != '\\' {
            return Ok(ClassItem::Range(c as u32, c as u32));
        }
        let e = self.peek().ok_or(PatternError::TrailingBackslash)?;
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
