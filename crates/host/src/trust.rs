//! Trust pinned to content, in the host (SPEC §11; the pure model is `hookbox_trust`).
//!
//! - [`TrustPolicy`]: the mode (`off`, `warn`, `require`; a project's `"trust"` setting may
//!   make it stricter, never looser), the approval store's folder, and the bounds on pinned
//!   files.
//! - [`ApprovalStore`]: approvals, one private file per subject, in hookbox's state folder.
//! - [`SnapshotStore`] (`snapshots/` of the approval store): an approval of a plugin is a
//!   snapshot of its folder — every file copied, content-addressed, read-only — and under
//!   `require` its approved hooks run from it ([`ApprovalStore::snapshot_plugin`] takes it,
//!   [`ApprovalStore::collect_snapshots`] removes those no approval keeps).
//! - At load (`survey`), every rule gets its record and verdict; the files a command runs are
//!   read once beneath their root without following symlinks and kept (`pin`); the programs it
//!   runs from `PATH` are recorded by resolved path and digest (`program`); a wasm rule's
//!   component digest is the one of the bytes compiled.
//! - At dispatch (`crate::trust_gate`), `require` refuses what is not approved (`untrusted`, the approved
//!   fail mode kept), `warn` runs it from the live folder and says so ([`TrustFinding`]), and
//!   under `require` an approved command runs from its approval's snapshot (`CLAUDE_PLUGIN_ROOT`
//!   and the files it names point into it), or, for an approval without one, sealed copies of
//!   the bytes that were hashed.
//! - [`HookHost::trust_report`](crate::HookHost::trust_report): every subject's records and
//!   verdicts, for `hookbox trust` and admin views (built by `crate::trust_report`).
//!
//! Nothing here knows the host around it: the host's modules use these, never the reverse.

mod file_version;
mod isolation;
mod pin;
mod policy;
pub(crate) mod private_file;
mod program;
mod report;
mod snapshot;
mod store;
mod survey;
mod user_settings;

use std::path::{Path, PathBuf};

pub use hookbox_trust::TrustMode;
pub(crate) use isolation::plugin_views;
pub use isolation::{Isolation, TrustNamespace, names_live_folder};
pub(crate) use pin::{fd_path, sealed_copy};
pub use policy::{
    DEFAULT_MAX_PINNED_BYTES, DEFAULT_MAX_PINNED_FILE_BYTES, DEFAULT_MAX_PROGRAM_BYTES, TrustPolicy,
};
pub use report::{RuleReport, SubjectReport, TrustFinding};
pub use snapshot::{
    DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_SNAPSHOT_FILES, RootProblem, Snapshot, SnapshotBind,
    SnapshotError, SnapshotLimits, SnapshotSource, SnapshotStore,
};
pub use store::{ApprovalStore, MAX_APPROVAL_BYTES, MAX_STORED_APPROVALS, StoreError};
pub(crate) use survey::{LoadedTrust, RuleCheck, canonical, survey};
pub use user_settings::{TrustLimits, UserSettings, default_config_dir};

/// The approval store's folder under a state root: `<root>/trust`.
pub fn default_store_dir(state_root: &Path) -> PathBuf {
    state_root.join("trust")
}

/// Trust as one host holds it: the mode in force and the store it reads.
#[derive(Debug)]
pub(crate) struct HostTrust {
    pub(crate) mode: TrustMode,
    pub(crate) store: Option<ApprovalStore>,
    /// Why the store could not be opened, when it could not: then nothing is approved —
    /// `warn` runs every rule and says why, `require` refuses every rule with this reason.
    /// The store failing is never the hooks failing (a host that would not start would leave
    /// every guard to the agent's fail-open).
    pub(crate) store_error: Option<StoreUnusable>,
    pub(crate) policy: TrustPolicy,
}

/// An approval store that exists but cannot be used (others may write it, another user owns
/// it, it is a symbolic link, it cannot be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreUnusable {
    /// The store's folder.
    pub(crate) path: PathBuf,
    /// What is wrong ([`StoreError`]'s text).
    pub(crate) reason: String,
}

impl StoreUnusable {
    /// How to make it usable.
    pub(crate) fn fix(&self) -> String {
        format!(
            "make it a private folder of yours: `chmod 700 {}` (a folder another user owns, or a symbolic link, must be replaced by one of yours), then approve with `hookbox trust add`",
            self.path.display()
        )
    }
}

impl std::fmt::Display for StoreUnusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the approval store cannot be used, so nothing is approved ({}) — fix: `chmod 700 {}`",
            self.reason,
            self.path.display()
        )
    }
}
