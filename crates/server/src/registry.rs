//! What the server knows of each tenant beyond [`Tenants`](hookbox_host::Tenants): the digest
//! of its token and its host (for the tenant routes' one lookup per request), the tenants that
//! failed to load (with why, for the admin API and `/readyz`), and a change signal per tenant
//! so an open `/fired` stream follows the tenant to a new host when it is replaced.
//!
//! A tenant route asks [`Registry::authorize`] for `(id, token)`: the answer is the same whether
//! the id names no tenant, names another tenant than the token's, or is not an id at all, so a
//! client learns nothing about tenants it holds no token for.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use hookbox_core::diagnostic::Diagnostic;
use hookbox_host::{HookHost, TenantId};
use serde::Serialize;
use tokio::sync::watch;

use crate::token::TokenHash;

/// A tenant being served.
#[derive(Debug)]
pub(crate) struct Serving {
    pub(crate) id: TenantId,
    pub(crate) token: TokenHash,
    pub(crate) host: HookHost,
    /// The `cwd` of an event whose payload has none: the tenant's folder.
    pub(crate) cwd: String,
}

/// A tenant whose folder did not load (and that is not being served).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Failed {
    pub(crate) id: TenantId,
    pub(crate) state: &'static str,
    pub(crate) error: String,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) failed_at_ms: u64,
    /// Its token, when its `tenant.toml` could be read: its holder is told it is unavailable.
    #[serde(skip)]
    pub(crate) token: Option<TokenHash>,
}

/// What a tenant route may do.
#[derive(Debug)]
pub(crate) enum Access {
    /// The token is this tenant's.
    Granted(Arc<Serving>),
    /// The token is this tenant's, but it failed to load.
    Unavailable,
    /// No tenant of this id for this token.
    Denied,
}

/// The server's tenants. Every method takes `&self`.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    serving: RwLock<HashMap<TenantId, Arc<Serving>>>,
    failed: RwLock<BTreeMap<TenantId, Failed>>,
    changes: Mutex<HashMap<TenantId, watch::Sender<u64>>>,
}

/// Compared against when the id names no tenant, so a miss costs what a hit costs.
const NO_TENANT: TokenHash = TokenHash::ZERO;

impl Registry {
    /// Whether `token` opens tenant `id`'s routes.
    pub(crate) fn authorize(&self, id: &str, token: &TokenHash) -> Access {
        let Ok(id) = TenantId::new(id) else {
            let _ = NO_TENANT.matches(token);
            return Access::Denied;
        };
        let serving = self
            .serving
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned();
        if let Some(s) = serving {
            return if s.token.matches(token) {
                Access::Granted(s)
            } else {
                Access::Denied
            };
        }
        let failed = self.failed.read().unwrap_or_else(PoisonError::into_inner);
        match failed.get(&id).and_then(|f| f.token.as_ref()) {
            Some(t) if t.matches(token) => Access::Unavailable,
            _ => {
                let _ = NO_TENANT.matches(token);
                Access::Denied
            }
        }
    }

