//! `Tenants`: many tenants' hooks in one process (SPEC §7). One [`HookRuntime`] — one wasm
//! engine, pool and content-addressed compile cache, so identical component bytes are compiled
//! once whoever uploads them — and **one map** of tenants, each entry the tenant's long-lived
//! owner: its [`HookHost`] (HookFired stream, enabled flag, quotas, rate bucket, metrics, state
//! folder) made once when the tenant is added and kept until it is removed.
//!
//! Replacing a tenant (`put`: a new policy or folder, `hookbox serve`'s `PUT` and SIGHUP) or
//! reloading its plugins builds the new rule set first and swaps **only** the policy and the
//! rules, atomically (validate-then-swap): a dispatch sees the whole old set or the whole new
//! one, never a mix, and a failing load leaves the old set serving and returns why. Nothing else
//! is copied or reset: a disable stays a disable, a subscriber keeps its stream, the hooks
//! still running keep counting against the quota, the counters go on.
//!
//! Operations on one tenant (add, put, reload, disable, enable, remove) are serialised by that
//! tenant's admin lock, so none is lost to another; operations on different tenants run
//! side by side (one tenant's slow compile never holds another's load).
//!
//! An embedder may attach its own data to each tenant (`A`; the server: its token's digest),
//! replaced with the policy by `put`.
//!
//! Every load records the digests of the rules it puts in place in the tenant's state
//! ([`tenant_trust`](crate::tenant_trust)); with the operator's
//! [`TenantTrustSettings::hold_changed_reloads`], a load whose rules differ from the approved
//! ones is staged instead of swapped in, and waits for [`Tenants::approve`] (or
//! [`Tenants::reject`]) while the old rules keep serving.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, TryLockError};
use std::time::Duration;

use hookbox_core::clock::now_ms;

use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::Event;
use serde::Serialize;

use hookbox_trust::{Approval, Digest};

use crate::dispatch::Dispatch;
use crate::error::HostError;
use crate::host::{HookHost, Staged};
use crate::install::rule_error;
use crate::metrics::MetricsSnapshot;
use crate::policy::HostPolicy;
use crate::runtime::HookRuntime;
use crate::tenant_id::TenantId;
use crate::tenant_policy::{TenantPolicy, TenantPolicyError};
use crate::tenant_trust::{
    self, ApprovedBy, LoadCause, PendingView, SubjectChange, TenantRecord, TenantTrustSettings,
    TenantTrustView,
};
use crate::trust::ApprovalStore;
use crate::trust_report::subject_reports;

