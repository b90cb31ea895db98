//! Processes that leave the hook's process group (`setsid`, a daemon's double fork) do not
//! outlive the hook where the machine gives the runner a cgroup per hook (issue 8 #22), and a
//! runner without one says so.
//!
//! Each daemon writes its own pid to a file before it becomes `sleep 1000`; `/proc` tells
//! whether it still runs. The cgroup tests need a writable cgroup v2 hierarchy (root, or a
//! delegated subtree); elsewhere they check that the runner reports the fallback and skip.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_command::{CommandRunner, Containment, ContainmentPolicy};

use crate::util::{Fixture, eventually, exec, read_pids, request, running, shell};

/// A shell snippet starting a `setsid` daemon that records its pid in `pids` and lets go of
/// the hook's pipes.
fn setsid_daemon(pids: &Path) -> String {
    format!(
        "setsid sh -c 'echo $$ >> \"{}\"; exec sleep 1000' </dev/null >/dev/null 2>&1 &",
        pids.display()
    )
}

/// A classic daemon: fork, `setsid` in the child, fork again, the middle process exits. The
/// daemon's parent is gone before the hook ends; it is re-parented away from the hook.
fn double_fork_daemon(pids: &Path) -> String {
    format!(
        "( setsid sh -c '( echo $$ >/dev/null; sh -c \"echo \\$\\$ >> \\\"{}\\\"; exec sleep 1000\" & ) ; exit 0' & ) </dev/null >/dev/null 2>&1",
        pids.display()
    )
}

/// A shell snippet waiting until `pids` has `n` lines: the hook must not end (and have its
/// daemons killed) before they recorded themselves.
fn until_recorded(pids: &Path, n: usize) -> String {
    format!(
        "until [ \"$(wc -l < '{}' 2>/dev/null)\" -ge {n} ] 2>/dev/null; do sleep 0.01; done;",
        pids.display()
    )
}

/// The fixture's runner if it puts hooks in cgroups; else `None` after checking that it
/// reports why (the machine's configuration decides which path these tests take).
fn cgroup_runner(fx: &Fixture) -> Option<CommandRunner> {
    let runner = fx.runner();
    match runner.containment() {
        Containment::Cgroup { dir } => {
            assert!(dir.is_dir(), "{}", dir.display());
            Some(runner)
        }
        Containment::ProcessGroup { reason } => {
            assert!(!reason.is_empty());
            eprintln!("no cgroup per hook on this machine ({reason}); skipped");
            None
        }
        other => panic!("unexpected containment {other:?}"),
    }
}

/// [`cgroup_runner`] and the folder its run cgroups are made in.
fn cgroup_runner_and_dir(fx: &Fixture) -> Option<(CommandRunner, PathBuf)> {
    let runner = cgroup_runner(fx)?;
    let Containment::Cgroup { dir } = runner.containment() else {
        unreachable!("cgroup_runner checked it");
    };
    let dir = dir.clone();
    Some((runner, dir))
}

