//! Idle HTTP/1.1 connections kept for the next hook to the same destination.
//!
//! A connection is keyed by everything the policy checked: scheme, URL host, port and the
//! address it was made to. A request reuses one only if its own check allowed that very
//! address, so reuse can never carry a request to an address its policy refused (two tenants
//! with different allow-lists share the pool safely).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;

/// The request side of one connection.
pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// Where a connection goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub(crate) https: bool,
    /// The URL host, lower case: the TLS server name and the `Host` header.
    pub(crate) host: String,
    pub(crate) port: u16,
    /// The checked address the connection is made to.
    pub(crate) addr: SocketAddr,
}

#[derive(Debug)]
struct Idle {
    sender: Sender,
    since: Instant,
}

/// The pool. Shared by every clone of a runner.
#[derive(Debug)]
pub(crate) struct Pool {
    idle: Mutex<HashMap<Key, Vec<Idle>>>,
    idle_timeout: Duration,
    per_key: usize,
    total: usize,
}

impl Pool {
    pub(crate) fn new(idle_timeout: Duration, per_key: usize, total: usize) -> Pool {
        Pool {
            idle: Mutex::new(HashMap::new()),
            idle_timeout,
            per_key,
            total,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Key, Vec<Idle>>> {
        // Only pushes and pops under the lock: a panic cannot leave it half-updated.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most recently used live connection to `key`, if any.
    pub(crate) fn take(&self, key: &Key) -> Option<Sender> {
        let mut idle = self.lock();
        let list = idle.get_mut(key)?;
        let mut found = None;
        while let Some(conn) = list.pop() {
            if conn.since.elapsed() < self.idle_timeout
                && conn.sender.is_ready()
                && !conn.sender.is_closed()
            {
                found = Some(conn.sender);
                break;
            }
        }
        if list.is_empty() {
            idle.remove(key);
        }
        found
    }

    /// Keeps `sender` (whose last response was read in full) for reuse, within the limits.
    pub(crate) fn put(&self, key: Key, sender: Sender) {
        if sender.is_closed() || !sender.is_ready() {
            return;
        }
        let mut idle = self.lock();
        let timeout = self.idle_timeout;
        idle.retain(|_, list| {
            list.retain(|c| c.since.elapsed() < timeout && !c.sender.is_closed());
            !list.is_empty()
        });
        let total: usize = idle.values().map(Vec::len).sum();
        let list = idle.entry(key).or_default();
        if list.len() < self.per_key && total < self.total {
            list.push(Idle {
                sender,
                since: Instant::now(),
            });
        }
    }

    /// Idle connections now (for tests and metrics).
    pub(crate) fn idle_count(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }
}
