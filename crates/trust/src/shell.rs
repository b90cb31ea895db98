//! Reading a shell-form command the way `sh` would split it — far enough to find the programs
//! and scripts it runs, never to run anything. Quotes, backslashes, `$NAME`/`${NAME}`, command
//! substitution, redirections and the operators that separate commands (`;`, `&&`, `||`, `|`,
//! `&`, newlines, parentheses) are understood; what is not (a here-document, an unterminated
//! quote) makes the rest of the text [`Lexed::unparsed`], never a guess.
//!
//! Every word keeps its byte range in the command text, so the host can replace exactly the
//! word that names a pinned script with the descriptor it runs instead.

use std::ops::Range;

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
    /// Whether any part of it was quoted (a quoted `NAME=x` is not an assignment).
    pub(crate) quoted: bool,
    /// The command substitutions inside it, as written (each runs a command of its own).
    pub(crate) substitutions: Vec<String>,
}

/// A command text split into simple commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Lexed {
    /// The simple commands, in order: each is its words, redirections left out.
    pub(crate) commands: Vec<Vec<Word>>,
    /// Text from where reading stopped, and why: it is not followed.
    pub(crate) unparsed: Option<(String, &'static str)>,
}

/// Splits `text`.
pub(crate) fn lex(text: &str) -> Lexed {
    let mut lx = Lexer {
        s: text,
        b: text.as_bytes(),
        i: 0,
    };
    let mut out = Lexed::default();
    let mut current: Vec<Word> = Vec::new();
    let finish = |current: &mut Vec<Word>, out: &mut Lexed| {
        if !current.is_empty() {
            out.commands.push(std::mem::take(current));
        }
    };
    loop {
        lx.skip_blanks();
        let Some(c) = lx.peek() else { break };
        match c {
            b'\n' | b';' | b'|' | b'(' | b')' => {
                lx.i += 1;
                finish(&mut current, &mut out);
            }
            b'&' if lx.peek_at(1) == Some(b'>') => {
                let start = lx.i;
                lx.i += 2;
                if lx.peek() == Some(b'>') {
                    lx.i += 1;
                }
                if let Err(why) = lx.redirect_target() {
                    out.unparsed = Some((text[start..].to_owned(), why));
                    break;
                }
            }
            b'&' => {
                lx.i += 1;
                finish(&mut current, &mut out);
            }
            b'#' => {
                // A comment runs to the end of the line.
                while lx.peek().is_some_and(|c| c != b'\n') {
                    lx.i += 1;
                }
            }
            b'<' | b'>' => {
                let start = lx.i;
                if let Err(why) = lx.redirection() {
                    out.unparsed = Some((text[start..].to_owned(), why));
                    break;
                }
            }
            _ => {
                let start = lx.i;
                match lx.word() {
                    Ok(w) => {
                        // `2>file`: a word of digits right before `<`/`>` is a descriptor number.
                        let fd_number = !w.quoted
                            && !w.text.is_empty()
                            && w.text.bytes().all(|c| c.is_ascii_digit())
                            && matches!(lx.peek(), Some(b'<' | b'>'));
                        if !fd_number {
                            current.push(w);
                        }
                    }
                    Err(why) => {
                        out.unparsed = Some((text[start..].to_owned(), why));
                        break;
                    }
                }
            }
        }
    }
    finish(&mut current, &mut out);
    out
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
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

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.i + n).copied()
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

    /// `<`, `>`, `>>`, `>|`, `<>`, `>&2`, `<&0`, `<<<` and their target word (dropped).
    fn redirection(&mut self) -> Result<(), &'static str> {
        let first = self.b[self.i];
        self.i += 1;
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

    fn redirect_target(&mut self) -> Result<(), &'static str> {
        self.skip_blanks();
        match self.peek() {
            Some(c) if !is_operator(c) => self.word().map(|_| ()),
            _ => Ok(()),
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
            substitutions: Vec::new(),
        };
        if self.peek() == Some(b'~') && matches!(self.peek_at(1), None | Some(b'/')) {
            w.base = Some(BaseVar::Home);
            self.i += 1;
        } else if self.peek() == Some(b'~') {
            // `~user/…`: another user's home.
            w.dynamic = Some(Dynamic::Variable);
        }
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
                    self.i += 1;
                    match self.next_char() {
                        Some('\n') | None => {}
                        Some(ch) => w.text.push(ch),
                    }
                }
                b'$' => self.dollar(&mut w, start)?,
                b'`' => self.backquote(&mut w)?,
                b'*' | b'?' | b'[' => {
                    w.dynamic.get_or_insert(Dynamic::Glob);
                    self.push_char(&mut w);
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
                Some(b'$') => self.dollar(w, start)?,
                Some(b'`') => self.backquote(w)?,
                Some(_) => self.push_char(w),
            }
        }
    }

    /// `$…` at the current position.
    fn dollar(&mut self, w: &mut Word, start: usize) -> Result<(), &'static str> {
        let at_start = w.text.is_empty() && w.base.is_none() && w.dynamic.is_none();
        // Only quotes may precede a leading base variable (`"${CLAUDE_PLUGIN_ROOT}/x"`).
        let at_start = at_start && self.s[start..self.i].bytes().all(|c| c == b'"');
        match self.peek_at(1) {
            Some(b'(') => {
                let from = self.i;
                self.i += 2;
                self.skip_parens()?;
                w.substitutions.push(self.s[from..self.i].to_owned());
                w.dynamic = Some(Dynamic::Substitution);
                w.text.push_str(&self.s[from..self.i]);
            }
            Some(b'{') => {
                let Some(end) = self.s[self.i + 2..].find('}') else {
                    return Err("an unterminated `${`");
                };
                let inner = &self.s[self.i + 2..self.i + 2 + end];
                let whole = &self.s[self.i..self.i + 3 + end];
                self.i += 3 + end;
                self.variable(w, inner, whole, at_start);
            }
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
                    break;
                }
                Some(_) => {
                    self.next_char();
                }
            }
        }
        let i = self.i.min(self.s.len());
        w.substitutions.push(self.s[from..i].to_owned());
        w.dynamic = Some(Dynamic::Substitution);
        w.text.push_str(&self.s[from..i]);
        Ok(())
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
                Some(b'"') => {
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
                                break;
                            }
                            Some(_) => {
                                self.next_char();
                            }
                        }
                    }
                }
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
        lex(text)
            .commands
            .iter()
            .map(|c| c.iter().map(|w| w.text.clone()).collect())
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
            let lexed = lex(text);
            let w = &lexed.commands[0][0];
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
            let lexed = lex(text);
            assert_eq!(lexed.unparsed, None, "{text}");
            assert_eq!(lexed.commands[0][0].dynamic, Some(why), "{text}");
        }
        let lexed = lex("a $(b) c");
        assert_eq!(lexed.commands[0][1].substitutions, ["$(b)"]);
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
            let lexed = lex(text);
            assert_eq!(lexed.unparsed.as_ref().map(|u| u.1), Some(why), "{text}");
        }
    }

    #[test]
    fn spans_cover_the_word_as_written() {
        let text = "bash  \"${CLAUDE_PLUGIN_ROOT}/a b.sh\" --x";
        let lexed = lex(text);
        let w = &lexed.commands[0][1];
        assert_eq!(&text[w.span.clone()], "\"${CLAUDE_PLUGIN_ROOT}/a b.sh\"");
        assert_eq!(w.text, "/a b.sh");
        // Non-ASCII text and stray bytes never split a character.
        let lexed = lex("é\\é 'ü' \"ö\" $");
        assert_eq!(
            lexed.commands[0]
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>(),
            ["éé", "ü", "ö", "$"]
        );
    }
}
