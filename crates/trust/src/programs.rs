//! The programs the resolver knows by name: interpreters (which read a script named in their
//! arguments) and wrappers (which run the command in their arguments), with exactly the options
//! of each that it models. An option, a wrapper or a way of passing a program that is not in
//! these tables is *unmodelled* — named, so the rule is refused under `trust = require` —
//! never skipped: skipping an option it did not know is how `node -r pre.js g.js` or
//! `env -u FOO g.sh` used to leave a file unpinned.

use crate::shell::{Word, is_name};

/// An interpreter: how its arguments name what it runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interpreter {
    /// Options after which the program is the next argument's text (`-c`, `-e`).
    pub(crate) code_flags: &'static [&'static str],
    /// Options after which a module is named (`-m`).
    pub(crate) module_flags: &'static [&'static str],
    /// A subcommand that precedes the script (`deno run x.ts`).
    pub(crate) subcommand: Option<&'static str>,
    /// An option whose value is the script (`pwsh -File x.ps1`).
    pub(crate) file_flags: &'static [&'static str],
    /// Options that change nothing about what runs. One ending in `*` matches every word that
    /// starts with it (`--max-old-space-size=*`).
    pub(crate) plain_flags: &'static [&'static str],
    /// Letters that may be clustered after one `-` (`python3 -uB`).
    pub(crate) cluster: &'static str,
    /// Options followed by a value that names nothing run (`python3 -W ignore`).
    pub(crate) value_flags: &'static [&'static str],
    /// A POSIX shell: `-o`/`+o` options and `-`/`+` letter clusters, `-c`/`-s` as such.
    pub(crate) shell: bool,
    /// A shell builtin (`.`, `source`): nothing is looked up on `PATH`, and a name without a
    /// `/` is (it is not the working folder's file).
    pub(crate) builtin: bool,
    /// The script must look like one (`bun run x.ts`; `bun run build` runs a package script).
    pub(crate) script_must_look_like_one: bool,
}

const PLAIN: Interpreter = Interpreter {
    code_flags: &[],
    module_flags: &[],
    subcommand: None,
    file_flags: &[],
    plain_flags: &[],
    cluster: "",
    value_flags: &[],
    shell: false,
    builtin: false,
    script_must_look_like_one: false,
};

/// The interpreter called `name`, if it is one.
pub(crate) fn interpreter(name: &str) -> Option<Interpreter> {
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
            cluster: "bBdEIOPqsSuvRx",
            value_flags: &["-W", "-X"],
            plain_flags: &["-W*", "-X*"],
            ..PLAIN
        });
    }
    Some(match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" => Interpreter {
            shell: true,
            plain_flags: &[
                "--norc",
                "--noprofile",
                "--posix",
                "--noediting",
                "--restricted",
            ],
            ..PLAIN
        },
        "fish" => Interpreter {
            code_flags: &["-c", "--command"],
            ..PLAIN
        },
        "." | "source" => Interpreter {
            builtin: true,
            ..PLAIN
        },
        "node" | "nodejs" => Interpreter {
            code_flags: &["-e", "-p", "--eval", "--print"],
            plain_flags: &[
                "--no-warnings",
                "--no-deprecation",
                "--throw-deprecation",
                "--pending-deprecation",
                "--trace-warnings",
                "--trace-deprecation",
                "--trace-uncaught",
                "--enable-source-maps",
                "--experimental-strip-types",
                "--no-experimental-strip-types",
                "--experimental-detect-module",
                "--no-experimental-detect-module",
                "--experimental-vm-modules",
                "--preserve-symlinks",
                "--preserve-symlinks-main",
                "--max-old-space-size=*",
                "--stack-size=*",
                "--unhandled-rejections=*",
                "--disable-warning=*",
                "--experimental-default-type=*",
                "--title=*",
            ],
            ..PLAIN
        },
        "ruby" => Interpreter {
            code_flags: &["-e"],
            plain_flags: &["-w", "-W", "-W0", "-W1", "-W2", "--disable-gems"],
            ..PLAIN
        },
        "perl" => Interpreter {
            code_flags: &["-e", "-E"],
            plain_flags: &["-w", "-W", "-X", "-T", "-t", "-l"],
            ..PLAIN
        },
        "php" => Interpreter {
            code_flags: &["-r"],
            file_flags: &["-f"],
            plain_flags: &["-n", "-q"],
            ..PLAIN
        },
        "tsx" | "ts-node" => Interpreter {
            code_flags: &["-e", "--eval"],
            ..PLAIN
        },
        "osascript" => Interpreter {
            code_flags: &["-e"],
            value_flags: &["-l"],
            ..PLAIN
        },
        "deno" => Interpreter {
            code_flags: &["eval"],
            subcommand: Some("run"),
            plain_flags: &[
                "-A",
                "-q",
                "--quiet",
                "--allow-*",
                "--deny-*",
                "--no-check",
                "--no-prompt",
                "--no-lock",
                "--unstable*",
            ],
            ..PLAIN
        },
        "bun" | "uv" => Interpreter {
            code_flags: &["-e", "--eval"],
            subcommand: Some("run"),
            script_must_look_like_one: true,
            ..PLAIN
        },
        "pwsh" | "powershell" => Interpreter {
            code_flags: &["-c", "-Command", "-command"],
            file_flags: &["-File", "-file", "-f"],
            plain_flags: &["-NoProfile", "-NonInteractive", "-NoLogo"],
            value_flags: &["-ExecutionPolicy"],
            ..PLAIN
        },
        _ => return None,
    })
}