    /// The tenant being served as `id`, if any.
    pub(crate) fn serving(&self, id: &TenantId) -> Option<Arc<Serving>> {
        self.serving
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Ids of every tenant being served.
    pub(crate) fn serving_ids(&self) -> Vec<TenantId> {
        let map = self.serving.read().unwrap_or_else(PoisonError::into_inner);
        let mut ids: Vec<TenantId> = map.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Tenants that failed to load, by id.
    pub(crate) fn failed(&self) -> Vec<Failed> {
        self.failed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// One tenant that failed to load.
    pub(crate) fn failed_one(&self, id: &TenantId) -> Option<Failed> {
        self.failed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// (serving, failed) counts.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let serving = self
            .serving
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        let failed = self
            .failed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        (serving, failed)
    }

    /// Serves `s` (in place of the tenant of the same id, if any); it no longer counts as failed.
    pub(crate) fn set_serving(&self, s: Serving) {
        let id = s.id.clone();
        self.failed
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        self.serving
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), Arc::new(s));
        self.changed(&id);
    }

    /// Records that `f.id` failed to load. A tenant being served keeps being served (its reload
    /// failed: validate-then-swap), so it is not recorded as failed.
    pub(crate) fn set_failed(&self, f: Failed) {
        if self.serving(&f.id).is_some() {
            return;
        }
        self.failed
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(f.id.clone(), f);
    }

    /// Forgets `id` (served or failed); whether it was known.
    pub(crate) fn remove(&self, id: &TenantId) -> bool {
        let served = self
            .serving
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .is_some();
        let failed = self
            .failed
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .is_some();
        self.changed(id);
        served || failed
    }

    /// A receiver that changes whenever `id` is replaced or removed.
    pub(crate) fn watch(&self, id: &TenantId) -> watch::Receiver<u64> {
        let mut changes = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        // Senders nobody listens to any more are dropped here, so the map stays bounded by the
        // tenants that have (or recently had) an open stream.
        changes.retain(|_, tx| tx.receiver_count() > 0);
        changes
            .entry(id.clone())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    fn changed(&self, id: &TenantId) {
        let changes = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = changes.get(id) {
            tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use hookbox_host::{HookHost, HostPolicy};

    use super::*;

    fn host() -> HookHost {
        // A project that is not an ancestor of the (temporary) state folder: hookbox refuses
        // state inside anything a hook may mount.
        HookHost::new(HostPolicy::for_project("/nonexistent-hookbox-project")).unwrap()
    }

    fn serving(id: &str, token: &str) -> Serving {
        Serving {
            id: TenantId::new(id).unwrap(),
            token: TokenHash::of_token(token),
            host: host(),
            cwd: "/nonexistent-hookbox-project".into(),
        }
    }

    fn failed(id: &str, token: Option<&str>) -> Failed {
        Failed {
            id: TenantId::new(id).unwrap(),
            state: "failed",
            error: "bad".into(),
            diagnostics: vec![],
            failed_at_ms: 0,
            token: token.map(TokenHash::of_token),
        }
    }

    #[test]
    fn another_tenants_id_looks_like_no_tenant() {
        let r = Registry::default();
        r.set_serving(serving("a", "ta"));
        r.set_serving(serving("b", "tb"));
        r.set_failed(failed("c", Some("tc")));
        let ta = TokenHash::of_token("ta");
        assert!(matches!(r.authorize("a", &ta), Access::Granted(s) if s.id.as_str() == "a"));
        for id in ["b", "nope", "../a", "c", ""] {
            assert!(matches!(r.authorize(id, &ta), Access::Denied), "{id}");
        }
        assert!(matches!(
            r.authorize("c", &TokenHash::of_token("tc")),
            Access::Unavailable
        ));
    }

    #[test]
    fn a_failed_reload_of_a_served_tenant_keeps_it_served() {
        let r = Registry::default();
        r.set_serving(serving("a", "ta"));
        r.set_failed(failed("a", Some("ta")));
        assert_eq!(r.counts(), (1, 0));
        r.set_failed(failed("z", None));
        assert_eq!(r.counts(), (1, 1));
        r.set_serving(serving("z", "tz"));
        assert_eq!(r.counts(), (2, 0));
        assert!(r.remove(&TenantId::new("z").unwrap()));
        assert!(!r.remove(&TenantId::new("z").unwrap()));
    }

    #[test]
    fn watchers_see_replacement_and_removal() {
        let r = Registry::default();
        let id = TenantId::new("a").unwrap();
        let mut rx = r.watch(&id);
        r.set_serving(serving("a", "ta"));
        assert!(rx.has_changed().unwrap());
        rx.mark_unchanged();
        r.remove(&id);
        assert!(rx.has_changed().unwrap());
    }
}
