//! Whether the agent that runs this hook can ask anyone: Gemini CLI run headless (`gemini -p`, or
//! with no terminal on its stdin) honours a hook's `ask` by waiting for a confirmation nobody can
//! give, then exits 0 with empty output — the call does not run and the model is never told
//! (seen in the real-agent suite, Gemini CLI 0.61.0). Its payload does not say whether it is
//! interactive, so hookbox looks at the agent's own process: the hook's ancestors (Gemini runs it
//! through a shell) are read from `/proc` up to [`MAX_ANCESTORS`] levels until a `gemini`
//! process is found; it is headless when it was given `-p`/`--prompt` without
//! `-i`/`--prompt-interactive`, or when its stdin is not a terminal — Gemini CLI's own rule for
//! its interactive mode. Where that cannot be told (no `/proc`, no such ancestor), the answer is
//! `ask`, as documented.

use std::path::Path;

/// How far up the process tree the agent is looked for.
const MAX_ANCESTORS: usize = 6;

/// The largest command line read.
const MAX_CMDLINE_BYTES: usize = 64 * 1024;

/// `Some(true)` when the Gemini CLI running this process is headless, `Some(false)` when it is
/// interactive, `None` when no Gemini CLI process is found among the ancestors.
pub(super) fn gemini_headless() -> Option<bool> {
    let mut pid = parent_of("self")?;
    for _ in 0..MAX_ANCESTORS {
        if pid <= 1 {
            return None;
        }
        let args = cmdline(pid)?;
        if args.iter().any(|a| is_gemini(a)) {
            return Some(headless_args(&args) || !stdin_is_tty(pid));
        }
        pid = parent_of(&pid.to_string())?;
    }
    None
}

fn parent_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: the command may hold spaces and parentheses.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

fn cmdline(pid: u32) -> Option<Vec<String>> {
    use std::io::Read as _;
    let mut buf = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/cmdline"))
        .ok()?
        .take(MAX_CMDLINE_BYTES as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(
        buf.split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// An argument that is Gemini CLI's program: its `gemini` command, or the script node runs.
fn is_gemini(arg: &str) -> bool {
    let name = Path::new(arg)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == "gemini" || arg.contains("/@google/gemini-cli/") || name == "gemini.js"
}

/// Gemini CLI's arguments ask for a headless run.
fn headless_args(args: &[String]) -> bool {
    let has = |f: &str| {
        args.iter()
            .any(|a| a == f || a.starts_with(&format!("{f}=")))
    };
    (has("-p") || has("--prompt")) && !(has("-i") || has("--prompt-interactive"))
}

fn stdin_is_tty(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/fd/0"))
        .map(|t| {
            let t = t.to_string_lossy();
            t.starts_with("/dev/pts/") || t.starts_with("/dev/tty")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_of_a_headless_run() {
        let v = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(headless_args(&v(
            "node /x/@google/gemini-cli/bundle/gemini.js -p hi --yolo"
        )));
        assert!(headless_args(&v("gemini --prompt=hi")));
        assert!(!headless_args(&v("gemini -i hi")));
        assert!(!headless_args(&v("gemini")));
        assert!(is_gemini(
            "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js"
        ));
        assert!(is_gemini("/usr/local/bin/gemini"));
        assert!(!is_gemini("geminify"));
    }

    #[test]
    fn this_test_is_not_run_by_gemini() {
        assert_eq!(gemini_headless(), None);
        assert!(parent_of("self").is_some());
    }
}
