//! A long-lived host under a mix of hostile hooks: after a thousand events its open files and
//! resident memory are where they were after the first hundred (no descriptor, store, replay
//! file or buffer kept per event), and every event got a verdict.
//!
//! Its own test binary, not a module of `tests/all`: it reads the process's open descriptors and
//! resident memory, and the other integration tests running beside it in one process (each with
//! its own hosts, pools and scratch folders) moved those by hundreds of MiB — a leak test that
//! fails on its neighbours' memory is no test.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

#[allow(
    dead_code,
    reason = "the shared helpers of tests/all; this test uses two of them"
)]
#[path = "all/util.rs"]
mod util;

use hookbox_core::Dialect;
use serde_json::json;

use crate::util::{event, load_project};
use hookbox_test_artifacts as guests;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: f64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096.0 / (1 << 20) as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_hostile_events_leave_files_and_memory_flat() {
    // Every hostile class at once on each event: a spinner and a sleeper stopped at a short
    // timeout, a memory bomb, a trap, unbounded recursion, an output flood, a log flood, bad
    // output, a native hook that exits 2 and one that is killed, and a mount per event.
    let behaviours = [
        "spin",
        "sleep:5000",
        "alloc:100000000",
        "trap",
        "recurse",
        "stdout:3000000",
        "log:500",
        "bad-json",
        "fs-list:/data",
        "ok",
    ];
    let mut rules: Vec<serde_json::Value> = behaviours
        .iter()
        .map(|b| {
            // Only the spinner and the sleeper need the short timeout that stops them; the
            // others end by themselves, and a 20 ms timeout on them made "the well-behaved hooks
            // still answer" a timing assert on a loaded machine.
            let timeout = if b.starts_with("spin") || b.starts_with("sleep") {
                0.02
            } else {
                10.0
            };
            json!({"type": "wasm", "component": "hooks/chaos.wasm", "timeout": timeout,
                   "memory_mb": 16, "config": {"behaviour": b},
                   "mounts": [{"host": "${CLAUDE_PLUGIN_ROOT}/hooks", "guest": "/data"}]})
        })
        .collect();
    rules.push(json!({"type": "command", "command": "echo nope >&2; exit 2"}));
    rules.push(json!({"type": "command", "command": "sleep 5", "timeout": 0.02}));
    let hooks = json!({"hooks": {"Notification": rules}});
    let p = load_project(
        Dialect::Claude,
        hooks,
        &[("chaos.wasm", guests::CHAOS)],
        |_| {},
    );
    assert!(!p.report.has_errors(), "{:#?}", p.report.diagnostics);
    let run = |i: usize| {
        // A new session every event: replay must not keep a file open per session.
        let e = event(
            json!({"hook_event_name": "Notification", "message": "m", "session_id": format!("s{i}")}),
            p.path(),
        );
        p.host.dispatch(e)
    };
    for i in 0..100 {
        let d = run(i).await;
        assert_eq!(d.reports.len(), behaviours.len() + 2);
    }
    p.host.runtime().flush_replay();
    let (fds_before, rss_before) = (open_fds(), rss_mib());
    for i in 100..1000 {
        let d = run(i).await;
        assert_eq!(d.reports.len(), behaviours.len() + 2, "event {i}");
        let ok = d
            .reports
            .iter()
            .filter(|r| r.effect.failure.is_none())
            .count();
        assert!(ok >= 2, "the well-behaved hooks still answer at event {i}");
    }
    p.host.runtime().flush_replay();
    let (fds_after, rss_after) = (open_fds(), rss_mib());
    // Open replay files are capped (64 by default) and the rest is per event: a leak of one
    // descriptor per event would show 900 more.
    assert!(
        fds_after <= fds_before + 64,
        "fds {fds_before} -> {fds_after}"
    );
    // A retained buffer per event (a 3 MB flood, a 100 MB bomb's memory) would show hundreds
    // of MiB; allocator noise stays well under this.
    assert!(
        rss_after - rss_before < 64.0,
        "rss {rss_before:.0} -> {rss_after:.0} MiB"
    );
    let m = p.host.metrics();
    assert_eq!(m.dispatches, 1000);
    assert_eq!(m.hooks_in_flight, 0);
    assert_eq!(p.host.runtime().metrics().replay_dropped, 0);
}
