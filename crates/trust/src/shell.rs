//! Reading a shell-form command the way `sh` (or, for `"shell": "bash"`, `bash`) would split
//! it — far enough to find the programs and scripts it runs, never to run anything. Quotes,
//! backslashes, `$NAME`/`${NAME}`, command substitution (whose text is read as commands in
//! turn), redirections, `case` patterns and the operators that separate commands (`;`, `&&`,
//! `||`, `|`, `&`, newlines, parentheses) are understood. What is not modelled is never
//! guessed: a construct the shell would read in a way this reader does not follow (a parameter
//! expansion with an operator, a process substitution, bash's brace expansion, `$'…'` under
//! `sh`) is named in [`Lexed::unmodelled`], and text it cannot read at all (a here-document, an
//! unterminated quote) is [`Lexed::unparsed`].
//!
//! Every word keeps its byte range in the command text, so the host can replace exactly the
//! word that names a pinned script with the path it runs instead.

use std::ops::Range;

/// Which shell reads the text: what `$'…'`, `$"…"` and `{a,b}` mean depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `/bin/sh` (dash on Debian, bash in POSIX mode elsewhere): bash-only syntax is named
    /// unmodelled, since the two read it differently.
    Sh,
    /// `bash`.
    Bash,
}

/// The variables a path may start with to be resolved against a known folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BaseVar {
    /// `CLAUDE_PLUGIN_ROOT`, `PLUGIN_ROOT`.
    PluginRoot,
    /// `CLAUDE_PROJECT_DIR`.
    ProjectDir,
    /// `HOME`, or a leading `~`.
    Home,
    /// `CLAUDE_PLUGIN_DATA`, `PLUGIN_DATA`: the hook's own writable folder.
    PluginData,
}

impl BaseVar {
    pub(crate) fn of_name(name: &str) -> Option<BaseVar> {
        match name {
            "CLAUDE_PLUGIN_ROOT" | "PLUGIN_ROOT" => Some(BaseVar::PluginRoot),
            "CLAUDE_PROJECT_DIR" => Some(BaseVar::ProjectDir),
            "HOME" => Some(BaseVar::Home),
            "CLAUDE_PLUGIN_DATA" | "PLUGIN_DATA" => Some(BaseVar::PluginData),
            _ => None,
        }
    }
}

/// Why a word's value is only known when the shell runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dynamic {
    /// `$NAME`, `${NAME}`, `$1`, `${NAME:-x}`… other than a leading base variable.
    Variable,
    /// `$(…)`, `` `…` ``, `$((…))`.
    Substitution,
    /// A glob character (`*`, `?`, `[`) outside quotes.
    Glob,
}

/// One word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// Its bytes in the command text, quotes included.
    pub(crate) span: Range<usize>,
    /// Its value after quote removal, without the leading base variable; expansions that are
    /// not resolved are kept as written.
    pub(crate) text: String,
    /// The base variable (or `~`) it starts with.
    pub(crate) base: Option<BaseVar>,
    /// Set when part of its value is only known at run time.
    pub(crate) dynamic: Option<Dynamic>,
    /// Whether any part of it was quoted or escaped.
    pub(crate) quoted: bool,
    /// Whether it is an assignment (`NAME=…` with `NAME=` unquoted: `MODE="strict"` is one,
    /// `"MODE=strict"` is not).
    pub(crate) assignment: bool,
    /// The command substitutions inside it: the byte range of each one's command text (inside
    /// `$(…)` or `` `…` ``), which runs commands of its own.
    pub(crate) substitutions: Vec<Range<usize>>,
}

impl Word {
    /// A word that stands for itself (an exec-form argument).
    pub(crate) fn literal(text: String, base: Option<BaseVar>) -> Word {
        Word {
            span: 0..0,
            text,
            base,
            dynamic: None,
            quoted: true,
            assignment: false,
            substitutions: Vec::new(),
        }
    }
}

/// One simple command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Command {
    /// Its words, redirections left out. Empty for a `case` pattern.
    pub(crate) words: Vec<Word>,
    /// Words that run nothing themselves but may hold command substitutions: redirection
    /// targets, `case` patterns.
    pub(crate) data: Vec<Word>,
    /// The subshells (`( … )`) it is inside, outermost first, each by a number of its own: a
    /// `cd` in one changes nothing outside it.
    pub(crate) scope: Vec<u32>,
    /// In a pipeline or in the background: it runs in a subshell of its own.
    pub(crate) piped: bool,
    /// After a `||` in its and-or list: whether it runs depends on another command failing.
    pub(crate) after_or: bool,
}