/// Whether `t` is one of `flags` (a flag ending in `*` matches by prefix).
pub(crate) fn flag_in(flags: &[&str], t: &str) -> bool {
    flags.iter().any(|f| match f.strip_suffix('*') {
        Some(prefix) => t.starts_with(prefix),
        None => *f == t,
    })
}

/// What a word in a wrapper's place leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wrapped {
    /// The command it runs starts at this word.
    Runs(usize),
    /// It runs no command (`env` alone prints, `command -v x` looks up).
    Nothing,
    /// It runs something in a way the resolver does not model: the construct, as written.
    Unmodelled(String),
}

/// How a wrapper is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WrapperKind {
    /// A shell keyword or builtin (`exec`, `if`, `time`): nothing is looked up on `PATH`.
    Builtin,
    /// A program found on `PATH` (`env`, `nice`, `timeout`).
    OnPath,
}

/// Wrappers the resolver knows do run a command, but does not model: their arguments decide
/// what runs in ways it does not follow (`xargs` reads them from its input).
const UNMODELLED_WRAPPERS: &[&str] = &[
    "xargs",
    "sudo",
    "doas",
    "su",
    "runuser",
    "chroot",
    "flock",
    "ionice",
    "taskset",
    "chrt",
    "unbuffer",
    "script",
    "watch",
    "parallel",
    "strace",
    "ltrace",
    "busybox",
    "nsenter",
    "unshare",
    "systemd-run",
    "setpriv",
    "prlimit",
    "numactl",
    "cgexec",
    "firejail",
    "bwrap",
    "caffeinate",
    "fakeroot",
    "proot",
    "valgrind",
    "gdb",
    "rlwrap",
    "tini",
    "dumb-init",
    "gosu",
    "su-exec",
    "chpst",
    "daemonize",
    "start-stop-daemon",
    "nix-shell",
    "direnv",
    "with-contenv",
    "catchsegv",
    "alias",
    "eval",
    "trap",
    "coproc",
    "function",
];

/// Whether `name` is a wrapper, and how it runs.
pub(crate) fn wrapper_kind(name: &str) -> Option<WrapperKind> {
    match name {
        "exec" | "command" | "builtin" | "if" | "then" | "else" | "elif" | "do" | "while"
        | "until" | "!" | "{" => Some(WrapperKind::Builtin),
        // `time` is a keyword of bash but a program on PATH for sh (dash): named as one.
        "env" | "nice" | "timeout" | "stdbuf" | "setsid" | "nohup" | "time" => {
            Some(WrapperKind::OnPath)
        }
        _ => None,
    }
}

