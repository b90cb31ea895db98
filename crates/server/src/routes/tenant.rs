//! A tenant's own routes: `POST /v1/tenants/{id}/dispatch` (an event in any dialect; the answer
//! is the verdict and what the agent needs, or with `?report=full` what `hookbox dispatch --json`
//! prints, with hook outputs as previews; both within a byte cap) and
//! `POST /v1/tenants/{id}/claude-code` (Claude Code's http-hook protocol: its payload in, the
//! JSON Claude Code acts on out).
//!
//! Admission is per tenant, in the order that keeps one tenant from starving another: the token
//! is checked first; then the request takes a place in its **own tenant's** quota
//! (`max_dispatches_in_flight` of its policy; 429 over it, at once); then its body is read,
//! bounded in size and time (`limits.max_body_bytes`, `limits.body_read_timeout_secs`), holding
//! nothing shared; only then does it take a place of the server's shared capacity
//! (`limits.max_requests_in_flight`, whose last `limits.reserved_requests` are kept for tenants
//! with none in flight; 503 over it, at once). A tenant that opens hundreds of requests and
//! trickles their bodies holds only its own places, and a quiet tenant within its quota is
//! always served.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use hookbox_agents::claude_code_json;
use hookbox_core::StopState;
use hookbox_host::{DispatchRefused, DispatchTicket, HeldUnavailable};

use super::path_id;
use crate::answer::Report;
use crate::api_error::ApiError;
use crate::app::App;
use crate::registry::Serving;
use crate::{answer, auth, body, request};
use hookbox_host::dispatch_json;

/// `session_id` of an event whose payload has none.
const DEFAULT_SESSION: &str = "hookbox-serve";

/// The tenant's own place for this request: refused at once over its quota.
fn admit(tenant: &Serving) -> Result<DispatchTicket, ApiError> {
    tenant.host().admit().map_err(refused)
}

/// A place of the shared capacity, once the body is in: refused at once when it is taken.
fn enter(ticket: &mut DispatchTicket) -> Result<(), ApiError> {
    ticket.enter().map_err(refused)
}

fn refused(r: DispatchRefused) -> ApiError {
    match r {
        DispatchRefused::Quota { .. } => ApiError::too_many(r.to_string()),
        DispatchRefused::Busy { .. } => {
            ApiError::overloaded(format!("{r} (limits.max_requests_in_flight)"))
        }
    }
}

/// A held tenant's event that is not denied: 503 `unavailable`, naming the held load.
fn held_unavailable(e: HeldUnavailable) -> ApiError {
    ApiError::unavailable(e.0)
}

fn json_bytes(bytes: Vec<u8>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

/// `POST /v1/tenants/{id}/dispatch`.
pub(super) async fn dispatch(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let tenant = auth::tenant(&app, &path_id(path), &headers)?;
    let report = request::report(uri.query())?;
    let mut ticket = admit(&tenant)?;
    let value = body::read_json(body, &headers, &app.config.limits).await?;
    let cwd = tenant.folder().display().to_string();
    let req = request::dispatch_request(value, DEFAULT_SESSION, &cwd)?;
    enter(&mut ticket)?;
    let d = if let Some(held) = tenant.held() {
        held.answer(req.event).map_err(held_unavailable)?
    } else {
        let host = tenant.host();
        let stop = StopState {
            reentries: req.stop_reentries,
            cap: host.stop_reentry_cap(),
        };
        host.dispatch_with_stop_state(req.event, stop).await
    };
    drop(ticket);
    let cap = app.config.limits.max_answer_bytes;
    Ok(json_bytes(match report {
        Report::Lean => answer::lean_answer(&d, cap),
        Report::Full => answer::dispatch_answer(dispatch_json(&d), cap),
    }))
}

/// `POST /v1/tenants/{id}/claude-code`.
pub(super) async fn claude_code(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let tenant = auth::tenant(&app, &path_id(path), &headers)?;
    let mut ticket = admit(&tenant)?;
    let value = body::read_json(body, &headers, &app.config.limits).await?;
    let cwd = tenant.folder().display().to_string();
    let event = request::claude_code_event(value, DEFAULT_SESSION, &cwd)?;
    enter(&mut ticket)?;
    let name = event.name;
    let d = match tenant.held() {
        Some(held) => held.answer(event).map_err(held_unavailable)?,
        None => tenant.host().dispatch(event).await,
    };
    drop(ticket);
    let (bytes, _) = answer::fit(
        claude_code_json(name, &d.verdict),
        app.config.limits.max_answer_bytes,
    );
    Ok(json_bytes(bytes))
}
