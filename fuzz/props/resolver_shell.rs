//! The resolver against the shell (issue 27 item 8): a command built from a small grammar
//! (assignments, quotes, wrappers, interpreters, `${…}`, `$(…)`, pipes, redirections, `cd`,
//! `case`, `if`) is resolved by `resolve_command`, then run by the real `sh` or `bash` in a
//! scratch plugin and project with a tracing `PATH`: every program looked up on `PATH` is a
//! shim that logs its name (and, for a wrapper, runs the real one), and every script of the
//! plugin and the project logs itself when its text runs — however it is reached (`sh g.sh`,
//! `. g.sh`, `sh < g.sh`, `cat g.sh | sh`, a wrapper, a substitution). The property: unless the
//! resolver marks the rule unpinnable, every script that ran is a file it pinned (same folder,
//! same path) and every program found on `PATH` is one it names. Used by the
//! `resolver_vs_shell` fuzz target and, with fixed seeds, by hookbox-trust's
//! `tests/resolver_vs_shell.rs`. Depends on hookbox-core and hookbox-trust only.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hookbox_core::rule::{CommandLine, CommandSpec, Shell};
use hookbox_trust::{Base, UnpinnedWhy, resolve_command};

/// Programs on the tracing `PATH` that only log and exit 0.
const LEAVES: &[&str] = &["jq", "foo", "npx", "grep", "date", "time", "true2"];

/// Programs on the tracing `PATH` that log, then run the real program of that name.
const WRAPPERS: &[&str] = &[
    "env", "nice", "timeout", "stdbuf", "setsid", "nohup", "xargs", "cat", "sh", "bash",
];

/// The scripts: (folder, path, shown in the trace).
const SCRIPTS: &[(Base, &str)] = &[
    (Base::Plugin, "hooks/g.sh"),
    (Base::Plugin, "hooks/h.sh"),
    (Base::Project, "x.sh"),
    (Base::Project, "sub/x.sh"),
    (Base::Project, "sub/y.sh"),
];

/// A scratch world: a plugin, a project, a home and the tracing `PATH`.
pub(crate) struct World {
    root: PathBuf,
}

fn tag(base: Base) -> &'static str {
    match base {
        Base::Plugin => "P",
        Base::Project => "J",
        Base::Home => "H",
        Base::Root => "R",
    }
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

