//! Background hooks (`async: true`, `asyncRewake`): they run to completion after the verdict
//! without delaying it, as in Claude Code, each bounded by its own timeout. The runtime tracks
//! them so that a process can wait for them before it exits (the CLI does, after printing) and a
//! service can drain them on shutdown: [`Background::drain`] awaits them up to a grace period and
//! cancels the rest (dropping a command hook's future kills its process group).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::task::JoinSet;

/// What draining found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct DrainReport {
    /// Background hooks that finished within the grace period.
    pub finished: usize,
    /// Background hooks still running at its end, cancelled.
    pub cancelled: usize,
}

/// The set of background hooks of a runtime.
#[derive(Debug, Default)]
pub(crate) struct Background {
    tasks: Mutex<JoinSet<()>>,
    started: AtomicU64,
}

impl Background {
    /// Starts `task` in the background (on the current tokio runtime).
    pub(crate) fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        // Reap what already finished, so a long-lived host does not accumulate results.
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task);
        self.started.fetch_add(1, Ordering::Relaxed);
    }

    /// Background hooks running now.
    pub(crate) fn running(&self) -> usize {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        while tasks.try_join_next().is_some() {}
        tasks.len()
    }

    /// Waits up to `grace` for every background hook, then cancels those still running.
    pub(crate) async fn drain(&self, grace: Duration) -> DrainReport {
        let mut tasks =
            std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        let mut report = DrainReport::default();
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            match tokio::time::timeout_at(deadline, tasks.join_next()).await {
                Ok(Some(_)) => report.finished += 1,
                Ok(None) => break,
                Err(_) => {
                    report.cancelled = tasks.len();
                    tasks.shutdown().await;
                    break;
                }
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drain_awaits_the_quick_and_cancels_the_stuck() {
        let bg = Background::default();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        bg.spawn(async {});
        bg.spawn(async move {
            // Never finishes; dropping it (cancellation) drops the sender.
            std::future::pending::<()>().await;
            drop(tx);
        });
        let report = bg.drain(Duration::from_millis(50)).await;
        assert_eq!(
            report,
            DrainReport {
                finished: 1,
                cancelled: 1
            }
        );
        assert!(rx.await.is_err(), "the stuck task was dropped");
        assert_eq!(bg.running(), 0);
    }
}