/// A tenant to add (or put in place of one with the same id).
#[derive(Debug, Clone)]
pub struct TenantSpec<A = ()> {
    /// Its id.
    pub id: TenantId,
    /// Its folder: `${CLAUDE_PROJECT_DIR}` of its hooks and the only folder they may mount.
    /// Nothing in it is read but the plugins: no `.hookbox/settings.json` (a tenant's policy is
    /// its operator's alone).
    pub folder: PathBuf,
    /// What it may do.
    pub policy: TenantPolicy,
    /// Plugin folders and hook files to load, in order; each must lie inside `folder`.
    /// Default (`None`): `<folder>/plugins`.
    pub plugins: Option<Vec<PathBuf>>,
    /// The embedder's own data for this tenant (the server: its token's digest), replaced
    /// together with the policy. `()` when there is none.
    pub attached: A,
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
    /// The digest of the load waiting for an admin's approval, if one is
    /// (`hold_changed_reloads`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_approval: Option<Digest>,
    /// On the answer of a load: it was held for approval, and the rules above still serve.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
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
    /// Its host could not be built (state folder, policy).
    #[error("tenant `{id}`: {source}")]
    Host {
        /// The tenant.
        id: TenantId,
        /// Why.
        source: HostError,
    },
    /// The runtime's pool resets slots with `pagemap_scan`, which is sound only where one party's
    /// code uses the pool: refused for every tenant.
    #[error(
        "tenant `{id}`: this runtime's pool resets slots with pagemap_scan, which is not allowed \
         where tenants share the pool (wasmtime 48.0.8 keeps only present pages, so a dirty page \
         swapped out or being migrated survives into the next instance of its slot — another \
         tenant's); fix: build the tenants' runtime with `pool.pagemap_scan` off (the default)"
    )]
    PagemapScanShared {
        /// The tenant.
        id: TenantId,
    },
    /// Its hooks did not load without errors; nothing changed.
    #[error("tenant `{id}`: {} error(s) loading its hooks; the previous rules (if any) keep serving", .diagnostics.iter().filter(|d| d.severity == hookbox_core::diagnostic::Severity::Error).count())]
    Load {
        /// The tenant.
        id: TenantId,
        /// Every diagnostic of the failed load.
        diagnostics: Vec<Diagnostic>,
    },
    /// Its rule digests could not be recorded; nothing changed.
    #[error("tenant `{id}`: {reason}; the previous rules (if any) keep serving")]
    Trust {
        /// The tenant.
        id: TenantId,
        /// Why.
        reason: String,
    },
    /// `approve` or `reject` of a tenant with no load waiting.
    #[error("tenant `{0}` has no load waiting for approval")]
    NothingPending(TenantId),
    /// `approve` or `reject` naming another load than the one waiting (a newer load replaced
    /// the one the admin saw).
    #[error(
        "tenant `{id}`: the load waiting for approval is {pending}, not {asked}; review it again (GET /v1/tenants/{id}/trust)"
    )]
    StalePending {
        /// The tenant.
        id: TenantId,
        /// The digest the request named.
        asked: Digest,
        /// The digest of the load waiting.
        pending: Digest,
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

/// A tenant: its long-lived host, and what its current generation was loaded from.
struct Tenant<A> {
    id: TenantId,
    /// The long-lived owner of the tenant's state; its policy and rules are swapped inside it.
    host: HookHost,
    state_dir: PathBuf,
    /// Replaced with each successful load, under the tenant's admin lock.
    about: RwLock<Arc<About<A>>>,
    /// Its recorded digests and the load waiting for approval; changed under the admin lock.
    gate: Mutex<Gate<A>>,
}

/// A tenant's approval state.
struct Gate<A> {
    /// `<state_root>/<id>/trust`.
    store: ApprovalStore,
    /// The approved rule set in place; `Err` when the record cannot be used (it approves
    /// nothing).
    record: Result<Option<TenantRecord>, String>,
    /// At most one load waiting; a newer load replaces (or drops) it.
    pending: Option<Pending<A>>,
}

/// A load held for approval.
struct Pending<A> {
    digest: Digest,
    held_at_ms: u64,
    cause: LoadCause,
    subjects: Vec<Approval>,
    changes: Vec<SubjectChange>,
    staged: Staged,
    about: About<A>,
}

/// What the current generation of a tenant was loaded from.
struct About<A> {
    folder: PathBuf,
    plugins: Vec<PathBuf>,
    attached: A,
    loaded_at_ms: u64,
    diagnostics: Vec<Diagnostic>,
}

impl<A: Clone> About<A> {
    /// A tenant's folder, plugins and attachment after a load that ended now with
    /// `diagnostics`.
    fn loaded_now(
        folder: PathBuf,
        plugins: Vec<PathBuf>,
        attached: A,
        diagnostics: Vec<Diagnostic>,
    ) -> About<A> {
        About {
            folder,
            plugins,
            attached,
            loaded_at_ms: now_ms(),
            diagnostics,
        }
    }

    /// The same tenant after another load of its folder that ended now with `diagnostics`.
    fn reloaded_now(&self, diagnostics: Vec<Diagnostic>) -> About<A> {
        About::loaded_now(
            self.folder.clone(),
            self.plugins.clone(),
            self.attached.clone(),
            diagnostics,
        )
    }

    /// This description, loaded at the same time, without its load's diagnostics.
    fn without_diagnostics(&self) -> About<A> {
        About {
            loaded_at_ms: self.loaded_at_ms,
            ..self.reloaded_now(Vec::new())
        }
    }
}

/// One tenant being served, as found by [`Tenants::tenant`]: cheap to clone, kept by a request
/// for its whole life (a removal in between does not cut it short).
pub struct TenantRef<A = ()> {
    tenant: Arc<Tenant<A>>,
}

impl<A> Clone for TenantRef<A> {
    fn clone(&self) -> Self {
        TenantRef {
            tenant: self.tenant.clone(),
        }
    }
}

impl<A> std::fmt::Debug for TenantRef<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantRef")
            .field("id", &self.tenant.id)
            .finish_non_exhaustive()
    }
}

