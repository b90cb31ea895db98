//! Loading tenants from the tenants folder into the running server: one tenant from its folder
//! (`PUT /v1/tenants/{id}`), every tenant (at start and on SIGHUP), and removing one. Each load
//! is validate-then-swap ([`Tenants::put`](hookbox_host::Tenants::put)): a tenant whose new
//! files do not load keeps serving its old rules and token. A load runs on the blocking pool,
//! reading `tenant.toml` and compiling there, never on the async threads.
//!
//! Loads of different tenants are independent: a load of every tenant runs several at once
//! (as many as the machine has cores), and each tenant serves as soon as its own rules are in,
//! so one tenant's slow components (bounded by its `compile_budget_secs`) never keep the others
//! answering 404. A load holds its own tenant's admin lock ([`Tenants::admin`]) from the read of
//! `tenant.toml` to the record of its outcome, so no other operation on that tenant interleaves,
//! and none on another tenant waits for it.
//!
//! [`Tenants::admin`]: hookbox_host::Tenants::admin

use hookbox_core::clock::now_ms;
use std::path::PathBuf;
use std::sync::Arc;

use hookbox_core::diagnostic::Diagnostic;
use hookbox_host::{TenantAdmin, TenantError, TenantId, TenantInfo, TenantMaxima};
use serde::Serialize;

use crate::app::App;
use crate::registry::Failed;
use crate::tenant_file::{self, TenantFile, TenantFileError};
use crate::token::TokenHash;

/// Why a tenant did not load.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// Its folder is not there.
    #[error("no tenant folder {}", .0.display())]
    NoFolder(PathBuf),
    /// Its `tenant.toml` is missing, invalid or over the operator's maxima.
    #[error(transparent)]
    File(#[from] TenantFileError),
    /// Its policy, state folder or hooks did not load.
    #[error(transparent)]
    Tenant(#[from] TenantError),
    /// The blocking task died (a bug).
    #[error("the load of tenant `{0}` did not finish")]
    Lost(TenantId),
}

impl LoadError {
    /// The located diagnostics of a failed hooks load (empty for other failures).
    pub(crate) fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            LoadError::Tenant(TenantError::Load { diagnostics, .. }) => diagnostics.clone(),
            _ => Vec::new(),
        }
    }
}

/// What a load of every tenant did.
#[derive(Debug, Default, Serialize)]
pub(crate) struct LoadSummary {
    pub(crate) loaded: Vec<TenantId>,
    pub(crate) failed: Vec<TenantId>,
    pub(crate) removed: Vec<TenantId>,
    pub(crate) skipped: Vec<String>,
}

/// A load's result, and the tenant's token when its file was read far enough to know it.
struct Outcome {
    result: Result<(TenantInfo, bool), LoadError>,
    token: Option<TokenHash>,
}

/// Loads tenant `id` from `<tenants_dir>/<id>` (its `tenant.toml`, then its plugins) and serves
/// it, in place of the running one if any — on the blocking pool, under the tenant's admin lock
/// from the read of its files to the record of the outcome.
pub(crate) async fn load_one(app: &Arc<App>, id: &TenantId) -> Result<TenantInfo, LoadError> {
    let (app2, tid) = (app.clone(), id.clone());
    tokio::task::spawn_blocking(move || load_held(&app2, &tid))
        .await
        .unwrap_or_else(|_| Err(LoadError::Lost(id.clone())))
}

/// [`load_one`], on a blocking thread.
///
/// # Blocking
/// Waits for the tenant's admin lock, reads its files, may compile its components.
fn load_held(app: &App, id: &TenantId) -> Result<TenantInfo, LoadError> {
    let admin = app.tenants.admin(id);
    let folder = app.config.tenants_dir.join(id.as_str());
    let outcome = read_and_put(&admin, folder, &app.config.tenant_maxima);
    match outcome.result {
        Ok((info, rw)) => {
            app.registry.loaded(id);
            if rw {
                tracing::info!(tenant = %id, "policy allows rw mounts: no mount may hold its tenant.toml, its plugins or their files (refused at load)");
            }
            if info.held {
                tracing::warn!(tenant = %id, digest = ?info.pending_approval.map(|d| d.to_string()), "tenant load held for approval: its rules differ from the approved ones; the old rules keep serving until an admin approves or rejects it");
            } else {
                tracing::info!(tenant = %id, rules = info.rules.values().sum::<usize>(), warnings = info.diagnostic_count, "tenant loaded");
            }
            Ok(info)
        }
        // No folder, no tenant: a PUT naming one must not leave a `failed` entry behind (the
        // list would then show tenants that never existed, one per mistyped id).
        Err(e @ LoadError::NoFolder(_)) => Err(e),
        Err(e) => {
            log_failed(id, "tenant did not load", &e);
            app.registry.set_failed(
                &app.tenants,
                Failed {
                    id: id.clone(),
                    state: "failed",
                    error: e.to_string(),
                    diagnostics: e.diagnostics(),
                    failed_at_ms: now_ms(),
                    token: outcome.token,
                },
            );
            Err(e)
        }
    }
}

