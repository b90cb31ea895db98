//! Helpers: hook fixtures, requests, and `/proc` checks for leftover processes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_command::{CommandRequest, CommandRun, CommandRunner, HookContext};
use hookbox_core::Dialect;
use hookbox_core::rule::CommandSpec;
use tempfile::TempDir;

/// A temp dir holding scripts, plus a data root for the runner.
pub(crate) struct Fixture {
    pub(crate) dir: TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes an executable `#!/bin/sh` script.
    pub(crate) fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.file(name, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    pub(crate) fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// A runner with the test process's environment.
    pub(crate) fn runner(&self) -> CommandRunner {
        CommandRunner::new()
    }

    /// The data folder of `plugin` for `session` under this fixture's `data/`.
    pub(crate) fn data_dir(&self, plugin: &str, session: &str) -> PathBuf {
        hookbox_command::create_plugin_data_dir(&self.dir.path().join("data"), plugin, session)
            .unwrap()
    }
}

pub(crate) fn shell(command: &str) -> CommandSpec {
    CommandSpec::shell(command, 60.0)
}

pub(crate) fn exec(args: &[&str]) -> CommandSpec {
    CommandSpec::exec(args.iter().map(|a| (*a).to_owned()).collect(), 60.0)
}

pub(crate) fn request(spec: CommandSpec) -> CommandRequest {
    CommandRequest::new(spec, HookContext::new(Dialect::Claude))
}

/// Runs `command` through `sh -c` in the claude dialect and expects it to start.
pub(crate) async fn run_shell(command: &str) -> CommandRun {
    let fx = Fixture::new();
    fx.runner().run(&request(shell(command))).await.unwrap()
}

/// Pids listed one per line in `path` (written by a hook with `echo $! >> file`).
pub(crate) fn read_pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// `(state, pgrp)` of a process from `/proc/<pid>/stat`, or `None` when it is gone.
fn stat(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields start after the last `)`.
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether `pid` is still executing. A zombie is not: it is dead and only waits for its parent
/// to collect it, and orphaned grandchildren are re-parented to this machine's init, which is
/// not obliged to reap them promptly.
pub(crate) fn running(pid: i32) -> bool {
    matches!(stat(pid), Some((state, _)) if state != 'Z' && state != 'X')
}

/// Whether `/proc/<pid>` exists at all (zombie included): false once reaped.
pub(crate) fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Processes of group `pgid` that are still executing.
pub(crate) fn running_in_group(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| matches!(stat(pid), Some((state, pgrp)) if pgrp == pgid && state != 'Z' && state != 'X'))
        .collect()
}

/// Polls `cond` until it holds. SIGKILL is delivered asynchronously, so a killed process may
/// take a moment to die; the bound is only there so a broken runner fails instead of hanging.
pub(crate) async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..1500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never happened: {what}");
}

/// Asserts that nothing of the hook whose leader was `leader` and whose other processes are
/// `pids` is left executing.
pub(crate) async fn assert_all_dead(leader: i32, pids: &[i32]) {
    eventually("the hook's processes died", || {
        !running(leader) && pids.iter().all(|&p| !running(p))
    })
    .await;
    eventually("the hook's process group is empty", || {
        running_in_group(leader).is_empty()
    })
    .await;
}
