//! `Tenants`: many tenants' hooks in one process (SPEC §7). One [`HookRuntime`] — one wasm
//! engine, pool and content-addressed compile cache, so identical component bytes are compiled
//! once whoever uploads them — and one [`HookHost`] per tenant, with the tenant's own policy,
//! rules, state folder (data, replay), quotas, metrics and HookFired stream.
//!
//! Every operation is atomic with respect to dispatch: a dispatch holds the tenant's host (and
//! that host its rule set) from its start, so it sees the whole old rule set or the whole new
//! one, never a mix. A reload validates first and swaps only when nothing is an error
//! (validate-then-swap); a failing reload leaves the old set serving and returns why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::Event;
use serde::Serialize;

use crate::dispatch::Dispatch;
use crate::host::{HookHost, HostError};
use crate::install::rule_error;
use crate::metrics::MetricsSnapshot;
use crate::runtime::HookRuntime;
use crate::tenant_id::TenantId;
use crate::tenant_policy::{TenantPolicy, TenantPolicyError};

/// A tenant to add (or put in place of one with the same id).
#[derive(Debug, Clone)]
pub struct TenantSpec {
    /// Its id.
    pub id: TenantId,
    /// Its folder: `${CLAUDE_PROJECT_DIR}` of its hooks and the only folder they may mount.
    pub folder: PathBuf,
    /// What it may do.
    pub policy: TenantPolicy,
    /// Plugin folders and hook files to load, in order; each must lie inside `folder`.
    /// Default (`None`): `<folder>/plugins`.
    pub plugins: Option<Vec<PathBuf>>,
}

/// Whether a tenant runs hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TenantState {
    /// Serving.
    Enabled,
    /// Behaves as a tenant with no rules: nothing runs, no HookFired.
    Disabled,
}

/// What `list` and the admin API show about a tenant.
#[derive(Debug, Clone, Serialize)]
pub struct TenantInfo {
    /// Its id.
    pub id: TenantId,
    /// Enabled or disabled.
    pub state: TenantState,
    /// Its folder.
    pub folder: PathBuf,
    /// Rules loaded, by handler type.
    pub rules: BTreeMap<&'static str, usize>,
    /// When its current rule set was loaded (ms since the Unix epoch).
    pub loaded_at_ms: u64,
    /// Diagnostics of that load (warnings; errors keep the previous set).
    pub diagnostic_count: usize,
}

/// Why a tenant operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TenantError {
    /// No tenant has this id.
    #[error("no tenant `{0}`")]
    NotFound(TenantId),
    /// `add` of an id already present.
    #[error("tenant `{0}` already exists; reload or replace it instead")]
    AlreadyExists(TenantId),
    /// Its policy is inconsistent.
    #[error("tenant `{id}`: {source}")]
    Policy {
        /// The tenant.
        id: TenantId,
        /// Why.
        source: TenantPolicyError,
    },
    /// Its host could not be built (state folder, settings).
    #[error("tenant `{id}`: {source}")]
    Host {
        /// The tenant.
        id: TenantId,
        /// Why.
        source: HostError,
    },
    /// Its hooks did not load without errors; nothing changed.
    #[error("tenant `{id}`: {} error(s) loading its hooks; the previous rules (if any) keep serving", .diagnostics.iter().filter(|d| d.severity == hookbox_core::diagnostic::Severity::Error).count())]
    Load {
        /// The tenant.
        id: TenantId,
        /// Every diagnostic of the failed load.
        diagnostics: Vec<Diagnostic>,
    },
}

/// What removing a tenant found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Its hooks still running when the grace period ended (they end at their own deadline).
    pub still_running: usize,
    /// Whether its state folder (data, replay) was deleted.
    pub state_deleted: bool,
}

struct Tenant {
    id: TenantId,
    folder: PathBuf,
    plugins: Vec<PathBuf>,
    host: HookHost,
    state_dir: PathBuf,
    meta: Mutex<Meta>,
}

struct Meta {
    loaded_at_ms: u64,
    diagnostics: Vec<Diagnostic>,
}

/// Many tenants over one runtime. Cheap to share (`Arc` it); every method takes `&self`.
pub struct Tenants {
    runtime: HookRuntime,
    state_root: PathBuf,
    map: RwLock<BTreeMap<TenantId, Arc<Tenant>>>,
}

impl std::fmt::Debug for Tenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("state_root", &self.state_root)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn canon(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_owned()))
}

impl Tenants {
    /// No tenants yet, on `runtime`; each tenant's state goes to `state_root/<id>` (which must
    /// not be inside any tenant's folder).
    pub fn new(runtime: HookRuntime, state_root: impl Into<PathBuf>) -> Tenants {
        Tenants {
            runtime,
            state_root: state_root.into(),
            map: RwLock::new(BTreeMap::new()),
        }
    }

