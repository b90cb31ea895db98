//! The hook's process group, killed on every way out of a run.

use std::io;
use std::process::ExitStatus;

use rustix::process::{Pid, Signal, kill_process_group};

use crate::child::HookChild;
use crate::subreaper::forget_leader;

/// Owns a spawned hook (leader of its own process group) and guarantees that, however the run
/// ends — normally, at the deadline, or by the caller dropping the future — the whole group gets
/// SIGKILL and the leader is reaped.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    child: Option<HookChild>,
    /// The group id: the leader's pid, since it was spawned with `process_group(0)`.
    pgid: Option<Pid>,
    killed: bool,
    reaped: bool,
}

impl ProcessGroup {
    /// Takes charge of `child`, which must have been spawned with `process_group(0)`.
    pub(crate) fn new(child: HookChild) -> ProcessGroup {
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        ProcessGroup {
            child: Some(child),
            pgid,
            killed: false,
            reaped: false,
        }
    }

    /// The leader's pid (also the group id).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p.as_raw_pid().unsigned_abs())
    }

    /// Waits for the leader to exit and reaps it. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        let child = self
            .child
            .as_mut()
            .ok_or_else(|| io::Error::other("the hook was already released"))?;
        let status = child.wait().await?;
        self.reaped = true;
        self.forget();
        Ok(status)
    }

    /// Removes the reaped leader from the subreaper's list of leaders.
    fn forget(&self) {
        if let Some(pgid) = self.pgid {
            forget_leader(pgid.as_raw_pid());
        }
    }

    /// Sends SIGKILL to every process of the group; only the first call does anything.
    ///
    /// Called after the leader may already have been reaped. That is still safe: while any
    /// member of the group lives, Linux keeps the group id allocated, so the signal cannot reach
    /// an unrelated group; once none lives, the kill fails with `ESRCH`, unless pids wrapped
    /// around in between and a new process made itself group leader with that very id.
    pub(crate) fn kill(&mut self) {
        if std::mem::replace(&mut self.killed, true) {
            return;
        }
        if let Some(pgid) = self.pgid {
            match kill_process_group(pgid, Signal::KILL) {
                Ok(()) => {
                    tracing::debug!(pgid = pgid.as_raw_pid(), "killed the hook's process group")
                }
                // ESRCH: everyone already exited, the common case after a normal run.
                Err(rustix::io::Errno::SRCH) => {}
                Err(e) => {
                    tracing::warn!(pgid = pgid.as_raw_pid(), error = %e, "cannot kill the hook's process group")
                }
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // Kill before releasing the leader: an unreaped leader pins the group id.
        self.kill();
        if self.reaped {
            return;
        }
        let Some(mut child) = self.child.take() else {
            return;
        };
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => self.forget(),
            // Still dying from the SIGKILL: reap it in the background. Without a runtime, the
            // child's drop reaps it: tokio's orphan queue (std's spawn, with `kill_on_drop`),
            // or a thread waiting on its pidfd (`clone3`).
            Ok(None) => {
                // Without a runtime the leader stays listed: a subreaper sweep then leaves its
                // zombie to tokio's orphan queue, which reaps it.
                if let Ok(handle) = tokio::runtime::Handle::try_current() {
                    let pgid = self.pgid;
                    handle.spawn(async move {
                        if let Err(e) = child.wait().await {
                            tracing::debug!(error = %e, "reaping a cancelled hook failed");
                        }
                        if let Some(pgid) = pgid {
                            forget_leader(pgid.as_raw_pid());
                        }
                    });
                }
            }
        }
    }
}
