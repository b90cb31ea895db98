//! Admission: who may start a hook — or a dispatch — now. Three kinds of capacity are shared by
//! every host (tenant) of a runtime — hooks in flight, wasm instance-pool slots, and dispatches
//! in flight (`hookbox serve`'s requests) — and each host has its own quota of each. A host over
//! its own quota is refused at once (`overloaded`): its extra work is never queued behind, or
//! taken from, another tenant. Within the shared capacity, the last `reserve` units are kept for
//! hosts that hold none at that moment, so a flood from a few hosts can never leave a quiet host
//! without a slot. A wait for shared capacity is bounded.
//!
//! A host's quotas belong to its long-lived owner: when its policy is replaced (a tenant's
//! `PUT`), the units its running hooks hold stay counted and only the cap changes, so a swap can
//! never let a tenant run more than its quota.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// A host's share: how much it holds now and how much it may hold.
#[derive(Debug)]
pub(crate) struct Quota {
    held: AtomicUsize,
    cap: AtomicUsize,
    /// Set while someone waits for the quota to be idle ([`Quota::idle`]): only then does the
    /// last unit given back notify, so the hot path pays one load, no lock.
    watched: AtomicBool,
    idle: Notify,
}

impl Quota {
    /// A quota of `cap` units (at least 1: [`HostPolicy::validate`](crate::HostPolicy::validate)).
    pub(crate) fn new(cap: usize) -> Quota {
        Quota {
            held: AtomicUsize::new(0),
            cap: AtomicUsize::new(cap),
            watched: AtomicBool::new(false),
            idle: Notify::new(),
        }
    }

    /// Units held now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// The cap now.
    pub(crate) fn cap(&self) -> usize {
        self.cap.load(Ordering::Relaxed)
    }

    /// A new cap (the host's policy was replaced). Units held stay counted: over a lowered cap,
    /// nothing more is admitted until enough are given back.
    pub(crate) fn set_cap(&self, cap: usize) {
        self.cap.store(cap, Ordering::Relaxed);
    }

    /// Takes one unit if under the cap.
    fn try_take(&self) -> bool {
        let cap = self.cap();
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
                (h < cap).then_some(h + 1)
            })
            .is_ok()
    }

    fn give_back(&self) {
        // SeqCst with `idle`'s store and load: either this sees `watched` and notifies, or the
        // waiter's check sees the unit given back.
        if self.held.fetch_sub(1, Ordering::SeqCst) == 1 && self.watched.load(Ordering::SeqCst) {
            self.idle.notify_waiters();
        }
    }

    /// Waits until no unit is held or `deadline` passes, woken by the last unit given back
    /// (no polling); returns the units still held.
    pub(crate) async fn idle(&self, deadline: tokio::time::Instant) -> usize {
        self.watched.store(true, Ordering::SeqCst);
        let held = loop {
            let notified = self.idle.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a release between check and wait is seen.
            notified.as_mut().enable();
            let held = self.held.load(Ordering::SeqCst);
            if held == 0 {
                break 0;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break self.held.load(Ordering::SeqCst);
            }
        };
        // Another waiter may still be waiting; leaving the flag set only costs it wakes.
        held
    }
}

/// Capacity shared by every host of a runtime, with a reserve for hosts holding none.
///
/// Every hook and every wasm run of every host takes a unit and gives it back, on whichever
/// core it runs: the count is one atomic (no lock), and giving a unit back wakes only when
/// someone is waiting for one (an uncontended `notify_waiters` still takes the `Notify`'s lock,
/// which the two cores fought over on every hook).
#[derive(Debug)]
pub(crate) struct Pool {
    total: usize,
    reserve: usize,
    in_use: AtomicUsize,
    /// Takers waiting in [`Pool::take`] for a unit to be freed.
    waiting: AtomicUsize,
    freed: Notify,
}

