//! How a hook process starts (issue 18 §5): inside its cgroup from its first instruction (on
//! Linux through `clone3(CLONE_INTO_CGROUP)`, see `clone3.rs`), with exactly the environment,
//! descriptors, signal mask and dispositions std's spawn gives, and entirely killed at its end
//! even when it forks as fast as it can.

use std::time::Duration;

use hookbox_command::{CommandRequest, Containment, HookContext};
use hookbox_core::Dialect;

use crate::util::{Fixture, eventually, exec, read_pids, request, running, shell};

#[tokio::test]
async fn the_hook_is_in_its_run_cgroup_from_its_first_instruction() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let Containment::Cgroup { dir } = runner.containment() else {
        eprintln!("no cgroup per hook on this machine; skipped");
        return;
    };
    // `cat` reads its own cgroup as its first act: it was never anywhere else.
    let run = runner
        .run(&request(exec(&["cat", "/proc/self/cgroup"])))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    let own = run.output.stdout.trim();
    let tree = dir.file_name().unwrap().to_str().unwrap();
    let (before, run_dir) = own.rsplit_once('/').unwrap();
    assert!(before.ends_with(tree), "{own} not under {}", dir.display());
    assert!(run_dir.starts_with("run-"), "{own}");
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    // Left empty, it is kept for the next run (no `mkdir` and `rmdir` per hook)...
    let again = runner
        .run(&request(exec(&["cat", "/proc/self/cgroup"])))
        .await
        .unwrap();
    assert_eq!(again.output.stdout.trim(), own, "{again:?}");
    let folder = dir.join(run_dir);
    assert!(folder.is_dir(), "{}", folder.display());
    // ...and removed with its runner.
    drop(runner);
    eventually("the run's cgroup was removed with its runner", || {
        !folder.exists() && !dir.exists()
    })
    .await;
}

#[tokio::test]
async fn sigpipe_is_default_and_no_signal_is_blocked_in_the_hook() {
    // This process ignores SIGPIPE (Rust does); an ignored signal stays ignored across
    // `execve`, so the spawn must restore it, or `yes` would never stop writing.
    let fx = Fixture::new();
    let run = fx
        .runner()
        .run(&request(shell("yes | head -1")).with_timeout(Duration::from_secs(20)))
        .await
        .unwrap();
    assert!(!run.output.timed_out, "{run:?}");
    assert_eq!(run.output.stdout, "y\n");

    let run = fx
        .runner()
        .run(&request(exec(&[
            "grep",
            "-E",
            "^Sig(Blk|Ign)",
            "/proc/self/status",
        ])))
        .await
        .unwrap();
    let field = |name: &str| {
        let line = run
            .output
            .stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap();
        u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
    };
    assert_eq!(field("SigBlk:"), 0, "{}", run.output.stdout);
    // SIGPIPE is signal 13: bit 12.
    assert_eq!(field("SigIgn:") & (1 << 12), 0, "{}", run.output.stdout);
}

#[tokio::test]
async fn the_environment_is_exactly_the_inherited_and_the_context_variables() {
    let fx = Fixture::new();
    // No PATH: `env` is found where `execvp` looks without one (`/bin:/usr/bin`).
    let runner = fx.runner().with_host_env([
        ("B_VAR", "2"),
        ("A_VAR", "1"),
        ("CLAUDE_PLUGIN_DATA", "stale"),
    ]);
    let req = CommandRequest::new(
        exec(&["env"]),
        HookContext::new(Dialect::Claude).with_plugin_data(fx.path()),
    );
    let run = runner.run(&req).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    let data = fx.path().display().to_string();
    // Sorted by name, one value per name (the context's, not the stale inherited one).
    let expected = [
        "A_VAR=1".to_owned(),
        "B_VAR=2".to_owned(),
        format!("CLAUDE_PLUGIN_DATA={data}"),
        format!("PLUGIN_DATA={data}"),
    ];
    let lines: Vec<&str> = run.output.stdout.lines().collect();
    assert_eq!(lines, expected, "{}", run.output.stdout);
}

#[tokio::test]
async fn a_program_missing_from_path_or_a_missing_cwd_is_still_reported_as_such() {
    use hookbox_core::output::FailureClass;
    let fx = Fixture::new();
    let runner = fx.runner().with_host_env([("PATH", fx.path())]);
    let err = runner.run(&request(exec(&["ls"]))).await.unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert!(
        err.message.contains("No such file or directory"),
        "{}",
        err.message
    );
    // A file of that name on PATH but not executable: permission denied, as `execvp` says.
    fx.file("ls", "not a program");
    let err = runner.run(&request(exec(&["ls"]))).await.unwrap_err();
    assert!(err.message.contains("Permission denied"), "{}", err.message);
    // A relative PATH entry is taken from the hook's working directory.
    let bin = fx.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let tool = fx.script("tool", "echo relative");
    std::fs::rename(&tool, bin.join("tool")).unwrap();
    let relative = fx.runner().with_host_env([("PATH", "bin")]);
    let run = relative
        .run(&request(exec(&["tool"])).with_cwd(fx.path()))
        .await
        .unwrap();
    assert_eq!(run.output.stdout, "relative\n", "{run:?}");
}

#[tokio::test]
async fn an_executable_without_a_shebang_runs_under_sh_as_with_execvp() {
    let fx = Fixture::new();
    let script = fx.file("plain", "echo \"no shebang: $1\"\n");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = fx
        .runner()
        .run(&request(exec(&[script.to_str().unwrap(), "arg"])))
        .await
        .unwrap();
    assert_eq!(run.output.stdout, "no shebang: arg\n", "{run:?}");
}

#[tokio::test]
async fn a_hook_forking_in_a_loop_dies_entirely_at_its_timeout() {
    // Hostile: every iteration starts a daemon in a new session that records its pid; the
    // hook forks until its timeout. Whatever it started, in whatever group, is gone after.
    let fx = Fixture::new();
    let runner = fx.runner();
    let caught = runner.containment().catches_escapes();
    let pids = fx.path().join("pids");
    let _cleanup = KillAtEnd(&pids);
    let command = format!(
        "while :; do setsid sh -c 'echo $$ >> \"{}\"; exec sleep 1000' </dev/null >/dev/null 2>&1 & done",
        pids.display()
    );
    let run = runner
        .run(&request(shell(&command)).with_timeout(Duration::from_millis(400)))
        .await
        .unwrap();
    assert!(run.output.timed_out, "{run:?}");
    let started = read_pids(&pids);
    if !caught {
        for pid in &started {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
        eprintln!("no cgroup per hook on this machine; skipped");
        return;
    }
    assert!(!started.is_empty(), "{run:?}");
    // Killed when the run returned; the last ones may still be on their way out.
    eventually("every daemon the hook started died", || {
        read_pids(&pids).iter().all(|&p| !running(p))
    })
    .await;
}

/// Kills the processes listed in a pids file when the test ends, so a failing run (or a
/// machine without cgroups) does not leave `sleep 1000`s behind.
struct KillAtEnd<'a>(&'a std::path::Path);

impl Drop for KillAtEnd<'_> {
    fn drop(&mut self) {
        for pid in read_pids(self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}