impl<A: Clone> TenantRef<A> {
    /// Its id.
    pub fn id(&self) -> &TenantId {
        &self.tenant.id
    }

    /// Its host: the tenant's long-lived owner (dispatch, stream, metrics, admission).
    pub fn host(&self) -> &HookHost {
        &self.tenant.host
    }

    /// What the embedder attached with the current policy.
    pub fn attached(&self) -> A {
        self.tenant.about().attached.clone()
    }

    /// Its folder now.
    pub fn folder(&self) -> PathBuf {
        self.tenant.about().folder.clone()
    }
}

/// Many tenants over one runtime. Cheap to share (`Arc` it); every method takes `&self`.
pub struct Tenants<A = ()> {
    runtime: HookRuntime,
    state_root: PathBuf,
    map: RwLock<BTreeMap<TenantId, Arc<Tenant<A>>>>,
    /// The operator's approval settings.
    trust: TenantTrustSettings,
    /// Per-tenant admin locks of the operations in progress (entries nobody holds are dropped).
    admin: Mutex<HashMap<TenantId, Arc<Mutex<()>>>>,
}

impl<A> std::fmt::Debug for Tenants<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("state_root", &self.state_root)
            .finish_non_exhaustive()
    }
}

fn canon(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_owned()))
}

impl<A: Clone + Send + Sync + 'static> Tenants<A> {
    /// No tenants yet, on `runtime`; each tenant's state goes to `state_root/<id>` (which must
    /// not be inside any tenant's folder).
    pub fn new(runtime: HookRuntime, state_root: impl Into<PathBuf>) -> Tenants<A> {
        Tenants {
            runtime,
            state_root: state_root.into(),
            map: RwLock::new(BTreeMap::new()),
            trust: TenantTrustSettings::default(),
            admin: Mutex::new(HashMap::new()),
        }
    }

    /// The same, with the operator's approval settings (default: nothing is held).
    #[must_use]
    pub fn with_trust(mut self, trust: TenantTrustSettings) -> Tenants<A> {
        self.trust = trust;
        self
    }

    /// The operator's approval settings.
    pub fn trust_settings(&self) -> TenantTrustSettings {
        self.trust
    }

    /// The runtime.
    pub fn runtime(&self) -> &HookRuntime {
        &self.runtime
    }

    fn get(&self, id: &TenantId) -> Result<Arc<Tenant<A>>, TenantError> {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
            .ok_or_else(|| TenantError::NotFound(id.clone()))
    }

    /// The tenant being served as `id`: the one lookup a request makes.
    pub fn tenant(&self, id: &TenantId) -> Option<TenantRef<A>> {
        self.get(id).ok().map(|tenant| TenantRef { tenant })
    }

    /// Ids of every tenant, sorted.
    pub fn ids(&self) -> Vec<TenantId> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.keys().cloned().collect()
    }

    /// How many tenants are served.
    pub fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The admin lock of tenant `id` (held by every operation on it).
    fn admin_lock(&self, id: &TenantId) -> Arc<Mutex<()>> {
        let mut locks = self.admin.lock().unwrap_or_else(PoisonError::into_inner);
        locks.retain(|_, l| Arc::strong_count(l) > 1);
        locks.entry(id.clone()).or_default().clone()
    }

    /// The host policy of `spec`: its tenant policy, its folder and its plugin paths protected
    /// from read-write mounts.
    fn host_policy(
        &self,
        spec: &TenantSpec<A>,
        plugins: &[PathBuf],
    ) -> Result<HostPolicy, TenantError> {
        let state_dir = self.state_root.join(spec.id.as_str());
        let mut policy = spec
            .policy
            .host_policy(&spec.folder, &state_dir, self.runtime.settings().wasm.fuel)
            .map_err(|source| TenantError::Policy {
                id: spec.id.clone(),
                source,
            })?;
        // Even a plugins folder that does not exist yet: a guest must not create one.
        policy.protected_paths.extend(plugins.iter().cloned());
        // Every rule's digests are recorded at load (and commands run the bytes hashed);
        // nothing is refused at dispatch: a tenant's approval point is the swap.
        policy.trust.record = true;
        Ok(policy)
    }

    /// Builds a new tenant and loads its hooks; an error anywhere is an `Err` and nothing is
    /// kept. With `hold_first_load` (or a recorded approval its rules differ from, under
    /// `hold_changed_reloads`), the tenant starts with no rules and its load waits for
    /// approval. Blocking (reads files, may compile components).
    fn build(&self, spec: TenantSpec<A>) -> Result<(Arc<Tenant<A>>, bool), TenantError> {
        let id = spec.id.clone();
        // Tenants share the runtime's pool: a reset that can hand one guest's dirty page to the
        // next instance of its slot would hand it to another tenant.
        if self.runtime.wasm().config().pool.pagemap_scan {
            return Err(TenantError::PagemapScanShared { id });
        }
        let plugins = plugin_paths(&spec);
        let policy = self.host_policy(&spec, &plugins)?;
        let state_dir = self.state_root.join(id.as_str());
        let host =
            HookHost::with_runtime(&self.runtime, policy).map_err(|source| TenantError::Host {
                id: id.clone(),
                source,
            })?;
        // Ids are `[A-Za-z0-9_-]{1,64}` (TenantId): the folder is always beneath the root.
        let store =
            ApprovalStore::create(&state_dir.join("trust")).map_err(|e| TenantError::Trust {
                id: id.clone(),
                reason: e.to_string(),
            })?;
        let record = tenant_trust::read_record(&store, id.as_str());
        let mut staged = None;
        let report = load(&id, &spec.folder, &plugins, None, |paths, opts, check| {
            host.stage_reload(paths, opts, check).map(|(report, s)| {
                staged = Some(s);
                report
            })
        })?;
        let about = About::loaded_now(spec.folder, plugins, spec.attached, report.diagnostics);
        let empty = about.without_diagnostics();
        let tenant = Arc::new(Tenant {
            id,
            host,
            state_dir,
            about: RwLock::new(Arc::new(empty)),
            gate: Mutex::new(Gate {
                store,
                record,
                pending: None,
            }),
        });
        let Some(staged) = staged else {
            return Err(self.lost(&tenant.id));
        };
        let held = self.gate(&tenant, staged, about, LoadCause::Add)?;
        Ok((tenant, held))
    }

    fn lost(&self, id: &TenantId) -> TenantError {
        TenantError::Trust {
            id: id.clone(),
            reason: "the load staged nothing (a bug)".into(),
        }
    }

    /// Puts `staged` in place and records it, or holds it for approval, as the operator's
    /// settings and the tenant's record say. Whether it was held. Under the admin lock.
    fn gate(
        &self,
        t: &Tenant<A>,
        staged: Staged,
        about: About<A>,
        cause: LoadCause,
    ) -> Result<bool, TenantError> {
        let now = now_ms();
        let reports = subject_reports(staged.loaded());
        let subjects = tenant_trust::tenant_subjects(&reports, &about.folder, now / 1000);
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let approved: Option<&[Approval]> = match &g.record {
            Ok(Some(r)) => Some(&r.subjects),
            _ => None,
        };
        let changes = tenant_trust::changes(approved.unwrap_or(&[]), &subjects);
        let hold = match &g.record {
            Ok(Some(_)) => self.trust.hold_changed_reloads && tenant_trust::any_change(&changes),
            Ok(None) => self.trust.hold_first_load,
            // A record that cannot be used approves nothing.
            Err(_) => self.trust.hold_changed_reloads || self.trust.hold_first_load,
        };
        if hold {
            g.pending = Some(Pending {
                digest: tenant_trust::set_digest(&subjects),
                held_at_ms: now,
                cause,
                subjects,
                changes,
                staged,
                about,
            });
            return Ok(true);
        }
        let by = match &g.record {
            Ok(Some(_)) => ApprovedBy::Load,
            _ => ApprovedBy::FirstLoad,
        };
        let before = g.record.as_ref().ok().and_then(Option::as_ref);
        let record = tenant_trust::next_record(t.id.as_str(), before, subjects, by, now);
        tenant_trust::write_record(&g.store, &record).map_err(|e| TenantError::Trust {
            id: t.id.clone(),
            reason: format!("cannot record its rule digests: {e}"),
        })?;
        g.record = Ok(Some(record));
        // A newer load that needs no approval supersedes the one waiting.
        g.pending = None;
        t.host.commit(staged).map_err(|source| TenantError::Host {
            id: t.id.clone(),
            source,
        })?;
        t.set_about(about);
        Ok(false)
    }

    /// Adds a tenant; refused if the id exists.
    ///
    /// # Blocking
    /// Reads the tenant's files and may compile its components (seconds, up to the policy's
    /// `compile_budget`), and waits for an operation on the same tenant in progress: call it
    /// from `spawn_blocking` in async code.
    pub fn add(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(&spec.id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if self.get(&spec.id).is_ok() {
            return Err(TenantError::AlreadyExists(spec.id));
        }
        let (tenant, held) = self.build(spec)?;
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tenant.id.clone(), tenant.clone());
        Ok(tenant.info_held(held))
    }

    /// Adds a tenant or replaces the policy, folder, plugins and rules of the one with the same
    /// id, validate-then-swap: the new rule set is built under the new policy first; on error
    /// the old one keeps serving. A replacement swaps only the policy and the rules (and the
    /// attached data), atomically: the tenant's stream, enabled flag, quotas and metrics carry
    /// on. Dispatches in flight finish on the rules they started with.
    ///
    /// # Blocking
    /// As [`Tenants::add`]: reads files, may compile, waits for the tenant's admin lock. Call it
    /// from `spawn_blocking` in async code.
    pub fn put(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(&spec.id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let Ok(tenant) = self.get(&spec.id) else {
            let (tenant, held) = self.build(spec)?;
            self.map
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(tenant.id.clone(), tenant.clone());
            return Ok(tenant.info_held(held));
        };
        let plugins = plugin_paths(&spec);
        let policy = self.host_policy(&spec, &plugins)?;
        let host_error = |source| TenantError::Host {
            id: spec.id.clone(),
            source,
        };
        let mut failed_to_build = None;
        let mut staged = None;
        let report = load(
            &spec.id,
            &spec.folder,
            &plugins,
            None,
            |paths, opts, check| match tenant.host.stage_reconfigure(policy, paths, opts, check) {
                Ok(Ok((report, s))) => {
                    staged = Some(s);
                    Ok(report)
                }
                Ok(Err(report)) => Err(report),
                Err(e) => {
                    failed_to_build = Some(e);
                    Err(LoadReport::default())
                }
            },
        );
        if let Some(e) = failed_to_build {
            return Err(host_error(e));
        }
        let report = report?;
        let staged = staged.ok_or_else(|| self.lost(&spec.id))?;
        let about = About::loaded_now(spec.folder, plugins, spec.attached, report.diagnostics);
        let held = self.gate(&tenant, staged, about, LoadCause::Put)?;
        Ok(tenant.info_held(held))
    }

    /// Every tenant, by id.
    pub fn list(&self) -> Vec<TenantInfo> {
        let tenants: Vec<Arc<Tenant<A>>> = self
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        tenants.iter().map(|t| t.info()).collect()
    }

    /// One tenant.
    pub fn info(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        Ok(self.get(id)?.info())
    }

    /// The diagnostics of a tenant's current rule set.
    pub fn diagnostics(&self, id: &TenantId) -> Result<Vec<Diagnostic>, TenantError> {
        Ok(self.get(id)?.about().diagnostics.clone())
    }

    /// The tenant's host (its metrics, HookFired stream, replay folder): the same host for the
    /// tenant's whole life.
    pub fn host(&self, id: &TenantId) -> Result<HookHost, TenantError> {
        Ok(self.get(id)?.host.clone())
    }

    /// The tenant's metrics (nothing of any other tenant's).
    pub fn metrics(&self, id: &TenantId) -> Result<MetricsSnapshot, TenantError> {
        Ok(self.get(id)?.host.metrics())
    }

    /// Stops running the tenant's hooks (it behaves as a tenant with no rules). Waits for an
    /// operation on the same tenant in progress (a load compiling): it is never lost to one.
    ///
    /// # Blocking
    /// For as long as that operation takes: call it from `spawn_blocking` in async code.
    pub fn disable(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        self.switch(id, false)
    }

    /// Runs the tenant's hooks again; waits as [`Tenants::disable`] does.
    pub fn enable(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        self.switch(id, true)
    }

    fn switch(&self, id: &TenantId, enabled: bool) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let t = self.get(id)?;
        t.host.set_enabled(enabled);
        Ok(t.info())
    }

    /// Reloads the tenant's hooks from its plugin paths (or from `paths`, for this reload),
    /// validate-then-swap.
    ///
    /// # Blocking
    /// As [`Tenants::add`]: call it from `spawn_blocking` in async code.
    pub fn reload(
        &self,
        id: &TenantId,
        paths: Option<Vec<PathBuf>>,
    ) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let t = self.get(id)?;
        let about = t.about();
        let mut staged = None;
        let report = load(
            id,
            &about.folder,
            &about.plugins,
            paths.as_deref(),
            |paths, opts, check| {
                t.host.stage_reload(paths, opts, check).map(|(report, s)| {
                    staged = Some(s);
                    report
                })
            },
        )?;
        let staged = staged.ok_or_else(|| self.lost(id))?;
        let next = about.reloaded_now(report.diagnostics);
        let held = self.gate(&t, staged, next, LoadCause::Reload)?;
        Ok(t.info_held(held))
    }

    /// Puts the tenant's load waiting for approval in place and records it as approved by an
    /// admin — only if it is the one named by `digest` (the one the admin reviewed): another
    /// is [`TenantError::StalePending`] and nothing changes.
    pub fn approve(&self, id: &TenantId, digest: &Digest) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let t = self.get(id)?;
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let pending = match &g.pending {
            None => return Err(TenantError::NothingPending(id.clone())),
            Some(p) if p.digest != *digest => {
                return Err(TenantError::StalePending {
                    id: id.clone(),
                    asked: *digest,
                    pending: p.digest,
                });
            }
            Some(p) => p,
        };
        let before = g.record.as_ref().ok().and_then(Option::as_ref);
        let record = tenant_trust::next_record(
            id.as_str(),
            before,
            pending.subjects.clone(),
            ApprovedBy::Admin,
            now_ms(),
        );
        tenant_trust::write_record(&g.store, &record).map_err(|e| TenantError::Trust {
            id: id.clone(),
            reason: format!("cannot record the approval: {e}"),
        })?;
        g.record = Ok(Some(record));
        if let Some(p) = g.pending.take() {
            t.host
                .commit(p.staged)
                .map_err(|source| TenantError::Host {
                    id: id.clone(),
                    source,
                })?;
            t.set_about(p.about);
        }
        drop(g);
        Ok(t.info())
    }

    /// Drops the tenant's load waiting for approval (the old rules go on serving). With
    /// `digest`, only if it is that one.
    pub fn reject(
        &self,
        id: &TenantId,
        digest: Option<&Digest>,
    ) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let t = self.get(id)?;
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        match (&g.pending, digest) {
            (None, _) => return Err(TenantError::NothingPending(id.clone())),
            (Some(p), Some(d)) if p.digest != *d => {
                return Err(TenantError::StalePending {
                    id: id.clone(),
                    asked: *d,
                    pending: p.digest,
                });
            }
            _ => {}
        }
        g.pending = None;
        drop(g);
        Ok(t.info())
    }

    /// The tenant's recorded rule digests (with when each changed) and the load waiting for
    /// approval, with its changes file by file and grant by grant.
    pub fn trust(&self, id: &TenantId) -> Result<TenantTrustView, TenantError> {
        let t = self.get(id)?;
        let g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let (approved, rules, record_error) = match &g.record {
            Ok(Some(r)) => (
                Some(r.approved),
                tenant_trust::rule_views(&r.subjects, &r.rules),
                None,
            ),
            Ok(None) => (None, Vec::new(), None),
            Err(e) => (None, Vec::new(), Some(e.clone())),
        };
        Ok(TenantTrustView {
            tenant: id.to_string(),
            settings: self.trust,
            approved,
            record_error,
            rules,
            pending: g.pending.as_ref().map(|p| PendingView {
                digest: p.digest,
                held_at_ms: p.held_at_ms,
                cause: p.cause,
                changes: p.changes.clone(),
                rules: tenant_trust::rule_views(&p.subjects, &[]),
            }),
        })
    }

    /// Removes a tenant: new dispatches find no such tenant at once, its HookFired stream ends;
    /// hooks in flight get up to `grace` to finish (each also ends at its dispatch's deadline).
    /// Its folder stays; its state folder (data, replay) is deleted only with `delete_state`.
    /// The wait for hooks in flight is woken by the last one ending; the replay flush and the
    /// folder's removal do not block the calling thread.
    ///
    /// It takes the tenant's admin lock first, so it waits for an operation on the same tenant
    /// in progress (a load compiling) — on a blocking thread, never on the async one: the lock is
    /// only ever tried here, and while another operation holds it a `spawn_blocking` task waits
    /// for it to be let go.
    pub async fn remove(
        &self,
        id: &TenantId,
        grace: Duration,
        delete_state: bool,
    ) -> Result<Removed, TenantError> {
        let lock = self.admin_lock(id);
        let t = loop {
            if let Some(t) = self.take_out_if_free(&lock, id)? {
                break t;
            }
            // Another operation on the tenant holds the lock: wait for it to be let go on a
            // blocking thread, then try again (another may have taken it meanwhile).
            let busy = lock.clone();
            let _ = tokio::task::spawn_blocking(move || {
                drop(busy.lock().unwrap_or_else(PoisonError::into_inner));
            })
            .await;
        };
        // Woken when its last hook ends (no polling); the flush and the folder's removal wait
        // off this thread.
        let still_running = t
            .host
            .hooks_finished(tokio::time::Instant::now() + grace)
            .await;
        self.runtime.replay_flushed().await;
        let state_deleted = delete_state && {
            let dir = t.state_dir.clone();
            tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir).is_ok())
                .await
                .unwrap_or(false)
        };
        Ok(Removed {
            still_running,
            state_deleted,
        })
    }

    /// Takes tenant `id` out of the map (new dispatches find it no more, its stream ends) if
    /// its admin lock `lock` is free now; `None`, changing nothing, while an operation holds it.
    fn take_out_if_free(
        &self,
        lock: &Mutex<()>,
        id: &TenantId,
    ) -> Result<Option<Arc<Tenant<A>>>, TenantError> {
        let _held = match lock.try_lock() {
            Ok(held) => held,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Ok(None),
        };
        let t = self
            .map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .ok_or_else(|| TenantError::NotFound(id.clone()))?;
        t.host.set_enabled(false);
        t.host.close_fired();
        Ok(Some(t))
    }

    /// Dispatches `event` to the tenant's hooks.
    pub async fn dispatch(&self, id: &TenantId, event: Event) -> Result<Dispatch, TenantError> {
        let t = self.get(id)?;
        Ok(t.host.dispatch(event).await)
    }
}

