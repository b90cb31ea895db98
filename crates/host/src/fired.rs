//! A host's HookFired stream: one record per dispatch that ran hooks, fanned out to every
//! subscriber ([`HookHost::subscribe`](crate::HookHost::subscribe)).
//!
//! Memory is bounded per subscriber, in records **and bytes** ([`HostPolicy::fired_queue_records`],
//! [`HostPolicy::fired_queue_bytes`]): a subscriber that stops reading while block reasons of a
//! megabyte each go by cannot make the host keep gigabytes. One that falls behind past either
//! bound is dropped at once — its queue is freed — and its receiver reads
//! [`FiredError::Lagged`] (how many records it lost), then [`FiredError::Closed`]; it subscribes
//! again to go on. Records carry previews of their texts, never whole block reasons (core's
//! [`HookFired`] keeps at most [`TEXT_PREVIEW_CHARS`](hookbox_core::fired::TEXT_PREVIEW_CHARS)
//! characters of each), so a queue's bytes are bounded by its records too.
//!
//! The stream belongs to the host's long-lived owner: replacing the host's rules or policy never
//! touches it; removing a tenant closes it.
//!
//! [`HostPolicy::fired_queue_records`]: crate::HostPolicy::fired_queue_records
//! [`HostPolicy::fired_queue_bytes`]: crate::HostPolicy::fired_queue_bytes

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use hookbox_core::HookFired;
use tokio::sync::Notify;

/// Why [`FiredReceiver::recv`] returned no record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FiredError {
    /// This subscriber fell behind past its queue's bound and was dropped: `missed` records were
    /// lost. The next call returns [`FiredError::Closed`]; subscribe again to go on.
    #[error("this subscriber fell behind and was dropped; {missed} records were lost")]
    Lagged {
        /// Records lost.
        missed: u64,
    },
    /// The stream ended (the tenant was removed, or the host dropped).
    #[error("the HookFired stream ended")]
    Closed,
}

/// Why [`FiredReceiver::try_recv`] returned no record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryFiredError {
    /// Nothing queued now.
    #[error("no HookFired record is queued")]
    Empty,
    /// See [`FiredError`].
    #[error(transparent)]
    Ended(#[from] FiredError),
}

/// The bounds of each subscriber's queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueueBounds {
    pub(crate) records: usize,
    pub(crate) bytes: usize,
}

#[derive(Debug, Default)]
struct Queue {
    records: VecDeque<(Arc<HookFired>, usize)>,
    bytes: usize,
    /// Set when the subscriber was dropped for lagging: records lost, not yet reported.
    lagged: Option<u64>,
    /// No more records will come (after the queued ones).
    closed: bool,
}

#[derive(Debug, Default)]
struct Subscriber {
    queue: Mutex<Queue>,
    ready: Notify,
}