/// Reads the tenant's folder and `tenant.toml` and puts it in place, under `admin`.
fn read_and_put(
    admin: &TenantAdmin<'_, TokenHash>,
    folder: PathBuf,
    maxima: &TenantMaxima,
) -> Outcome {
    if !folder.is_dir() {
        return Outcome {
            result: Err(LoadError::NoFolder(folder)),
            token: None,
        };
    }
    let file = match TenantFile::read(&folder, maxima) {
        Ok(f) => f,
        Err(e) => {
            return Outcome {
                token: e.token(),
                result: Err(e.into()),
            };
        }
    };
    let rw = file.policy.allow_rw_mounts;
    Outcome {
        token: Some(file.token_sha256),
        result: admin
            .put(file.spec(admin.id().clone(), folder))
            .map(|info| (info, rw))
            .map_err(LoadError::from),
    }
}

/// Longest run of diagnostics a log line carries (the admin API has them all).
const LOGGED_DIAGNOSTICS: usize = 20;

/// Logs a failed load with its error and its located diagnostics (the first
/// [`LOGGED_DIAGNOSTICS`] of them), so an operator reading the logs sees why without asking
/// the admin API.
pub(crate) fn log_failed(id: &TenantId, what: &str, e: &LoadError) {
    let diagnostics = e.diagnostics();
    let shown: Vec<String> = diagnostics
        .iter()
        .take(LOGGED_DIAGNOSTICS)
        .map(ToString::to_string)
        .collect();
    let more = diagnostics.len().saturating_sub(LOGGED_DIAGNOSTICS);
    tracing::warn!(
        tenant = %id,
        error = %e,
        diagnostics = %shown.join(" | "),
        more_diagnostics = more,
        "{what}"
    );
}

/// How many tenants a load of every tenant loads at once.
fn parallel_loads() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
}

/// Loads every tenant of the tenants folder, several at once, each serving as soon as it is
/// loaded (each under its own admin lock); tenants being served whose folder is gone are
/// removed.
pub(crate) async fn load_all(app: &Arc<App>) -> LoadSummary {
    let mut summary = LoadSummary::default();
    let dir = app.config.tenants_dir.clone();
    let scan = match tokio::task::spawn_blocking(move || tenant_file::scan(&dir)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            // Keep serving what is loaded: an unreadable folder (a volume mid-remount) must not
            // empty the server.
            tracing::error!(dir = %app.config.tenants_dir.display(), error = %e, "cannot read the tenants folder; nothing changed");
            summary
                .skipped
                .push(format!("{}: {e}", app.config.tenants_dir.display()));
            return summary;
        }
        Err(_) => {
            summary.skipped.push("the scan did not finish".into());
            return summary;
        }
    };
    for (name, why) in scan.skipped {
        tracing::warn!(entry = %name, reason = %why, "not a tenant folder; skipped");
        summary.skipped.push(name);
    }
    let on_disk: Vec<&TenantId> = scan.tenants.iter().map(|(id, _)| id).collect();
    for id in app.tenants.ids() {
        if !on_disk.contains(&&id) {
            remove_one(app, &id).await;
            summary.removed.push(id);
        }
    }
    for f in app.registry.failed() {
        if !on_disk.contains(&&f.id) {
            app.registry.forget(&f.id);
        }
    }
    let gate = Arc::new(tokio::sync::Semaphore::new(parallel_loads()));
    let mut loads = tokio::task::JoinSet::new();
    for (id, _) in scan.tenants {
        let (app, gate) = (app.clone(), gate.clone());
        loads.spawn(async move {
            let _turn = gate.acquire_owned().await;
            let ok = load_one(&app, &id).await.is_ok();
            (id, ok)
        });
    }
    while let Some(done) = loads.join_next().await {
        match done {
            Ok((id, true)) => summary.loaded.push(id),
            Ok((id, false)) => summary.failed.push(id),
            Err(e) => tracing::error!(error = %e, "a tenant load task failed"),
        }
    }
    summary.loaded.sort();
    summary.failed.sort();
    summary
}

/// Stops serving `id`: new requests find no such tenant at once, its event streams end, its
/// running hooks get `limits.remove_grace_secs`. Its folder and state stay. Whether it was
/// known.
pub(crate) async fn remove_one(app: &App, id: &TenantId) -> bool {
    let failed = app.registry.forget(id);
    match app
        .tenants
        .remove(id, app.config.limits.remove_grace, false)
        .await
    {
        Ok(r) => {
            tracing::info!(tenant = %id, still_running = r.still_running, "tenant removed");
            true
        }
        Err(_) => failed,
    }
}
