//! One tenant: its long-lived host, what its current generation was loaded from and its
//! approval gate ([`Tenant`]), and the handle a request keeps ([`TenantRef`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::host::HookHost;
use crate::tenant_id::TenantId;
use crate::tenant_trust::HeldAnswer;

use super::approval::Gate;
use super::held::Held;
use super::load::About;
use super::spec::{TenantInfo, TenantState};

/// A tenant: its long-lived host, and what its current generation was loaded from.
pub(super) struct Tenant<A> {
    pub(super) id: TenantId,
    /// The long-lived owner of the tenant's state; its policy and rules are swapped inside it.
    pub(super) host: HookHost,
    pub(super) state_dir: PathBuf,
    /// Replaced with each successful load, under the tenant's admin lock.
    pub(super) about: RwLock<Arc<About<A>>>,
    /// Its recorded digests and the load waiting for approval; changed under the admin lock.
    pub(super) gate: Mutex<Gate<A>>,
    /// Whether approved rules were ever put in place: until they are, the tenant answers as
    /// `held_answer` says instead of running no rules.
    pub(super) serving: AtomicBool,
    /// What it answers until then (the operator's `[trust] held_answer`).
    pub(super) held_answer: HeldAnswer,
    /// Why its approved snapshots could not be served instead, when they could not.
    pub(super) held_why: Mutex<Option<String>>,
}

/// One tenant being served, as found by [`Tenants::tenant`]: cheap to clone, kept by a request
/// for its whole life (a removal in between does not cut it short).
pub struct TenantRef<A = ()> {
    pub(super) tenant: Arc<Tenant<A>>,
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

impl<A> TenantRef<A> {
    /// `Some` while the tenant has no approved rules in place (its first load held for
    /// approval, or rejected): what it answers instead of running no rules, which would be an
    /// allow. A request asks before dispatching; one atomic load when it serves.
    pub fn held(&self) -> Option<Held> {
        self.tenant.held()
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

impl<A> Tenant<A> {
    /// See [`TenantRef::held`].
    pub(super) fn held(&self) -> Option<Held> {
        if self.serving.load(Ordering::Acquire) {
            return None;
        }
        let pending = self
            .gate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pending
            .as_ref()
            .map(|p| p.digest);
        let why = self
            .held_why
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Some(Held {
            tenant: self.id.clone(),
            pending,
            answer: self.held_answer,
            why,
        })
    }

    /// Approved rules are in place from now on.
    pub(super) fn set_serving(&self) {
        self.serving.store(true, Ordering::Release);
        *self.held_why.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    pub(super) fn about(&self) -> Arc<About<A>> {
        self.about
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn set_about(&self, about: About<A>) {
        *self.about.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(about);
    }

    pub(super) fn info_held(&self, held: bool) -> TenantInfo {
        TenantInfo {
            held,
            ..self.info()
        }
    }

    pub(super) fn info(&self) -> TenantInfo {
        let (pending_approval, generation) = {
            let g = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
            (g.pending.as_ref().map(|p| p.digest), g.generation)
        };
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
            generation: (generation > 0).then_some(generation),
            held: false,
        }
    }
}
