//! Operator metrics: counters and a latency histogram, updated with relaxed atomics on the hot
//! path and read as a consistent-enough [`MetricsSnapshot`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hookbox_core::event::HandlerType;
use hookbox_core::output::FailureClass;
use serde::Serialize;

/// Upper bounds of the dispatch latency buckets, in microseconds (the last is "+Inf").
pub const LATENCY_BUCKETS_US: [u64; 12] = [
    10, 20, 50, 100, 250, 500, 1_000, 2_500, 10_000, 50_000, 250_000, 1_000_000,
];

const FAILURE_CLASSES: [FailureClass; 12] = FailureClass::ALL;

/// Live counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    dispatches: AtomicU64,
    dispatches_matched: AtomicU64,
    hooks: [AtomicU64; 4],
    failures: [AtomicU64; 12],
    warnings: AtomicU64,
    latency: [AtomicU64; LATENCY_BUCKETS_US.len() + 1],
    latency_sum_us: AtomicU64,
    fuel_consumed: AtomicU64,
    refused_dispatches: AtomicU64,
}

/// A copy of the counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsSnapshot {
    /// Dispatches served.
    pub dispatches: u64,
    /// Dispatches where at least one rule matched.
    pub dispatches_with_hooks: u64,
    /// Hooks run, by handler type.
    pub hooks_run: BTreeMap<&'static str, u64>,
    /// Failed hooks, by failure class.
    pub failures: BTreeMap<&'static str, u64>,
    /// Hooks that reported a warning.
    pub warnings: u64,
    /// Dispatch latency histogram: (upper bound in µs, count); `None` bound is +Inf.
    pub latency_us: Vec<(Option<u64>, u64)>,
    /// Sum of dispatch latencies in µs (with `dispatches`, gives the mean).
    pub latency_sum_us: u64,
    /// Wasm fuel (instructions, roughly) consumed by hooks, when the engine meters fuel: what a
    /// platform throttles and bills on.
    pub fuel_consumed: u64,
    /// Dispatches refused whole (rate limit).
    pub refused_dispatches: u64,
    /// Hooks running now (gauge).
    pub hooks_in_flight: u64,
    /// Wasm instance-pool slots held now (gauge).
    pub pool_slots_in_use: u64,
    /// Background (`async`) hooks running now (gauge; process-wide).
    pub background_hooks: u64,
    /// Replay records dropped because the writer's queue was full, or because one alone was
    /// larger than a folder's byte quota (process-wide).
    pub replay_dropped: u64,
    /// Replay records that could not be written: a refused file, an I/O error (process-wide).
    pub replay_errors: u64,
    /// Replay files removed to keep a host's folder within its quota (process-wide).
    pub replay_files_removed: u64,
}

fn type_slot(t: HandlerType) -> usize {
    match t {
        HandlerType::Command => 0,
        HandlerType::Prompt => 1,
        HandlerType::Wasm => 2,
        HandlerType::Http => 3,
    }
}

/// A host's counters, forwarding every record to its runtime's (process-wide) counters: each
/// event is recorded once, at one call, and counted in both places.
#[derive(Debug)]
pub(crate) struct HostMetrics {
    own: Metrics,
    runtime: Arc<Metrics>,
}

impl HostMetrics {
    /// Counters of a host on the runtime whose counters are `runtime`.
    pub(crate) fn forwarding_to(runtime: Arc<Metrics>) -> HostMetrics {
        HostMetrics {
            own: Metrics::default(),
            runtime,
        }
    }

    /// Counts one dispatch and its latency (its bucket found once).
    pub(crate) fn dispatch(&self, matched: bool, latency: Duration) {
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let slot = LATENCY_BUCKETS_US
            .iter()
            .position(|b| us <= *b)
            .unwrap_or(LATENCY_BUCKETS_US.len());
        self.own.dispatch(matched, slot, us);
        self.runtime.dispatch(matched, slot, us);
    }

    /// Counts one hook run.
    pub(crate) fn hook(&self, t: HandlerType, failure: Option<FailureClass>, warned: bool) {
        self.own.hook(t, failure, warned);
        self.runtime.hook(t, failure, warned);
    }

    /// Adds fuel consumed by one hook.
    pub(crate) fn fuel(&self, consumed: u64) {
        self.own.fuel(consumed);
        self.runtime.fuel(consumed);
    }

