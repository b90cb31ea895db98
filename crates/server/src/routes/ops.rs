//! Operations: `/healthz` (the process answers), `/readyz` (tenants loaded and not shutting
//! down: what a load balancer routes on — ready or not, nothing more, since anyone may ask),
//! `/v1/status` (the same with how many tenants serve and how many failed and the worker
//! threads, for the admin; with a control store, the generation each tenant serves), and
//! `/metrics` (Prometheus text, behind a token: it names every tenant).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::json_body;
use crate::api_error::ApiError;
use crate::app::App;
use crate::{auth, prometheus};

/// `GET /healthz`: 200 while the process serves HTTP at all.
pub(super) async fn healthz() -> Response {
    json_body(&json!({"status": "ok"}))
}

/// `ready`, `loading` or `draining`.
fn status(app: &App) -> &'static str {
    if app.draining.load(Ordering::Acquire) {
        "draining"
    } else if app.loaded.load(Ordering::Acquire) {
        "ready"
    } else {
        "loading"
    }
}

/// `GET /readyz`: 200 once every tenant of the tenants folder was tried (served or recorded as
/// failed: one bad tenant must not take a replica out of rotation), 503 before and while
/// shutting down. Unauthenticated, so it says only that: how many tenants exist and how many
/// failed is for the admin (`/v1/status`).
pub(super) async fn readyz(State(app): State<Arc<App>>) -> Response {
    let body = json_body(&json!({ "status": status(&app) }));
    if app.ready() {
        body
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
    }
}

/// `GET /v1/status` (admin token): the readiness status with the tenant counts — tenants
/// serving and tenants whose folder failed to load — and the threads answering requests (the
/// runtime's workers: `worker_threads`). Always 200 (it reports, it is no probe).
pub(super) async fn status_counts(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let (serving, failed) = app.registry.counts(&app.tenants);
    let mut body = json!({
        "status": status(&app),
        "tenants": {"serving": serving, "failed": failed},
        "worker_threads": tokio::runtime::Handle::current().metrics().num_workers(),
    });
    if app.config.control.dir.is_some() {
        // Which control generation of each tenant this replica serves: replicas agree once
        // they show the same numbers.
        let generations: serde_json::Map<String, serde_json::Value> = app
            .tenants
            .list()
            .into_iter()
            .map(|t| (t.id.to_string(), json!(t.generation.unwrap_or(0))))
            .collect();
        body["generations"] = serde_json::Value::Object(generations);
    }
    Ok(json_body(&body))
}

/// `GET /metrics`: Prometheus text format 0.0.4.
pub(super) async fn metrics(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::metrics(&app, &headers)?;
    let text = prometheus::render(&app);
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response())
}