/// Why a unit could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The host holds its whole quota.
    Quota { cap: usize },
    /// The shared capacity stayed taken for the whole bounded wait.
    Busy { total: usize, waited: Duration },
}

impl Pool {
    /// `total` units, the last `reserve` kept for hosts holding none (`reserve < total`:
    /// [`RuntimeSettings::validate`](crate::RuntimeSettings::validate)).
    pub(crate) fn new(total: usize, reserve: usize) -> Pool {
        debug_assert!(reserve < total, "validated by RuntimeSettings::validate");
        Pool {
            total,
            reserve,
            in_use: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            freed: Notify::new(),
        }
    }

    /// Units in use now, across all hosts.
    pub(crate) fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Relaxed)
    }

    fn try_take_shared(&self, holder_had: usize) -> bool {
        // SeqCst, paired with `give_back`: a waiter that counted itself in `waiting` and then
        // found no unit is seen by the giver that frees one afterwards.
        self.in_use
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                let free = self.total.saturating_sub(used);
                // The reserve is only for a host that holds nothing right now.
                (free > self.reserve || (holder_had == 0 && free > 0)).then_some(used + 1)
            })
            .is_ok()
    }

    fn give_back(&self) {
        // `in_use` never goes below the units taken: each unit gives back once.
        self.in_use.fetch_sub(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_waiters();
        }
    }

    /// Takes one unit for a host with `quota`: refused at once over the quota; waits at most
    /// `wait` for shared capacity.
    pub(crate) async fn take(
        self: &Arc<Self>,
        quota: &Arc<Quota>,
        wait: Duration,
    ) -> Result<Unit, Refusal> {
        if !quota.try_take() {
            return Err(Refusal::Quota { cap: quota.cap() });
        }
        let had = quota.held() - 1;
        let unit = || Unit {
            pool: self.clone(),
            quota: quota.clone(),
        };
        if self.try_take_shared(had) {
            return Ok(unit());
        }
        // The shared capacity is taken: wait for a unit to be freed, counted in `waiting` so
        // that givers wake us.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _counted = Waiting(&self.waiting);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Made before checking, so a unit freed between check and wait is seen.
            let freed = self.freed.notified();
            if self.try_take_shared(had) {
                return Ok(unit());
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                quota.give_back();
                return Err(Refusal::Busy {
                    total: self.total,
                    waited: wait,
                });
            }
        }
    }
}

/// One taker counted in [`Pool::waiting`] until it stops waiting (taken, refused or dropped).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One unit of a pool held by a host; given back on drop.
#[derive(Debug)]
pub(crate) struct Unit {
    pool: Arc<Pool>,
    quota: Arc<Quota>,
}

impl Drop for Unit {
    fn drop(&mut self) {
        self.quota.give_back();
        self.pool.give_back();
    }
}

/// A place among one host's dispatches in flight, taken in two steps: its own quota first
/// ([`HookHost::admit`](crate::HookHost::admit), before a request's body is even read), then a
/// unit of the runtime's shared capacity ([`DispatchTicket::enter`], once the dispatch is about
/// to run). A slow or partial request thus holds only its own tenant's quota, never shared
/// capacity. Both are given back when the ticket is dropped.
#[derive(Debug)]
pub struct DispatchTicket {
    quota: Arc<Quota>,
    /// Shared units this host holds now (for the reserve: it is for hosts holding none).
    entered: Arc<AtomicUsize>,
    pool: Arc<Pool>,
    inside: bool,
}

/// Why a dispatch was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DispatchRefused {
    /// The host (tenant) already has its quota of dispatches in flight.
    #[error(
        "refused: {cap} dispatches of this tenant are in flight (its quota, max_dispatches_in_flight); retry shortly"
    )]
    Quota {
        /// The quota.
        cap: usize,
    },
    /// The runtime's shared capacity is taken (its reserve is kept for hosts holding none).
    #[error(
        "refused: all {total} dispatches the server runs at once are busy (max_dispatches_in_flight of the runtime); retry shortly"
    )]
    Busy {
        /// The shared capacity.
        total: usize,
    },
}