    /// The runtime.
    pub fn runtime(&self) -> &HookRuntime {
        &self.runtime
    }

    fn get(&self, id: &TenantId) -> Result<Arc<Tenant>, TenantError> {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
            .ok_or_else(|| TenantError::NotFound(id.clone()))
    }

    /// Builds a tenant and loads its hooks; an error anywhere is an `Err` and nothing is kept.
    /// Blocking (reads files, may compile components): call it from `spawn_blocking` in async
    /// code.
    fn build(&self, spec: TenantSpec) -> Result<Arc<Tenant>, TenantError> {
        let id = spec.id.clone();
        let state_dir = self.state_root.join(id.as_str());
        let policy = spec
            .policy
            .host_policy(&spec.folder, &state_dir, self.runtime.settings().wasm.fuel)
            .map_err(|source| TenantError::Policy {
                id: id.clone(),
                source,
            })?;
        let host =
            HookHost::with_runtime(&self.runtime, policy).map_err(|source| TenantError::Host {
                id: id.clone(),
                source,
            })?;
        let plugins = spec
            .plugins
            .unwrap_or_else(|| vec![spec.folder.join("plugins")]);
        let tenant = Tenant {
            id,
            folder: spec.folder,
            plugins,
            host,
            state_dir,
            meta: Mutex::new(Meta {
                loaded_at_ms: 0,
                diagnostics: Vec::new(),
            }),
        };
        tenant.reload(None)?;
        Ok(Arc::new(tenant))
    }

    /// Adds a tenant; refused if the id exists.
    pub fn add(&self, spec: TenantSpec) -> Result<TenantInfo, TenantError> {
        if self.get(&spec.id).is_ok() {
            return Err(TenantError::AlreadyExists(spec.id));
        }
        let tenant = self.build(spec)?;
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if map.contains_key(&tenant.id) {
            return Err(TenantError::AlreadyExists(tenant.id.clone()));
        }
        map.insert(tenant.id.clone(), tenant.clone());
        Ok(tenant.info())
    }

    /// Adds a tenant or replaces the one with the same id (a new policy, a new folder): the new
    /// tenant is built and loaded first; on error the old one keeps serving. Dispatches in
    /// flight finish on the host they started with. The new host feeds the old one's HookFired
    /// stream, so a subscriber misses nothing across the swap.
    pub fn put(&self, spec: TenantSpec) -> Result<TenantInfo, TenantError> {
        let tenant = self.build(spec)?;
        let previous = {
            let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
            if let Some(old) = map.get(&tenant.id) {
                // Not yet shared (built just above, not in the map): its stream is unset.
                let continued = tenant.host.continue_fired_stream_of(&old.host);
                debug_assert!(continued, "a fresh host has no HookFired stream of its own");
            }
            map.insert(tenant.id.clone(), tenant.clone())
        };
        if let Some(old) = previous
            && !old.host.is_enabled()
        {
            tenant.host.set_enabled(false);
        }
        Ok(tenant.info())
    }

    /// Every tenant, by id.
    pub fn list(&self) -> Vec<TenantInfo> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.values().map(|t| t.info()).collect()
    }

    /// One tenant.
    pub fn info(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        Ok(self.get(id)?.info())
    }

    /// The diagnostics of a tenant's current rule set.
    pub fn diagnostics(&self, id: &TenantId) -> Result<Vec<Diagnostic>, TenantError> {
        let t = self.get(id)?;
        let meta = t.meta.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(meta.diagnostics.clone())
    }

    /// The tenant's host (its metrics, HookFired stream, replay folder).
    pub fn host(&self, id: &TenantId) -> Result<HookHost, TenantError> {
        Ok(self.get(id)?.host.clone())
    }

    /// The tenant's metrics (nothing of any other tenant's).
    pub fn metrics(&self, id: &TenantId) -> Result<MetricsSnapshot, TenantError> {
        Ok(self.get(id)?.host.metrics())
    }

    /// Stops running the tenant's hooks (it behaves as a tenant with no rules).
    pub fn disable(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        t.host.set_enabled(false);
        Ok(t.info())
    }

    /// Runs the tenant's hooks again.
    pub fn enable(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        t.host.set_enabled(true);
        Ok(t.info())
    }

    /// Reloads the tenant's hooks from its plugin paths (or from `paths`, for this reload),
    /// validate-then-swap. Blocking: call it from `spawn_blocking` in async code.
    pub fn reload(
        &self,
        id: &TenantId,
        paths: Option<Vec<PathBuf>>,
    ) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        match paths {
            None => t.reload(None)?,
            Some(p) => t.reload(Some(&p))?,
        }
        Ok(t.info())
    }

    /// Removes a tenant: new dispatches find no such tenant at once; hooks in flight get up to
    /// `grace` to finish (each also ends at its dispatch's deadline). Its folder stays; its state
    /// folder (data, replay) is deleted only with `delete_state`.
    pub async fn remove(
        &self,
        id: &TenantId,
        grace: Duration,
        delete_state: bool,
    ) -> Result<Removed, TenantError> {
        let t = self
            .map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .ok_or_else(|| TenantError::NotFound(id.clone()))?;
        t.host.set_enabled(false);
        let deadline = tokio::time::Instant::now() + grace;
        while t.host.metrics().hooks_in_flight > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let still_running = usize::try_from(t.host.metrics().hooks_in_flight).unwrap_or(usize::MAX);
        self.runtime.flush_replay();
        let state_deleted = delete_state && std::fs::remove_dir_all(&t.state_dir).is_ok();
        Ok(Removed {
            still_running,
            state_deleted,
        })
    }

    /// Dispatches `event` to the tenant's hooks.
    pub async fn dispatch(&self, id: &TenantId, event: Event) -> Result<Dispatch, TenantError> {
        let t = self.get(id)?;
        Ok(t.host.dispatch(event).await)
    }
}

