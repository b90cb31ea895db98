//! Read-only views (`CommandRequest::views`): a folder shown, read-only, at another folder's
//! path in the hook's own mount namespace — for the hook and everything it starts, by any
//! spelling of the path, with every other containment (process group, timeout, cgroup) kept.
//! Each test runs under both ways of making the namespace (a mount namespace alone, as root;
//! inside a user namespace, as an ordinary user — forced for root by `ViewPolicy::UserNamespace`)
//! where this machine can; where it cannot, the test checks the reason is given and stops.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_command::{ReadOnlyView, ViewPolicy, ViewSupport, view_support};

use crate::util::{Fixture, exec, request, running_in_group, shell};

/// The policies this machine can make views with (each one probed), naming those it cannot.
fn policies() -> Vec<ViewPolicy> {
    let mut out = Vec::new();
    for policy in [ViewPolicy::Auto, ViewPolicy::UserNamespace] {
        match view_support(policy) {
            ViewSupport::MountNamespace { .. } => out.push(policy),
            ViewSupport::Unavailable { reason } => {
                assert!(!reason.is_empty());
                eprintln!("no views under {policy:?} on this machine ({reason}); skipped");
            }
        }
    }
    out
}

/// A live folder and an approved copy of it, with different `g.sh` and `lib.sh`.
struct Pair {
    fx: Fixture,
    live: PathBuf,
    snap: PathBuf,
}

impl Pair {
    fn new() -> Pair {
        let fx = Fixture::new();
        let live = fx.path().join("live");
        let snap = fx.path().join("snap");
        for (dir, which) in [(&live, "live"), (&snap, "approved")] {
            std::fs::create_dir(dir).unwrap();
            write_script(&dir.join("g.sh"), ". \"$(dirname \"$0\")/lib.sh\"; say");
            write_script(&dir.join("lib.sh"), &format!("say() {{ echo {which}; }}"));
        }
        Pair { fx, live, snap }
    }

    fn views(&self) -> Vec<ReadOnlyView> {
        vec![ReadOnlyView {
            source: self.snap.clone(),
            target: self.live.clone(),
        }]
    }
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn every_spelling_of_the_target_path_reaches_the_source_read_only() {
    for policy in policies() {
        let p = Pair::new();
        let live = p.live.display();
        // By its absolute path, after a `cd` with a relative one, from a process the hook
        // starts, and a write by every route: all see the approved copy, none writes.
        let command = format!(
            "{live}/g.sh; cd {live} && ./g.sh; sh -c './lib.sh; . ./lib.sh; say'; \
             echo x > {live}/new || echo refused; echo y >> ./g.sh || echo refused"
        );
        let req = request(shell(&command)).with_views(p.views(), policy);
        let run = p.fx.runner().run(&req).await.unwrap();
        assert_eq!(
            run.output.stdout, "approved\napproved\napproved\nrefused\nrefused\n",
            "{policy:?}: {run:?}"
        );
        assert!(
            run.output.stderr.contains("Read-only file system"),
            "{policy:?}: {}",
            run.output.stderr
        );
        // The host's own view is unchanged: nothing was mounted or written there.
        assert!(!p.live.join("new").exists());
        assert!(
            std::fs::read_to_string(p.live.join("lib.sh"))
                .unwrap()
                .contains("live")
        );
        let host =
            p.fx.runner()
                .run(&request(shell(&format!("{live}/g.sh"))))
                .await
                .unwrap();
        assert_eq!(host.output.stdout, "live\n", "{policy:?}");
    }
}

#[tokio::test]
async fn a_working_directory_inside_a_view_is_the_view_s() {
    for policy in policies() {
        let p = Pair::new();
        let req = request(exec(&["./g.sh"]))
            .with_cwd(&p.live)
            .with_views(p.views(), policy);
        let run = p.fx.runner().run(&req).await.unwrap();
        assert_eq!(run.output.stdout, "approved\n", "{policy:?}: {run:?}");
    }
}

#[tokio::test]
async fn a_view_keeps_the_timeout_and_the_process_group_kill() {
    for policy in policies() {
        let p = Pair::new();
        let req = request(shell("sleep 1000 & sleep 1000; echo never"))
            .with_views(p.views(), policy)
            .with_timeout(Duration::from_millis(300));
        let run = p.fx.runner().run(&req).await.unwrap();
        assert!(run.output.timed_out, "{policy:?}: {run:?}");
        let pgid = i32::try_from(run.pid.unwrap()).unwrap();
        assert!(running_in_group(pgid).is_empty(), "{policy:?}");
        // No note that the hook ran outside its cgroup (where the runner has cgroups).
        assert!(
            !run.notes.iter().any(|n| n.contains("without a cgroup")),
            "{policy:?}: {:?}",
            run.notes
        );
    }
}

#[tokio::test]
async fn a_view_that_cannot_be_made_fails_the_spawn_and_nothing_runs() {
    for policy in policies() {
        let p = Pair::new();
        let marker = p.fx.path().join("ran");
        let views = vec![ReadOnlyView {
            source: p.fx.path().join("missing"),
            target: p.live.clone(),
        }];
        let req = request(shell(&format!("touch {}", marker.display()))).with_views(views, policy);
        let failure = p.fx.runner().run(&req).await.unwrap_err();
        assert!(
            failure.message.contains("missing"),
            "{policy:?}: {}",
            failure.message
        );
        // A target that does not exist: the mount fails in the child, which names it.
        let views = vec![ReadOnlyView {
            source: p.snap.clone(),
            target: p.fx.path().join("nowhere"),
        }];
        let req = request(shell(&format!("touch {}", marker.display()))).with_views(views, policy);
        let failure = p.fx.runner().run(&req).await.unwrap_err();
        assert!(
            failure.message.contains("nowhere") && failure.message.contains("could not mount"),
            "{policy:?}: {}",
            failure.message
        );
        assert!(!marker.exists());
    }
}

#[test]
fn views_turned_off_say_so() {
    let s = view_support(ViewPolicy::Off);
    assert!(!s.is_available());
    assert!(s.describe().contains("turned off"), "{}", s.describe());
}
