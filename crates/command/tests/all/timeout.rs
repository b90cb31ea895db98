//! Timeouts and cancellation: the whole process group dies, nothing is left running, and the
//! runner never waits past the deadline for a hook's stray children.
//!
//! No assertion is about elapsed time (the machine is shared and noisy): "it returned" is the
//! check. Hooks record their pids in files; `/proc` tells whether those still run.

use std::time::Duration;

use crate::util::{
    Fixture, assert_all_dead, eventually, exists, read_pids, request, running_in_group, shell,
};

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed() {
    let fx = Fixture::new();
    let req = request(shell("echo partial; echo warn >&2; sleep 1000"))
        .with_timeout(Duration::from_millis(300));
    let run = fx.runner().run(&req).await.unwrap();
    assert!(run.output.timed_out);
    assert_eq!(run.output.exit_code, None);
    assert_eq!(run.signal, Some(9));
    assert_eq!(run.output.stdout, "partial\n");
    assert_eq!(run.output.stderr, "warn\n");
    assert!(
        run.notes.iter().any(|n| n.contains("timed out")),
        "{:?}",
        run.notes
    );
    let leader = run.pid.unwrap() as i32;
    assert!(!exists(leader), "the leader was not reaped");
    assert_all_dead(leader, &[]).await;
}

#[tokio::test]
async fn the_timeout_comes_from_the_spec() {
    let fx = Fixture::new();
    let mut spec = shell("sleep 1000");
    spec.timeout_secs = 0.2;
    let run = fx.runner().run(&request(spec)).await.unwrap();
    assert!(run.output.timed_out);
}

#[tokio::test]
async fn grandchildren_are_killed_with_the_group_at_the_timeout() {
    let fx = Fixture::new();
    let pids = fx.path().join("pids");
    let command = format!(
        "sleep 1000 & echo $! >> '{p}'; sleep 1000 & echo $! >> '{p}'; wait",
        p = pids.display()
    );
    // Long enough for the shell to start both sleeps before the kill even on a loaded machine.
    let req = request(shell(&command)).with_timeout(Duration::from_secs(1));
    let run = fx.runner().run(&req).await.unwrap();
    assert!(run.output.timed_out);
    assert_eq!(run.output.exit_code, None);
    let grandchildren = read_pids(&pids);
    assert_eq!(
        grandchildren.len(),
        2,
        "the hook did not start its children"
    );
    let leader = run.pid.unwrap() as i32;
    assert!(!exists(leader));
    assert_all_dead(leader, &grandchildren).await;
}

#[tokio::test]
async fn a_leader_that_exits_while_a_child_holds_stdout_returns_by_the_timeout() {
    let fx = Fixture::new();
    let pids = fx.path().join("pids");
    let command = format!(
        "sleep 1000 & echo $! > '{}'; echo done; exit 0",
        pids.display()
    );
    let req = request(shell(&command)).with_timeout(Duration::from_millis(500));
    let run = fx.runner().run(&req).await.unwrap();
    assert!(run.output.timed_out);
    assert_eq!(
        run.output.exit_code,
        Some(0),
        "the leader's own exit code is known"
    );
    assert_eq!(run.output.stdout, "done\n");
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("kept stdout or stderr open")),
        "{:?}",
        run.notes
    );
    assert_all_dead(run.pid.unwrap() as i32, &read_pids(&pids)).await;
}

#[tokio::test]
async fn background_children_that_let_go_of_the_pipes_are_killed_after_a_normal_exit() {
    let fx = Fixture::new();
    let pids = fx.path().join("pids");
    let command = format!(
        "sleep 1000 >/dev/null 2>&1 </dev/null & echo $! > '{}'; echo ok",
        pids.display()
    );
    let run = fx.runner().run(&request(shell(&command))).await.unwrap();
    assert!(!run.output.timed_out);
    assert_eq!(run.output.exit_code, Some(0));
    assert_eq!(run.output.stdout, "ok\n");
    let background = read_pids(&pids);
    assert_eq!(background.len(), 1);
    assert_all_dead(run.pid.unwrap() as i32, &background).await;
}

#[tokio::test]
async fn an_endless_flood_is_capped_and_killed() {
    let fx = Fixture::new();
    let run = fx
        .runner()
        .run(&request(shell("yes")).with_timeout(Duration::from_millis(300)))
        .await
        .unwrap();
    assert!(run.output.timed_out);
    assert!(run.output.stdout_truncated);
    assert_eq!(run.output.stdout.len(), 1024 * 1024);
    assert_all_dead(run.pid.unwrap() as i32, &[]).await;
}

#[tokio::test]
async fn dropping_the_run_kills_the_group_and_reaps_the_leader() {
    let fx = Fixture::new();
    let pids = fx.path().join("pids");
    let leader_file = fx.path().join("leader");
    let command = format!(
        "echo $$ > '{l}'; sleep 1000 & echo $! >> '{p}'; sleep 1000 & echo $! >> '{p}'; wait",
        l = leader_file.display(),
        p = pids.display()
    );
    let runner = fx.runner();
    let req = request(shell(&command)); // 60 s timeout: only the drop can end it early
    let started = async {
        eventually("the hook started its children", || {
            read_pids(&pids).len() == 2
        })
        .await;
    };
    tokio::select! {
        run = runner.run(&req) => panic!("the hook finished on its own: {run:?}"),
        () = started => {}
    }
    // The run future is dropped here.
    let leader = read_pids(&leader_file)[0];
    let grandchildren = read_pids(&pids);
    assert_all_dead(leader, &grandchildren).await;
    eventually("the leader was reaped", || !exists(leader)).await;
    assert!(running_in_group(leader).is_empty());
}

#[tokio::test]
async fn aborting_a_spawned_run_kills_the_group() {
    let fx = Fixture::new();
    let pids = fx.path().join("pids");
    let command = format!(
        "echo $$ >> '{p}'; sleep 1000 & echo $! >> '{p}'; wait",
        p = pids.display()
    );
    let runner = fx.runner();
    let req = request(shell(&command));
    let task = tokio::spawn(async move { runner.run(&req).await });
    eventually("the hook started its child", || read_pids(&pids).len() == 2).await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    let all = read_pids(&pids);
    assert_all_dead(all[0], &all[1..]).await;
    eventually("the leader was reaped", || !exists(all[0])).await;
}
