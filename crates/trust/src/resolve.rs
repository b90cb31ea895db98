//! Which files a rule runs, and what it runs that hookbox cannot pin.
//!
//! A command hook names files in its text: the program (`"${CLAUDE_PLUGIN_ROOT}/hooks/check.sh"`,
//! `./.claude/hooks/x.sh`, `~/bin/guard`) or an interpreter's script argument (`python3
//! ${CLAUDE_PLUGIN_ROOT}/hooks/a.py`, `bash hooks/b.sh`, `. lib.sh`). Those are [`FileRef`]s:
//! where the file is (relative to the plugin, the project or the home folder, or absolute), and
//! where its name sits in the command (a byte range of the shell text, or an `args` element), so
//! the host can run the bytes it hashed instead of whatever the name points to by then.
//!
//! Everything else a command runs is [`Unpinned`] and says why: a program found on `PATH`
//! (`npx foo`, `jq`, the interpreter itself), a name that depends on the environment or on a
//! command substitution, shell syntax that is not followed. Unpinned things are shown when a
//! rule is approved; they are never silently trusted.

use std::fmt;

use serde::{Deserialize, Serialize};

use std::ops::Range;

use crate::programs::{
    Interpreter, Wrapped, WrapperKind, flag_in, interpreter, is_assignment, unmodelled_wrapper,
    wrapped, wrapper_kind,
};
use crate::shell::{BaseVar, Dialect, Dynamic, Word, lex};
use hookbox_core::rule::{CommandLine, CommandSpec, Shell};

/// The folder a pinned file's path is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Base {
    /// The plugin's folder (`${CLAUDE_PLUGIN_ROOT}`, `${PLUGIN_ROOT}`; a component's path).
    Plugin,
    /// The project (`${CLAUDE_PROJECT_DIR}`, and a relative path: hooks run in the session's
    /// working directory, which is the project).
    Project,
    /// The user's home folder (`~`, `$HOME`).
    Home,
    /// The file system root: an absolute path.
    Root,
}

impl Base {
    /// How the path is written in messages: `${CLAUDE_PLUGIN_ROOT}/`, `~/`, …
    pub fn prefix(self) -> &'static str {
        match self {
            Base::Plugin => "${CLAUDE_PLUGIN_ROOT}/",
            Base::Project => "${CLAUDE_PROJECT_DIR}/",
            Base::Home => "~/",
            Base::Root => "/",
        }
    }
}

/// What a pinned file is to its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    /// The program a command executes (a script with a `#!` line, or a binary).
    Program,
    /// The script an interpreter reads (`python3 x.py`, `bash x.sh`, `. lib.sh`).
    Script,
    /// A wasm rule's component.
    Component,
}

impl FileRole {
    /// The role in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            FileRole::Program => "program",
            FileRole::Script => "script",
            FileRole::Component => "component",
        }
    }
}

/// Where the name of a pinned file sits in the rule's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// Bytes `start..end` of the shell-form command text (quotes included).
    Text {
        /// First byte.
        start: usize,
        /// One past the last byte.
        end: usize,
    },
    /// Element `n` of the exec-form `args` (0 is the program).
    Arg(usize),
    /// Not in a command (a component).
    None,
}

/// A file a rule runs that hookbox can read, hash and run from what it read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRef {
    /// What it is to the rule.
    pub role: FileRole,
    /// The folder `path` is relative to.
    pub base: Base,
    /// The path beneath `base`: normalised, `/`-separated, no `.`, no `..`, never empty.
    pub path: String,
    /// Where its name is in the command.
    pub site: Site,
}

/// Why something a rule runs is not pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnpinnedWhy {
    /// A program looked up on `PATH`: whatever is installed there runs.
    OnPath,
    /// Its name depends on an environment variable.
    Environment,
    /// A command substitution (`$(…)`): it runs a command, and its output becomes a name.
    Substitution,
    /// A glob (`*.sh`): the files it matches are decided when it runs.
    Glob,
    /// An absolute path outside the plugin and the project.
    OutsideRoots,
    /// In the plugin's data folder, which hooks themselves write.
    DataFolder,
    /// A path that leaves the folder it starts from (`..`).
    LeavesRoot,
    /// A relative path after a `cd` hookbox cannot follow.
    UnknownCwd,
    /// A module an interpreter finds by name (`python3 -m pkg`).
    Module,
    /// Shell syntax hookbox does not follow (a here-document, an unterminated quote), or a
    /// PowerShell command.
    NotFollowed,
    /// A construct whose effect the resolver does not model (a parameter expansion with an
    /// operator, `eval`, `trap`, `sh -c '…'`, a shell reading its program from standard input,
    /// `/dev/fd/N`, a wrapper or an interpreter option it does not know).
    Unpinnable,
}

impl UnpinnedWhy {
    /// The explanation shown beside the name.
    pub fn describe(self) -> &'static str {
        match self {
            UnpinnedWhy::OnPath => "a program found on PATH: whatever is installed there runs",
            UnpinnedWhy::Environment => "its name depends on an environment variable",
            UnpinnedWhy::Substitution => {
                "a command substitution: it runs a command whose output names what runs"
            }
            UnpinnedWhy::Glob => "a glob: what it matches is decided when the hook runs",
            UnpinnedWhy::OutsideRoots => "an absolute path outside the plugin and the project",
            UnpinnedWhy::DataFolder => "in the plugin's data folder, which hooks themselves write",
            UnpinnedWhy::LeavesRoot => "the path leaves the folder it starts from (`..`)",
            UnpinnedWhy::UnknownCwd => "a relative path after a `cd` hookbox cannot follow",
            UnpinnedWhy::Module => "a module the interpreter finds by name",
            UnpinnedWhy::NotFollowed => "command text hookbox does not follow",
            UnpinnedWhy::Unpinnable => "hookbox does not model what it runs",
        }
    }

    /// Whether it makes its rule *unpinnable*: hookbox cannot account for what it runs, so
    /// under `trust = require` the rule is refused. A program found on `PATH`, a file outside
    /// the roots named by its absolute path, are accounted for (by name); a name that depends
    /// on the environment, a substitution, a glob, a path after an unknown `cd`, a module
    /// found by name or an unmodelled construct are not.
    pub fn is_unpinnable(self) -> bool {
        !matches!(self, UnpinnedWhy::OnPath | UnpinnedWhy::OutsideRoots)
    }
}

