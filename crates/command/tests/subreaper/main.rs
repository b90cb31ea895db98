//! The subreaper fallback (issue 8 #22), in a test binary of its own: becoming a child
//! subreaper is process-wide, and must not change what the other tests see.
//!
//! The runner here has no cgroup (turned off), so only the subreaper can catch a `setsid`
//! daemon. It must kill each hook's own orphans, leave another live hook's alone, and never
//! touch a process that is not a hook's (an embedding program's own children).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail the test on a broken setup"
)]

#[path = "../all/util.rs"]
#[allow(
    dead_code,
    reason = "shared with the main test binary; not every helper is used here"
)]
mod util;

use std::path::Path;
use std::process::{Command, Stdio};

use hookbox_command::{CommandRunner, Containment, ContainmentPolicy, RUN_MARKER_VAR};

use util::{Fixture, eventually, read_pids, request, running, shell};

fn subreaper_runner(fx: &Fixture) -> CommandRunner {
    let runner = fx.runner().with_containment(ContainmentPolicy {
        cgroup: false,
        cgroup_parent: None,
        subreaper: true,
    });
    let containment = runner.containment();
    assert!(
        matches!(containment, Containment::Subreaper { .. }),
        "{containment:?}"
    );
    assert!(containment.catches_escapes());
    runner
}

fn setsid_daemon(pids: &Path) -> String {
    format!(
        "setsid sh -c 'echo $$ >> \"{}\"; exec sleep 1000' </dev/null >/dev/null 2>&1 &",
        pids.display()
    )
}

fn until_recorded(pids: &Path, n: usize) -> String {
    format!(
        "until [ \"$(wc -l < '{}' 2>/dev/null)\" -ge {n} ] 2>/dev/null; do sleep 0.01; done;",
        pids.display()
    )
}

/// Kills leftovers of a failed test.
struct Cleanup(Vec<i32>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_subreaper_kills_each_hook_s_orphans_and_nothing_else() {
    let fx = Fixture::new();
    let runner = subreaper_runner(&fx);

    // An embedding program's own processes: a direct child, and an orphan that came back to
    // this process (now a subreaper) without a hook's marker. Neither may be touched.
    let mut own_child = Command::new("sleep")
        .arg("1000")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let stranger_pids = fx.path().join("stranger");
    // The other test of this binary may sweep at any moment, and a sweep reaps every zombie child
    // no runner spawned (the documented price of being a subreaper, module docs of
    // `subreaper.rs`): this short-lived `sh` can be reaped before `status` waits for it, which
    // `status` reports as ECHILD. Either way it has exited, which is all that is needed here.
    match Command::new("sh")
        .args(["-c", &setsid_daemon(&stranger_pids)])
        .status()
    {
        Ok(status) => assert!(status.success(), "{status}"),
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc_echild()), "{e}"),
    }
    eventually("the stranger recorded itself", || {
        read_pids(&stranger_pids).len() == 1
    })
    .await;
    let stranger = read_pids(&stranger_pids)[0];
    let _cleanup = Cleanup(vec![own_child.id() as i32, stranger]);

    // Two hooks at once: the long one's daemon must survive the short one's end. It is
    // started from a subshell that exits at once, so it is an orphan (a child of this process)
    // while its hook still runs, and the short hook's sweep sees it.
    let (long_pids, short_pids) = (fx.path().join("long"), fx.path().join("short"));
    let gate = fx.path().join("gate");
    let long = format!(
        "( {} ) ; {} while [ ! -e '{}' ]; do sleep 0.05; done",
        setsid_daemon(&long_pids),
        until_recorded(&long_pids, 1),
        gate.display()
    );
    let long_runner = runner.clone();
    let long_task = tokio::spawn(async move { long_runner.run(&request(shell(&long))).await });
    eventually("the long hook's daemon started", || {
        read_pids(&long_pids).len() == 1
    })
    .await;
    let long_daemon = read_pids(&long_pids)[0];
    let _cleanup_long = Cleanup(vec![long_daemon]);
    eventually(
        "the long hook's daemon is an orphan of this process",
        || {
            std::fs::read_to_string(format!("/proc/{long_daemon}/stat"))
                .ok()
                .and_then(|s| {
                    s[s.rfind(')')? + 1..]
                        .split_whitespace()
                        .nth(1)?
                        .parse::<u32>()
                        .ok()
                })
                == Some(std::process::id())
        },
    )
    .await;

    let short = format!(
        "{} {}",
        setsid_daemon(&short_pids),
        until_recorded(&short_pids, 1)
    );
    let run = runner.run(&request(shell(&short))).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    let short_daemon = read_pids(&short_pids)[0];
    let _cleanup_short = Cleanup(vec![short_daemon]);
    assert!(!running(short_daemon), "the short hook's daemon survived");
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("1 process had left") && n.contains("subreaper")),
        "{:?}",
        run.notes
    );
    assert!(
        running(long_daemon),
        "another live hook's daemon was killed"
    );
    assert!(
        running(stranger),
        "a process without a hook's marker was killed"
    );
    assert!(
        matches!(own_child.try_wait(), Ok(None)),
        "the embedding program's own child was touched"
    );

    std::fs::write(&gate, "").unwrap();
    let run = long_task.await.unwrap().unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert!(!running(long_daemon), "the long hook's daemon survived");
    assert!(running(stranger));
    own_child.kill().unwrap();
    own_child.wait().unwrap();
}

#[tokio::test]
async fn hooks_see_their_run_marker() {
    let fx = Fixture::new();
    let runner = subreaper_runner(&fx);
    let run = runner
        .run(&request(shell(&format!("echo \"${RUN_MARKER_VAR}\""))))
        .await
        .unwrap();
    let marker = run.output.stdout.trim();
    assert!(
        marker.starts_with(&format!("{}.", std::process::id())) && marker.contains(':'),
        "{marker}"
    );
}

/// `ECHILD`: no such child to wait for (it was reaped elsewhere).
fn libc_echild() -> i32 {
    rustix::io::Errno::CHILD.raw_os_error()
}
