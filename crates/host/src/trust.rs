//! Trust pinned to content, in the host (SPEC §11; the pure model is `hookbox_core::trust`).
//!
//! - [`TrustPolicy`]: the mode (`off`, `warn`, `require`; a project's `"trust"` setting may
//!   make it stricter, never looser), the approval store's folder, and the bounds on pinned
//!   files.
//! - [`ApprovalStore`]: approvals, one private file per subject, in hookbox's state folder.
//! - At load (`survey`), every rule gets its record and verdict; the files a command runs are
//!   read once beneath their root without following symlinks and kept (`pin`); a wasm rule's
//!   component digest is the one of the bytes compiled.
//! - At dispatch (`gate`), `require` refuses what is not approved (`untrusted`, the approved
//!   fail mode kept), `warn` runs it and says so ([`TrustFinding`]), and a command runs sealed
//!   copies of the bytes that were hashed.
//! - [`HookHost::trust_report`](crate::HookHost::trust_report): every subject's records and
//!   verdicts, for `hookbox trust` and admin views.

pub(crate) mod gate;
mod pin;
mod policy;
mod report;
mod store;
mod survey;
mod user_settings;

use std::path::{Path, PathBuf};

pub use hookbox_core::trust::TrustMode;
pub use policy::{DEFAULT_MAX_PINNED_BYTES, DEFAULT_MAX_PINNED_FILE_BYTES, TrustPolicy};
pub(crate) use report::subject_reports;
pub use report::{RuleReport, SubjectReport, TrustFinding};
pub use store::{ApprovalStore, MAX_APPROVAL_BYTES, MAX_STORED_APPROVALS, StoreError};
pub(crate) use survey::{LoadedTrust, canonical as canonical_path, survey};
pub use user_settings::{UserSettings, default_config_dir};

use crate::error::HostError;
use crate::policy::HostPolicy;

/// The approval store's folder under a state root: `<root>/trust`.
pub fn default_store_dir(state_root: &Path) -> PathBuf {
    state_root.join("trust")
}

/// Trust as one host holds it: the mode in force and the store it reads.
#[derive(Debug)]
pub(crate) struct HostTrust {
    pub(crate) mode: TrustMode,
    pub(crate) store: Option<ApprovalStore>,
    pub(crate) policy: TrustPolicy,
}

impl HostTrust {
    /// The policy's trust (a project's `"trust"` setting has made it stricter already, through
    /// [`Settings::apply`](crate::Settings::apply)), and its store opened (when the mode is on
    /// and the folder exists). The store must be outside the project and every folder rules may
    /// mount: hooks must never reach the approvals.
    pub(crate) fn new(policy: &HostPolicy) -> Result<HostTrust, HostError> {
        let mode = policy.trust.mode;
        let mut store = None;
        if mode.is_on()
            && let Some(dir) = &policy.trust.store
        {
            check_outside(dir, policy)?;
            store = ApprovalStore::open(dir)?;
        }
        Ok(HostTrust {
            mode,
            store,
            policy: policy.trust.clone(),
        })
    }
}

/// `p` with its longest existing ancestor resolved (symlinks and all), the rest appended: the
/// real place of a folder that may not exist yet.
fn canonical_existing(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(real) = cur.canonicalize() {
            return rest.iter().rev().fold(real, |acc, c| acc.join(c));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                cur = parent;
            }
            _ => return abs,
        }
    }
}

/// Refuses an approval store inside (or containing) the project or a mount root.
pub fn check_outside(store: &Path, policy: &HostPolicy) -> Result<(), HostError> {
    let s = canonical_existing(store);
    for r in std::iter::once(&policy.project_dir).chain(&policy.extra_mount_roots) {
        let r = survey::canonical(r);
        if s.starts_with(&r) || r.starts_with(&s) {
            return Err(HostError::TrustStoreOverlaps {
                store: store.to_owned(),
                overlaps: r,
            });
        }
    }
    Ok(())
}