/// A command text split into simple commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Lexed {
    /// The simple commands, in order.
    pub(crate) commands: Vec<Command>,
    /// Constructs the shell reads in a way this reader does not model, each as written.
    pub(crate) unmodelled: Vec<String>,
    /// Text from where reading stopped, and why: it is not followed.
    pub(crate) unparsed: Option<(String, &'static str)>,
}

/// Where a `case` command is, while its parts are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// `case WORD in`: the number of words read.
    Head(usize),
    /// Reading patterns, up to `)`.
    Patterns,
    /// Reading the commands of a branch, up to `;;`.
    Body,
}

/// Splits `text` as `dialect` reads it.
pub(crate) fn lex(text: &str, dialect: Dialect) -> Lexed {
    let mut lx = Lexer {
        s: text,
        b: text.as_bytes(),
        i: 0,
        dialect,
        unmodelled: Vec::new(),
    };
    let mut out = Lexed::default();
    let mut current = Command::default();
    let mut cases: Vec<Case> = Vec::new();
    // The subshells open here, the next subshell's number, whether a `||` came earlier in
    // this and-or list, and whether the next command reads a pipe.
    let mut scope: Vec<u32> = Vec::new();
    let mut next_scope = 0u32;
    let mut after_or = false;
    let mut pipe_in = false;
    let finish = |current: &mut Command,
                  out: &mut Lexed,
                  scope: &[u32],
                  after_or: bool,
                  piped_out: bool,
                  pipe_in: &mut bool| {
        if !current.words.is_empty() || !current.data.is_empty() {
            current.scope = scope.to_vec();
            current.after_or = after_or;
            current.piped = piped_out || *pipe_in;
            out.commands.push(std::mem::take(current));
        }
        *pipe_in = piped_out;
    };
    macro_rules! finish {
        ($piped:expr) => {
            finish(
                &mut current,
                &mut out,
                &scope,
                after_or,
                $piped,
                &mut pipe_in,
            )
        };
    }
    loop {
        lx.skip_blanks();
        let Some(c) = lx.peek() else { break };
        let in_patterns = cases.last() == Some(&Case::Patterns);
        match c {
            b';' if matches!(lx.peek_at(1), Some(b';' | b'&'))
                && cases.last() == Some(&Case::Body) =>
            {
                // `;;`, `;&`, `;;&`: the branch ends, patterns follow.
                lx.i += 2;
                if lx.peek() == Some(b'&') {
                    lx.i += 1;
                }
                finish!(false);
                after_or = false;
                *cases.last_mut().expect("in a case") = Case::Patterns;
            }
            b')' if in_patterns => {
                lx.i += 1;
                finish!(false);
                after_or = false;
                *cases.last_mut().expect("in a case") = Case::Body;
            }
            b'(' | b'|' | b'\n' if in_patterns => lx.i += 1,
            b'|' if lx.peek_at(1) == Some(b'|') => {
                lx.i += 2;
                finish!(false);
                after_or = true;
            }
            b'|' => {
                lx.i += 1;
                finish!(true);
            }
            b'&' if lx.peek_at(1) == Some(b'&') => {
                lx.i += 2;
                finish!(false);
            }
            b'(' => {
                lx.i += 1;
                finish!(false);
                scope.push(next_scope);
                next_scope += 1;
                after_or = false;
            }
            b')' => {
                lx.i += 1;
                finish!(false);
                scope.pop();
            }
            b'\n' | b';' => {
                lx.i += 1;
                finish!(false);
                after_or = false;
            }
            b'&' if lx.peek_at(1) == Some(b'>') => {
                let start = lx.i;
                lx.i += 2;
                if lx.peek() == Some(b'>') {
                    lx.i += 1;
                }
                match lx.redirect_target() {
                    Ok(Some(w)) => current.data.push(w),
                    Ok(None) => {}
                    Err(why) => {
                        out.unparsed = Some((text[start..].to_owned(), why));
                        break;
                    }
                }
            }
            b'&' => {
                // In the background: a subshell of its own.
                lx.i += 1;
                finish!(true);
                pipe_in = false;
                after_or = false;
            }
            b'#' => {
                // A comment runs to the end of the line.
                while lx.peek().is_some_and(|c| c != b'\n') {
                    lx.i += 1;
                }
            }
            b'<' | b'>' => {
                let start = lx.i;
                match lx.redirection() {
                    Ok(Some(w)) => current.data.push(w),
                    Ok(None) => {}
                    Err(why) => {
                        out.unparsed = Some((text[start..].to_owned(), why));
                        break;
                    }
                }
            }
            _ => {
                let start = lx.i;
                let w = match lx.word() {
                    Ok(w) => w,
                    Err(why) => {
                        out.unparsed = Some((text[start..].to_owned(), why));
                        break;
                    }
                };
                // `2>file`: a word of digits right before `<`/`>` is a descriptor number.
                let fd_number = !w.quoted
                    && !w.text.is_empty()
                    && w.text.bytes().all(|c| c.is_ascii_digit())
                    && matches!(lx.peek(), Some(b'<' | b'>'));
                if fd_number {
                    continue;
                }
                let plain =
                    |t: &str| !w.quoted && w.base.is_none() && w.dynamic.is_none() && w.text == t;
                let first = current.words.is_empty() && current.data.is_empty();
                match cases.last().copied() {
                    Some(Case::Patterns) if first && plain("esac") => {
                        cases.pop();
                        current.words.push(w);
                    }
                    Some(Case::Patterns) => current.data.push(w),
                    Some(Case::Body) if first && plain("esac") => {
                        cases.pop();
                        current.words.push(w);
                    }
                    Some(Case::Head(n)) => {
                        let is_in = n == 2 && plain("in");
                        current.words.push(w);
                        if is_in {
                            finish!(false);
                            *cases.last_mut().expect("in a case") = Case::Patterns;
                        } else {
                            *cases.last_mut().expect("in a case") = Case::Head(n + 1);
                        }
                    }
                    _ if first && plain("case") => {
                        cases.push(Case::Head(1));
                        current.words.push(w);
                    }
                    _ => current.words.push(w),
                }
            }
        }
    }
    finish!(false);
    out.unmodelled = lx.unmodelled;
    out
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    dialect: Dialect,
    unmodelled: Vec<String>,
}

