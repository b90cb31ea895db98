//! A tenant's own routes: `POST /v1/tenants/{id}/dispatch` (an event in any dialect; the answer
//! is what `hookbox dispatch --json` prints) and `POST /v1/tenants/{id}/claude-code` (Claude
//! Code's http-hook protocol: its payload in, the JSON Claude Code acts on out). The token is
//! checked before the body is read.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use hookbox_core::StopState;
use hookbox_core::agent::claude_code_json;

use super::{json_body, path_id};
use crate::api_error::ApiError;
use crate::app::App;
use crate::dispatch_json::dispatch_json;
use crate::{auth, body, request};

/// `session_id` of an event whose payload has none.
const DEFAULT_SESSION: &str = "hookbox-serve";

/// `POST /v1/tenants/{id}/dispatch`.
pub(super) async fn dispatch(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let tenant = auth::tenant(&app, &path_id(path), &headers)?;
    let value = body::read_json(body, &headers, &app.config.limits).await?;
    let req = request::dispatch_request(value, DEFAULT_SESSION, &tenant.cwd)?;
    let stop = StopState {
        reentries: req.stop_reentries,
        cap: tenant.host.stop_reentry_cap(),
    };
    let d = tenant.host.dispatch_with_stop_state(req.event, stop).await;
    Ok(json_body(&dispatch_json(&d)))
}

/// `POST /v1/tenants/{id}/claude-code`.
pub(super) async fn claude_code(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let tenant = auth::tenant(&app, &path_id(path), &headers)?;
    let value = body::read_json(body, &headers, &app.config.limits).await?;
    let event = request::claude_code_event(value, DEFAULT_SESSION, &tenant.cwd)?;
    let name = event.name;
    let d = tenant.host.dispatch(event).await;
    Ok(json_body(&claude_code_json(name, &d.verdict)))
}
