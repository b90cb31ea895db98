//! `GET /v1/tenants/{id}/fired`: the tenant's HookFired records as server-sent events, one
//! `hook_fired` event per dispatch that ran hooks. The stream follows the tenant when it is
//! reloaded from its folder (a new host), says `lagged` when a slow reader lost records, sends a
//! keep-alive comment when idle, and ends with a `closed` event when the tenant is removed or
//! the server shuts down (so a shutdown never waits on an open stream).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use hookbox_core::HookFired;
use hookbox_host::TenantId;
use serde_json::json;
use tokio::sync::{broadcast, watch};
use tokio::time::{Interval, MissedTickBehavior};

use super::path_id;
use crate::api_error::ApiError;
use crate::app::{App, StreamRefused, StreamSlot, Streams};
use crate::auth;

/// How long a client waits before reconnecting (the SSE `retry` field), in milliseconds.
const RETRY_MS: u32 = 2000;

/// `GET /v1/tenants/{id}/fired`.
pub(super) async fn stream(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let tenant = auth::tenant(&app, &path_id(path), &headers)?;
    if *app.shutdown.borrow() {
        return Err(ApiError::unavailable("the server is shutting down"));
    }
    let slot = Streams::take(&app, &tenant.id).map_err(|r| match r {
        StreamRefused::Total => ApiError::overloaded(format!(
            "{} event streams are open (limits.max_sse_subscribers); retry later",
            app.config.limits.max_sse_subscribers
        )),
        StreamRefused::Tenant => ApiError::too_many(format!(
            "this tenant already has {} event streams open (limits.max_sse_subscribers_per_tenant)",
            app.config.limits.max_sse_subscribers_per_tenant
        )),
    })?;
    // Watch for replacement first, then subscribe to the current host: a reload in between
    // is then seen as a change, never missed.
    let changes = app.registry.watch(&tenant.id);
    let host = app
        .registry
        .serving(&tenant.id)
        .map_or_else(|| tenant.host.clone(), |s| s.host.clone());
    let period = app.config.limits.sse_keepalive();
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    keepalive.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let state = Fired {
        app: app.clone(),
        tenant: tenant.id.clone(),
        rx: host.subscribe(),
        changes: Some(changes),
        shutdown: app.shutdown.clone(),
        keepalive,
        seq: 0,
        phase: Phase::Opening,
        _slot: slot,
    };
    let body = Body::from_stream(futures_util::stream::unfold(state, next_chunk));
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            // Proxies (nginx) must pass events on as they come, not buffer them.
            (
                header::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        body,
    )
        .into_response())
}

enum Phase {
    Opening,
    Open,
    Done,
}

struct Fired {
    app: Arc<App>,
    tenant: TenantId,
    rx: broadcast::Receiver<HookFired>,
    /// `None` once its sender is gone (no more replacements will be signalled).
    changes: Option<watch::Receiver<u64>>,
    shutdown: watch::Receiver<bool>,
    keepalive: Interval,
    seq: u64,
    phase: Phase,
    _slot: StreamSlot,
}

type Chunk = Result<Bytes, Infallible>;

fn event(name: &str, id: Option<u64>, data: &str) -> Chunk {
    let id = id.map(|n| format!("id: {n}\n")).unwrap_or_default();
    Ok(Bytes::from(format!("{id}event: {name}\ndata: {data}\n\n")))
}

async fn next_chunk(mut s: Fired) -> Option<(Chunk, Fired)> {
    match s.phase {
        Phase::Done => return None,
        Phase::Opening => {
            s.phase = Phase::Open;
            let hello = format!(
                ": hookbox HookFired stream of tenant {}\nretry: {RETRY_MS}\n\n",
                s.tenant
            );
            return Some((Ok(Bytes::from(hello)), s));
        }
        Phase::Open => {}
    }
    loop {
        let next = {
            let Fired {
                rx,
                changes,
                shutdown,
                keepalive,
                ..
            } = &mut s;
            tokio::select! {
                r = rx.recv() => Wake::Fired(r),
                changed = async {
                    match changes.as_mut() {
                        Some(c) => c.changed().await.is_ok(),
                        None => std::future::pending().await,
                    }
                } => Wake::Changed(changed),
                () = crate::listener::signalled(shutdown) => Wake::Shutdown,
                _ = keepalive.tick() => Wake::KeepAlive,
            }
        };
        match next {
            Wake::Fired(Ok(fired)) => {
                s.seq += 1;
                let data = serde_json::to_string(&fired).unwrap_or_else(|_| "null".into());
                let chunk = event("hook_fired", Some(s.seq), &data);
                return Some((chunk, s));
            }
            Wake::Fired(Err(broadcast::error::RecvError::Lagged(missed))) => {
                let chunk = event("lagged", None, &json!({"missed": missed}).to_string());
                return Some((chunk, s));
            }
            // The host was replaced and the old one dropped: follow the tenant.
            Wake::Fired(Err(broadcast::error::RecvError::Closed)) | Wake::Changed(true) => {
                if !resubscribe(&mut s) {
                    return Some(closed(s, "the tenant was removed"));
                }
            }
            Wake::Changed(false) => s.changes = None,
            Wake::Shutdown => return Some(closed(s, "the server is shutting down")),
            Wake::KeepAlive => return Some((Ok(Bytes::from_static(b": keep-alive\n\n")), s)),
        }
    }
}

/// What woke an open stream.
enum Wake {
    Fired(Result<HookFired, broadcast::error::RecvError>),
    Changed(bool),
    Shutdown,
    KeepAlive,
}

/// Follows the tenant to its current host; false when it is no longer served. A replacement
/// host feeds the same stream (`Tenants::put`), so the receiver — with whatever it has buffered —
/// is kept; only a tenant removed and added again has a new stream to subscribe to.
fn resubscribe(s: &mut Fired) -> bool {
    match s.app.registry.serving(&s.tenant) {
        Some(t) => {
            let fresh = t.host.subscribe();
            if !fresh.same_channel(&s.rx) {
                s.rx = fresh;
            }
            true
        }
        None => false,
    }
}

fn closed(mut s: Fired, reason: &str) -> (Chunk, Fired) {
    s.phase = Phase::Done;
    let chunk = event("closed", None, &json!({ "reason": reason }).to_string());
    (chunk, s)
}
