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
//!
//! Inside: [`spec`] (what a tenant is made from and what is shown of it), [`error`], [`tenant`]
//! (one tenant's long-lived owner and the handle a request keeps), [`load`] (a tenant's folder
//! loaded validate-then-swap), [`approval`] (the approval gate: record, hold, approve, reject)
//! and [`admin`] (the per-tenant admin locks and removal). This file is the facade: the map and
//! the operations.

mod admin;
mod approval;
mod control;
mod error;
mod held;
mod load;
mod snapshots;
mod spec;
mod tenant;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::Event;
use hookbox_trust::Digest;

use crate::dispatch::Dispatch;
use crate::host::HookHost;
use crate::metrics::MetricsSnapshot;
use crate::runtime::HookRuntime;
use crate::tenant_control::ControlStore;
use crate::tenant_id::TenantId;
use crate::tenant_trust::{LoadCause, TenantTrustSettings};

pub use admin::TenantAdmin;
pub use control::ControlSync;
pub use error::TenantError;
pub use held::{Held, HeldUnavailable};
pub use spec::{Removed, TenantAttachment, TenantInfo, TenantSpec, TenantState};
pub use tenant::TenantRef;

use admin::AdminLocks;
use load::{About, failed_load, load, plugin_paths};
use tenant::Tenant;

/// Many tenants over one runtime. Cheap to share (`Arc` it); every method takes `&self`.
pub struct Tenants<A = ()> {
    runtime: HookRuntime,
    state_root: PathBuf,
    map: RwLock<BTreeMap<TenantId, Arc<Tenant<A>>>>,
    /// The operator's approval settings.
    trust: TenantTrustSettings,
    /// The tenants an admin operation is in progress on (each holds its tenant's lock).
    admin: Arc<AdminLocks>,
    /// The control store shared with other replicas, if any: the approved sets and held loads
    /// are read from and written to it instead of the tenants' state folders.
    control: Option<Arc<dyn ControlStore>>,
}

impl<A> std::fmt::Debug for Tenants<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("state_root", &self.state_root)
            .finish_non_exhaustive()
    }
}

impl<A: TenantAttachment> Tenants<A> {
    /// No tenants yet, on `runtime`; each tenant's state goes to `state_root/<id>` (which must
    /// not be inside any tenant's folder).
    pub fn new(runtime: HookRuntime, state_root: impl Into<PathBuf>) -> Tenants<A> {
        Tenants {
            runtime,
            state_root: state_root.into(),
            map: RwLock::new(BTreeMap::new()),
            trust: TenantTrustSettings::default(),
            admin: Arc::default(),
            control: None,
        }
    }