/// The fix named beside an unpinnable construct.
pub const UNPINNABLE_FIX: &str = "move it into a script in the plugin and run that script";

/// Something a rule runs that is not pinned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unpinned {
    /// What, as written (`npx`, `$MY_HOOK`, `$(which python3)`, `/usr/local/bin/guard`).
    pub what: String,
    /// Why.
    pub why: UnpinnedWhy,
    /// Whether it makes the rule unpinnable ([`UnpinnedWhy::is_unpinnable`]): refused under
    /// `trust = require`. Older records lack it (read as `false`; only the current reading
    /// of a rule decides what runs).
    #[serde(default)]
    pub unpinnable: bool,
}

impl Unpinned {
    /// `what`, unpinned for `why`.
    pub fn new(what: impl Into<String>, why: UnpinnedWhy) -> Unpinned {
        Unpinned {
            what: what.into(),
            why,
            unpinnable: why.is_unpinnable(),
        }
    }
}

impl fmt::Display for Unpinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unpinnable {
            write!(
                f,
                "unpinnable: {} — {}; {UNPINNABLE_FIX}",
                self.what,
                self.why.describe()
            )
        } else {
            write!(f, "{} — {}", self.what, self.why.describe())
        }
    }
}

/// The files a command runs, and what it runs unpinned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandFiles {
    /// Files to pin, in the order they appear.
    pub files: Vec<FileRef>,
    /// What is not pinned, in the order it appears (each named once).
    pub unpinned: Vec<Unpinned>,
}

impl CommandFiles {
    /// The first construct that makes the command unpinnable, if any.
    pub fn unpinnable(&self) -> Option<&Unpinned> {
        self.unpinned.iter().find(|u| u.unpinnable)
    }
}

impl CommandFiles {
    fn unpinned(&mut self, what: impl Into<String>, why: UnpinnedWhy) {
        let u = Unpinned::new(what, why);
        if !self.unpinned.contains(&u) {
            self.unpinned.push(u);
        }
    }
}

/// Words that end a compound command or run no file.
const NO_PROGRAM: &[&str] = &[
    "fi", "done", "}", "esac", "echo", "printf", "true", "false", ":", "exit", "return", "export",
    "set", "unset", "read", "test", "[", "[[", "]]", "shift", "wait", "local", "declare",
    "typeset", "readonly", "let", "pwd", "umask", "ulimit", "unalias", "type", "hash", "break",
    "continue", "jobs", "fg", "bg", "kill", "case", "for", "select", "in", "getopts",
];

/// Script extensions: a bare `name.py` after `bun run` is a file in the working folder.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "py", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "php", "ps1", "fish",
    "lua", "tcl",
];

/// Deepest nesting of command substitutions followed; deeper is unmodelled.
const MAX_NESTING: usize = 8;

/// The working folder of the commands read so far (`cd` changes it).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cwd {
    Known(Base, String),
    Unknown(String),
}

/// Resolves what `spec` runs. Pure: nothing is read; the host opens each [`FileRef`].
pub fn resolve_command(spec: &CommandSpec) -> CommandFiles {
    let mut out = CommandFiles::default();
    match &spec.command {
        CommandLine::Shell {
            text,
            shell: Shell::Powershell,
        } => {
            out.unpinned(cut(text), UnpinnedWhy::NotFollowed);
        }
        CommandLine::Shell { text, shell } => {
            let dialect = match shell {
                Shell::Bash => Dialect::Bash,
                _ => Dialect::Sh,
            };
            let mut cwd = Cwd::Known(Base::Project, String::new());
            resolve_text(text, 0..text.len(), dialect, &mut cwd, 0, &mut out);
        }
        CommandLine::Exec { argv } => {
            let words: Vec<Word> = argv.iter().map(|a| exec_word(a)).collect();
            let mut cwd = Cwd::Known(Base::Project, String::new());
            resolve_simple(&words, Site::Arg, &mut cwd, &mut out);
        }
    }
    out
}

/// At most 80 characters of `text`, for messages.
fn cut(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if text.chars().count() > 80 {
        s.push('…');
    }
    s
}

/// Resolves the shell text at `range` of `text` (the whole command, or a command
/// substitution's text inside it, `depth` deep).
fn resolve_text(
    text: &str,
    range: Range<usize>,
    dialect: Dialect,
    cwd: &mut Cwd,
    depth: usize,
    out: &mut CommandFiles,
) {
    if depth > MAX_NESTING {
        out.unpinned(
            format!("command substitutions nested more than {MAX_NESTING} deep"),
            UnpinnedWhy::Unpinnable,
        );
        return;
    }
    let offset = range.start;
    let lexed = lex(&text[range], dialect);
    for u in lexed.unmodelled {
        out.unpinned(u, UnpinnedWhy::Unpinnable);
    }
    // The working folder of each open subshell, innermost last: a `cd` inside `( … )` ends
    // with it.
    let mut scopes: Vec<(u32, Cwd)> = Vec::new();
    // How many `if`/`while`/`until`/`for`/`select`/`case` are open: a `cd` inside one may or
    // may not have run.
    let mut compound = 0usize;
    for command in &lexed.commands {
        while scopes
            .last()
            .is_some_and(|(id, _)| !command.scope.contains(id))
        {
            scopes.pop();
        }
        for id in &command.scope[scopes.len().min(command.scope.len())..] {
            let here = scopes
                .last()
                .map_or_else(|| cwd.clone(), |(_, c)| c.clone());
            scopes.push((*id, here));
        }
        let here = match scopes.last_mut() {
            Some((_, c)) => c,
            None => &mut *cwd,
        };
        // A substitution runs first, in a subshell: a `cd` in it changes nothing after it.
        for w in command.words.iter().chain(&command.data) {
            for s in &w.substitutions {
                let mut inner = here.clone();
                let r = offset + s.start..offset + s.end;
                resolve_text(text, r, dialect, &mut inner, depth + 1, out);
            }
        }
        match command.words.first().and_then(literal) {
            Some("if" | "while" | "until" | "for" | "select" | "case") => compound += 1,
            Some("fi" | "done" | "esac") => compound = compound.saturating_sub(1),
            _ => {}
        }
        let words = &command.words;
        let before = here.clone();
        resolve_simple(
            words,
            |i| Site::Text {
                start: offset + words[i].span.start,
                end: offset + words[i].span.end,
            },
            here,
            out,
        );
        if *here != before {
            if command.piped {
                // `cd x | …`, `cd x &`: in a subshell of its own.
                *here = before;
            } else if command.after_or || compound > 0 {
                // It may not have run.
                *here = Cwd::Unknown("a `cd` that may or may not run".into());
            }
        }
    }
    if let Some((rest, why)) = lexed.unparsed {
        out.unpinned(format!("{} ({why})", cut(&rest)), UnpinnedWhy::NotFollowed);
    }
}

