//! Loading tenants from the tenants folder into the running server: one tenant from its folder
//! (`PUT /v1/tenants/{id}`), every tenant (at start and on SIGHUP), and removing one. Each load
//! is validate-then-swap ([`Tenants::put`](hookbox_host::Tenants::put)): a tenant whose new
//! files do not load keeps serving its old rules and token. Loads run on the blocking pool
//! (they read files and may compile components), one operation at a time (the admin lock).

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use hookbox_core::diagnostic::Diagnostic;
use hookbox_host::{TenantError, TenantId, TenantInfo};
use serde::Serialize;

use crate::app::App;
use crate::registry::{Failed, Serving};
use crate::tenant_file::{self, TenantFile, TenantFileError};

/// Why a tenant did not load.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// Its folder is not there.
    #[error("no tenant folder {}", .0.display())]
    NoFolder(PathBuf),
    /// Its `tenant.toml` is missing or invalid.
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

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Loads tenant `id` from `<tenants_dir>/<id>` (its `tenant.toml`, then its plugins) and serves
/// it, in place of the running one if any. The caller holds the admin lock.
pub(crate) async fn load_one(app: &App, id: &TenantId) -> Result<TenantInfo, LoadError> {
    let folder = app.config.tenants_dir.join(id.as_str());
    let result = load_in_folder(app, id, folder).await;
    if let Err(LoadError::NoFolder(_)) = &result {
        // No folder, no tenant: a PUT naming one must not leave a `failed` entry behind (the
        // list would then show tenants that never existed, one per mistyped id).
        return result;
    }
    if let Err(e) = &result {
        tracing::warn!(tenant = %id, error = %e, diagnostics = e.diagnostics().len(), "tenant did not load");
        app.registry.set_failed(Failed {
            id: id.clone(),
            state: "failed",
            error: e.to_string(),
            diagnostics: e.diagnostics(),
            failed_at_ms: now_ms(),
            token: match e {
                LoadError::Tenant(_) => TenantFile::read(&app.config.tenants_dir.join(id.as_str()))
                    .ok()
                    .map(|f| f.token_sha256),
                _ => None,
            },
        });
    }
    result
}

async fn load_in_folder(
    app: &App,
    id: &TenantId,
    folder: PathBuf,
) -> Result<TenantInfo, LoadError> {
    if !folder.is_dir() {
        return Err(LoadError::NoFolder(folder));
    }
    let file = TenantFile::read(&folder)?;
    let spec = file.spec(id.clone(), folder.clone());
    let tenants = app.tenants.clone();
    let info = tokio::task::spawn_blocking(move || tenants.put(spec))
        .await
        .map_err(|_| LoadError::Lost(id.clone()))??;
    let host = app.tenants.host(id)?;
    if file.policy.allow_rw_mounts {
        // tenant.toml lies in the tenant's folder: a guest that may write there could raise its
        // own policy at the next reload. docs/deploy.md: mount the tenants volume read-only.
        tracing::warn!(tenant = %id, "policy allows rw mounts: make sure the tenants folder is read-only to the server, or the tenant's hooks could rewrite its tenant.toml");
    }
    app.registry.set_serving(Serving {
        id: id.clone(),
        token: file.token_sha256,
        host,
        cwd: folder.display().to_string(),
    });
    tracing::info!(tenant = %id, rules = info.rules.values().sum::<usize>(), warnings = info.diagnostic_count, "tenant loaded");
    Ok(info)
}

/// Loads every tenant of the tenants folder; tenants being served whose folder is gone are
/// removed. The caller holds the admin lock.
pub(crate) async fn load_all(app: &App) -> LoadSummary {
    let mut summary = LoadSummary::default();
    let scan = match tenant_file::scan(&app.config.tenants_dir) {
        Ok(s) => s,
        Err(e) => {
            // Keep serving what is loaded: an unreadable folder (a volume mid-remount) must not
            // empty the server.
            tracing::error!(dir = %app.config.tenants_dir.display(), error = %e, "cannot read the tenants folder; nothing changed");
            summary
                .skipped
                .push(format!("{}: {e}", app.config.tenants_dir.display()));
            return summary;
        }
    };
    for (name, why) in scan.skipped {
        tracing::warn!(entry = %name, reason = %why, "not a tenant folder; skipped");
        summary.skipped.push(name);
    }
    let on_disk: Vec<&TenantId> = scan.tenants.iter().map(|(id, _)| id).collect();
    for id in app.registry.serving_ids() {
        if !on_disk.contains(&&id) {
            remove_one(app, &id).await;
            summary.removed.push(id);
        }
    }
    for f in app.registry.failed() {
        if !on_disk.contains(&&f.id) {
            app.registry.remove(&f.id);
        }
    }
    for (id, _) in &scan.tenants {
        match load_one(app, id).await {
            Ok(_) => summary.loaded.push(id.clone()),
            Err(_) => summary.failed.push(id.clone()),
        }
    }
    summary
}

/// Stops serving `id`: new requests find no such tenant at once, its running hooks get
/// `limits.remove_grace_secs`. Its folder and state stay. Whether it was known.
pub(crate) async fn remove_one(app: &App, id: &TenantId) -> bool {
    let known = app.registry.remove(id);
    match app
        .tenants
        .remove(id, app.config.limits.remove_grace(), false)
        .await
    {
        Ok(r) => {
            tracing::info!(tenant = %id, still_running = r.still_running, "tenant removed");
            true
        }
        Err(_) => known,
    }
}
