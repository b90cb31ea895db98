//! The fallback when no cgroup is available: this process becomes a child subreaper, so the
//! processes a hook orphans (a `setsid` daemon whose parent exited) are re-parented to it
//! instead of to init, and a sweep at the end of each run kills the hook's ones.
//!
//! Whose orphan is whose: every hook starts with `HOOKBOX_HOOK_RUN=<runner>:<run>` in its
//! environment, which its descendants inherit; the sweep reads `/proc/<pid>/environ` of this
//! process's children. It kills those of the run that just ended, and those of runs of this
//! runner that already ended (an orphan re-parented late); it leaves other live runs' orphans
//! to their own sweep, and never touches a process without the marker. A hook that scrubs its
//! environment (or overwrites it in memory) before detaching is not recognised: it survives
//! the hook, and, once dead, is reaped as an unknown child (below).
//!
//! Being a subreaper is process-wide and changes what an embedding program sees: orphans of
//! *any* of its descendants come back to it, and only their parent can reap them. So the
//! sweep also reaps every zombie child that no runner spawned as a hook's leader. That is only
//! sound in a process that runs its child processes through hookbox alone: a program that
//! spawns and waits for children of its own would find them reaped. Hence off by default, for
//! hosts that own their process (the CLI, `hookbox serve`).

use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions, getpid, kill_process, waitpid};

use crate::procfs;

/// The environment variable that marks a hook's processes: `<runner token>:<run id>`.
pub const RUN_MARKER_VAR: &str = "HOOKBOX_HOOK_RUN";

/// Whether some runner of this process made it a subreaper (then spawns register under lock).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The leaders spawned by every runner of this process and not reaped yet: a sweep must not
/// reap them, their `tokio::process::Child` does.
static LEADERS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

/// Distinguishes runners of one process in the marker.
static RUNNERS: AtomicU64 = AtomicU64::new(0);

fn leaders() -> MutexGuard<'static, Option<HashSet<i32>>> {
    // The set stays consistent whatever panicked while holding it: insert and remove only.
    LEADERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Spawns through `spawn` and records the leader's pid. While this process is a subreaper,
/// the lock is held across the spawn, so a concurrent sweep cannot see (and reap) a leader
/// that exited before it was recorded.
pub(crate) fn spawn_registered<T>(
    spawn: impl FnOnce() -> io::Result<T>,
    pid: impl Fn(&T) -> Option<u32>,
) -> io::Result<T> {
    let mut guard = ACTIVE.load(Ordering::Acquire).then(leaders);
    let child = spawn()?;
    if let Some(id) = pid(&child).and_then(|p| i32::try_from(p).ok()) {
        guard
            .get_or_insert_with(leaders)
            .get_or_insert_with(HashSet::new)
            .insert(id);
    }
    Ok(child)
}

/// Forgets a leader once its `Child` reaped it.
pub(crate) fn forget_leader(pid: i32) {
    if let Some(set) = leaders().as_mut() {
        set.remove(&pid);
    }
}

/// A runner's subreaper: its marker token and the runs still going.
#[derive(Debug)]
pub(crate) struct Subreaper {
    token: String,
    next: AtomicU64,
    live: Mutex<HashSet<u64>>,
}

/// One run's marker; the run counts as live until it is dropped.
#[derive(Debug)]
pub(crate) struct RunMark<'a> {
    reaper: &'a Subreaper,
    id: u64,
    value: String,
}

impl Subreaper {
    /// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`).
    pub(crate) fn enable() -> io::Result<Subreaper> {
        rustix::process::set_child_subreaper(Some(getpid()))?;
        ACTIVE.store(true, Ordering::Release);
        Ok(Subreaper {
            token: format!(
                "{}.{}",
                std::process::id(),
                RUNNERS.fetch_add(1, Ordering::Relaxed)
            ),
            next: AtomicU64::new(0),
            live: Mutex::new(HashSet::new()),
        })
    }