/// An `args` element as a word: no shell, so only hookbox's own `${VAR}` placeholders at its
/// start mean a folder; everything else is literal.
fn exec_word(arg: &str) -> Word {
    if let Some(rest) = arg.strip_prefix("${")
        && let Some(end) = rest.find('}')
        && let Some(b) = BaseVar::of_name(&rest[..end])
        && b != BaseVar::Home
    {
        return Word::literal(rest[end + 1..].to_owned(), Some(b));
    }
    Word::literal(arg.to_owned(), None)
}

/// The literal text of `w`, if it has one.
fn literal(w: &Word) -> Option<&str> {
    (w.base.is_none() && w.dynamic.is_none()).then_some(w.text.as_str())
}

/// Whether a simple command sets `PATH`: an assignment (`PATH=/x node …`, `PATH=/x`), or a
/// `PATH=…` argument of `export`, `env` and the other builtins that set variables.
fn sets_path(words: &[Word]) -> bool {
    let path_word = |w: &Word| w.text.starts_with("PATH=") || w.text.starts_with("PATH+=");
    // The leading assignments, then the program: a `PATH=` argument counts only after a
    // program that sets variables (`echo PATH=x` prints it).
    let lead = words.iter().take_while(|w| is_assignment(w)).count();
    if words[..lead].iter().any(path_word) {
        return true;
    }
    match words.get(lead) {
        // `PATH+=…` is bash's append (a word of no other use as a program).
        Some(w) if w.text.starts_with("PATH+=") => true,
        Some(w)
            if matches!(
                literal(w),
                Some("export" | "env" | "declare" | "typeset" | "readonly" | "local")
            ) =>
        {
            words[lead + 1..].iter().any(path_word)
        }
        _ => false,
    }
}

fn resolve_simple(
    words: &[Word],
    site: impl Fn(usize) -> Site,
    cwd: &mut Cwd,
    out: &mut CommandFiles,
) {
    // A `PATH` the command sets decides which programs it finds — not the ones pinned, which
    // are looked up in hookbox's own `PATH`.
    if sets_path(words) {
        out.unpinned(
            "`PATH=…`: the command sets where its programs are found",
            UnpinnedWhy::Unpinnable,
        );
        return;
    }
    let mut i = 0;
    // Leading assignments, and wrappers: words that run the command after them.
    let program = loop {
        let Some(w) = words.get(i) else { return };
        if is_assignment(w) {
            i += 1;
            continue;
        }
        // A wrapper may be named by its absolute path (`/usr/bin/env`): that file is pinned as
        // the program, and what follows is read as the wrapper reads it (an interpreter so
        // named is read below).
        let name = match literal(w) {
            Some(t) if t.starts_with('/') => {
                let base = t.rsplit('/').next().unwrap_or_default();
                if wrapper_kind(base) == Some(WrapperKind::OnPath) {
                    pin(w, FileRole::Program, site(i), cwd, out);
                    base
                } else {
                    break w;
                }
            }
            Some(t) => t,
            None => break w,
        };
        if unmodelled_wrapper(name) {
            out.unpinned(
                format!("`{name}`, which runs commands hookbox does not follow"),
                UnpinnedWhy::Unpinnable,
            );
            return;
        }
        let Some(kind) = wrapper_kind(name) else {
            break w;
        };
        if kind == WrapperKind::OnPath && !w.text.starts_with('/') {
            out.unpinned(name, UnpinnedWhy::OnPath);
        }
        match wrapped(name, words, i + 1) {
            Wrapped::Runs(j) => i = j,
            Wrapped::Nothing => return,
            Wrapped::Unmodelled(what) => {
                out.unpinned(what, UnpinnedWhy::Unpinnable);
                return;
            }
        }
    };
    let name_literal = literal(program).map(str::to_owned);
    if let Some(name) = name_literal.as_deref() {
        if name == "cd" {
            *cwd = change_dir(words.get(i + 1), cwd);
            return;
        }
        if NO_PROGRAM.contains(&name) {
            return;
        }
    }
    if let Some(why) = program.dynamic {
        out.unpinned(cut(&shown(program)), dynamic_why(why));
        return;
    }
    let interp_name = match name_literal.as_deref() {
        Some(t) if t.starts_with('/') => t.rsplit('/').next().unwrap_or_default().to_owned(),
        Some(t) if !t.contains('/') => t.to_owned(),
        _ => String::new(),
    };
    let interp = interpreter(&interp_name);
    if program.base.is_some() || program.text.contains('/') {
        pin(program, FileRole::Program, site(i), cwd, out);
        if interp.is_none() {
            return;
        }
    } else if program.text.is_empty() {
        // `''` or a lone `\`: the shell looks an empty name up on PATH (and finds nothing);
        // named as written, never as an unnamed item.
        out.unpinned("\"\"", UnpinnedWhy::OnPath);
        return;
    } else if !interp.as_ref().is_some_and(|i| i.builtin) {
        out.unpinned(program.text.clone(), UnpinnedWhy::OnPath);
    }
    let Some(interp) = interp else {
        return;
    };
    interpreter_args(&interp_name, &interp, words, i + 1, &site, cwd, out);
}