/// Whether `name` runs a command in a way the resolver does not model.
pub(crate) fn unmodelled_wrapper(name: &str) -> bool {
    UNMODELLED_WRAPPERS.contains(&name)
}

/// The literal text of `w`, if it has one (no variable, substitution or glob, no base folder).
fn literal(w: &Word) -> Option<&str> {
    (w.base.is_none() && w.dynamic.is_none()).then_some(w.text.as_str())
}

/// After wrapper `name` at `words[i - 1]`, where the command it runs starts.
pub(crate) fn wrapped(name: &str, words: &[Word], mut i: usize) -> Wrapped {
    // Each wrapper: options taking no value, options taking the next word (or an attached
    // value: `-n10`, `--signal=KILL`), and whether it runs nothing without a command.
    let (plain, valued): (&[&str], &[&str]) = match name {
        "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "{" | "builtin" => {
            return Wrapped::Runs(i);
        }
        "exec" => (&["-c", "-l", "-cl", "-lc"], &["-a"]),
        "command" => (&["-p"], &[]),
        "time" => (&["-p"], &[]),
        "nohup" => (&[], &[]),
        "env" => (&["-i", "-", "--ignore-environment"], &["-u", "--unset"]),
        "nice" => (&[], &["-n", "--adjustment"]),
        "timeout" => (
            &[
                "-v",
                "--verbose",
                "--preserve-status",
                "--foreground",
                "-p",
                "-f",
            ],
            &["-s", "--signal", "-k", "--kill-after"],
        ),
        "stdbuf" => (&[], &["-i", "-o", "-e", "--input", "--output", "--error"]),
        "setsid" => (
            &[
                "-c", "-f", "-w", "-cf", "-fc", "-fw", "-wf", "-cw", "-wc", "--ctty", "--fork",
                "--wait",
            ],
            &[],
        ),
        _ => return Wrapped::Unmodelled(format!("`{name}`, a wrapper hookbox does not model")),
    };
    loop {
        let Some(w) = words.get(i) else {
            return Wrapped::Nothing;
        };
        let Some(t) = literal(w) else {
            if w.text.starts_with('-') || w.text.starts_with('$') {
                return Wrapped::Unmodelled(format!(
                    "`{name} {}`: an option hookbox cannot read before it runs",
                    w.text
                ));
            }
            break;
        };
        if t == "--" {
            i += 1;
            break;
        }
        if name == "env"
            && !t.starts_with('-')
            && t.split_once('=').is_some_and(|(n, _)| !n.is_empty())
        {
            i += 1;
            continue;
        }
        if name == "command" && (t == "-v" || t == "-V") {
            return Wrapped::Nothing;
        }
        if name == "nice"
            && t.len() > 1
            && t[1..].bytes().all(|c| c.is_ascii_digit())
            && t.starts_with('-')
        {
            i += 1;
            continue;
        }
        if !t.starts_with('-') || t == "-" && name != "env" {
            break;
        }
        if plain.contains(&t) {
            i += 1;
            continue;
        }
        if valued.contains(&t) {
            i += 2;
            continue;
        }
        let attached = valued.iter().any(|v| {
            (v.starts_with("--") && t.starts_with(&format!("{v}=")))
                || (!v.starts_with("--") && t.len() > v.len() && t.starts_with(v))
        });
        if attached {
            i += 1;
            continue;
        }
        return Wrapped::Unmodelled(format!("`{name} {t}`, an option hookbox does not model"));
    }
    if name == "timeout" {
        // The duration comes first.
        match words.get(i).and_then(literal) {
            Some(d) if is_duration(d) => i += 1,
            Some(d) => {
                return Wrapped::Unmodelled(format!(
                    "`timeout {d}`, a duration hookbox does not read"
                ));
            }
            None if words.get(i).is_none() => return Wrapped::Nothing,
            None => {
                return Wrapped::Unmodelled("`timeout` with a duration from a variable".into());
            }
        }
    }
    if words.get(i).is_none() {
        return Wrapped::Nothing;
    }
    Wrapped::Runs(i)
}