    fn live(&self) -> MutexGuard<'_, HashSet<u64>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a run: its marker, live until dropped.
    pub(crate) fn begin(&self) -> RunMark<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live().insert(id);
        RunMark {
            reaper: self,
            id,
            value: format!("{}:{id}", self.token),
        }
    }

    /// Whether an orphan carrying `marker` is to be killed by the sweep of run `run`.
    fn claims(&self, marker: &str, run: u64) -> bool {
        let Some((token, id)) = marker.rsplit_once(':') else {
            return false;
        };
        let Ok(id) = id.parse::<u64>() else {
            return false;
        };
        token == self.token && (id == run || !self.live().contains(&id))
    }
}

impl RunMark<'_> {
    /// The marker variable's value for this run.
    pub(crate) fn value(&self) -> &str {
        &self.value
    }

    /// Kills this run's orphans (and late ones of finished runs), reaps them and any unknown
    /// zombie child, round after round until none is left or `limit` passes: killing an
    /// orphan re-parents its own children here, for the next round. Returns how many were
    /// killed outside the process group `pgid` (already killed as a whole), and whether it
    /// finished within `limit`.
    pub(crate) async fn sweep(&self, pgid: Option<i32>, limit: Duration) -> (usize, bool) {
        let start = tokio::time::Instant::now();
        let mut killed = 0;
        loop {
            let (dying, escaped) = self.kill_round(pgid);
            killed += escaped;
            if dying.is_empty() {
                return (killed, true);
            }
            if !reap_all(dying, start, limit).await {
                return (killed, false);
            }
        }
    }

    /// One pass over this process's children: reaps unknown zombies, SIGKILLs claimed orphans.
    /// Returns the pids to reap and how many of them had left the process group `pgid`.
    fn kill_round(&self, pgid: Option<i32>) -> (Vec<Pid>, usize) {
        let me = getpid().as_raw_pid();
        let guard = leaders();
        let leaders = guard.as_ref();
        let mut dying = Vec::new();
        let mut escaped = 0;
        for pid in procfs::all_pids() {
            let Some(stat) = procfs::stat(pid) else {
                continue;
            };
            if stat.ppid != me || leaders.is_some_and(|l| l.contains(&pid)) {
                continue;
            }
            let Some(p) = Pid::from_raw(pid) else {
                continue;
            };
            if stat.is_zombie() {
                // Our child, not a leader: an orphan that died on its own. Only we can reap it.
                let _ = waitpid(Some(p), WaitOptions::NOHANG);
                continue;
            }
            let ours = procfs::environ_var(pid, RUN_MARKER_VAR)
                .is_some_and(|m| self.reaper.claims(&m, self.id));
            // A child of ours cannot be reaped by anyone else, so its pid cannot be reused
            // between the check and the kill.
            if ours && kill_process(p, Signal::KILL).is_ok() {
                dying.push(p);
                if Some(stat.pgrp) != pgid {
                    escaped += 1;
                }
            }
        }
        (dying, escaped)
    }
}

impl Drop for RunMark<'_> {
    fn drop(&mut self) {
        self.reaper.live().remove(&self.id);
    }
}

/// Waits for each of `pids` (children of ours, SIGKILLed) to die and reaps it. Once reaped,
/// its own children have been re-parented here. `false` when `limit` passed first.
async fn reap_all(mut pids: Vec<Pid>, start: tokio::time::Instant, limit: Duration) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        pids.retain(|&p| matches!(waitpid(Some(p), WaitOptions::NOHANG), Ok(None)));
        if pids.is_empty() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reaper() -> Subreaper {
        Subreaper {
            token: "7.0".into(),
            next: AtomicU64::new(0),
            live: Mutex::new(HashSet::new()),
        }
    }

    #[test]
    fn a_sweep_claims_its_run_and_finished_runs_of_its_runner_only() {
        let r = reaper();
        let first = r.begin();
        let second = r.begin();
        assert_eq!(first.value(), "7.0:0");
        assert!(r.claims("7.0:0", first.id));
        // Another live run's orphan is left to that run.
        assert!(!r.claims("7.0:1", first.id));
        drop(second);
        // A finished run's late orphan is anyone's to kill.
        assert!(r.claims("7.0:1", first.id));
        // Another runner's, or garbage: never.
        assert!(!r.claims("7.1:0", first.id));
        assert!(!r.claims("7.0:x", first.id));
        assert!(!r.claims("", first.id));
    }
}
