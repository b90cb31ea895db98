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

use crate::shell::{BaseVar, Dynamic, Word, lex};
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
    /// Shell syntax hookbox does not follow (`case`, `eval`, a here-document, an unterminated
    /// quote), or a PowerShell command.
    NotFollowed,
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
        }
    }
}

/// Something a rule runs that is not pinned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unpinned {
    /// What, as written (`npx`, `$MY_HOOK`, `$(which python3)`, `/usr/local/bin/guard`).
    pub what: String,
    /// Why.
    pub why: UnpinnedWhy,
}

impl fmt::Display for Unpinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} — {}", self.what, self.why.describe())
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
    fn unpinned(&mut self, what: impl Into<String>, why: UnpinnedWhy) {
        let u = Unpinned {
            what: what.into(),
            why,
        };
        if !self.unpinned.contains(&u) {
            self.unpinned.push(u);
        }
    }
}

/// An interpreter whose first script-like argument is a file it reads.
struct Interpreter {
    /// Options after which the program text is inline (`-c`), or a module is named (`-m`).
    code_flags: &'static [&'static str],
    module_flags: &'static [&'static str],
    /// A subcommand that precedes the script (`deno run x.ts`).
    subcommand: Option<&'static str>,
    /// An option whose value is the script (`pwsh -File x.ps1`).
    file_flags: &'static [&'static str],
    /// Options followed by a value that is not the script (`python3 -W ignore x.py`).
    value_flags: &'static [&'static str],
    /// A shell builtin (`.`, `source`): nothing is looked up on `PATH`.
    builtin: bool,
}

const SHELLS: Interpreter = Interpreter {
    code_flags: &["-c"],
    module_flags: &[],
    subcommand: None,
    file_flags: &[],
    value_flags: &["-o", "-O", "+o", "+O"],
    builtin: false,
};

const PLAIN: Interpreter = Interpreter {
    code_flags: &[],
    module_flags: &[],
    subcommand: None,
    file_flags: &[],
    value_flags: &[],
    builtin: false,
};

fn interpreter(name: &str) -> Option<Interpreter> {
    let python = name == "python"
        || name == "pypy"
        || name
            .strip_prefix("python")
            .or_else(|| name.strip_prefix("pypy"))
            .is_some_and(|v| !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit() || c == b'.'));
    if python {
        return Some(Interpreter {
            code_flags: &["-c"],
            module_flags: &["-m"],
            value_flags: &["-W", "-X", "-Q"],
            ..PLAIN
        });
    }
    Some(match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" => SHELLS,
        "." | "source" => Interpreter {
            builtin: true,
            ..PLAIN
        },
        "node" | "nodejs" => Interpreter {
            code_flags: &["-e", "-p", "--eval", "--print"],
            value_flags: &[
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "-C",
                "--conditions",
            ],
            ..PLAIN
        },
        "ruby" => Interpreter {
            code_flags: &["-e"],
            value_flags: &["-I", "-r"],
            ..PLAIN
        },
        "perl" => Interpreter {
            code_flags: &["-e", "-E"],
            value_flags: &["-I", "-M", "-m"],
            ..PLAIN
        },
        "php" => Interpreter {
            code_flags: &["-r"],
            value_flags: &["-c", "-d"],
            ..PLAIN
        },
        "tsx" | "ts-node" | "osascript" => Interpreter {
            code_flags: &["-e"],
            ..PLAIN
        },
        "deno" => Interpreter {
            code_flags: &["eval"],
            subcommand: Some("run"),
            ..PLAIN
        },
        "bun" | "uv" => Interpreter {
            code_flags: &["-e", "--eval"],
            subcommand: Some("run"),
            ..PLAIN
        },
        "pwsh" | "powershell" => Interpreter {
            code_flags: &["-c", "-Command", "-command"],
            file_flags: &["-File", "-file", "-f"],
            ..PLAIN
        },
        _ => return None,
    })
}

/// Words that run nothing by themselves but precede a command (`exec ./x.sh`, `if ./x.sh`).
const PREFIX_WORDS: &[&str] = &[
    "exec", "command", "nohup", "time", "builtin", "if", "then", "else", "elif", "do", "while",
    "until", "!", "{", "nice", "timeout",
];

