//! CPU shares: how many guests of one owner (a host, a tenant) execute wasm at once.
//!
//! Why: a CPU-bound guest yields its tokio worker every `yield_interval` (2 ms), but the executor
//! is shared by every owner, so 32 spinning guests of two noisy tenants put a quiet tenant's guard
//! behind 32 slices at each of its awaits (measured: 1.4 s for a hook that needs microseconds).
//! With a share, each run takes a **turn** from its owner's share before its first instruction,
//! gives it back at every 2 ms yield point (and takes it again behind the owner's other
//! waiting guests, first come first served), and gives it back for good when it ends. An owner
//! with N turns never has more than N guests in the executor's queue, whatever it floods with:
//! its other guests wait on the share, not in the queue every owner shares. So a quiet owner's
//! guest waits for at most the turns of the other owners, never behind another owner's queue.
//!
//! A guest waiting inside a host call (a `wasi:clocks` sleep, a file read) gives its turn back
//! while it waits and takes one again, in order, when it is woken ([`Turn::gate`]): a turn is
//! for executing, so a tenant's sleeping hooks do not hold up its other hooks (they did, before:
//! six hooks of one tenant sleeping 1 s each took turns and timed out).

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::policy::PolicyError;

/// The CPU share of one owner: at most [`CpuShare::turns`] of its runs execute at once. Cheap to
/// clone (clones are the same share); give every run of one owner the same share through
/// [`RunScope`](crate::RunScope).
#[derive(Debug, Clone)]
pub struct CpuShare {
    gate: Arc<Semaphore>,
    turns: usize,
}

impl CpuShare {
    /// A share of `turns` guests executing at once: one is one core's worth, however many
    /// guests the owner runs. `turns` must be from 1 to [`CpuShare::MAX_TURNS`]; anything else is
    /// refused (`wasm_cpu_share`, the policy field embedders set it from), never clamped.
    pub fn new(turns: usize) -> Result<CpuShare, PolicyError> {
        if turns == 0 || turns > CpuShare::MAX_TURNS {
            return Err(PolicyError::Invalid {
                field: "wasm_cpu_share",
                value: turns.to_string(),
                reason: "a CPU share is from 1 to 2^61 - 1 guests executing at once",
            });
        }
        Ok(CpuShare {
            gate: Arc::new(Semaphore::new(turns)),
            turns,
        })
    }

    /// The largest share (tokio's semaphore's limit, 2^61 - 1).
    pub const MAX_TURNS: usize = Semaphore::MAX_PERMITS;

    /// Guests of this owner that may execute at once.
    pub fn turns(&self) -> usize {
        self.turns
    }

    /// Guests of this owner executing now (holding a turn).
    pub fn executing(&self) -> usize {
        self.turns - self.gate.available_permits()
    }
}

/// The turn one run holds, shared between the run and its store's epoch callback (which gives
/// it back and takes it again at each yield). Empty while the run waits for a turn; dropping the
/// last handle gives back a turn still held, so a run dropped mid-wait or mid-slice (a timeout, a
/// dispatch deadline) never keeps one.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    share: CpuShare,
    held: Arc<Mutex<Option<OwnedSemaphorePermit>>>,
}

impl Turn {
    pub(crate) fn new(share: &CpuShare) -> Turn {
        Turn {
            share: share.clone(),
            held: Arc::new(Mutex::new(None)),
        }
    }

    /// Waits for a turn of the owner's share (behind the owner's other waiting runs).
    pub(crate) async fn take(&self) {
        // A free turn is taken without a wait (the usual case for a quiet owner). It cannot
        // jump the owner's queue: tokio's semaphore hands a released turn to the first waiter,
        // so no turn is free while anyone waits.
        if let Ok(permit) = self.share.gate.clone().try_acquire_owned() {
            *self.slot() = Some(permit);
            return;
        }
        // The semaphore is never closed, so `acquire_owned` cannot fail.
        if let Ok(permit) = self.share.gate.clone().acquire_owned().await {
            *self.slot() = Some(permit);
        }
    }

