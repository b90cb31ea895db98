//! The HTTP API: the routes (docs/api.md describes each), and the two layers around them — one
//! that bounds the admin requests being handled (tenant requests are admitted per tenant by
//! their own handlers; probes, metrics and event streams stay reachable under load) and one that
//! counts every answer by route and status and turns a panicking handler into a 500 instead of
//! a dropped connection.

mod admin;
mod fired;
mod ops;
mod tenant;
mod trust;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{MatchedPath, Path, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::FutureExt;
use serde_json::Value;

use crate::api_error::ApiError;
use crate::app::App;

/// The route templates, as counted in `/metrics` (`route` label).
const ROUTES: &[&str] = &[
    "/v1/tenants/{id}/dispatch",
    "/v1/tenants/{id}/claude-code",
    "/v1/tenants/{id}/fired",
    "/v1/tenants",
    "/v1/tenants/{id}",
    "/v1/tenants/{id}/reload",
    "/v1/tenants/{id}/disable",
    "/v1/tenants/{id}/enable",
    "/v1/tenants/{id}/trust",
    "/v1/tenants/{id}/approve",
    "/v1/tenants/{id}/reject",
    "/metrics",
    "/healthz",
    "/readyz",
    "/v1/status",
];

/// Every route, with its layers.
pub(crate) fn router(app: Arc<App>) -> Router {
    // Tenant routes admit themselves, per tenant (routes/tenant.rs); admin routes share a bound
    // of their own.
    let admitted = Router::new()
        .route("/v1/tenants/{id}/dispatch", post(tenant::dispatch))
        .route("/v1/tenants/{id}/claude-code", post(tenant::claude_code));
    let bounded = Router::new()
        .route("/v1/tenants", get(admin::list))
        .route(
            "/v1/tenants/{id}",
            get(admin::get).put(admin::put).delete(admin::delete),
        )
        .route("/v1/tenants/{id}/reload", post(admin::reload))
        .route("/v1/tenants/{id}/disable", post(admin::disable))
        .route("/v1/tenants/{id}/enable", post(admin::enable))
        .route("/v1/tenants/{id}/trust", get(trust::show))
        .route("/v1/tenants/{id}/approve", post(trust::approve))
        .route("/v1/tenants/{id}/reject", post(trust::reject))
        .route_layer(from_fn_with_state(app.clone(), bound_in_flight));
    let unbounded = Router::new()
        .route("/v1/tenants/{id}/fired", get(fired::stream))
        .route("/metrics", get(ops::metrics))
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/v1/status", get(ops::status_counts));
    bounded
        .merge(admitted)
        .merge(unbounded)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(app.clone(), observe))
        .with_state(app)
}

/// At most `limits.max_requests_in_flight` admin requests are handled at once; one more is
/// answered 503 at once rather than queued behind the others.
async fn bound_in_flight(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let Ok(permit) = app.in_flight.clone().try_acquire_owned() else {
        return ApiError::overloaded(format!(
            "{} admin requests are being handled (limits.max_requests_in_flight); retry shortly",
            app.config.limits.max_requests_in_flight
        ))
        .into_response();
    };
    let res = next.run(req).await;
    drop(permit);
    res
}

/// Counts the answer; a handler that panics (a bug, never a client's input) answers 500.
async fn observe(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .and_then(|p| ROUTES.iter().find(|r| **r == p.as_str()).copied())
        .unwrap_or("other");
    let res = match AssertUnwindSafe(next.run(req)).catch_unwind().await {
        Ok(res) => res,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(route, panic = %msg, "a request handler panicked");
            ApiError::internal("the server hit a bug handling this request; it is logged")
                .into_response()
        }
    };
    app.http.request(route, res.status().as_u16());
    res
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route; see docs/api.md")
}

async fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed()
}

/// A JSON answer (200 unless the caller sets another status).
pub(crate) fn json_body(v: &Value) -> Response {
    // A `Value` always serialises (its map keys are strings).
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

/// The `{id}` of a path; a segment that does not decode is no id (and never a tenant).
pub(crate) fn path_id(path: Result<Path<String>, PathRejection>) -> String {
    path.map(|Path(id)| id).unwrap_or_default()
}
