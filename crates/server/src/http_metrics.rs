//! The HTTP side's counters for `/metrics`: requests by route and status, connections open,
//! refused (by the limit that refused them) and closed for idleness. The hooks' own metrics (per tenant) come from the host.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of the HTTP layer.
#[derive(Debug, Default)]
pub(crate) struct HttpMetrics {
    /// (route template, status) → requests answered. Routes are the router's fixed templates,
    /// so the map stays small whatever clients send.
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    pub(crate) connections_open: AtomicU64,
    pub(crate) connections_refused: AtomicU64,
    pub(crate) connections_refused_per_peer: AtomicU64,
    pub(crate) connections_idle_closed: AtomicU64,
}

impl HttpMetrics {
    /// Counts one answered request.
    pub(crate) fn request(&self, route: &'static str, status: u16) {
        let mut m = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *m.entry((route, status)).or_insert(0) += 1;
    }

    /// Every (route, status, count).
    pub(crate) fn requests(&self) -> Vec<(&'static str, u16, u64)> {
        let m = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.iter().map(|((r, s), n)| (*r, *s, *n)).collect()
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> u64 {
        self.connections_open.load(Ordering::Relaxed)
    }

    /// Connections closed at accept because `limits.max_connections` were open.
    pub(crate) fn refused(&self) -> u64 {
        self.connections_refused.load(Ordering::Relaxed)
    }

    /// Connections closed at accept because their peer held `limits.max_connections_per_peer`.
    pub(crate) fn refused_per_peer(&self) -> u64 {
        self.connections_refused_per_peer.load(Ordering::Relaxed)
    }

    /// Connections closed after `limits.idle_timeout_secs` without a request.
    pub(crate) fn idle_closed(&self) -> u64 {
        self.connections_idle_closed.load(Ordering::Relaxed)
    }
}
