//! The admin routes of a tenant's trust (admin token only, like every admin route): its rule
//! digests and the load waiting for approval (`GET /v1/tenants/{id}/trust`), and the admin's
//! answer to that load (`POST …/approve` with the digest the admin reviewed, `POST …/reject`).
//! A tenant's own token reaches none of them. An approval or rejection naming another load than
//! the one waiting (a newer load came in since the admin looked) answers 409 and changes nothing.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use hookbox_host::{TenantError, TenantId};
use hookbox_trust::Digest;
use serde_json::{Value, json};

use super::admin::{admin_id, not_served};
use super::json_body;
use crate::api_error::ApiError;
use crate::app::App;
use crate::{auth, body, loader};

/// `GET /v1/tenants/{id}/trust`.
pub(super) async fn show(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    let view = app.tenants.trust(&id).map_err(|e| trust_error(&app, e))?;
    Ok(json_body(&json!(view)))
}

/// `POST /v1/tenants/{id}/approve` with `{"digest": "<the pending load's digest>"}`.
pub(super) async fn approve(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    let value = body::read_json(body, &headers, &app.config.limits).await?;
    let digest = digest_of(&value)?.ok_or_else(|| {
        ApiError::invalid(
            "digest",
            "name the load you approve: {\"digest\": \"<pending.digest of GET /v1/tenants/{id}/trust>\"}",
        )
    })?;
    let mut approved = approve_blocking(&app, &id, digest).await?;
    // With a control store, the load the admin reviewed may have been held by another replica
    // only: this one loads the tenant's files (holding them, when they are that load) and asks
    // again. The store, not this replica, decides whether the digest is the one held.
    if app.config.control.dir.is_some()
        && matches!(
            approved,
            Err(TenantError::NothingPending(_) | TenantError::StalePending { .. })
        )
    {
        let _ = loader::load_one(&app, &id).await;
        approved = approve_blocking(&app, &id, digest).await?;
    }
    let info = approved.map_err(|e| trust_error(&app, e))?;
    tracing::info!(tenant = %id, digest = %digest, "held load approved by an admin");
    Ok(json_body(&json!(info)))
}

async fn approve_blocking(
    app: &Arc<App>,
    id: &TenantId,
    digest: Digest,
) -> Result<Result<hookbox_host::TenantInfo, TenantError>, ApiError> {
    let (tenants, tid) = (app.tenants.clone(), id.clone());
    tokio::task::spawn_blocking(move || tenants.approve(&tid, &digest))
        .await
        .map_err(|_| ApiError::internal("the approval did not finish"))
}

/// `POST /v1/tenants/{id}/reject`, with `{"digest": …}` or no body.
pub(super) async fn reject(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    let bytes = body::read_bytes(body, &headers, &app.config.limits).await?;
    let digest = if bytes.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        digest_of(&body::parse_json(&bytes)?)?
    };
    let tenants = app.tenants.clone();
    let tid = id.clone();
    let info = tokio::task::spawn_blocking(move || tenants.reject(&tid, digest.as_ref()))
        .await
        .map_err(|_| ApiError::internal("the rejection did not finish"))?
        .map_err(|e| trust_error(&app, e))?;
    tracing::info!(tenant = %id, "held load rejected by an admin");
    Ok(json_body(&json!(info)))
}

/// The `digest` of a request body, if it names one.
fn digest_of(v: &Value) -> Result<Option<Digest>, ApiError> {
    if !v.is_object() {
        return Err(ApiError::invalid_json(
            "the request body must be a JSON object: {\"digest\": \"…\"}",
        ));
    }
    match v.get("digest") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s.parse::<Digest>().map(Some).map_err(|e| {
            ApiError::invalid(
                "digest",
                format!("{e}: give the 64 hex digits shown as pending.digest"),
            )
        }),
        Some(other) => Err(ApiError::invalid(
            "digest",
            format!("is {other}: give the 64 hex digits shown as pending.digest"),
        )),
    }
}

fn trust_error(app: &App, e: TenantError) -> ApiError {
    match &e {
        TenantError::NotFound(id) => not_served(app, id),
        TenantError::NothingPending(_) => ApiError::conflict(e.to_string()),
        // The host names no route; the admin is told where to review the load waiting.
        TenantError::StalePending { id, .. } => {
            ApiError::conflict(format!("{e} (GET /v1/tenants/{id}/trust)"))
        }
        TenantError::Control(_) => ApiError::unavailable(e.to_string()),
        _ => ApiError::internal(e.to_string()),
    }
}

/// What `GET /v1/tenants/{id}` shows of a served tenant's trust: the approved set and the
/// load waiting, if any (the digests of every rule are at `…/trust`).
pub(super) fn summary(app: &App, id: &TenantId) -> Value {
    match app.tenants.trust(id) {
        Ok(v) => json!({
            "approved": v.approved,
            "record_error": v.record_error,
            "pending": v.pending.map(|p| json!({
                "digest": p.digest, "held_at_ms": p.held_at_ms, "cause": p.cause,
            })),
        }),
        Err(_) => Value::Null,
    }
}