/// A duration `timeout` reads: a number with an optional unit, or infinity.
fn is_duration(t: &str) -> bool {
    if matches!(t.to_ascii_lowercase().as_str(), "inf" | "infinity") {
        return true;
    }
    let n = t.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(t);
    !n.is_empty()
        && n.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        && n.bytes().filter(|&c| c == b'.').count() <= 1
        && n != "."
}

/// Whether an unquoted `NAME=value` word is a variable assignment before a command.
pub(crate) fn is_assignment(w: &Word) -> bool {
    w.assignment && w.base.is_none() && w.text.split_once('=').is_some_and(|(n, _)| is_name(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<Word> {
        ws.iter()
            .map(|w| {
                let mut w = Word::literal((*w).to_owned(), None);
                w.quoted = false;
                w
            })
            .collect()
    }

    #[test]
    fn wrappers_are_read_exactly_and_the_rest_is_unmodelled() {
        // (wrapper and its arguments, where the command starts or what is not modelled)
        let cases: &[(&[&str], Result<usize, &str>)] = &[
            (&["env", "A=1", "-i", "-u", "FOO", "./g.sh"], Ok(5)),
            (&["env", "-uFOO", "--unset=BAR", "--", "./g.sh"], Ok(4)),
            (&["env", "-S", "./g.sh x"], Err("`env -S`")),
            (
                &["env", "--chdir=/tmp", "./g.sh"],
                Err("`env --chdir=/tmp`"),
            ),
            (&["nice", "-n", "10", "./g.sh"], Ok(3)),
            (&["nice", "-10", "./g.sh"], Ok(2)),
            (&["nice", "-n5", "./g.sh"], Ok(2)),
            (&["timeout", "infinity", "./g.sh"], Ok(2)),
            (&["timeout", "-s", "KILL", "-k", "1", "5s", "./g.sh"], Ok(6)),
            (&["timeout", "--signal=TERM", "2.5m", "./g.sh"], Ok(3)),
            (&["timeout", "soon", "./g.sh"], Err("`timeout soon`")),
            (&["stdbuf", "-o0", "-e", "L", "./g.sh"], Ok(4)),
            (&["stdbuf", "--output=0", "./g.sh"], Ok(2)),
            (&["setsid", "-f", "./g.sh"], Ok(2)),
            (&["setsid", "-x", "./g.sh"], Err("`setsid -x`")),
            (&["nohup", "./g.sh"], Ok(1)),
            (&["exec", "-a", "name", "./g.sh"], Ok(3)),
            (&["exec", "-cl", "./g.sh"], Ok(2)),
            (&["command", "-p", "./g.sh"], Ok(2)),
            (&["time", "-p", "./g.sh"], Ok(2)),
            (&["time", "-f", "%e", "./g.sh"], Err("`time -f`")),
        ];
        for (ws, want) in cases {
            let w = words(ws);
            let got = wrapped(ws[0], &w, 1);
            match (want, &got) {
                (Ok(i), Wrapped::Runs(j)) => assert_eq!(i, j, "{ws:?}"),
                (Err(what), Wrapped::Unmodelled(s)) => assert!(s.starts_with(what), "{ws:?}: {s}"),
                _ => panic!("{ws:?}: {got:?}, wanted {want:?}"),
            }
        }
        assert_eq!(wrapped("env", &words(&["env", "A=1"]), 1), Wrapped::Nothing);
        assert_eq!(
            wrapped("command", &words(&["command", "-v", "x"]), 1),
            Wrapped::Nothing
        );
        assert_eq!(wrapped("exec", &words(&["exec"]), 1), Wrapped::Nothing);
        assert!(unmodelled_wrapper("xargs") && unmodelled_wrapper("trap"));
        assert!(!unmodelled_wrapper("env"));
    }
}