fn is_operator(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `s` is a shell variable name.
pub(crate) fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(is_name_start) && b.all(is_name_char)
}

/// At most 60 characters of `text`, for naming a construct.
fn cut(text: &str) -> String {
    let mut s: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        s.push('…');
    }
    s
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.i + n).copied()
    }

    fn unmodelled(&mut self, what: String) {
        if !self.unmodelled.contains(&what) {
            self.unmodelled.push(what);
        }
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == b' ' || c == b'\t' {
                self.i += 1;
            } else if c == b'\\' && self.peek_at(1) == Some(b'\n') {
                self.i += 2;
            } else {
                break;
            }
        }
    }

    /// `<`, `>`, `>>`, `>|`, `<>`, `>&2`, `<&0`, `<<<` and their target word, returned (its
    /// value is data, but a command substitution in it runs). A process substitution
    /// (`<(…)`, `>(…)`) is unmodelled.
    fn redirection(&mut self) -> Result<Option<Word>, &'static str> {
        let first = self.b[self.i];
        let from = self.i;
        self.i += 1;
        if self.peek() == Some(b'(') {
            self.i += 1;
            self.skip_parens()?;
            let what = format!("a process substitution `{}`", cut(&self.s[from..self.i]));
            self.unmodelled(what);
            return Ok(None);
        }
        if first == b'<' && self.peek() == Some(b'<') {
            if self.peek_at(1) == Some(b'<') {
                // `<<<word`: a here-string; its word is data.
                self.i += 2;
            } else {
                return Err("a here-document");
            }
        } else if matches!(self.peek(), Some(b'>' | b'|' | b'&'))
            || (first == b'<' && self.peek() == Some(b'>'))
        {
            self.i += 1;
        }
        self.redirect_target()
    }

    fn redirect_target(&mut self) -> Result<Option<Word>, &'static str> {
        self.skip_blanks();
        match self.peek() {
            Some(c) if !is_operator(c) => self.word().map(Some),
            _ => Ok(None),
        }
    }

    /// One word, from the current position to the next blank or operator outside quotes.
    fn word(&mut self) -> Result<Word, &'static str> {
        let start = self.i;
        let mut w = Word {
            span: start..start,
            text: String::new(),
            base: None,
            dynamic: None,
            quoted: false,
            assignment: false,
            substitutions: Vec::new(),
        };
        if self.peek() == Some(b'~') && matches!(self.peek_at(1), None | Some(b'/')) {
            w.base = Some(BaseVar::Home);
            self.i += 1;
        } else if self.peek() == Some(b'~') {
            // `~user/…`: another user's home.
            w.dynamic = Some(Dynamic::Variable);
        }
        // Bash's brace expansion: an unquoted `{` then `,` or `..` then `}`.
        let mut brace = (false, false);
        while let Some(c) = self.peek() {
            if is_operator(c) {
                break;
            }
            match c {
                b'\'' => {
                    w.quoted = true;
                    let Some(end) = self.s[self.i + 1..].find('\'') else {
                        return Err("an unterminated quote");
                    };
                    w.text.push_str(&self.s[self.i + 1..self.i + 1 + end]);
                    self.i += end + 2;
                }
                b'"' => {
                    w.quoted = true;
                    self.i += 1;
                    self.double_quoted(&mut w, start)?;
                }
                b'\\' => {
                    w.quoted = true;
                    self.i += 1;
                    match self.next_char() {
                        Some('\n') | None => {}
                        Some(ch) => w.text.push(ch),
                    }
                }
                b'$' => self.dollar(&mut w, start, false)?,
                b'`' => self.backquote(&mut w)?,
                b'*' | b'?' | b'[' => {
                    w.dynamic.get_or_insert(Dynamic::Glob);
                    self.push_char(&mut w);
                }
                b'=' if !w.quoted
                    && w.base.is_none()
                    && w.dynamic.is_none()
                    && is_name(&w.text) =>
                {
                    w.assignment = true;
                    self.push_char(&mut w);
                }
                b'{' => {
                    brace.0 = true;
                    self.push_char(&mut w);
                }
                b',' if brace.0 => {
                    brace.1 = true;
                    self.push_char(&mut w);
                }
                b'.' if brace.0 && self.peek_at(1) == Some(b'.') => {
                    brace.1 = true;
                    self.push_char(&mut w);
                }
                b'}' if brace.0 && brace.1 && self.dialect == Dialect::Bash => {
                    self.push_char(&mut w);
                    let what = format!("a brace expansion `{}`", cut(&self.s[start..self.i]));
                    self.unmodelled(what);
                    w.dynamic.get_or_insert(Dynamic::Glob);
                }
                _ => self.push_char(&mut w),
            }
        }
        w.span = start..self.i;
        Ok(w)
    }

    fn next_char(&mut self) -> Option<char> {
        let ch = self.s[self.i..].chars().next()?;
        self.i += ch.len_utf8();
        Some(ch)
    }

    fn push_char(&mut self, w: &mut Word) {
        if let Some(ch) = self.next_char() {
            w.text.push(ch);
        }
    }

    fn double_quoted(&mut self, w: &mut Word, start: usize) -> Result<(), &'static str> {
        loop {
            match self.peek() {
                None => return Err("an unterminated quote"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    match self.peek() {
                        Some(b'$' | b'`' | b'"' | b'\\') => self.push_char(w),
                        Some(b'\n') => self.i += 1,
                        _ => w.text.push('\\'),
                    }
                }
                Some(b'$') => self.dollar(w, start, true)?,
                Some(b'`') => self.backquote(w)?,
                Some(_) => self.push_char(w),
            }
        }
    }

    /// `$…` at the current position (`in_quotes`: inside double quotes).
    fn dollar(&mut self, w: &mut Word, start: usize, in_quotes: bool) -> Result<(), &'static str> {
        let at_start = w.text.is_empty() && w.base.is_none() && w.dynamic.is_none();
        // Only quotes may precede a leading base variable (`"${CLAUDE_PLUGIN_ROOT}/x"`).
        let at_start = at_start && self.s[start..self.i].bytes().all(|c| c == b'"');
        match self.peek_at(1) {
            Some(b'(') => {
                let from = self.i;
                let arithmetic = self.peek_at(2) == Some(b'(');
                self.i += 2;
                self.skip_parens()?;
                let whole = &self.s[from..self.i];
                w.text.push_str(whole);
                if arithmetic {
                    // `$((…))`: a number; but a command substitution inside it runs.
                    if whole[1..].contains("$(") || whole.contains('`') {
                        let what = format!(
                            "a command substitution inside an arithmetic expansion `{}`",
                            cut(whole)
                        );
                        self.unmodelled(what);
                    }
                    w.dynamic = Some(Dynamic::Variable);
                } else {
                    w.substitutions.push(from + 2..self.i - 1);
                    w.dynamic = Some(Dynamic::Substitution);
                }
            }
            Some(b'{') => {
                let end = self.brace_end(self.i + 2)?;
                let inner = &self.s[self.i + 2..end];
                let whole = &self.s[self.i..end + 1];
                self.i = end + 1;
                let plain = is_name(inner)
                    || inner.bytes().all(|c| c.is_ascii_digit()) && !inner.is_empty()
                    || matches!(inner, "#" | "?" | "@" | "*" | "$" | "!" | "-")
                    || inner.strip_prefix('#').is_some_and(is_name);
                if !plain {
                    let what = format!("a parameter expansion with an operator `{}`", cut(whole));
                    self.unmodelled(what);
                }
                self.variable(w, inner, whole, at_start && plain);
            }
            Some(b'\'') if !in_quotes => match self.dialect {
                Dialect::Bash => {
                    self.i += 2;
                    w.quoted = true;
                    self.ansi_c(w)?;
                }
                Dialect::Sh => {
                    let what = "`$'…'` quoting, which sh and bash read differently".to_owned();
                    self.unmodelled(what);
                    self.push_char(w);
                }
            },
            Some(b'"') if !in_quotes => match self.dialect {
                Dialect::Bash => {
                    // `$"…"`: a translated string, read as `"…"`.
                    self.i += 2;
                    w.quoted = true;
                    self.double_quoted(w, start)?;
                }
                Dialect::Sh => {
                    let what = "`$\"…\"` quoting, which sh and bash read differently".to_owned();
                    self.unmodelled(what);
                    self.push_char(w);
                }
            },
            Some(c) if is_name_start(c) => {
                let from = self.i;
                self.i += 1;
                while self.peek().is_some_and(is_name_char) {
                    self.i += 1;
                }
                let name = &self.s[from + 1..self.i];
                let whole = &self.s[from..self.i];
                self.variable(w, name, whole, at_start);
            }
            Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(&c) => {
                w.text.push_str(&self.s[self.i..self.i + 2]);
                self.i += 2;
                w.dynamic = Some(Dynamic::Variable);
            }
            // A lone `$` is itself.
            _ => self.push_char(w),
        }
        Ok(())
    }

    /// The index of the `}` closing a `${` whose contents start at `from`: across quotes,
    /// escapes, nested `${…}`, `$(…)` and backquotes (a `}` inside quotes does not close it).
    fn brace_end(&mut self, from: usize) -> Result<usize, &'static str> {
        let saved = self.i;
        self.i = from;
        let mut depth = 1usize;
        let r = loop {
            match self.peek() {
                None => break Err("an unterminated `${`"),
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break Ok(self.i);
                    }
                    self.i += 1;
                }
                Some(b'$') if self.peek_at(1) == Some(b'{') => {
                    depth += 1;
                    self.i += 2;
                }
                Some(b'$') if self.peek_at(1) == Some(b'(') => {
                    self.i += 2;
                    if let Err(e) = self.skip_parens() {
                        break Err(e);
                    }
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.next_char();
                }
                Some(b'\'') => match self.s[self.i + 1..].find('\'') {
                    Some(end) => self.i += end + 2,
                    None => break Err("an unterminated quote"),
                },
                Some(b'"') => {
                    if let Err(e) = self.skip_double_quoted() {
                        break Err(e);
                    }
                }
                Some(b'`') => {
                    if let Err(e) = self.skip_backquoted() {
                        break Err(e);
                    }
                }
                Some(_) => {
                    self.next_char();
                }
            }
        };
        self.i = saved;
        r
    }

    /// Bash's `$'…'` after the opening quote: its escapes decoded into `w`.
    fn ansi_c(&mut self, w: &mut Word) -> Result<(), &'static str> {
        loop {
            match self.next_char() {
                None => return Err("an unterminated quote"),
                Some('\'') => return Ok(()),
                Some('\\') => {
                    let Some(e) = self.next_char() else {
                        return Err("an unterminated quote");
                    };
                    match e {
                        'a' => w.text.push('\x07'),
                        'b' => w.text.push('\x08'),
                        'e' | 'E' => w.text.push('\x1b'),
                        'f' => w.text.push('\x0c'),
                        'n' => w.text.push('\n'),
                        'r' => w.text.push('\r'),
                        't' => w.text.push('\t'),
                        'v' => w.text.push('\x0b'),
                        '\\' | '\'' | '"' | '?' => w.text.push(e),
                        '0'..='7' => {
                            let mut v = e.to_digit(8).unwrap_or(0);
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            self.push_code(w, v & 0xff, true);
                        }
                        'x' | 'u' | 'U' => {
                            let max = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let mut v = 0u32;
                            let mut n = 0;
                            while n < max
                                && let Some(d) = self.peek().and_then(|d| (d as char).to_digit(16))
                            {
                                v = v.saturating_mul(16).saturating_add(d);
                                self.i += 1;
                                n += 1;
                            }
                            if n == 0 {
                                w.text.push('\\');
                                w.text.push(e);
                            } else {
                                self.push_code(w, v, e == 'x');
                            }
                        }
                        'c' => {
                            // `\cX`: a control character.
                            match self.next_char() {
                                Some(x) => self.push_code(w, u32::from(x) & 0x1f, true),
                                None => return Err("an unterminated quote"),
                            }
                        }
                        other => {
                            w.text.push('\\');
                            w.text.push(other);
                        }
                    }
                }
                Some(ch) => w.text.push(ch),
            }
        }
    }

    /// A decoded `$'…'` code (`byte`: from `\x` or octal, a byte rather than a character):
    /// a character, or (a byte that is not one) named unmodelled.
    fn push_code(&mut self, w: &mut Word, v: u32, byte: bool) {
        match char::from_u32(v) {
            Some(ch) if !byte || v < 0x80 => w.text.push(ch),
            _ => {
                // A raw byte: what it makes of a file name is not followed.
                self.unmodelled(format!("a raw byte `\\x{v:02x}` in `$'…'` quoting"));
                w.dynamic.get_or_insert(Dynamic::Variable);
            }
        }
    }

    fn variable(&mut self, w: &mut Word, name: &str, whole: &str, at_start: bool) {
        match BaseVar::of_name(name) {
            Some(base) if at_start => w.base = Some(base),
            _ => {
                w.dynamic = Some(Dynamic::Variable);
                w.text.push_str(whole);
            }
        }
    }

    fn backquote(&mut self, w: &mut Word) -> Result<(), &'static str> {
        let from = self.i;
        self.skip_backquoted()?;
        let inner = &self.s[from + 1..self.i - 1];
        if inner.contains('\\') {
            // Inside backquotes a backslash is removed before the text is read again.
            let what = format!(
                "a backquoted command with a backslash `{}`",
                cut(&self.s[from..self.i])
            );
            self.unmodelled(what);
        } else {
            w.substitutions.push(from + 1..self.i - 1);
        }
        w.dynamic = Some(Dynamic::Substitution);
        w.text.push_str(&self.s[from..self.i]);
        Ok(())
    }

    /// Skips a backquoted command, the opening backquote at the current position.
    fn skip_backquoted(&mut self) -> Result<(), &'static str> {
        self.i += 1;
        loop {
            match self.peek() {
                None => return Err("an unterminated backquote"),
                Some(b'\\') => {
                    self.i += 1;
                    self.next_char();
                }
                Some(b'`') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(_) => {
                    self.next_char();
                }
            }
        }
    }

    /// Skips a double-quoted string, the opening quote at the current position.
    fn skip_double_quoted(&mut self) -> Result<(), &'static str> {
        self.i += 1;
        loop {
            match self.peek() {
                None => return Err("an unterminated quote"),
                Some(b'\\') => {
                    self.i += 1;
                    self.next_char();
                }
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'$') if self.peek_at(1) == Some(b'(') => {
                    self.i += 2;
                    self.skip_parens()?;
                }
                Some(b'`') => self.skip_backquoted()?,
                Some(_) => {
                    self.next_char();
                }
            }
        }
    }

    /// Skips to the `)` closing a `$(` just read, across nested parentheses and quotes.
    fn skip_parens(&mut self) -> Result<(), &'static str> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek() {
                None => return Err("an unterminated `$(`"),
                Some(b'(') => {
                    depth += 1;
                    self.i += 1;
                }
                Some(b')') => {
                    depth -= 1;
                    self.i += 1;
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.next_char();
                }
                Some(b'\'') => match self.s[self.i + 1..].find('\'') {
                    Some(end) => self.i += end + 2,
                    None => return Err("an unterminated quote"),
                },
                Some(b'"') => self.skip_double_quoted()?,
                Some(b'`') => self.skip_backquoted()?,
                Some(_) => {
                    self.next_char();
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        lex(text, Dialect::Sh)
            .commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn commands_are_split_at_operators_and_redirections_dropped() {
        // (command text, the words of each simple command)
        let cases: &[(&str, &[&[&str]])] = &[
            ("echo hi", &[&["echo", "hi"]]),
            (
                "a && b || c; d | e & f\ng",
                &[&["a"], &["b"], &["c"], &["d"], &["e"], &["f"], &["g"]],
            ),
            ("x.sh > out.txt 2>&1 < in", &[&["x.sh"]]),
            ("x.sh 2> err >> log &> all", &[&["x.sh"]]),
            ("(cd a; b)", &[&["cd", "a"], &["b"]]),
            ("cat <<< 'data' | y", &[&["cat"], &["y"]]),
            ("a # comment; b\nc", &[&["a"], &["c"]]),
            ("a \\\n b", &[&["a", "b"]]),
            ("'q u' \"d $x\" e\\ f", &[&["q u", "d $x", "e f"]]),
            ("", &[]),
        ];
        for (text, want) in cases {
            let got = words(text);
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|c| c.iter().map(|s| (*s).to_owned()).collect())
                .collect();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn leading_base_variables_are_recognised_quoted_or_not_braced_or_not() {
        let cases = [
            (
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/a.sh\"",
                BaseVar::PluginRoot,
                "/hooks/a.sh",
            ),
            ("${PLUGIN_ROOT}/a.sh", BaseVar::PluginRoot, "/a.sh"),
            ("$CLAUDE_PLUGIN_ROOT/a.sh", BaseVar::PluginRoot, "/a.sh"),
            (
                "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/x.py",
                BaseVar::ProjectDir,
                "/.claude/hooks/x.py",
            ),
            ("~/bin/x", BaseVar::Home, "/bin/x"),
            ("$HOME/bin/x", BaseVar::Home, "/bin/x"),
            ("${CLAUDE_PLUGIN_DATA}/x", BaseVar::PluginData, "/x"),
        ];
        for (text, base, rest) in cases {
            let lexed = lex(text, Dialect::Sh);
            let w = &lexed.commands[0].words[0];
            assert_eq!(w.base, Some(base), "{text}");
            assert_eq!(w.text, rest, "{text}");
            assert_eq!(w.dynamic, None, "{text}");
            assert_eq!(w.span, 0..text.len(), "{text}");
        }
    }

    #[test]
    fn expansions_that_are_not_a_leading_base_make_a_word_dynamic() {
        let cases = [
            ("$MY_HOOK", Dynamic::Variable),
            ("${MY_HOOK:-x}", Dynamic::Variable),
            ("x/${CLAUDE_PLUGIN_ROOT}", Dynamic::Variable),
            ("$1", Dynamic::Variable),
            ("$(which python3)", Dynamic::Substitution),
            ("`which python3`", Dynamic::Substitution),
            ("\"$(echo \")\")\"/x", Dynamic::Substitution),
            ("hooks/*.sh", Dynamic::Glob),
            ("~other/x", Dynamic::Variable),
        ];
        for (text, why) in cases {
            let lexed = lex(text, Dialect::Sh);
            assert_eq!(lexed.unparsed, None, "{text}");
            assert_eq!(lexed.commands[0].words[0].dynamic, Some(why), "{text}");
        }
        let lexed = lex("a $(b) c", Dialect::Sh);
        assert_eq!(lexed.commands[0].words[1].substitutions, vec![(4..5)]);
    }

    #[test]
    fn what_cannot_be_followed_is_unparsed_not_guessed() {
        for (text, why) in [
            ("cat <<EOF\nx\nEOF", "a here-document"),
            ("echo 'open", "an unterminated quote"),
            ("echo \"open", "an unterminated quote"),
            ("echo $(open", "an unterminated `$(`"),
            ("echo ${open", "an unterminated `${`"),
            ("echo `open", "an unterminated backquote"),
        ] {
            let lexed = lex(text, Dialect::Sh);
            assert_eq!(lexed.unparsed.as_ref().map(|u| u.1), Some(why), "{text}");
        }
    }

    #[test]
    fn spans_cover_the_word_as_written() {
        let text = "bash  \"${CLAUDE_PLUGIN_ROOT}/a b.sh\" --x";
        let lexed = lex(text, Dialect::Sh);
        let w = &lexed.commands[0].words[1];
        assert_eq!(&text[w.span.clone()], "\"${CLAUDE_PLUGIN_ROOT}/a b.sh\"");
        assert_eq!(w.text, "/a b.sh");
        // Non-ASCII text and stray bytes never split a character.
        let lexed = lex("é\\é 'ü' \"ö\" $", Dialect::Sh);
        assert_eq!(
            lexed.commands[0]
                .words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>(),
            ["éé", "ü", "ö", "$"]
        );
    }

    #[test]
    fn a_quoted_value_still_makes_an_assignment_and_a_quoted_name_does_not() {
        // issue 27: `MODE="strict" prog` assigns MODE and runs prog.
        let lexed = lex(
            "MODE=\"strict\" A='x y' B=$(c) \"C=d\" E\\=f g",
            Dialect::Sh,
        );
        let a: Vec<bool> = lexed.commands[0]
            .words
            .iter()
            .map(|w| w.assignment)
            .collect();
        assert_eq!(a, [true, true, true, false, false, false]);
    }

    #[test]
    fn a_brace_inside_quotes_does_not_close_a_parameter_expansion() {
        // issue 27: `${X:-"}"}` ends at the last `}`; the words after it are read in step.
        let text = "echo ${X:-\"}\"} \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"";
        let lexed = lex(text, Dialect::Sh);
        let words = &lexed.commands[0].words;
        assert_eq!(words.len(), 3, "{words:?}");
        assert_eq!(words[2].base, Some(BaseVar::PluginRoot));
        assert_eq!(words[2].text, "/hooks/g.sh");
        assert_eq!(
            lexed.unmodelled,
            ["a parameter expansion with an operator `${X:-\"}\"}`"]
        );
        for (text, found) in [
            ("${X}", false),
            ("${#X}", false),
            ("${1}", false),
            ("${X:-$(g.sh)}", true),
            ("${X/a/b}", true),
            ("${!X}", true),
            ("${X#'}'}", true),
        ] {
            let lexed = lex(text, Dialect::Sh);
            assert_eq!(!lexed.unmodelled.is_empty(), found, "{text}");
            assert_eq!(lexed.unparsed, None, "{text}");
        }
    }

    #[test]
    fn bash_ansi_c_quoting_is_decoded_and_named_unmodelled_under_sh() {
        // issue 27: `$'…'` with `"shell": "bash"` is one word with its escapes decoded.
        let text = r"$'\x2e/hooks/g.sh' $'it\'s' $'\101\u00e9\n'";
        let lexed = lex(text, Dialect::Bash);
        let texts: Vec<&str> = lexed.commands[0]
            .words
            .iter()
            .map(|w| w.text.as_str())
            .collect();
        assert_eq!(texts, ["./hooks/g.sh", "it's", "Aé\n"]);
        assert!(lexed.unmodelled.is_empty());
        let lexed = lex(text, Dialect::Sh);
        assert_eq!(
            lexed.unmodelled,
            ["`$'…'` quoting, which sh and bash read differently"]
        );
        // Inside double quotes it is text in both.
        let lexed = lex("\"$'x'\"", Dialect::Sh);
        assert!(lexed.unmodelled.is_empty());
        assert_eq!(lexed.commands[0].words[0].text, "$'x'");
    }

    #[test]
    fn case_patterns_are_data_and_branches_are_commands() {
        let text = "x=$(cat); case \"$x\" in *'a)'*|(b) exit 0;; *c*) ./g.sh;; esac; echo";
        let got: Vec<Vec<String>> = words(text);
        assert_eq!(
            got,
            [
                vec!["x=$(cat)"],
                vec!["case", "$x", "in"],
                vec![],
                vec!["exit", "0"],
                vec![],
                vec!["./g.sh"],
                vec!["esac"],
                vec!["echo"],
            ]
        );
    }

    #[test]
    fn substitutions_redirections_and_bash_only_syntax() {
        let text = "a > \"$(b)\" `c` <(d) {e,f}";
        let lexed = lex(text, Dialect::Bash);
        let c = &lexed.commands[0];
        assert_eq!(&text[c.data[0].substitutions[0].clone()], "b");
        assert_eq!(&text[c.words[1].substitutions[0].clone()], "c");
        assert_eq!(
            lexed.unmodelled,
            ["a process substitution `<(d)`", "a brace expansion `{e,f}`"]
        );
        // `sh` reads `{e,f}` as itself.
        let lexed = lex("{e,f}", Dialect::Sh);
        assert!(lexed.unmodelled.is_empty());
        let lexed = lex("echo $(( $(g.sh) + 1 )) `a\\`b`", Dialect::Sh);
        assert_eq!(lexed.unmodelled.len(), 2, "{:?}", lexed.unmodelled);
    }
}
