//! The admin routes (admin token only): list tenants, show one (state, rules, diagnostics,
//! metrics), load one from its folder (`PUT`), reload its plugins, disable, enable, remove.
//! Every operation that changes a tenant holds **that tenant's** admin lock, on the blocking
//! pool, so none interleaves with another on the same tenant (a disable racing a `PUT` is
//! applied before or after it, never lost: the enabled flag belongs to the tenant's long-lived
//! owner, which a `PUT` does not replace) and none waits for one on another tenant; every load
//! is validate-then-swap, and a failed one answers 422 with its located diagnostics (and logs
//! them) while the old rules keep serving.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use hookbox_core::rule::Rule;
use hookbox_host::{TenantError, TenantId, TenantInfo};
use serde_json::{Value, json};

use super::{json_body, path_id};
use crate::api_error::ApiError;
use crate::app::App;
use crate::auth;
use crate::loader::{self, LoadError};

/// The `{id}` of an admin route: the admin is told plainly when it is not an id.
pub(super) fn admin_id(path: Result<Path<String>, PathRejection>) -> Result<TenantId, ApiError> {
    let raw = path_id(path);
    TenantId::new(&raw).map_err(|e| ApiError::invalid("id", e.to_string()))
}

/// `GET /v1/tenants`.
pub(super) async fn list(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let mut tenants: Vec<Value> = app
        .tenants
        .list()
        .into_iter()
        .map(|i| serde_json::to_value(i).unwrap_or(Value::Null))
        .collect();
    tenants.extend(
        app.registry
            .failed()
            .into_iter()
            .map(|f| serde_json::to_value(f).unwrap_or(Value::Null)),
    );
    Ok(json_body(&json!({ "tenants": tenants })))
}

/// `GET /v1/tenants/{id}`.
pub(super) async fn get(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    if let Some(s) = app.tenants.tenant(&id) {
        let info = app.tenants.info(&id).map_err(tenant_error)?;
        let diagnostics = app.tenants.diagnostics(&id).map_err(tenant_error)?;
        let rules = s.host().rules();
        let plugins = rules.plugins();
        let mut v = serde_json::to_value(info).unwrap_or(Value::Null);
        v["rules_loaded"] = rules
            .rules()
            .iter()
            .map(|r| rule_json(r, plugins.get(r.plugin).map(|p| p.name.as_str())))
            .collect();
        v["diagnostics"] = json!(diagnostics);
        v["metrics"] = json!(s.host().metrics());
        v["trust"] = super::trust::summary(&app, &id);
        return Ok(json_body(&v));
    }
    match app.registry.failed_one(&id) {
        Some(f) => Ok(json_body(&json!(f))),
        None => Err(ApiError::not_found(format!("no tenant `{id}`"))),
    }
}

/// `PUT /v1/tenants/{id}`: (re)load the tenant from `<tenants_dir>/<id>` — its `tenant.toml`
/// (token, policy) and its plugins.
pub(super) async fn put(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    match loader::load_one(&app, &id).await {
        Ok(info) => Ok(load_answer(&id, &info)),
        Err(e) => Err(load_error(&id, e)),
    }
}

/// `POST /v1/tenants/{id}/reload`: reload the tenant's plugins (validate-then-swap); its
/// `tenant.toml` is read again only by `PUT`.
pub(super) async fn reload(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    if app.tenants.tenant(&id).is_none() {
        return Err(not_served(&app, &id));
    }
    let tenants = app.tenants.clone();
    let tid = id.clone();
    let result = tokio::task::spawn_blocking(move || tenants.reload(&tid, None))
        .await
        .map_err(|_| ApiError::internal("the reload did not finish"))?;
    match result {
        Ok(info) => {
            tracing::info!(tenant = %id, held = info.held, "tenant plugins reloaded");
            Ok(load_answer(&id, &info))
        }
        Err(e) => {
            let e = LoadError::Tenant(e);
            loader::log_failed(
                &id,
                "tenant reload failed; its previous rules keep serving",
                &e,
            );
            Err(load_error(&id, e))
        }
    }
}