impl Tenant {
    fn info(&self) -> TenantInfo {
        let meta = self.meta.lock().unwrap_or_else(PoisonError::into_inner);
        TenantInfo {
            id: self.id.clone(),
            state: if self.host.is_enabled() {
                TenantState::Enabled
            } else {
                TenantState::Disabled
            },
            folder: self.folder.clone(),
            rules: self.host.rule_counts(),
            loaded_at_ms: meta.loaded_at_ms,
            diagnostic_count: meta.diagnostics.len(),
        }
    }

    /// Validate-then-swap from the tenant's plugin paths (or `paths`). The default
    /// `<folder>/plugins` may be missing (no rules); a path given explicitly must exist.
    fn reload(&self, paths: Option<&[PathBuf]>) -> Result<(), TenantError> {
        let explicit = paths.is_some();
        let paths = paths.unwrap_or(&self.plugins);
        let fail = |diagnostics| TenantError::Load {
            id: self.id.clone(),
            diagnostics,
        };
        let mut refused = self.outside_folder(paths);
        if explicit {
            refused.extend(
                paths
                    .iter()
                    .filter(|p| !p.exists())
                    .map(|p| Diagnostic::error(p.clone(), "no such file or folder".to_owned())),
            );
        }
        if !refused.is_empty() {
            return Err(fail(refused));
        }
        let existing: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
        let report = self
            .host
            .reload_checked(&existing, &LoadOptions::default(), |r| {
                self.plugins_outside(r)
            })
            .map_err(|r| fail(r.diagnostics))?;
        let mut meta = self.meta.lock().unwrap_or_else(PoisonError::into_inner);
        meta.loaded_at_ms = now_ms();
        meta.diagnostics = report.diagnostics;
        Ok(())
    }

    /// Paths named for loading that lie outside the tenant's folder.
    fn outside_folder(&self, paths: &[PathBuf]) -> Vec<Diagnostic> {
        let folder = canon(&self.folder);
        paths
            .iter()
            .filter(|p| !canon(p).starts_with(&folder))
            .map(|p| {
                Diagnostic::error(
                    p.clone(),
                    format!(
                        "tenant `{}` may only load hooks from inside its folder {}",
                        self.id,
                        self.folder.display()
                    ),
                )
            })
            .collect()
    }

    /// Plugins whose real folder (through symlinks) is outside the tenant's folder: a symlink
    /// to another tenant's plugin would otherwise load and mount that tenant's files.
    fn plugins_outside(&self, report: &LoadReport) -> Vec<Diagnostic> {
        let folder = canon(&self.folder);
        report
            .plugins
            .iter()
            .enumerate()
            .filter(|(_, p)| !canon(&p.root).starts_with(&folder))
            .flat_map(|(i, p)| {
                let first = report.rules.iter().find(|r| r.plugin == i);
                let msg = format!(
                    "plugin `{}` resolves to {}, outside tenant `{}`'s folder: a tenant's plugins must really be inside its folder (no symlink out)",
                    p.name,
                    canon(&p.root).display(),
                    self.id
                );
                match first {
                    Some(rule) => vec![rule_error(rule, Some(p), msg)],
                    None => vec![Diagnostic::error(p.root.clone(), msg)],
                }
            })
            .collect()
    }
}
