//! What a tenant is made from ([`TenantSpec`]) and what is shown of it ([`TenantInfo`],
//! [`TenantState`], [`Removed`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use hookbox_trust::Digest;
use serde::Serialize;

use crate::tenant_id::TenantId;
use crate::tenant_policy::TenantPolicy;
use crate::tenant_trust::TenantTerms;

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

/// What an embedder attaches to each tenant ([`TenantSpec::attached`]), and what of it the
/// tenant's approval covers: those entries are part of the tenant's [`TenantTerms`] — hashed
/// into its set digest and compared like its rules, so with holding on a change to them alone
/// is held for approval.
pub trait TenantAttachment: Clone + Send + Sync + 'static {
    /// The entries the approval covers, by key (the server: `token_sha256`). Their keys must
    /// not be policy keys. Default: none.
    fn approval_terms(&self) -> TenantTerms {
        TenantTerms::new()
    }
}

impl TenantAttachment for () {}

impl<A: TenantAttachment> TenantSpec<A> {
    /// Its terms: every value of its policy, by key, and what its attachment's approval covers.
    pub(crate) fn terms(&self) -> TenantTerms {
        let mut terms = self.attached.approval_terms();
        // A policy is plain data: it serialises to an object of its keys.
        if let Ok(serde_json::Value::Object(policy)) = serde_json::to_value(&self.policy) {
            terms.extend(policy);
        }
        terms
    }
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

/// What removing a tenant found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Its hooks still running when the grace period ended (they end at their own deadline).
    pub still_running: usize,
    /// Whether its state folder (data, replay) was deleted.
    pub state_deleted: bool,
}
