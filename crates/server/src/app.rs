//! The state every request handler shares: the configuration, the tenants (the one map of them,
//! each its long-lived owner, with its token digest attached; every operation changing one holds
//! that tenant's admin lock, [`Tenants::admin`]) and the tenants that failed to load, the
//! bounds (admin requests in flight, event streams), HTTP counters, and readiness.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hookbox_host::{TenantId, Tenants};
use tokio::sync::{Semaphore, watch};

use crate::config::ServerConfig;
use crate::http_metrics::HttpMetrics;
use crate::registry::Registry;
use crate::token::TokenHash;

/// Shared by every handler (behind an `Arc`).
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) config: ServerConfig,
    pub(crate) tenants: Arc<Tenants<TokenHash>>,
    pub(crate) registry: Registry,
    /// `limits.max_requests_in_flight` permits for admin requests (tenant requests are admitted
    /// per tenant by the host).
    pub(crate) in_flight: Arc<Semaphore>,
    pub(crate) streams: Streams,
    pub(crate) http: HttpMetrics,
    /// Tenants were loaded at start.
    pub(crate) loaded: AtomicBool,
    /// A shutdown began: `/readyz` says so and event streams end.
    pub(crate) draining: AtomicBool,
    /// Turns `true` when the shutdown begins.
    pub(crate) shutdown: watch::Receiver<bool>,
}

impl App {
    pub(crate) fn new(
        config: ServerConfig,
        tenants: Arc<Tenants<TokenHash>>,
        shutdown: watch::Receiver<bool>,
    ) -> App {
        App {
            in_flight: Arc::new(Semaphore::new(config.limits.max_requests_in_flight)),
            streams: Streams::default(),
            http: HttpMetrics::default(),
            registry: Registry::default(),
            loaded: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            shutdown,
            tenants,
            config,
        }
    }

    /// Ready: tenants loaded and not shutting down.
    pub(crate) fn ready(&self) -> bool {
        self.loaded.load(Ordering::Acquire) && !self.draining.load(Ordering::Acquire)
    }
}

/// Open `/fired` streams, in total and per tenant.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    total: AtomicUsize,
    per_tenant: std::sync::Mutex<std::collections::HashMap<TenantId, usize>>,
}

/// Why a stream was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamRefused {
    /// `limits.max_sse_subscribers` reached.
    Total,
    /// `limits.max_sse_subscribers_per_tenant` reached.
    Tenant,
}

/// One open stream; dropping it frees its place.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    app: Arc<App>,
    tenant: TenantId,
}

impl Streams {
    /// Streams open now.
    pub(crate) fn open(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Takes a place for a stream of `tenant`, within both bounds.
    pub(crate) fn take(app: &Arc<App>, tenant: &TenantId) -> Result<StreamSlot, StreamRefused> {
        let limits = &app.config.limits;
        let mut per = app
            .streams
            .per_tenant
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mine = per.get(tenant).copied().unwrap_or(0);
        if mine >= limits.max_sse_subscribers_per_tenant {
            return Err(StreamRefused::Tenant);
        }
        if app.streams.total.load(Ordering::Relaxed) >= limits.max_sse_subscribers {
            return Err(StreamRefused::Total);
        }
        app.streams.total.fetch_add(1, Ordering::Relaxed);
        per.insert(tenant.clone(), mine + 1);
        Ok(StreamSlot {
            app: app.clone(),
            tenant: tenant.clone(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let streams = &self.app.streams;
        let mut per = streams
            .per_tenant
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = per.get_mut(&self.tenant) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                per.remove(&self.tenant);
            }
        }
        streams.total.fetch_sub(1, Ordering::Relaxed);
    }
}