/// Reads an interpreter's arguments from `words[j]`: its options, exactly as modelled, then
/// its script — pinned — or what it runs instead, named.
fn interpreter_args(
    name: &str,
    interp: &Interpreter,
    words: &[Word],
    mut j: usize,
    site: &impl Fn(usize) -> Site,
    cwd: &Cwd,
    out: &mut CommandFiles,
) {
    let mut unmodelled = |what: String| out.unpinned(what, UnpinnedWhy::Unpinnable);
    if let Some(sub) = interp.subcommand
        && words.get(j).and_then(literal) == Some(sub)
    {
        j += 1;
    }
    let script = loop {
        let Some(w) = words.get(j) else {
            if !interp.builtin {
                unmodelled(format!(
                    "`{name}` reading its program from standard input (`{name} < file`, `… | {name}`, a here-string)"
                ));
            }
            return;
        };
        let Some(t) = literal(w) else {
            if w.text.starts_with('-')
                || w.text.starts_with('+')
                || w.text.starts_with('$') && w.base.is_none() && !looks_like_script(w)
            {
                unmodelled(format!(
                    "`{name} {}`: an option hookbox cannot read before it runs",
                    cut(&shown(w))
                ));
                return;
            }
            break w;
        };
        if interp.builtin {
            break w;
        }
        if t == "--" {
            match words.get(j + 1) {
                Some(s) => break s,
                None => {
                    j += 1;
                    continue;
                }
            }
        }
        if t == "-" {
            unmodelled(format!(
                "`{name} -` reading its program from standard input"
            ));
            return;
        }
        if interp.shell && (t.starts_with('-') || t.starts_with('+')) {
            match shell_option(t) {
                ShellOption::Plain => j += 1,
                ShellOption::Valued => j += 2,
                ShellOption::Inline => {
                    unmodelled(format!(
                        "`{name} {t}` with a string: the commands in it are not followed"
                    ));
                    return;
                }
                ShellOption::Stdin => {
                    unmodelled(format!(
                        "`{name} {t}` reading its program from standard input"
                    ));
                    return;
                }
                ShellOption::Unknown if flag_in(interp.plain_flags, t) => j += 1,
                ShellOption::Unknown => {
                    unmodelled(format!("`{name} {t}`, an option hookbox does not model"));
                    return;
                }
            }
            continue;
        }
        if interp.code_flags.contains(&t) {
            // The program is the next argument's text, approved as part of the rule.
            return;
        }
        if interp.module_flags.contains(&t) {
            if let Some(m) = words.get(j + 1) {
                out.unpinned(format!("{t} {}", m.text), UnpinnedWhy::Module);
            }
            return;
        }
        if interp.file_flags.contains(&t) {
            match words.get(j + 1) {
                Some(f) => break f,
                None => return,
            }
        }
        if !t.starts_with('-') {
            break w;
        }
        if interp.value_flags.contains(&t) {
            j += 2;
            continue;
        }
        let cluster = !interp.cluster.is_empty()
            && !t.starts_with("--")
            && t[1..].chars().all(|c| interp.cluster.contains(c));
        if cluster || flag_in(interp.plain_flags, t) {
            j += 1;
            continue;
        }
        let value = words
            .get(j + 1)
            .map(|v| format!(" {}", cut(&shown(v))))
            .unwrap_or_default();
        unmodelled(format!(
            "`{name} {t}{value}`, an option hookbox does not model"
        ));
        return;
    };
    let at = words
        .iter()
        .position(|w| std::ptr::eq(w, script))
        .unwrap_or(j);
    if let Some(why) = script.dynamic {
        out.unpinned(cut(&shown(script)), dynamic_why(why));
        return;
    }
    if interp.builtin && script.base.is_none() && !script.text.contains('/') {
        out.unpinned(
            format!(
                "`{name} {}`: a name without a `/`, which the shell looks up on PATH",
                script.text
            ),
            UnpinnedWhy::Unpinnable,
        );
        return;
    }
    if interp.script_must_look_like_one && !looks_like_script(script) {
        out.unpinned(
            format!(
                "`{name} {}`: a name hookbox cannot tell is a file",
                script.text
            ),
            UnpinnedWhy::Unpinnable,
        );
        return;
    }
    pin(script, FileRole::Script, site(at), cwd, out);
}

/// What an option of a POSIX shell means.
enum ShellOption {
    /// A cluster of `set` letters (`-e`, `+e`, `-eux`).
    Plain,
    /// `-o name`, `+O name`, `-eo pipefail`.
    Valued,
    /// A cluster holding `c`: the program is a string.
    Inline,
    /// A cluster holding `s`: the program is read from standard input.
    Stdin,
    /// Anything else.
    Unknown,
}

fn shell_option(t: &str) -> ShellOption {
    let letters = &t[1..];
    if t.starts_with("--") || letters.is_empty() {
        return ShellOption::Unknown;
    }
    if t.starts_with('-') && letters.contains('c') {
        return ShellOption::Inline;
    }
    if t.starts_with('-') && letters.contains('s') {
        return ShellOption::Stdin;
    }
    // `set` letters that change how commands run, not which: errexit, nounset, xtrace…
    // (`-i` and `-l` read startup files, so they are not here.)
    let plain = "abefhkmnprtuvxBCEHPT";
    let (head, last) = letters.split_at(letters.len() - 1);
    if head.chars().all(|c| plain.contains(c)) && (last == "o" || last == "O") {
        return ShellOption::Valued;
    }
    if letters.chars().all(|c| plain.contains(c)) {
        return ShellOption::Plain;
    }
    ShellOption::Unknown
}