impl DispatchTicket {
    /// Takes a place in `quota`, at once or not at all.
    pub(crate) fn take(
        quota: &Arc<Quota>,
        entered: &Arc<AtomicUsize>,
        pool: &Arc<Pool>,
    ) -> Result<DispatchTicket, DispatchRefused> {
        if !quota.try_take() {
            return Err(DispatchRefused::Quota { cap: quota.cap() });
        }
        Ok(DispatchTicket {
            quota: quota.clone(),
            entered: entered.clone(),
            pool: pool.clone(),
            inside: false,
        })
    }

    /// Takes a unit of the shared capacity for the dispatch, at once or not at all: the last
    /// `reserve` units only when this host holds none. Entering twice is a no-op.
    pub fn enter(&mut self) -> Result<(), DispatchRefused> {
        if self.inside {
            return Ok(());
        }
        if !self
            .pool
            .try_take_shared(self.entered.load(Ordering::Acquire))
        {
            return Err(DispatchRefused::Busy {
                total: self.pool.total,
            });
        }
        self.entered.fetch_add(1, Ordering::AcqRel);
        self.inside = true;
        Ok(())
    }

    /// Whether the ticket holds a unit of the shared capacity.
    pub fn entered(&self) -> bool {
        self.inside
    }
}

impl Drop for DispatchTicket {
    fn drop(&mut self) {
        if self.inside {
            self.entered.fetch_sub(1, Ordering::AcqRel);
            self.pool.give_back();
        }
        self.quota.give_back();
    }
}