/// `POST /v1/tenants/{id}/disable`.
pub(super) async fn disable(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    switch(&app, path, &headers, false).await
}

/// `POST /v1/tenants/{id}/enable`.
pub(super) async fn enable(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    switch(&app, path, &headers, true).await
}

/// Disables or enables a served tenant: disabled, it keeps its rules and runs none of them.
/// Under the tenant's admin lock, on the blocking pool, like every operation that changes a
/// tenant.
async fn switch(
    app: &App,
    path: Result<Path<String>, PathRejection>,
    headers: &HeaderMap,
    enabled: bool,
) -> Result<Response, ApiError> {
    auth::admin(app, headers)?;
    let id = admin_id(path)?;
    if app.tenants.tenant(&id).is_none() {
        return Err(not_served(app, &id));
    }
    let tenants = app.tenants.clone();
    let tid = id.clone();
    let info = tokio::task::spawn_blocking(move || tenants.admin(&tid).set_enabled(enabled))
        .await
        .map_err(|_| ApiError::internal("the switch did not finish"))?
        .map_err(tenant_error)?;
    tracing::info!(tenant = %id, enabled, "tenant switched");
    Ok(json_body(&json!(info)))
}

/// `DELETE /v1/tenants/{id}`: stop serving it (its folder and state stay; the next full reload
/// — SIGHUP or a restart — loads it again while its folder is there).
pub(super) async fn delete(
    State(app): State<Arc<App>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::admin(&app, &headers)?;
    let id = admin_id(path)?;
    if loader::remove_one(&app, &id).await {
        Ok(json_body(&json!({"removed": id})))
    } else {
        Err(ApiError::not_found(format!("no tenant `{id}`")))
    }
}

/// A load's answer: 200 when its rules serve, 202 when they wait for an admin's approval
/// (`[trust] hold_changed_reloads`) while the old ones keep serving.
fn load_answer(id: &TenantId, info: &TenantInfo) -> Response {
    let mut res = json_body(&json!(info));
    if info.held {
        tracing::warn!(tenant = %id, digest = ?info.pending_approval.map(|d| d.to_string()), "tenant load held for approval: its rules changed; the old rules keep serving (GET /v1/tenants/{id}/trust)");
        *res.status_mut() = axum::http::StatusCode::ACCEPTED;
    }
    res
}

pub(super) fn not_served(app: &App, id: &TenantId) -> ApiError {
    if app.registry.failed_one(id).is_some() {
        ApiError::conflict(format!(
            "tenant `{id}` failed to load and is not served; fix its folder and PUT /v1/tenants/{id}"
        ))
    } else {
        ApiError::not_found(format!("no tenant `{id}`"))
    }
}

fn tenant_error(e: TenantError) -> ApiError {
    match e {
        TenantError::NotFound(id) => ApiError::not_found(format!("no tenant `{id}`")),
        other => ApiError::internal(other.to_string()),
    }
}

fn load_error(id: &TenantId, e: LoadError) -> ApiError {
    match &e {
        LoadError::NoFolder(_) => ApiError::not_found(e.to_string()),
        LoadError::Lost(_) => ApiError::internal(e.to_string()),
        LoadError::Tenant(TenantError::NotFound(_)) => {
            ApiError::not_found(format!("no tenant `{id}`"))
        }
        // In place, not recorded: the state folder failed under the server, not the upload.
        LoadError::Tenant(TenantError::Unrecorded { .. }) => ApiError::internal(e.to_string()),
        _ => ApiError::load_failed(
            format!("{e}; the tenant's previous rules (if any) keep serving"),
            json!(e.diagnostics()),
        ),
    }
}

/// A loaded rule, as the admin sees it.
fn rule_json(r: &Rule, plugin: Option<&str>) -> Value {
    json!({
        "index": r.index,
        "event": r.event,
        "type": r.handler.handler_type(),
        "matcher": r.matcher.describe(),
        "label": r.handler.label(),
        "plugin": plugin.unwrap_or(&r.source.plugin),
        "file": r.source.file,
        "json_path": r.source.json_path,
        "on_failure": r.on_failure,
    })
}