impl Subscriber {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending side, held by the host's owner.
#[derive(Debug, Default)]
pub(crate) struct FiredHub {
    /// Live subscribers; a receiver dropped leaves a dead `Weak`, pruned at the next send.
    subscribers: Mutex<Vec<Weak<Subscriber>>>,
    /// Receivers not dropped yet: every dispatch asks whether anyone listens, from every core,
    /// so the answer is one atomic load instead of the subscribers' lock.
    receivers: Arc<AtomicUsize>,
}

/// One subscriber's end of a HookFired stream.
#[derive(Debug)]
pub struct FiredReceiver {
    sub: Arc<Subscriber>,
    /// The lag was reported: only `Closed` from now on.
    done: bool,
    /// The hub's count of receivers, this one included until it is dropped.
    receivers: Arc<AtomicUsize>,
}

impl Drop for FiredReceiver {
    fn drop(&mut self) {
        self.receivers.fetch_sub(1, Ordering::AcqRel);
    }
}

impl FiredHub {
    /// A new subscriber, receiving every record sent from now on.
    pub(crate) fn subscribe(&self) -> FiredReceiver {
        let sub = Arc::new(Subscriber::default());
        let mut subs = self.lock();
        subs.retain(|w| w.strong_count() > 0);
        subs.push(Arc::downgrade(&sub));
        self.receivers.fetch_add(1, Ordering::AcqRel);
        FiredReceiver {
            sub,
            done: false,
            receivers: self.receivers.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Subscriber>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether anyone listens (so a host nobody watches never copies a record).
    pub(crate) fn has_subscribers(&self) -> bool {
        self.receivers.load(Ordering::Acquire) > 0
    }

    /// Sends `fired` to every subscriber; one that has no room left is dropped.
    pub(crate) fn send(&self, fired: &HookFired, bounds: QueueBounds) {
        let live: Vec<Arc<Subscriber>> = {
            let mut subs = self.lock();
            subs.retain(|w| w.strong_count() > 0);
            subs.iter().filter_map(Weak::upgrade).collect()
        };
        if live.is_empty() {
            return;
        }
        let record = Arc::new(fired.clone());
        // What a subscriber's queue is charged: the record as a stream sends it.
        let size = serde_json::to_vec(&*record).map_or(0, |v| v.len());
        let mut dropped = Vec::new();
        for sub in &live {
            let mut q = sub.lock();
            if q.closed {
                continue;
            }
            if q.records.len() >= bounds.records || q.bytes.saturating_add(size) > bounds.bytes {
                // Dropped: free its queue now, and tell it how much it lost.
                let missed = q.records.len() as u64 + 1;
                q.records = VecDeque::new();
                q.bytes = 0;
                q.lagged = Some(missed);
                q.closed = true;
                dropped.push(Arc::as_ptr(sub));
            } else {
                q.records.push_back((record.clone(), size));
                q.bytes += size;
            }
            drop(q);
            sub.ready.notify_one();
        }
        if !dropped.is_empty() {
            self.lock()
                .retain(|w| !dropped.contains(&w.as_ptr()) && w.strong_count() > 0);
        }
    }

    /// Ends the stream: every receiver reads what it has queued, then [`FiredError::Closed`].
    pub(crate) fn close(&self) {
        let subs = std::mem::take(&mut *self.lock());
        for sub in subs.iter().filter_map(Weak::upgrade) {
            sub.lock().closed = true;
            sub.ready.notify_one();
        }
    }
}

impl Drop for FiredHub {
    fn drop(&mut self) {
        self.close();
    }
}

impl FiredReceiver {
    /// The next record; waits for one.
    pub async fn recv(&mut self) -> Result<HookFired, FiredError> {
        let sub = self.sub.clone();
        loop {
            let ready = sub.ready.notified();
            match self.try_recv() {
                Ok(f) => return Ok(f),
                Err(TryFiredError::Ended(e)) => return Err(e),
                Err(TryFiredError::Empty) => ready.await,
            }
        }
    }

    /// The next record if one is queued now.
    pub fn try_recv(&mut self) -> Result<HookFired, TryFiredError> {
        if self.done {
            return Err(FiredError::Closed.into());
        }
        let mut q = self.sub.lock();
        if let Some((record, size)) = q.records.pop_front() {
            q.bytes -= size;
            return Ok((*record).clone());
        }
        if let Some(missed) = q.lagged.take() {
            self.done = true;
            return Err(FiredError::Lagged { missed }.into());
        }
        if q.closed {
            self.done = true;
            return Err(FiredError::Closed.into());
        }
        Err(TryFiredError::Empty)
    }

    /// Bytes queued for this subscriber now (what its lag costs the host).
    pub fn queued_bytes(&self) -> usize {
        self.sub.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::EventName;
    use hookbox_core::aggregate::Outcome;
    use serde_json::json;

    fn record(reason: &str) -> HookFired {
        let mut fields = serde_json::Map::new();
        fields.insert("blocking_error".into(), json!(reason));
        HookFired {
            hook_name: EventName::UserPromptSubmit,
            outcome: Outcome::Block,
            matched_rule_count: 1,
            fields,
        }
    }

    const ROOMY: QueueBounds = QueueBounds {
        records: 1024,
        bytes: 1 << 20,
    };

    #[test]
    fn records_reach_every_subscriber() {
        let hub = FiredHub::default();
        let (mut a, mut b) = (hub.subscribe(), hub.subscribe());
        let r = record("no");
        hub.send(&r, ROOMY);
        for rx in [&mut a, &mut b] {
            assert_eq!(rx.try_recv().unwrap(), r);
            assert_eq!(rx.try_recv().unwrap_err(), TryFiredError::Empty);
        }
    }

    #[test]
    fn a_subscriber_that_stops_reading_is_dropped_with_its_queue_freed() {
        let hub = FiredHub::default();
        let bounds = QueueBounds {
            records: 1024,
            bytes: 10_000,
        };
        let mut slow = hub.subscribe();
        let mut fast = hub.subscribe();
        let mut sent = 0;
        // Each record is ~600 bytes (a 500-character preview, as core's HookFired keeps): the
        // 10,000-byte bound is reached in ~16 records, far below the 1,024-record bound.
        loop {
            hub.send(&record(&"y".repeat(500)), bounds);
            sent += 1;
            assert!(fast.try_recv().is_ok());
            if slow.queued_bytes() == 0 {
                break; // dropped: its queue is freed at once
            }
            assert!(slow.queued_bytes() <= 10_000);
            assert!(sent < 100, "the queue is charged by bytes");
        }
        // Records after the drop are not counted against it.
        hub.send(&record("after"), bounds);
        match slow.try_recv() {
            Err(TryFiredError::Ended(FiredError::Lagged { missed })) => {
                assert_eq!(missed, sent);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            slow.try_recv().unwrap_err(),
            TryFiredError::Ended(FiredError::Closed)
        );
        // The other subscriber went on; the hub forgot the dropped one.
        assert_eq!(
            fast.try_recv().unwrap().fields["blocking_error"],
            json!("after")
        );
        assert_eq!(hub.lock().len(), 1);
    }

    #[test]
    fn the_record_bound_holds_too() {
        let hub = FiredHub::default();
        let mut rx = hub.subscribe();
        let bounds = QueueBounds {
            records: 3,
            bytes: usize::MAX,
        };
        for _ in 0..4 {
            hub.send(&record("r"), bounds);
        }
        assert_eq!(
            rx.try_recv().unwrap_err(),
            TryFiredError::Ended(FiredError::Lagged { missed: 4 })
        );
    }

    #[tokio::test]
    async fn closing_ends_every_receiver_after_what_it_has() {
        let hub = FiredHub::default();
        let mut rx = hub.subscribe();
        hub.send(&record("last"), ROOMY);
        let waiter = tokio::spawn(async move {
            let first = rx.recv().await;
            (first, rx.recv().await)
        });
        tokio::task::yield_now().await;
        hub.close();
        let (first, then) = waiter.await.unwrap();
        assert!(first.is_ok());
        assert_eq!(then.unwrap_err(), FiredError::Closed);
        assert!(!hub.has_subscribers());
    }
}