impl<A> Tenant<A> {
    fn about(&self) -> Arc<About<A>> {
        self.about
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_about(&self, about: About<A>) {
        *self.about.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(about);
    }

    fn info_held(&self, held: bool) -> TenantInfo {
        TenantInfo {
            held,
            ..self.info()
        }
    }

    fn info(&self) -> TenantInfo {
        let pending_approval = self
            .gate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pending
            .as_ref()
            .map(|p| p.digest);
        let about = self.about();
        TenantInfo {
            id: self.id.clone(),
            state: if self.host.is_enabled() {
                TenantState::Enabled
            } else {
                TenantState::Disabled
            },
            folder: about.folder.clone(),
            rules: self.host.rule_counts(),
            loaded_at_ms: about.loaded_at_ms,
            diagnostic_count: about.diagnostics.len(),
            pending_approval,
            held: false,
        }
    }
}

/// The plugin paths of `spec`: its own, or `<folder>/plugins`.
fn plugin_paths<A>(spec: &TenantSpec<A>) -> Vec<PathBuf> {
    spec.plugins
        .clone()
        .unwrap_or_else(|| vec![spec.folder.join("plugins")])
}

type Checked = Result<LoadReport, LoadReport>;

/// Validate-then-swap of tenant `id`'s hooks from `plugins` (or `paths`, for this load) with
/// `swap` (a reload of the rules, or a replacement of the policy too). The default
/// `<folder>/plugins` may be missing (no rules); a path given explicitly must exist; every path
/// and every plugin must really lie inside `folder`.
fn load(
    id: &TenantId,
    folder: &Path,
    plugins: &[PathBuf],
    paths: Option<&[PathBuf]>,
    swap: impl FnOnce(&[&PathBuf], &LoadOptions, &dyn Fn(&LoadReport) -> Vec<Diagnostic>) -> Checked,
) -> Result<LoadReport, TenantError> {
    let explicit = paths.is_some();
    let paths = paths.unwrap_or(plugins);
    let fail = |diagnostics| TenantError::Load {
        id: id.clone(),
        diagnostics,
    };
    let mut refused = outside_folder(id, folder, paths);
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
    let check = |r: &LoadReport| plugins_outside(id, folder, r);
    swap(&existing, &LoadOptions::default(), &check).map_err(|r| fail(r.diagnostics))
}

/// Paths named for loading that lie outside the tenant's folder.
fn outside_folder(id: &TenantId, folder: &Path, paths: &[PathBuf]) -> Vec<Diagnostic> {
    let real = canon(folder);
    paths
        .iter()
        .filter(|p| !canon(p).starts_with(&real))
        .map(|p| {
            Diagnostic::error(
                p.clone(),
                format!(
                    "tenant `{id}` may only load hooks from inside its folder {}",
                    folder.display()
                ),
            )
        })
        .collect()
}

/// Plugins whose real folder (through symlinks) is outside the tenant's folder: a symlink to
/// another tenant's plugin would otherwise load and mount that tenant's files.
fn plugins_outside(id: &TenantId, folder: &Path, report: &LoadReport) -> Vec<Diagnostic> {
    let folder = canon(folder);
    report
        .plugins
        .iter()
        .enumerate()
        .filter(|(_, p)| !canon(&p.root).starts_with(&folder))
        .flat_map(|(i, p)| {
            let first = report.rules.iter().find(|r| r.plugin == i);
            let msg = format!(
                "plugin `{}` resolves to {}, outside tenant `{id}`'s folder: a tenant's plugins must really be inside its folder (no symlink out)",
                p.name,
                canon(&p.root).display(),
            );
            match first {
                Some(rule) => vec![rule_error(rule, Some(p), msg)],
                None => vec![Diagnostic::error(p.root.clone(), msg)],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RuntimeSettings;

    /// The admin lock held by another operation (a load compiling) keeps `remove` waiting, but
    /// on a blocking thread: the async thread it was called on goes on serving its other tasks.
    /// Without the fix the one thread of this runtime blocks in `remove` until the holder gives
    /// up after its bound, and the order below is reversed.
    #[test]
    fn remove_waits_for_the_admin_lock_off_the_async_thread() {
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let state = tempfile::tempdir().unwrap();
        let tenants: Arc<Tenants> = Arc::new(Tenants::new(runtime, state.path()));
        let id = TenantId::new("acme").unwrap();
        let lock = tenants.admin_lock(&id);
        let (taken_tx, taken_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let _held = lock.lock().unwrap();
            taken_tx.send(()).unwrap();
            // A bound on a hang, not a timing: the test releases it long before.
            let _ = release_rx.recv_timeout(Duration::from_secs(60));
        });
        taken_rx.recv().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let removing = tokio::spawn({
                let (tenants, id, order) = (tenants.clone(), id.clone(), order.clone());
                async move {
                    let removed = tenants.remove(&id, Duration::ZERO, false).await;
                    order.lock().unwrap().push("removed");
                    removed
                }
            });
            // The remove runs first and meets the held lock.
            tokio::task::yield_now().await;
            order
                .lock()
                .unwrap()
                .push("the async thread served another task");
            // (Without the fix the holder gave up long ago: nobody is listening.)
            let _ = release_tx.send(());
            let removed = removing.await.unwrap();
            assert!(
                matches!(removed, Err(TenantError::NotFound(_))),
                "{removed:?}"
            );
        });
        holder.join().unwrap();
        assert_eq!(
            *order.lock().unwrap(),
            ["the async thread served another task", "removed"]
        );
    }
}