/// After `timeout` or `nice`, the index of the command they run: their options (and the
/// values of those that take one) and `timeout`'s duration are skipped.
fn skip_own_arguments(prefix: &str, words: &[Word], mut i: usize) -> usize {
    let takes_value: &[&str] = match prefix {
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "nice" => &["-n", "--adjustment"],
        _ => return i,
    };
    while let Some(w) = words
        .get(i)
        .filter(|w| w.base.is_none() && w.text.starts_with('-'))
    {
        i += if takes_value.contains(&w.text.as_str()) {
            2
        } else {
            1
        };
    }
    let is_duration = |t: &str| {
        let t = t.trim_end_matches(['s', 'm', 'h', 'd']);
        !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit() || c == b'.')
    };
    if prefix == "timeout"
        && words
            .get(i)
            .is_some_and(|w| w.base.is_none() && is_duration(&w.text))
    {
        i += 1;
    }
    i
}

/// Words that end a compound command or run no file.
const NO_PROGRAM: &[&str] = &[
    "fi", "done", "}", "esac", "echo", "printf", "true", "false", ":", "exit", "return", "export",
    "set", "unset", "read", "test", "[", "[[", "]]", "shift", "trap", "wait", "local", "declare",
    "typeset", "readonly", "let", "pwd", "umask", "ulimit", "alias", "unalias", "type", "hash",
    "break", "continue", "jobs", "fg", "bg", "kill",
];

/// Syntax whose words are not commands hookbox can follow.
const NOT_FOLLOWED: &[&str] = &["case", "eval", "for", "select", "function", "coproc"];

/// Script extensions: a bare `name.py` after an interpreter is a file in the working folder.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "py", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "php", "ps1", "fish",
    "lua", "tcl",
];

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
        CommandLine::Shell { text, .. } => resolve_shell(text, &mut out),
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

fn resolve_shell(text: &str, out: &mut CommandFiles) {
    let lexed = lex(text);
    let mut cwd = Cwd::Known(Base::Project, String::new());
    for command in &lexed.commands {
        resolve_simple(
            command,
            |i| Site::Text {
                start: command[i].span.start,
                end: command[i].span.end,
            },
            &mut cwd,
            out,
        );
    }
    if let Some((rest, why)) = lexed.unparsed {
        out.unpinned(format!("{} ({why})", cut(&rest)), UnpinnedWhy::NotFollowed);
    }
}

/// An `args` element as a word: no shell, so only hookbox's own `${VAR}` placeholders at its
/// start mean a folder; everything else is literal.
fn exec_word(arg: &str) -> Word {
    let mut base = None;
    let mut text = arg.to_owned();
    if let Some(rest) = arg.strip_prefix("${")
        && let Some(end) = rest.find('}')
        && let Some(b) = BaseVar::of_name(&rest[..end])
        && b != BaseVar::Home
    {
        base = Some(b);
        text = rest[end + 1..].to_owned();
    }
    Word {
        span: 0..0,
        text,
        base,
        dynamic: None,
        quoted: true,
        substitutions: Vec::new(),
    }
}