fn looks_like_script(w: &Word) -> bool {
    if w.base.is_some() || w.text.contains('/') {
        return true;
    }
    w.dynamic.is_none()
        && w.text
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && SCRIPT_EXTENSIONS.contains(&ext))
}

fn dynamic_why(d: Dynamic) -> UnpinnedWhy {
    match d {
        Dynamic::Variable => UnpinnedWhy::Environment,
        Dynamic::Substitution => UnpinnedWhy::Substitution,
        Dynamic::Glob => UnpinnedWhy::Glob,
    }
}

/// A word as it reads: its base variable, then its text.
fn shown(w: &Word) -> String {
    match w.base {
        Some(BaseVar::PluginRoot) => format!("${{CLAUDE_PLUGIN_ROOT}}{}", w.text),
        Some(BaseVar::ProjectDir) => format!("${{CLAUDE_PROJECT_DIR}}{}", w.text),
        Some(BaseVar::PluginData) => format!("${{CLAUDE_PLUGIN_DATA}}{}", w.text),
        Some(BaseVar::Home) => format!("~{}", w.text),
        None => w.text.clone(),
    }
}

/// Where a word's path is, relative to the working folder `cwd` when it is relative.
fn locate(w: &Word, cwd: &Cwd) -> Result<(Base, String), UnpinnedWhy> {
    let (base, start) = match w.base {
        Some(BaseVar::PluginRoot) => (Base::Plugin, String::new()),
        Some(BaseVar::ProjectDir) => (Base::Project, String::new()),
        Some(BaseVar::Home) => (Base::Home, String::new()),
        Some(BaseVar::PluginData) => return Err(UnpinnedWhy::DataFolder),
        None if w.text.starts_with('/') => (Base::Root, String::new()),
        None => match cwd {
            Cwd::Known(b, p) => (*b, p.clone()),
            Cwd::Unknown(_) => return Err(UnpinnedWhy::UnknownCwd),
        },
    };
    let path = normalise(&start, &w.text).ok_or(UnpinnedWhy::LeavesRoot)?;
    Ok((base, path))
}

/// Absolute paths that name an open descriptor or another process's view, not a file that
/// can be read and pinned (`sh /dev/fd/3` after `exec 3< g.sh`).
const DESCRIPTOR_PATHS: &[&str] = &["dev/", "proc/"];

fn pin(w: &Word, role: FileRole, site: Site, cwd: &Cwd, out: &mut CommandFiles) {
    match locate(w, cwd) {
        Ok((_, path)) if path.is_empty() => out.unpinned(cut(&shown(w)), UnpinnedWhy::LeavesRoot),
        Ok((Base::Root, path)) if DESCRIPTOR_PATHS.iter().any(|p| path.starts_with(p)) => {
            out.unpinned(
                format!("`/{path}`: a descriptor or device, not a file hookbox can pin"),
                UnpinnedWhy::Unpinnable,
            );
        }
        Ok((base, path)) => out.files.push(FileRef {
            role,
            base,
            path,
            site,
        }),
        Err(why) => out.unpinned(cut(&shown(w)), why),
    }
}

fn change_dir(target: Option<&Word>, cwd: &Cwd) -> Cwd {
    let Some(t) = target else {
        return Cwd::Known(Base::Home, String::new());
    };
    if t.dynamic.is_some() {
        return Cwd::Unknown(shown(t));
    }
    match locate(t, cwd) {
        Ok((base, path)) => Cwd::Known(base, path),
        Err(_) => Cwd::Unknown(shown(t)),
    }
}