impl World {
    /// Makes the world in a new folder beneath `parent`.
    pub(crate) fn new(parent: &Path) -> World {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = parent.join(format!(
            "resolver-vs-shell-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let w = World { root };
        for (base, path) in SCRIPTS {
            let file = w.dir(*base).join(path);
            let line = format!("ran:{}/{path}", tag(*base));
            write(
                &file,
                &format!("#!/bin/sh\necho '{line}' >> \"$TRACE\"\n"),
                0o755,
            );
        }
        std::fs::create_dir_all(w.root.join("home")).expect("home");
        for name in LEAVES {
            write(
                &w.root.join("bin").join(name),
                &format!("#!/bin/sh\necho 'prog:{name}' >> \"$TRACE\"\nexit 0\n"),
                0o755,
            );
        }
        for name in WRAPPERS {
            let real = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(name))
                .find(|p| p.exists());
            let Some(real) = real else { continue };
            write(
                &w.root.join("bin").join(name),
                &format!(
                    "#!/bin/sh\necho 'prog:{name}' >> \"$TRACE\"\nexec {} \"$@\"\n",
                    real.display()
                ),
                0o755,
            );
        }
        w
    }

    fn dir(&self, base: Base) -> PathBuf {
        match base {
            Base::Plugin => self.root.join("plugin"),
            Base::Project => self.root.join("project"),
            Base::Home => self.root.join("home"),
            Base::Root => PathBuf::from("/"),
        }
    }

    /// Runs `text` under `shell` and returns what the trace holds, or `None` when it did not
    /// end within 5 seconds (its process group killed; nothing is concluded).
    fn trace(&self, text: &str, shell: Shell) -> Option<Vec<String>> {
        // A fresh trace per run: a process of an earlier run that outlived it (its shell
        // killed at the timeout) writes to that run's trace, never to this one.
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let trace = self
            .root
            .join(format!("trace-{}", RUNS.fetch_add(1, Ordering::Relaxed)));
        let program = match shell {
            Shell::Bash => "/bin/bash",
            _ => "/bin/sh",
        };
        let mut child = Command::new(program)
            .arg("-c")
            .arg(text)
            .current_dir(self.dir(Base::Project))
            .env_clear()
            .env("PATH", self.root.join("bin"))
            .env("TRACE", &trace)
            .env("HOME", self.dir(Base::Home))
            .env("CLAUDE_PLUGIN_ROOT", self.dir(Base::Plugin))
            .env("CLAUDE_PROJECT_DIR", self.dir(Base::Project))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn the shell");
        let start = Instant::now();
        loop {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            if start.elapsed() > Duration::from_secs(5) {
                // The whole process group: the shell and everything it started.
                let _ = Command::new("/bin/kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.wait();
                let _ = std::fs::remove_file(&trace);
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut out = String::new();
        if let Ok(mut f) = std::fs::File::open(&trace) {
            f.read_to_string(&mut out).expect("read the trace");
        }
        let _ = std::fs::remove_file(&trace);
        Some(out.lines().map(str::to_owned).collect())
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What a check concluded, when it found nothing wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checked {
    /// The resolver marks the rule unpinnable: refused under `require`, nothing to compare.
    Unpinnable,
    /// A file the resolver pins does not exist (it assumed a `cd` into a folder that is not
    /// there): the host cannot read it, so under `require` the rule does not run.
    Unreadable,
    /// The shell did not end within 5 seconds.
    TimedOut,
    /// Compared: this many programs and scripts ran, each accounted for.
    Ran(usize),
}

/// What went wrong, if the shell ran something the resolver does not account for.
pub(crate) fn check(world: &World, text: &str, shell: Shell) -> Result<Checked, String> {
    let spec = CommandSpec::of(
        CommandLine::Shell {
            text: text.to_owned(),
            shell,
        },
        5.0,
    );
    let r = resolve_command(&spec);
    if r.unpinnable().is_some() {
        return Ok(Checked::Unpinnable);
    }
    let missing = r
        .files
        .iter()
        .any(|f| f.base != Base::Root && !world.dir(f.base).join(&f.path).is_file());
    if missing {
        return Ok(Checked::Unreadable);
    }
    let Some(trace) = world.trace(text, shell) else {
        return Ok(Checked::TimedOut);
    };
    let pinned: BTreeSet<String> = r
        .files
        .iter()
        .map(|f| format!("ran:{}/{}", tag(f.base), f.path))
        .collect();
    let named: BTreeSet<String> = r
        .unpinned
        .iter()
        .filter(|u| u.why == UnpinnedWhy::OnPath)
        .map(|u| format!("prog:{}", u.what))
        .collect();
    for line in &trace {
        let ok = if line.starts_with("ran:") {
            pinned.contains(line)
        } else {
            named.contains(line)
        };
        if !ok {
            return Err(format!(
                "{shell:?} -c {text:?} ran `{line}`, which the resolver does not account for: files {:?}, unpinned {:?}",
                r.files, r.unpinned
            ));
        }
    }
    Ok(Checked::Ran(trace.len()))
}

/// A command from `bytes`, read as choices in the grammar, and the shell to run it under.
pub(crate) fn generate(bytes: &[u8]) -> (String, Shell) {
    let mut g = Gen { bytes, at: 0 };
    let shell = if g.next().is_multiple_of(2) {
        Shell::Sh
    } else {
        Shell::Bash
    };
    let text = g.list(0);
    (text, shell)
}

struct Gen<'a> {
    bytes: &'a [u8],
    at: usize,
}

const SCRIPT_NAMES: &[&str] = &[
    "\"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"",
    "$CLAUDE_PLUGIN_ROOT/hooks/h.sh",
    "${CLAUDE_PLUGIN_ROOT}/hooks/../hooks/g.sh",
    "./x.sh",
    "x.sh",
    "sub/y.sh",
    "\"$CLAUDE_PROJECT_DIR\"/x.sh",
    "'./sub/x.sh'",
    "./s\"u\"b/y.sh",
];

const ASSIGNMENTS: &[&str] = &[
    "A=1",
    "MODE=\"strict\"",
    "B='x y'",
    "C=$(jq)",
    "\"Q=1\"",
    "D=\\x",
];

const WRAPPER_PREFIXES: &[&str] = &[
    "env",
    "env -i",
    "env -u FOO",
    "env A=1",
    "nice -n 5",
    "timeout 5",
    "timeout infinity",
    "timeout -s KILL 5s",
    "stdbuf -o0",
    "setsid -w",
    "nohup",
    "exec",
    "command",
    "time",
    "exec -a name",
    "!",
];

impl Gen<'_> {
    /// The next choice; past the input's end always 1, which ends every loop.
    fn next(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(1);
        self.at += 1;
        b
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[self.next() as usize % from.len()]
    }

    fn script(&mut self) -> String {
        self.pick(SCRIPT_NAMES).to_owned()
    }

    /// A command that runs something.
    fn simple(&mut self, depth: usize) -> String {
        let mut out = String::new();
        for _ in 0..3 {
            if !self.next().is_multiple_of(4) {
                break;
            }
            out.push_str(self.pick(ASSIGNMENTS));
            out.push(' ');
        }
        if self.next().is_multiple_of(3) {
            out.push_str(self.pick(WRAPPER_PREFIXES));
            out.push(' ');
        }
        let s = self.script();
        let body = match self.next() % 16 {
            0..=2 => s,
            3 => format!("sh {s}"),
            4 => format!("bash -e {s}"),
            5 => format!("bash +e {s}"),
            6 => format!("sh -c '{s}'"),
            7 => format!("sh < {s}"),
            8 => format!("cat {s} | sh"),
            9 => format!(". {s}"),
            10 => self
                .pick(&[
                    "jq",
                    "foo",
                    "npx foo",
                    "grep -q x",
                    "date -u",
                    "true",
                    "echo hi",
                ])
                .to_owned(),
            11 => format!("echo {s} | xargs sh"),
            12 => format!("sh -- {s}"),
            13 => format!("bash -o pipefail {s}"),
            14 if depth < 2 => format!("echo \"$({})\"", self.simple(depth + 1)),
            15 if depth < 2 => format!(": ${{X:-$({})}}", self.simple(depth + 1)),
            _ => "jq".to_owned(),
        };
        out.push_str(&body);
        match self.next() % 6 {
            0 => out.push_str(" > /dev/null"),
            1 => out.push_str(" 2>&1"),
            2 => out.push_str(" < /dev/null"),
            3 => out.push_str(" <<< 'x'"),
            _ => {}
        }
        out
    }

    /// Commands joined by operators and compounds.
    fn list(&mut self, depth: usize) -> String {
        let first = self.item(depth);
        if depth > 2 || !self.next().is_multiple_of(3) {
            return first;
        }
        let op = self.pick(&["; ", " && ", " || ", " | ", "\n"]);
        format!("{first}{op}{}", self.list(depth + 1))
    }

    fn item(&mut self, depth: usize) -> String {
        if depth > 2 {
            return self.simple(depth);
        }
        match self.next() % 10 {
            0 => format!("if {}; then {}; fi", self.simple(depth), self.simple(depth)),
            1 => format!(
                "case x in x) {};; *) {};; esac",
                self.simple(depth),
                self.simple(depth)
            ),
            2 => format!("({})", self.list(depth + 1)),
            3 => format!("{{ {}; }}", self.list(depth + 1)),
            4 => format!("cd sub && {}", self.simple(depth)),
            5 => format!("(cd sub); {}", self.simple(depth)),
            6 => format!("cd \"${{CLAUDE_PLUGIN_ROOT}}\" && {}", self.simple(depth)),
            _ => self.simple(depth),
        }
    }
}