fn is_assignment(w: &Word) -> bool {
    if w.base.is_some() {
        return false;
    }
    let Some((name, _)) = w.text.split_once('=') else {
        return false;
    };
    let mut b = name.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

fn resolve_simple(
    words: &[Word],
    site: impl Fn(usize) -> Site,
    cwd: &mut Cwd,
    out: &mut CommandFiles,
) {
    for w in words {
        for s in &w.substitutions {
            out.unpinned(cut(s), UnpinnedWhy::Substitution);
        }
    }
    let mut i = 0;
    // Leading assignments, and words that only precede a command.
    while let Some(w) = words.get(i) {
        if is_assignment(w) && !w.quoted {
            i += 1;
        } else if w.base.is_none() && w.dynamic.is_none() && PREFIX_WORDS.contains(&w.text.as_str())
        {
            i += 1;
            i = skip_own_arguments(&w.text, words, i);
        } else if w.base.is_none()
            && w.dynamic.is_none()
            && (w.text == "env" || w.text == "/usr/bin/env")
        {
            i += 1;
            while words
                .get(i)
                .is_some_and(|a| is_assignment(a) || a.text.starts_with('-'))
            {
                i += 1;
            }
        } else {
            break;
        }
    }
    let Some(program) = words.get(i) else { return };
    if program.base.is_none() && program.dynamic.is_none() {
        let name = program.text.as_str();
        if name == "cd" {
            *cwd = change_dir(words.get(i + 1), cwd);
            return;
        }
        if NO_PROGRAM.contains(&name) {
            return;
        }
        if NOT_FOLLOWED.contains(&name) {
            out.unpinned(name, UnpinnedWhy::NotFollowed);
            return;
        }
    }
    if let Some(why) = program.dynamic {
        out.unpinned(cut(&shown(program)), dynamic_why(why));
        return;
    }
    if program.base.is_some() || program.text.contains('/') {
        pin(program, FileRole::Program, site(i), cwd, out);
        return;
    }
    let name = program.text.clone();
    if name.is_empty() {
        // `''` or a lone `\`: the shell looks an empty name up on PATH (and finds nothing);
        // named as written, never as an unnamed item.
        out.unpinned("\"\"", UnpinnedWhy::OnPath);
        return;
    }
    let interp = interpreter(&name);
    if !interp.as_ref().is_some_and(|i| i.builtin) {
        out.unpinned(name.clone(), UnpinnedWhy::OnPath);
    }
    let Some(interp) = interp else {
        return;
    };
    let mut j = i + 1;
    if let Some(sub) = interp.subcommand
        && words
            .get(j)
            .is_some_and(|w| w.text == sub && w.base.is_none())
    {
        j += 1;
    }
    while let Some(w) = words.get(j) {
        let t = w.text.as_str();
        if w.base.is_none() && w.dynamic.is_none() {
            if interp.code_flags.contains(&t) {
                return;
            }
            if interp.module_flags.contains(&t) {
                if let Some(m) = words.get(j + 1) {
                    out.unpinned(format!("{t} {}", m.text), UnpinnedWhy::Module);
                }
                return;
            }
            if interp.file_flags.contains(&t) {
                if let Some(f) = words.get(j + 1) {
                    script_arg(f, site(j + 1), cwd, out);
                }
                return;
            }
            if interp.value_flags.contains(&t) {
                j += 2;
                continue;
            }
            if t.starts_with('-') {
                j += 1;
                continue;
            }
        }
        if looks_like_script(w) {
            script_arg(w, site(j), cwd, out);
        }
        return;
    }
}

fn script_arg(w: &Word, site: Site, cwd: &Cwd, out: &mut CommandFiles) {
    match w.dynamic {
        Some(why) => out.unpinned(cut(&shown(w)), dynamic_why(why)),
        None => pin(w, FileRole::Script, site, cwd, out),
    }
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

fn pin(w: &Word, role: FileRole, site: Site, cwd: &Cwd, out: &mut CommandFiles) {
    match locate(w, cwd) {
        Ok((_, path)) if path.is_empty() => out.unpinned(cut(&shown(w)), UnpinnedWhy::LeavesRoot),
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
                "node --require ./setup.js hook.js",
                &[(Script, Project, "hook.js")],
                &[("node", OnPath)],
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
                &[],
            ),
            (
                "timeout 5 node x.js",
                &[(Script, Project, "x.js")],
                &[("node", OnPath)],
            ),
            ("nice -n 10 ./a.sh", &[(Program, Project, "a.sh")], &[]),
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
            ("env -i A=1 ./a.sh", &[(Program, Project, "a.sh")], &[]),
            (
                "if ./check.sh; then ./ok.sh; fi",
                &[(Program, Project, "check.sh"), (Program, Project, "ok.sh")],
                &[],
            ),
            ("timeout 5 ./slow.sh", &[(Program, Project, "slow.sh")], &[]),
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
                &[("$(which python3)", Substitution)],
            ),
            (
                "python3 \"$(dirname $0)/x.py\"",
                &[
                    ("$(dirname $0)", Substitution),
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
            ("eval \"$X\"", &[("eval", NotFollowed)]),
            (
                "case $x in a) b;; esac",
                &[("case", NotFollowed), ("b", OnPath)],
            ),
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
}
