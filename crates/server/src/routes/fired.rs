//! `GET /v1/tenants/{id}/fired`: the tenant's HookFired records as server-sent events, one
//! `hook_fired` event per dispatch that ran hooks (texts as previews). The stream is the
//! tenant's own, kept by its long-lived owner, so it goes on across every reload, `PUT` and
//! SIGHUP. It sends a keep-alive comment when idle; a reader that falls behind past its queue's
//! bound (records and bytes, per subscriber) gets a `lagged` event saying how many records it
//! lost, and the stream ends — reconnect to go on; it ends with a `closed` event when the
//! tenant is removed or the server shuts down (so a shutdown never waits on an open stream).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use hookbox_core::HookFired;
use hookbox_host::{FiredError, FiredReceiver, TenantId};
use serde_json::json;
use tokio::sync::watch;
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
    let slot = Streams::take(&app, tenant.id()).map_err(|r| match r {
        StreamRefused::Total => ApiError::overloaded(format!(
            "{} event streams are open (limits.max_sse_subscribers); retry later",
            app.config.limits.max_sse_subscribers
        )),
        StreamRefused::Tenant => ApiError::too_many(format!(
            "this tenant already has {} event streams open (limits.max_sse_subscribers_per_tenant)",
            app.config.limits.max_sse_subscribers_per_tenant
        )),
    })?;
    let period = app.config.limits.sse_keepalive;
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    keepalive.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let state = Fired {
        tenant: tenant.id().clone(),
        rx: tenant.host().subscribe(),
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
    tenant: TenantId,
    rx: FiredReceiver,
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
    let next = {
        let Fired {
            rx,
            shutdown,
            keepalive,
            ..
        } = &mut s;
        tokio::select! {
            r = rx.recv() => Wake::Fired(r),
            () = crate::listener::signalled(shutdown) => Wake::Shutdown,
            _ = keepalive.tick() => Wake::KeepAlive,
        }
    };
    match next {
        Wake::Fired(Ok(fired)) => {
            s.seq += 1;
            let data = serde_json::to_string(&fired).unwrap_or_else(|_| "null".into());
            let chunk = event("hook_fired", Some(s.seq), &data);
            Some((chunk, s))
        }
        // Dropped for lagging: its queue is already freed. Say so, then end the stream.
        Wake::Fired(Err(FiredError::Lagged { missed })) => {
            s.phase = Phase::Done;
            let data = json!({
                "missed": missed,
                "reason": "this stream fell behind past its queue's bound and was dropped; reconnect to go on",
            });
            Some((event("lagged", None, &data.to_string()), s))
        }
        Wake::Fired(Err(FiredError::Closed)) => Some(closed(s, "the tenant was removed")),
        Wake::Shutdown => Some(closed(s, "the server is shutting down")),
        Wake::KeepAlive => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), s)),
    }
}

/// What woke an open stream.
enum Wake {
    Fired(Result<HookFired, FiredError>),
    Shutdown,
    KeepAlive,
}

fn closed(mut s: Fired, reason: &str) -> (Chunk, Fired) {
    s.phase = Phase::Done;
    let chunk = event("closed", None, &json!({ "reason": reason }).to_string());
    (chunk, s)
}