    /// What a run does at each yield point: yields the worker once (to the back of its queue,
    /// still holding the turn), then gives the turn to the owner's next waiting run and waits for
    /// a turn again. In that order because the run a release wakes is polled next on this worker
    /// (tokio's LIFO slot): released first, the owner's runs would hand the turn to each other
    /// ahead of everything queued, and another owner's guest would get one slice in five, not in
    /// three. The future is `'static` (wasmtime's `YieldCustom`).
    pub(crate) fn pass(&self) -> impl Future<Output = ()> + Send + 'static {
        let held = self.slot().take();
        let turn = self.clone();
        async move {
            YieldOnce(false).await;
            drop(held);
            turn.take().await;
        }
    }

    /// Runs `run` (a guest's whole run) holding a turn while it executes: takes one first, and
    /// whenever `run` waits for something outside itself — returns `Pending` without having
    /// asked to be polled again at once, as a host call waiting for a timer or a file does —
    /// gives it back until `run` is woken, then waits for one again behind the owner's other
    /// runs. The yields at which the run passes its turn itself ([`Turn::pass`], and wasmtime's
    /// fuel-slice yields, which ask to be polled again at once) are left as they are.
    pub(crate) async fn gate<F: Future>(&self, run: F) -> F::Output {
        let mut run = pin!(run);
        self.take().await;
        loop {
            let (polled, woke) = std::future::poll_fn(|cx| {
                let flag = Arc::new(WokeFlag {
                    woke: AtomicBool::new(false),
                    waker: cx.waker().clone(),
                });
                let waker = Waker::from(flag.clone());
                let polled = run.as_mut().poll(&mut Context::from_waker(&waker));
                Poll::Ready((polled, flag.woke.load(Ordering::Acquire)))
            })
            .await;
            match polled {
                Poll::Ready(out) => return out,
                // It asked to be polled again (a yield): the task is already scheduled.
                Poll::Pending if woke => PendingOnce(false).await,
                Poll::Pending => {
                    // Waiting outside the guest's code. The slot is empty when the wait is a
                    // `pass` (which gives the turn back and takes it again itself).
                    let held = self.slot().take();
                    let gave_back = held.is_some();
                    drop(held);
                    PendingOnce(false).await;
                    if gave_back {
                        self.take().await;
                    }
                }
            }
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<OwnedSemaphorePermit>> {
        // A poisoned lock only means a panic elsewhere while holding it; the slot is still
        // either a permit or empty.
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Returns to the executor once, asking to be polled again at once: the task goes to the back
/// of its worker's queue, as wasmtime's own yield does. Not `tokio::task::yield_now`, which
/// wakes the task only once the worker has nothing else to run: behind another owner's
/// spinners (always ready) a guest would then wait for all of them — what shares are for
/// avoiding (measured: a quiet guest behind 32 spinners took up to 2.9 s that way).
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// The waker a gated run is polled with: records whether the run woke itself while it was
/// polled (a yield) and passes every wake on to the task.
struct WokeFlag {
    woke: AtomicBool,
    waker: Waker,
}

impl Wake for WokeFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woke.store(true, Ordering::Release);
        self.waker.wake_by_ref();
    }
}

/// Returns `Pending` once without arranging a wake (whoever the run registered the task's waker
/// with wakes it), then `Ready`.
struct PendingOnce(bool);

impl Future for PendingOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn turns_are_taken_passed_and_given_back_on_drop() {
        let share = CpuShare::new(1).unwrap();
        let a = Turn::new(&share);
        a.take().await;
        assert_eq!(share.executing(), 1);
        // A second run waits while the first holds the only turn.
        let b = Turn::new(&share);
        let waiting = tokio::spawn({
            let b = b.clone();
            async move { b.take().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        // Passing lets the waiting run in first (first come, first served)...
        let again = tokio::spawn(a.pass());
        waiting.await.unwrap();
        assert_eq!(share.executing(), 1);
        assert!(!again.is_finished());
        // ...and dropping a run's last handle gives back the turn it holds.
        drop(b);
        again.await.unwrap();
        drop(a);
        assert_eq!(share.executing(), 0);
    }

    #[test]
    fn a_share_of_no_turns_or_too_many_is_refused_not_clamped() {
        // It was silently made a share of 1 (and a huge one a share of 2^61 - 1).
        for turns in [0, CpuShare::MAX_TURNS + 1, usize::MAX] {
            let e = CpuShare::new(turns).unwrap_err();
            assert!(
                matches!(
                    e,
                    PolicyError::Invalid {
                        field: "wasm_cpu_share",
                        ..
                    }
                ),
                "{turns}: {e}"
            );
        }
        assert_eq!(
            CpuShare::new(CpuShare::MAX_TURNS).unwrap().turns(),
            CpuShare::MAX_TURNS
        );
    }
}