/// Kills leftovers of a test that failed, so a failing run does not leave `sleep 1000`s.
struct Cleanup<'a>(&'a Path);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        for pid in read_pids(self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

async fn daemon_pids(pids: &Path, n: usize) -> Vec<i32> {
    eventually("the daemons wrote their pids", || {
        read_pids(pids).len() == n
    })
    .await;
    read_pids(pids)
}

#[tokio::test]
async fn a_setsid_daemon_and_a_double_forked_one_die_with_their_hook() {
    let fx = Fixture::new();
    let Some(runner) = cgroup_runner(&fx) else {
        return;
    };
    let pids = fx.path().join("pids");
    let _cleanup = Cleanup(&pids);
    let command = format!(
        "{} {}; {} echo ok",
        setsid_daemon(&pids),
        double_fork_daemon(&pids),
        until_recorded(&pids, 2)
    );
    let run = runner.run(&request(shell(&command))).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    assert_eq!(run.output.stdout, "ok\n");
    let daemons = daemon_pids(&pids, 2).await;
    // The run returns once its cgroup is empty: no polling needed.
    for pid in &daemons {
        assert!(!running(*pid), "daemon {pid} outlived its hook: {run:?}");
    }
    // At least the two daemons; a middle process of the double fork may still be exiting.
    let escaped = run
        .notes
        .iter()
        .find_map(|n| n.strip_suffix(" processes had left the hook's process group (`setsid`, a daemon) and would have outlived it; killed with the hook's cgroup"))
        .and_then(|n| n.parse::<usize>().ok());
    assert!(escaped.is_some_and(|n| n >= 2), "{:?}", run.notes);
}

#[tokio::test]
async fn a_run_cgroup_that_held_an_escaped_process_is_removed_not_used_again() {
    let fx = Fixture::new();
    let Some((runner, dir)) = cgroup_runner_and_dir(&fx) else {
        return;
    };
    let pids = fx.path().join("pids");
    let _cleanup = Cleanup(&pids);
    let command = format!(
        "{} {} cat /proc/self/cgroup",
        setsid_daemon(&pids),
        until_recorded(&pids, 1)
    );
    let first = runner.run(&request(shell(&command))).await.unwrap();
    assert_eq!(first.output.exit_code, Some(0), "{first:?}");
    assert!(!running(daemon_pids(&pids, 1).await[0]), "{first:?}");
    // The daemon was killed in it: a cgroup that held processes is never a spare.
    let second = runner
        .run(&request(exec(&["cat", "/proc/self/cgroup"])))
        .await
        .unwrap();
    assert_eq!(second.output.exit_code, Some(0), "{second:?}");
    let first_cgroup = first.output.stdout.trim();
    assert!(first_cgroup.contains("/run-"), "{first:?}");
    assert_ne!(first_cgroup, second.output.stdout.trim());
    let run_dir = first_cgroup.rsplit_once('/').unwrap().1;
    let folder = dir.join(run_dir);
    eventually("the emptied cgroup was removed", || !folder.exists()).await;
}

/// A hook can write its own cgroup's files (it runs as the same user): a cgroup it left a child
/// cgroup in (or froze) is not as the runner made it, and is never handed to the next hook.
#[tokio::test]
async fn a_run_cgroup_its_hook_changed_is_not_used_again() {
    let fx = Fixture::new();
    let Some((runner, dir)) = cgroup_runner_and_dir(&fx) else {
        return;
    };
    let command = format!(
        "run=$(sed -n 's|^0::.*/||p' /proc/self/cgroup); mkdir '{}'/\"$run\"/child && cat /proc/self/cgroup",
        dir.display()
    );
    let first = runner.run(&request(shell(&command))).await.unwrap();
    assert_eq!(first.output.exit_code, Some(0), "{first:?}");
    let first_cgroup = first.output.stdout.trim().to_owned();
    let run_dir = dir.join(first_cgroup.rsplit_once('/').unwrap().1);
    assert!(run_dir.join("child").is_dir(), "{first:?}");
    let second = runner
        .run(&request(exec(&["cat", "/proc/self/cgroup"])))
        .await
        .unwrap();
    assert_eq!(second.output.exit_code, Some(0), "{second:?}");
    assert_ne!(
        first_cgroup,
        second.output.stdout.trim(),
        "the changed cgroup was used again"
    );
    // What the hook made is the test's to remove (the runner's `rmdir` of its run cgroup failed).
    std::fs::remove_dir(run_dir.join("child")).unwrap();
    let _ = std::fs::remove_dir(&run_dir);
}

#[tokio::test]
async fn a_daemon_holding_the_hook_s_output_dies_at_the_timeout_and_releases_it() {
    let fx = Fixture::new();
    let Some(runner) = cgroup_runner(&fx) else {
        return;
    };
    let pids = fx.path().join("pids");
    let _cleanup = Cleanup(&pids);
    // The daemon keeps stdout and stderr: the run lasts until the timeout, then everything
    // must close at once (a surviving daemon would hold the pipes past `reap_timeout`).
    let command = format!(
        "setsid sh -c 'echo $$ >> \"{}\"; exec sleep 1000' & echo started",
        pids.display()
    );
    let req = request(shell(&command)).with_timeout(Duration::from_millis(500));
    let run = runner.run(&req).await.unwrap();
    assert!(run.output.timed_out);
    assert_eq!(run.output.stdout, "started\n");
    let daemons = daemon_pids(&pids, 1).await;
    assert!(!running(daemons[0]));
    assert!(
        !run.notes.iter().any(|n| n.contains("stayed open")),
        "{:?}",
        run.notes
    );
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("1 process had left the hook's process group")),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn a_daemon_of_a_cancelled_run_dies() {
    let fx = Fixture::new();
    let Some(runner) = cgroup_runner(&fx) else {
        return;
    };
    let pids = fx.path().join("pids");
    let _cleanup = Cleanup(&pids);
    let command = format!("{} sleep 1000", setsid_daemon(&pids));
    let req = request(shell(&command));
    tokio::select! {
        run = runner.run(&req) => panic!("the hook finished on its own: {run:?}"),
        daemons = daemon_pids(&pids, 1) => assert_eq!(daemons.len(), 1),
    }
    // The run future was dropped: its cgroup was killed on the way out.
    let daemon = read_pids(&pids)[0];
    eventually("the cancelled run's daemon died", || !running(daemon)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_hook_kills_its_own_daemons_only() {
    let fx = Fixture::new();
    let Some(runner) = cgroup_runner(&fx) else {
        return;
    };
    let (long_pids, short_pids) = (fx.path().join("long"), fx.path().join("short"));
    let (_c1, _c2) = (Cleanup(&long_pids), Cleanup(&short_pids));
    let gate = fx.path().join("gate");
    // The long hook keeps running until the test opens the gate.
    let long = format!(
        "{} while [ ! -e '{}' ]; do sleep 0.05; done",
        setsid_daemon(&long_pids),
        gate.display()
    );
    let short = format!(
        "{} {}",
        setsid_daemon(&short_pids),
        until_recorded(&short_pids, 1)
    );
    let long_runner = runner.clone();
    let long_task = tokio::spawn(async move { long_runner.run(&request(shell(&long))).await });
    let long_daemon = daemon_pids(&long_pids, 1).await[0];

    let run = runner.run(&request(shell(&short))).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    let short_daemon = daemon_pids(&short_pids, 1).await[0];
    assert!(!running(short_daemon), "the short hook's daemon survived");
    assert!(
        running(long_daemon),
        "the short hook's end killed another hook's daemon"
    );

    std::fs::write(&gate, "").unwrap();
    let run = long_task.await.unwrap().unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert!(!running(long_daemon), "the long hook's daemon survived");
}

#[tokio::test]
async fn a_runner_without_a_usable_cgroup_reports_it_and_still_runs_hooks() {
    let fx = Fixture::new();
    let not_a_cgroup = fx.path().join("plain-folder");
    std::fs::create_dir(&not_a_cgroup).unwrap();
    let runner = fx.runner().with_containment(ContainmentPolicy {
        cgroup_parent: Some(not_a_cgroup.clone()),
        ..ContainmentPolicy::default()
    });
    let containment = runner.containment();
    assert!(!containment.catches_escapes());
    let Containment::ProcessGroup { reason } = &containment else {
        panic!("{containment:?}");
    };
    // Either this machine has no cgroup v2 at all, or the folder is named as not being one.
    assert!(
        reason.contains(&not_a_cgroup.display().to_string()) || reason.contains("cgroup v2"),
        "{reason}"
    );
    assert!(reason.contains("subreaper fallback is off"), "{reason}");
    assert!(
        containment.to_string().contains("outlives its hook"),
        "{containment}"
    );
    let run = runner.run(&request(shell("echo ok"))).await.unwrap();
    assert_eq!(run.output.stdout, "ok\n");

    let off = fx
        .runner()
        .with_containment(ContainmentPolicy::process_group_only());
    let Containment::ProcessGroup { reason } = off.containment() else {
        panic!("{:?}", off.containment());
    };
    assert!(reason.contains("turned off"), "{reason}");
}

#[tokio::test]
async fn with_the_process_group_only_a_setsid_daemon_survives_as_documented() {
    // The documented limit of the fallback, checked so the documentation stays true: this is
    // what a cgroup (or the subreaper) is for.
    let fx = Fixture::new();
    let runner = fx
        .runner()
        .with_containment(ContainmentPolicy::process_group_only());
    let pids = fx.path().join("pids");
    let _cleanup = Cleanup(&pids);
    let command = format!("{} {}", setsid_daemon(&pids), until_recorded(&pids, 1));
    let run = runner.run(&request(shell(&command))).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    let daemon = daemon_pids(&pids, 1).await[0];
    assert!(running(daemon));
    assert!(
        !run.notes
            .iter()
            .any(|n| n.contains("left the hook's process group"))
    );
}

/// Removes a test's cgroup folder (after the runner using it is gone).
struct RemoveDir(std::path::PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[tokio::test]
async fn a_cgroup_the_kernel_refuses_to_move_hooks_into_is_noted_and_given_up() {
    let fx = Fixture::new();
    let Some((_probe, dir)) = cgroup_runner_and_dir(&fx) else {
        return;
    };
    // A threaded parent: the runner can create its folders under it, but they are "domain
    // invalid", and the kernel refuses to move a process into one (EOPNOTSUPP).
    let parent = dir
        .parent()
        .unwrap()
        .join(format!("hookbox-test-threaded-{}", std::process::id()));
    std::fs::create_dir(&parent).unwrap();
    let _remove = RemoveDir(parent.clone());
    if std::fs::write(parent.join("cgroup.type"), "threaded").is_err() {
        eprintln!("cannot make a threaded cgroup here; skipped");
        return;
    }
    let runner = fx.runner().with_containment(ContainmentPolicy {
        cgroup_parent: Some(parent.clone()),
        ..ContainmentPolicy::default()
    });
    assert!(runner.containment().catches_escapes());
    let run = runner.run(&request(shell("echo ran"))).await.unwrap();
    assert_eq!(run.output.stdout, "ran\n");
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("the kernel refused to move it into")),
        "{:?}",
        run.notes
    );
    let containment = runner.containment();
    assert!(!containment.catches_escapes(), "{containment:?}");
    // Later runs go straight to the process group, without a note each time.
    let run = runner.run(&request(shell("echo again"))).await.unwrap();
    assert_eq!(run.output.stdout, "again\n");
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    drop(runner);
}

/// A hook that leaves its cgroup for the runner's own (its user may: SECURITY.md, "What is NOT
/// isolated") and then makes the runner's empty run cgroups — the spares kept for later hooks,
/// its own among them — `threaded` does not stop later hooks: each still runs, in a run cgroup,
/// and the runner keeps its cgroups.
#[tokio::test]
async fn spares_made_threaded_by_an_escaped_hook_do_not_stop_later_hooks() {
    let fx = Fixture::new();
    let Some((runner, dir)) = cgroup_runner_and_dir(&fx) else {
        return;
    };
    // Two hooks at once leave two spares behind.
    let slow = request(shell("sleep 0.2"));
    let (a, b) = tokio::join!(runner.run(&slow), runner.run(&slow));
    assert_eq!(a.unwrap().output.exit_code, Some(0));
    assert_eq!(b.unwrap().output.exit_code, Some(0));
    // The kernel makes a cgroup threaded only while none of its siblings holds a process: the
    // hook leaves its own first.
    let command = format!(
        "echo $$ > '{0}/cgroup.procs' || exit 1; for d in '{0}'/run-*; do \
         echo threaded > \"$d/cgroup.type\" || exit 2; done; cat '{0}'/run-*/cgroup.type",
        dir.display()
    );
    let attack = runner.run(&request(shell(&command))).await.unwrap();
    if attack.output.exit_code != Some(0) {
        // A kernel or a setup that refuses the move or the change: nothing to check after it.
        eprintln!("the attack was refused here ({attack:?}); skipped");
        return;
    }
    assert_eq!(attack.output.stdout, "threaded\nthreaded\n", "{attack:?}");
    // Each later hook still starts inside a run cgroup of the runner's, and nothing was given up.
    for _ in 0..4 {
        let later = runner
            .run(&request(exec(&["cat", "/proc/self/cgroup"])))
            .await
            .unwrap();
        assert_eq!(later.output.exit_code, Some(0), "{later:?}");
        let cgroup = later.output.stdout.trim();
        let run = cgroup.rsplit_once('/').map_or("", |(_, run)| run);
        assert!(
            run.starts_with("run-") && dir.join(run).is_dir(),
            "{later:?}"
        );
        assert!(later.notes.is_empty(), "{later:?}");
    }
    assert!(runner.containment().catches_escapes());
}
