//! What the server knows of tenants beyond [`Tenants`](hookbox_host::Tenants) — the one map of
//! the tenants being served, each entry its long-lived owner with the token digest attached to
//! its policy: the tenants whose folder did **not** load (and that are not served), with why,
//! for the admin API and `GET /v1/status`. An id is in one of the two, never both: a tenant that loads
//! leaves this list, and a served tenant whose reload fails keeps serving (validate-then-swap)
//! and is not listed here. Both change only under the admin lock.
//!
//! A tenant route asks [`Registry::authorize`] for `(id, token)`: the answer is the same whether
//! the id names no tenant, names another tenant than the token's, or is not an id at all, so a
//! client learns nothing about tenants it holds no token for.

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock};

use hookbox_core::diagnostic::Diagnostic;
use hookbox_host::{TenantId, TenantRef, Tenants};
use serde::Serialize;

use crate::token::TokenHash;

/// A served tenant, as a request holds it: its host, its token digest, its folder.
pub(crate) type Serving = TenantRef<TokenHash>;

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
    Granted(Serving),
    /// The token is this tenant's, but it failed to load.
    Unavailable,
    /// No tenant of this id for this token.
    Denied,
}

/// The tenants that failed to load. Every method takes `&self`.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    failed: RwLock<BTreeMap<TenantId, Failed>>,
}

/// Compared against when the id names no tenant, so a miss costs what a hit costs.
const NO_TENANT: TokenHash = TokenHash::ZERO;

impl Registry {
    /// Whether `token` opens tenant `id`'s routes.
    pub(crate) fn authorize(
        &self,
        tenants: &Tenants<TokenHash>,
        id: &str,
        token: &TokenHash,
    ) -> Access {
        let Ok(id) = TenantId::new(id) else {
            let _ = NO_TENANT.matches(token);
            return Access::Denied;
        };
        if let Some(t) = tenants.tenant(&id) {
            return if t.attached().matches(token) {
                Access::Granted(t)
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
    pub(crate) fn counts(&self, tenants: &Tenants<TokenHash>) -> (usize, usize) {
        let failed = self
            .failed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        (tenants.len(), failed)
    }

    /// `id` loaded: it no longer counts as failed.
    pub(crate) fn loaded(&self, id: &TenantId) {
        self.failed
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// Records that `f.id` failed to load — unless it is being served (its reload failed and
    /// its previous rules keep serving: validate-then-swap).
    pub(crate) fn set_failed(&self, tenants: &Tenants<TokenHash>, f: Failed) {
        if tenants.tenant(&f.id).is_some() {
            return;
        }
        self.failed
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(f.id.clone(), f);
    }

    /// Forgets a failed `id`; whether it was listed.
    pub(crate) fn forget(&self, id: &TenantId) -> bool {
        self.failed
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use hookbox_host::{HookRuntime, RuntimeSettings, TenantPolicy, TenantSpec};

    use super::*;

    fn tenants() -> (tempfile::TempDir, Tenants<TokenHash>) {
        let dir = tempfile::tempdir().unwrap();
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let t = Tenants::new(runtime, dir.path().join("state"));
        (dir, t)
    }

    fn serve(t: &Tenants<TokenHash>, root: &std::path::Path, id: &str, token: &str) {
        let folder: PathBuf = root.join(id);
        std::fs::create_dir_all(&folder).unwrap();
        t.put(TenantSpec {
            id: TenantId::new(id).unwrap(),
            folder,
            policy: TenantPolicy::default(),
            plugins: None,
            attached: TokenHash::of_token(token),
        })
        .unwrap();
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
        let (dir, t) = tenants();
        let r = Registry::default();
        serve(&t, dir.path(), "a", "ta");
        serve(&t, dir.path(), "b", "tb");
        r.set_failed(&t, failed("c", Some("tc")));
        let ta = TokenHash::of_token("ta");
        assert!(matches!(r.authorize(&t, "a", &ta), Access::Granted(s) if s.id().as_str() == "a"));
        for id in ["b", "nope", "../a", "c", ""] {
            assert!(matches!(r.authorize(&t, id, &ta), Access::Denied), "{id}");
        }
        assert!(matches!(
            r.authorize(&t, "c", &TokenHash::of_token("tc")),
            Access::Unavailable
        ));
    }

    #[test]
    fn a_failed_reload_of_a_served_tenant_keeps_it_served() {
        let (dir, t) = tenants();
        let r = Registry::default();
        serve(&t, dir.path(), "a", "ta");
        r.set_failed(&t, failed("a", Some("ta")));
        assert_eq!(r.counts(&t), (1, 0));
        r.set_failed(&t, failed("z", None));
        assert_eq!(r.counts(&t), (1, 1));
        serve(&t, dir.path(), "z", "tz");
        r.loaded(&TenantId::new("z").unwrap());
        assert_eq!(r.counts(&t), (2, 0));
        assert!(!r.forget(&TenantId::new("z").unwrap()));
    }
}