impl Refusal {
    /// The `overloaded` message: what was exhausted and the setting to raise — the host's quota
    /// (`quota_field`), or the runtime's capacity (`total_field`) or the wait for it
    /// (`RuntimeSettings::admission_wait`).
    pub(crate) fn describe(&self, what: &str, quota_field: &str, total_field: &str) -> String {
        match self {
            Refusal::Quota { cap } => format!(
                "refused: this host already has {cap} {what} (its quota): raise the host policy's {quota_field}; the hook was not queued"
            ),
            Refusal::Busy { total, waited } => format!(
                "refused: all {total} {what} of the runtime stayed busy for {} ms: raise the runtime's {total_field} or admission_wait",
                waited.as_millis()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_WAIT: Duration = Duration::ZERO;

    #[tokio::test]
    async fn a_host_over_its_quota_is_refused_at_once() {
        let pool = Arc::new(Pool::new(10, 0));
        let q = Arc::new(Quota::new(2));
        let a = pool.take(&q, NO_WAIT).await.unwrap();
        let _b = pool.take(&q, NO_WAIT).await.unwrap();
        assert_eq!(
            pool.take(&q, Duration::from_secs(3600)).await.unwrap_err(),
            Refusal::Quota { cap: 2 }
        );
        drop(a);
        let _c = pool.take(&q, NO_WAIT).await.unwrap();
        assert_eq!(q.held(), 2);
    }

    #[tokio::test]
    async fn the_reserve_is_kept_for_hosts_holding_nothing() {
        let pool = Arc::new(Pool::new(4, 1));
        let noisy = Arc::new(Quota::new(100));
        let quiet = Arc::new(Quota::new(100));
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(pool.take(&noisy, NO_WAIT).await.unwrap());
        }
        // The fourth unit is the reserve: the noisy host holds some, so it cannot have it...
        assert!(matches!(
            pool.take(&noisy, NO_WAIT).await,
            Err(Refusal::Busy { total: 4, .. })
        ));
        assert_eq!(noisy.held(), 3, "a refused take gives its quota back");
        // ...but the quiet host, holding none, can.
        let q = pool.take(&quiet, NO_WAIT).await.unwrap();
        assert_eq!(pool.in_use(), 4);
        drop(q);
        assert_eq!((pool.in_use(), quiet.held()), (3, 0));
    }

    #[test]
    fn a_lowered_cap_keeps_the_units_held_counted() {
        let q = Quota::new(4);
        assert!((0..4).all(|_| q.try_take()));
        q.set_cap(2);
        assert!(!q.try_take(), "4 held, cap 2");
        q.give_back();
        q.give_back();
        assert!(!q.try_take(), "2 held, cap 2");
        q.give_back();
        assert!(q.try_take());
    }

    #[test]
    fn dispatch_tickets_take_the_quota_first_and_shared_capacity_on_entry() {
        let pool = Arc::new(Pool::new(3, 1));
        let (noisy, noisy_in) = (Arc::new(Quota::new(10)), Arc::new(AtomicUsize::new(0)));
        let (quiet, quiet_in) = (Arc::new(Quota::new(10)), Arc::new(AtomicUsize::new(0)));
        // Ten tickets reading their bodies hold no shared capacity at all.
        let mut reading: Vec<_> = (0..10)
            .map(|_| DispatchTicket::take(&noisy, &noisy_in, &pool).unwrap())
            .collect();
        assert_eq!(
            DispatchTicket::take(&noisy, &noisy_in, &pool).unwrap_err(),
            DispatchRefused::Quota { cap: 10 }
        );
        assert_eq!(pool.in_use(), 0);
        // Entering: two units, then the third is the reserve, kept for a host holding none.
        reading[0].enter().unwrap();
        reading[1].enter().unwrap();
        assert_eq!(
            reading[2].enter().unwrap_err(),
            DispatchRefused::Busy { total: 3 }
        );
        let mut q = DispatchTicket::take(&quiet, &quiet_in, &pool).unwrap();
        q.enter().unwrap();
        assert_eq!(pool.in_use(), 3);
        drop(q);
        drop(reading);
        assert_eq!((pool.in_use(), noisy.held(), quiet.held()), (0, 0, 0));
        assert_eq!(noisy_in.load(Ordering::Relaxed), 0);
    }

    /// The wait for a quota to empty is woken by the last unit given back: on a single-thread
    /// executor the waiter has finished by the time this task runs again (with the 5 ms polling
    /// loop `Tenants::remove` had, it was still asleep on its timer).
    #[tokio::test(flavor = "current_thread")]
    async fn waiting_for_a_quota_to_empty_is_woken_not_polled() {
        let pool = Arc::new(Pool::new(10, 0));
        let q = Arc::new(Quota::new(4));
        let (a, b) = (
            pool.take(&q, NO_WAIT).await.unwrap(),
            pool.take(&q, NO_WAIT).await.unwrap(),
        );
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.idle(deadline).await }
        });
        tokio::task::yield_now().await;
        drop(a);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "one unit is still held");
        drop(b);
        tokio::task::yield_now().await;
        assert!(
            waiter.is_finished(),
            "the last unit given back wakes the waiter"
        );
        assert_eq!(waiter.await.unwrap(), 0);
        // A deadline that passes reports what is still held.
        let _c = pool.take(&q, NO_WAIT).await.unwrap();
        let soon = tokio::time::Instant::now() + Duration::from_millis(20);
        assert_eq!(q.idle(soon).await, 1);
    }

    #[tokio::test]
    async fn a_waiter_gets_the_unit_freed_within_its_wait() {
        let pool = Arc::new(Pool::new(1, 0));
        let q = Arc::new(Quota::new(10));
        let first = pool.take(&q, NO_WAIT).await.unwrap();
        let (p2, q2) = (pool.clone(), q.clone());
        let waiter = tokio::spawn(async move { p2.take(&q2, Duration::from_secs(60)).await });
        tokio::task::yield_now().await;
        drop(first);
        assert!(waiter.await.unwrap().is_ok());
    }
}