    /// Counts one dispatch refused whole.
    pub(crate) fn refused(&self) {
        self.own.refused();
        self.runtime.refused();
    }

    /// The host's own counters.
    pub(crate) fn snapshot(&self) -> MetricsSnapshot {
        self.own.snapshot()
    }
}

impl Metrics {
    /// Counts one dispatch and its latency, `us` µs in bucket `slot`.
    fn dispatch(&self, matched: bool, slot: usize, us: u64) {
        self.dispatches.fetch_add(1, Ordering::Relaxed);
        if matched {
            self.dispatches_matched.fetch_add(1, Ordering::Relaxed);
        }
        self.latency[slot].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us.fetch_add(us, Ordering::Relaxed);
    }

    /// Counts one hook run.
    fn hook(&self, t: HandlerType, failure: Option<FailureClass>, warned: bool) {
        self.hooks[type_slot(t)].fetch_add(1, Ordering::Relaxed);
        if let Some(i) = failure.and_then(|c| FAILURE_CLASSES.iter().position(|x| *x == c)) {
            self.failures[i].fetch_add(1, Ordering::Relaxed);
        }
        if warned {
            self.warnings.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Adds fuel consumed by one hook.
    fn fuel(&self, consumed: u64) {
        self.fuel_consumed.fetch_add(consumed, Ordering::Relaxed);
    }

    /// Counts one dispatch refused whole.
    fn refused(&self) {
        self.refused_dispatches.fetch_add(1, Ordering::Relaxed);
    }

    /// Reads the counters.
    pub(crate) fn snapshot(&self) -> MetricsSnapshot {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        MetricsSnapshot {
            dispatches: get(&self.dispatches),
            dispatches_with_hooks: get(&self.dispatches_matched),
            hooks_run: HandlerType::ALL
                .into_iter()
                .map(|t| (t.as_str(), get(&self.hooks[type_slot(t)])))
                .collect(),
            failures: FAILURE_CLASSES
                .iter()
                .zip(&self.failures)
                .map(|(c, a)| (c.as_str(), get(a)))
                .collect(),
            warnings: get(&self.warnings),
            latency_us: LATENCY_BUCKETS_US
                .iter()
                .map(|b| Some(*b))
                .chain([None])
                .zip(&self.latency)
                .map(|(b, a)| (b, get(a)))
                .collect(),
            latency_sum_us: get(&self.latency_sum_us),
            fuel_consumed: get(&self.fuel_consumed),
            refused_dispatches: get(&self.refused_dispatches),
            hooks_in_flight: 0,
            pool_slots_in_use: 0,
            background_hooks: 0,
            replay_dropped: 0,
            replay_errors: 0,
            replay_files_removed: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_their_buckets_once_in_the_host_and_in_its_runtime() {
        let runtime = Arc::new(Metrics::default());
        let (a, b) = (
            HostMetrics::forwarding_to(runtime.clone()),
            HostMetrics::forwarding_to(runtime.clone()),
        );
        a.dispatch(true, Duration::from_micros(15));
        a.dispatch(false, Duration::from_secs(5));
        a.hook(HandlerType::Wasm, Some(FailureClass::Timeout), true);
        a.fuel(7);
        b.refused();
        b.dispatch(true, Duration::from_micros(15));
        let s = a.snapshot();
        assert_eq!((s.dispatches, s.dispatches_with_hooks), (2, 1));
        assert_eq!(s.latency_us[1], (Some(20), 1));
        assert_eq!(s.latency_us.last(), Some(&(None, 1)));
        assert_eq!(s.failures["timeout"], 1);
        assert_eq!(s.hooks_run["wasm"], 1);
        assert_eq!((s.fuel_consumed, s.refused_dispatches), (7, 0));
        // One call each, counted in the host and forwarded to the runtime: both hosts' records.
        let r = runtime.snapshot();
        assert_eq!((r.dispatches, r.dispatches_with_hooks), (3, 2));
        assert_eq!(r.latency_us[1], (Some(20), 2));
        assert_eq!((r.fuel_consumed, r.refused_dispatches), (7, 1));
        assert_eq!(r.hooks_run["wasm"], 1);
    }
}