/// `rel` joined to `start` lexically (`.` dropped, `..` popped), `/`-separated; `None` when a
/// `..` would leave the base.
fn normalise(start: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = start.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(text: &str) -> CommandFiles {
        resolve_command(&CommandSpec::shell(text, 5.0))
    }

    fn files(c: &CommandFiles) -> Vec<(FileRole, Base, &str)> {
        c.files
            .iter()
            .map(|f| (f.role, f.base, f.path.as_str()))
            .collect()
    }

    fn unpinned(c: &CommandFiles) -> Vec<(&str, UnpinnedWhy)> {
        c.unpinned
            .iter()
            .map(|u| (u.what.as_str(), u.why))
            .collect()
    }

    use Base::*;
    use FileRole::*;
    use UnpinnedWhy::*;

    #[test]
    fn an_empty_program_word_is_named_unpinned_never_left_nameless() {
        // Found by the `trust` fuzz target (a lone backslash): the program word is empty.
        for text in ["\\", "''", "\"\" arg", "A=1 ''"] {
            let c = shell(text);
            assert!(c.files.is_empty(), "{text:?}");
            assert_eq!(unpinned(&c), [("\"\"", OnPath)], "{text:?}");
        }
    }

    #[test]
    fn files_named_through_a_folder_are_pinned_with_their_role() {
        // (command, pinned files, unpinned)
        type Case<'a> = (
            &'a str,
            &'a [(FileRole, Base, &'a str)],
            &'a [(&'a str, UnpinnedWhy)],
        );
        let cases: &[Case] = &[
            (
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/check.sh\"",
                &[(Program, Plugin, "hooks/check.sh")],
                &[],
            ),
            (
                "${PLUGIN_ROOT}/hooks/./a/../check.sh --strict",
                &[(Program, Plugin, "hooks/check.sh")],
                &[],
            ),
            (
                "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/x.sh",
                &[(Program, Project, ".claude/hooks/x.sh")],
                &[],
            ),
            ("./hooks/x.sh", &[(Program, Project, "hooks/x.sh")], &[]),
            (
                ".claude/hooks/x.sh arg",
                &[(Program, Project, ".claude/hooks/x.sh")],
                &[],
            ),
            ("~/bin/guard", &[(Program, Home, "bin/guard")], &[]),
            (
                "/opt/hooks/guard",
                &[(Program, Root, "opt/hooks/guard")],
                &[],
            ),
            (
                "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py",
                &[(Script, Plugin, "hooks/pretooluse.py")],
                &[("python3", OnPath)],
            ),
            (
                "python3 -u -W ignore x.py",
                &[(Script, Project, "x.py")],
                &[("python3", OnPath)],
            ),
            (
                "node --no-warnings --max-old-space-size=512 hook.js",
                &[(Script, Project, "hook.js")],
                &[("node", OnPath)],
            ),
            (
                "/bin/bash -eu -o pipefail ./x.sh",
                &[(Program, Root, "bin/bash"), (Script, Project, "x.sh")],
                &[],
            ),
            (
                "/usr/bin/env python3 x.py",
                &[(Program, Root, "usr/bin/env"), (Script, Project, "x.py")],
                &[("python3", OnPath)],
            ),
            (
                "bash -e \"$CLAUDE_PLUGIN_ROOT/scripts/a.sh\" x",
                &[(Script, Plugin, "scripts/a.sh")],
                &[("bash", OnPath)],
            ),
            (
                "node hook.mjs",
                &[(Script, Project, "hook.mjs")],
                &[("node", OnPath)],
            ),
            (
                "deno run --allow-read ${CLAUDE_PLUGIN_ROOT}/x.ts",
                &[(Script, Plugin, "x.ts")],
                &[("deno", OnPath)],
            ),
            (
                ". ${CLAUDE_PLUGIN_ROOT}/lib.sh && main",
                &[(Script, Plugin, "lib.sh")],
                &[("main", OnPath)],
            ),
            (
                "timeout -s KILL 5s ./slow.sh",
                &[(Program, Project, "slow.sh")],
                &[("timeout", OnPath)],
            ),
            (
                "timeout 5 node x.js",
                &[(Script, Project, "x.js")],
                &[("timeout", OnPath), ("node", OnPath)],
            ),
            (
                "nice -n 10 ./a.sh",
                &[(Program, Project, "a.sh")],
                &[("nice", OnPath)],
            ),
            (
                "cd \"${CLAUDE_PLUGIN_ROOT}\" && python3 hooks/a.py",
                &[(Script, Plugin, "hooks/a.py")],
                &[("python3", OnPath)],
            ),
            (
                "cd \"${CLAUDE_PLUGIN_ROOT}/hooks\" && ./a.sh; ../bin/b",
                &[(Program, Plugin, "hooks/a.sh"), (Program, Plugin, "bin/b")],
                &[],
            ),
            (
                "FOO=1 exec ${CLAUDE_PLUGIN_ROOT}/a.sh",
                &[(Program, Plugin, "a.sh")],
                &[],
            ),
            (
                "env -i A=1 ./a.sh",
                &[(Program, Project, "a.sh")],
                &[("env", OnPath)],
            ),
            (
                "if ./check.sh; then ./ok.sh; fi",
                &[(Program, Project, "check.sh"), (Program, Project, "ok.sh")],
                &[],
            ),
            (
                "timeout 5 ./slow.sh",
                &[(Program, Project, "slow.sh")],
                &[("timeout", OnPath)],
            ),
            (
                "./a.sh 2>&1 | tee log >/dev/null",
                &[(Program, Project, "a.sh")],
                &[("tee", OnPath)],
            ),
        ];
        for (text, want_files, want_unpinned) in cases {
            let got = shell(text);
            assert_eq!(files(&got), *want_files, "{text}");
            assert_eq!(unpinned(&got), *want_unpinned, "{text}");
        }
    }

    #[test]
    fn what_cannot_be_resolved_is_named_unpinned_never_trusted() {
        let cases: &[(&str, &[(&str, UnpinnedWhy)])] = &[
            ("npx foo", &[("npx", OnPath)]),
            ("jq -r .tool_name", &[("jq", OnPath)]),
            ("python3 -c 'print(1)'", &[("python3", OnPath)]),
            (
                "python3 -m mypkg.hook",
                &[("python3", OnPath), ("-m mypkg.hook", Module)],
            ),
            ("$MY_HOOK --x", &[("$MY_HOOK", Environment)]),
            (
                "\"$(which python3)\" x.py",
                &[("which", OnPath), ("$(which python3)", Substitution)],
            ),
            (
                "python3 \"$(dirname $0)/x.py\"",
                &[
                    ("dirname", OnPath),
                    ("python3", OnPath),
                    ("$(dirname $0)/x.py", Substitution),
                ],
            ),
            (
                "${CLAUDE_PLUGIN_ROOT}/../other/x.sh",
                &[("${CLAUDE_PLUGIN_ROOT}/../other/x.sh", LeavesRoot)],
            ),
            (
                "${CLAUDE_PLUGIN_DATA}/x.sh",
                &[("${CLAUDE_PLUGIN_DATA}/x.sh", DataFolder)],
            ),
            ("cd \"$TMPDIR\" && ./x.sh", &[("./x.sh", UnknownCwd)]),
            ("hooks/*.sh", &[("hooks/*.sh", Glob)]),
            (
                "eval \"$X\"",
                &[(
                    "`eval`, which runs commands hookbox does not follow",
                    Unpinnable,
                )],
            ),
            ("case $x in a) b;; esac", &[("b", OnPath)]),
            (
                "cat <<EOF\nhi\nEOF",
                &[
                    ("cat", OnPath),
                    ("<<EOF\nhi\nEOF (a here-document)", NotFollowed),
                ],
            ),
            (
                "echo 'open",
                &[("'open (an unterminated quote)", NotFollowed)],
            ),
            ("echo hi; true", &[]),
        ];
        for (text, want) in cases {
            let got = shell(text);
            assert!(got.files.is_empty(), "{text}: {:?}", got.files);
            assert_eq!(unpinned(&got), *want, "{text}");
        }
    }

    #[test]
    fn sites_point_at_the_words_to_replace() {
        let text = "bash \"${CLAUDE_PLUGIN_ROOT}/a.sh\" && ${PLUGIN_ROOT}/b.sh";
        let got = shell(text);
        let spans: Vec<&str> = got
            .files
            .iter()
            .map(|f| match f.site {
                Site::Text { start, end } => &text[start..end],
                _ => panic!("{f:?}"),
            })
            .collect();
        assert_eq!(
            spans,
            ["\"${CLAUDE_PLUGIN_ROOT}/a.sh\"", "${PLUGIN_ROOT}/b.sh"]
        );
    }

    #[test]
    fn exec_form_uses_argument_positions_and_only_braced_placeholders() {
        let spec = CommandSpec::exec(
            vec![
                "python3".into(),
                "${CLAUDE_PLUGIN_ROOT}/hooks/a.py".into(),
                "$HOME/x".into(),
            ],
            5.0,
        );
        let got = resolve_command(&spec);
        assert_eq!(
            got.files,
            [FileRef {
                role: Script,
                base: Plugin,
                path: "hooks/a.py".into(),
                site: Site::Arg(1)
            }]
        );
        let spec = CommandSpec::exec(
            vec!["${CLAUDE_PLUGIN_ROOT}/bin/guard".into(), "a b".into()],
            5.0,
        );
        let got = resolve_command(&spec);
        assert_eq!(files(&got), [(Program, Plugin, "bin/guard")]);
        assert_eq!(got.files[0].site, Site::Arg(0));
    }

    #[test]
    fn powershell_text_is_not_parsed() {
        let spec = CommandSpec::of(
            CommandLine::Shell {
                text: "& \"$env:CLAUDE_PLUGIN_ROOT/x.ps1\"".into(),
                shell: Shell::Powershell,
            },
            5.0,
        );
        let got = resolve_command(&spec);
        assert!(got.files.is_empty());
        assert_eq!(got.unpinned[0].why, NotFollowed);
    }
    /// Issue 27's seventeen spellings that ran an edited `hooks/g.sh` under `require`: each is
    /// now read as the shell reads it — the script pinned where the resolver models the form,
    /// the rule unpinnable with the construct named where it does not.
    #[test]
    fn issue_27_spellings_are_pinned_or_named_unpinnable() {
        const G: &str = "${CLAUDE_PLUGIN_ROOT}/hooks/g";
        // (command, shell, the file pinned, the unpinnable construct's name starts with)
        type Case<'a> = (String, Shell, Option<(FileRole, &'a str)>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                format!(": ${{X:-$({G}.sh)}}"),
                Shell::Sh,
                None,
                Some("a parameter expansion with an operator `${X:-$("),
            ),
            (
                format!("MODE=\"strict\" \"{G}.sh\""),
                Shell::Sh,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                format!("bash +e {G}.sh"),
                Shell::Sh,
                Some((Script, "hooks/g.sh")),
                None,
            ),
            (
                format!("sh -c '{G}.sh'"),
                Shell::Sh,
                None,
                Some("`sh -c` with a string"),
            ),
            (
                format!("sh < {G}.sh"),
                Shell::Sh,
                None,
                Some("`sh` reading its program from standard input"),
            ),
            (
                format!("cat {G}.sh | sh"),
                Shell::Sh,
                None,
                Some("`sh` reading its program from standard input"),
            ),
            (
                format!("trap \"{G}.sh\" EXIT"),
                Shell::Sh,
                None,
                Some("`trap`"),
            ),
            (
                format!("echo ${{X:-\"}}\"}} \"{G}.sh\""),
                Shell::Sh,
                None,
                Some("a parameter expansion with an operator `${X:-\"}\"}`"),
            ),
            (
                format!("echo $'it\\'s'; \"{G}.sh\""),
                Shell::Bash,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                r"$'\x2e/hooks/g.sh'".to_owned(),
                Shell::Bash,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                r"$'\x2e/hooks/g.sh'".to_owned(),
                Shell::Sh,
                None,
                Some("`$'…'` quoting"),
            ),
            (
                format!("NODE_ENV=\"production\" node {G}.js"),
                Shell::Sh,
                Some((Script, "hooks/g.js")),
                None,
            ),
            (
                format!("node -r pre.js {G}.js"),
                Shell::Sh,
                None,
                Some("`node -r pre.js`"),
            ),
            (
                format!("exec 3< {G}.sh; sh /dev/fd/3"),
                Shell::Sh,
                None,
                Some("`/dev/fd/3`"),
            ),
            (
                format!("stdbuf -o0 {G}.sh"),
                Shell::Sh,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                format!("setsid {G}.sh"),
                Shell::Sh,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                format!("echo {G}.sh | xargs sh"),
                Shell::Sh,
                None,
                Some("`xargs`"),
            ),
            (
                format!("env -u FOO {G}.sh"),
                Shell::Sh,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                format!("timeout infinity {G}.sh"),
                Shell::Sh,
                Some((Program, "hooks/g.sh")),
                None,
            ),
            (
                format!("exec -a name {G}.sh"),
                Shell::Bash,
                Some((Program, "hooks/g.sh")),
                None,
            ),
        ];
        for (text, shell, file, construct) in cases {
            let spec = CommandSpec::of(
                CommandLine::Shell {
                    text: text.clone(),
                    shell: *shell,
                },
                5.0,
            );
            let got = resolve_command(&spec);
            let pinned: Vec<(FileRole, &str)> = got
                .files
                .iter()
                .map(|f| (f.role, f.path.as_str()))
                .collect();
            if file.is_some() {
                assert_eq!(
                    pinned,
                    file.iter().copied().collect::<Vec<_>>(),
                    "{text}: {got:?}"
                );
            }
            match construct {
                Some(c) => {
                    let u = got
                        .unpinnable()
                        .unwrap_or_else(|| panic!("{text}: {got:?}"));
                    assert!(u.what.starts_with(c), "{text}: {u:?}");
                    assert!(u.to_string().contains(UNPINNABLE_FIX), "{u}");
                }
                None => assert_eq!(got.unpinnable(), None, "{text}: {got:?}"),
            }
            // Nothing that names the script is left as "found on PATH".
            assert!(
                !got.unpinned
                    .iter()
                    .any(|u| u.why == OnPath && u.what.contains("g.")),
                "{text}: {got:?}"
            );
        }
    }

    #[test]
    fn interpreter_options_are_modelled_exactly() {
        // (command, the script pinned, or the unmodelled construct)
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("bash -eux -o pipefail ./a.sh", Ok("a.sh")),
            ("bash +o posix -- ./a.sh", Ok("a.sh")),
            ("bash --norc ./a.sh", Ok("a.sh")),
            ("bash -ec ./a.sh", Err("`bash -ec` with a string")),
            ("bash -s ./a.sh", Err("`bash -s` reading")),
            ("bash -i ./a.sh", Err("`bash -i`")),
            ("bash --rcfile x ./a.sh", Err("`bash --rcfile`")),
            ("bash $OPTS ./a.sh", Err("`bash $OPTS`")),
            ("python3 -uB -W ignore ./a.py", Ok("a.py")),
            ("python3 -X dev a.py", Ok("a.py")),
            (
                "python3 --check-hash-based-pycs never a.py",
                Err("`python3 --check-hash-based-pycs never`"),
            ),
            (
                "python3",
                Err("`python3` reading its program from standard input"),
            ),
            ("python3 - < a.py", Err("`python3 -` reading")),
            ("node --import ./x.mjs a.js", Err("`node --import ./x.mjs`")),
            ("node --enable-source-maps hook", Ok("hook")),
            ("deno run -A --no-check x.ts", Ok("x.ts")),
            (
                "deno run --import-map=m.json x.ts",
                Err("`deno --import-map=m.json"),
            ),
            ("bun run build", Err("`bun build`")),
            ("perl -I lib a.pl", Err("`perl -I lib`")),
            ("ruby -w a.rb", Ok("a.rb")),
            (". lib.sh", Err("`. lib.sh`: a name without a `/`")),
            ("source ./lib.sh", Ok("lib.sh")),
        ];
        for (text, want) in cases {
            let got = shell(text);
            match want {
                Ok(path) => {
                    assert_eq!(
                        got.files
                            .iter()
                            .map(|f| f.path.as_str())
                            .collect::<Vec<_>>(),
                        [*path],
                        "{text}: {got:?}"
                    );
                    assert_eq!(got.unpinnable(), None, "{text}: {got:?}");
                }
                Err(what) => {
                    assert!(got.files.is_empty(), "{text}: {got:?}");
                    let u = got
                        .unpinnable()
                        .unwrap_or_else(|| panic!("{text}: {got:?}"));
                    assert!(u.what.starts_with(what), "{text}: {u:?}");
                }
            }
        }
    }

    #[test]
    fn command_substitutions_are_read_as_commands() {
        let text = "x=$(cd hooks && ./a.sh) ./b.sh \"$(${CLAUDE_PLUGIN_ROOT}/c.sh)\"";
        let got = shell(text);
        assert_eq!(
            files(&got),
            [
                (Program, Project, "hooks/a.sh"),
                (Program, Plugin, "c.sh"),
                (Program, Project, "b.sh")
            ]
        );
        // The sites point into the text, inside the substitution.
        let spans: Vec<&str> = got
            .files
            .iter()
            .map(|f| match f.site {
                Site::Text { start, end } => &text[start..end],
                _ => panic!("{f:?}"),
            })
            .collect();
        assert_eq!(spans, ["./a.sh", "${CLAUDE_PLUGIN_ROOT}/c.sh", "./b.sh"]);
        // A `cd` in a subshell, a pipeline or after `||` changes nothing certain after it
        // (found by the resolver_vs_shell differential).
        for (text, want) in [
            ("(cd sub); ./x.sh", Ok("x.sh")),
            ("(cd sub; ./x.sh); ./y.sh", Ok("sub/x.sh y.sh")),
            ("cd sub | true; ./x.sh", Ok("x.sh")),
            ("cd sub & ./x.sh", Ok("x.sh")),
            ("true || cd sub && ./x.sh", Err(UnknownCwd)),
            ("if true; then cd sub; fi; ./x.sh", Err(UnknownCwd)),
            ("cd sub && ./x.sh", Ok("sub/x.sh")),
        ] {
            let got = shell(text);
            let paths: Vec<&str> = got.files.iter().map(|f| f.path.as_str()).collect();
            match want {
                Ok(p) => assert_eq!(paths.join(" "), p, "{text}: {got:?}"),
                Err(why) => assert!(got.unpinned.iter().any(|u| u.why == why), "{text}: {got:?}"),
            }
        }
        // Nesting past the bound is unpinnable, not followed forever.
        let deep = format!("{}x{}", "$(".repeat(12), ")".repeat(12));
        assert!(shell(&deep).unpinnable().is_some());
    }

    #[test]
    fn a_command_setting_path_is_unpinnable() {
        // The programs it runs are looked up in a PATH hookbox did not pin them from.
        for text in [
            "PATH=/tmp/x:$PATH node g.js",
            "PATH=/tmp/x; node g.js",
            "export PATH=/tmp/x:$PATH; node g.js",
            "env PATH=/tmp/x node g.js",
            "PATH+=:/tmp/x; jq .",
        ] {
            let c = shell(text);
            assert!(
                c.unpinned
                    .iter()
                    .any(|u| u.why == Unpinnable && u.what.contains("PATH=")),
                "{text:?}: {:?}",
                c.unpinned
            );
        }
        // A word that only looks like it is data.
        let c = shell("echo PATH=/tmp/x");
        assert!(c.unpinnable().is_none(), "{:?}", c.unpinned);
    }
}