    /// The same, sharing approvals with other replicas through `store` (issue 29): each load
    /// is decided against the approved set the store holds — read first, so a replica that
    /// starts with an empty state folder never serves a load nobody approved while holding is
    /// on — and held loads, approvals and rejections are written there, for every replica.
    /// `store`'s own folder (if any) is kept out of every tenant's read-write mounts.
    #[must_use]
    pub fn with_control(mut self, store: Arc<dyn ControlStore>) -> Tenants<A> {
        self.control = Some(store);
        self
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

    /// Adds a tenant; refused if the id exists.
    ///
    /// # Blocking
    /// Reads the tenant's files and may compile its components (seconds, up to the policy's
    /// `compile_budget`), and waits for an operation on the same tenant in progress: call it
    /// from `spawn_blocking` in async code.
    pub fn add(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        self.admin(&spec.id).add(spec)
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
        self.admin(&spec.id).put(spec)
    }

    /// [`Tenants::add`] with the tenant's admin lock held.
    pub(super) fn add_held(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        if self.get(&spec.id).is_ok() {
            return Err(TenantError::AlreadyExists(spec.id));
        }
        let (tenant, held) = self.build(spec)?;
        self.insert(&tenant);
        Ok(tenant.info_held(held))
    }

    /// [`Tenants::put`] with the tenant's admin lock held.
    pub(super) fn put_held(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        let Ok(tenant) = self.get(&spec.id) else {
            let (tenant, held) = self.build(spec)?;
            self.insert(&tenant);
            return Ok(tenant.info_held(held));
        };
        let plugins = plugin_paths(&spec);
        let policy = self.host_policy(&spec, &plugins)?;
        let approved_spec = spec.clone();
        let (report, staged) = load(
            &spec.id,
            &spec.folder,
            &plugins,
            None,
            |paths, opts, check| {
                tenant
                    .host
                    .stage_reconfigure(policy, paths, opts, check)
                    .map_err(|source| TenantError::Host {
                        id: spec.id.clone(),
                        source,
                    })?
                    .map_err(|report| failed_load(&spec.id, report))
            },
        )?;
        let terms = spec.terms();
        let about = About::loaded_now(
            spec.folder,
            plugins,
            spec.attached,
            terms,
            report.diagnostics,
        );
        let held = self.settle(&tenant, staged, about, LoadCause::Put)?;
        self.serve_approved_if_held(&tenant, &approved_spec, held);
        Ok(tenant.info_held(held))
    }

    /// Serves `tenant` from now on.
    fn insert(&self, tenant: &Arc<Tenant<A>>) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tenant.id.clone(), tenant.clone());
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
        self.admin(id).set_enabled(false)
    }

    /// Runs the tenant's hooks again; waits as [`Tenants::disable`] does.
    pub fn enable(&self, id: &TenantId) -> Result<TenantInfo, TenantError> {
        self.admin(id).set_enabled(true)
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
        self.admin(id).reload(paths)
    }

    /// [`Tenants::reload`] with the tenant's admin lock held.
    pub(super) fn reload_held(
        &self,
        id: &TenantId,
        paths: Option<Vec<PathBuf>>,
    ) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        let about = t.about();
        // Its approved snapshots serve under the approved policy: the load is staged under the
        // policy of its own spec, as its `put` would be, not the approved one.
        let policy = if t.from_snapshot.load(std::sync::atomic::Ordering::Acquire) {
            let spec = snapshots::spec_of(id, &about)?;
            Some(self.host_policy(&spec, &about.plugins)?)
        } else {
            None
        };
        let (report, staged) = load(
            id,
            &about.folder,
            &about.plugins,
            paths.as_deref(),
            |paths, opts, check| match policy {
                Some(policy) => t
                    .host
                    .stage_reconfigure(policy, paths, opts, check)
                    .map_err(|source| TenantError::Host {
                        id: id.clone(),
                        source,
                    })?
                    .map_err(|report| failed_load(id, report)),
                None => t
                    .host
                    .stage_reload(paths, opts, check)
                    .map_err(|report| failed_load(id, report)),
            },
        )?;
        let next = about.reloaded_now(report.diagnostics);
        let held = self.settle(&t, staged, next, LoadCause::Reload)?;
        Ok(t.info_held(held))
    }

    /// Puts the tenant's load waiting for approval in place and records it as approved by an
    /// admin — only if it is the one named by `digest` (the one the admin reviewed): another
    /// is [`TenantError::StalePending`] and nothing changes.
    ///
    /// # Blocking
    /// Waits for the tenant's admin lock and writes its record: call it from `spawn_blocking`
    /// in async code.
    pub fn approve(&self, id: &TenantId, digest: &Digest) -> Result<TenantInfo, TenantError> {
        self.admin(id).approve(digest)
    }

    /// Drops the tenant's load waiting for approval (the old rules go on serving). With
    /// `digest`, only if it is that one.
    ///
    /// # Blocking
    /// Waits for the tenant's admin lock: call it from `spawn_blocking` in async code.
    pub fn reject(
        &self,
        id: &TenantId,
        digest: Option<&Digest>,
    ) -> Result<TenantInfo, TenantError> {
        self.admin(id).reject(digest)
    }

    /// Dispatches `event` to the tenant's hooks — or, while it has no approved rules in place,
    /// answers as its [`Held`] says ([`TenantError::Held`] for an event it does not deny).
    pub async fn dispatch(
        &self,
        id: &TenantId,
        event: impl Into<Arc<Event>>,
    ) -> Result<Dispatch, TenantError> {
        let t = self.get(id)?;
        if let Some(held) = t.held() {
            return held.answer(event).map_err(TenantError::Held);
        }
        Ok(t.host.dispatch(event).await)
    }
}
