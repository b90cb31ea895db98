//! A host's trust settings: the mode, where approvals are read, and the bounds on pinned files.

use std::path::PathBuf;

use hookbox_trust::TrustMode;

use super::isolation::TrustNamespace;

/// Default [`TrustPolicy::max_pinned_file_bytes`]: far above any hook script.
pub const DEFAULT_MAX_PINNED_FILE_BYTES: u64 = 16 << 20;

/// Default [`TrustPolicy::max_pinned_bytes`].
pub const DEFAULT_MAX_PINNED_BYTES: u64 = 64 << 20;

/// How a host checks rules against approvals (SPEC §11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    /// `off`, `warn` or `require`. The project's `.hookbox/settings.json` `"trust"` may make it
    /// stricter, never looser. Default: [`TrustMode::Off`] (the CLI uses `warn`, or the user's
    /// `~/.config/hookbox/settings.json`, or `--trust`).
    pub mode: TrustMode,
    /// The approval store's folder. `None` (or a folder that does not exist yet): no rule is
    /// approved. It must be outside the project and every mount root. Default: `None`; the CLI
    /// uses `~/.local/state/hookbox/trust` ([`default_store_dir`](super::default_store_dir)).
    pub store: Option<PathBuf>,
    /// Largest file a rule runs that is pinned, in bytes; a larger one cannot be pinned (and
    /// its rule does not run under `require`). Default: 16 MiB.
    pub max_pinned_file_bytes: u64,
    /// Bytes of pinned script files one loaded rule set keeps in memory (a native script runs
    /// from a sealed copy of the bytes read at load); files past it cannot be pinned.
    /// Default: 64 MiB.
    pub max_pinned_bytes: u64,
    /// Records every rule (its content, grants and the digests of the files it runs) at load
    /// even when `mode` is `off`: nothing is checked or reported at dispatch, but the records
    /// are there for an admin view and a command runs the sealed copies of the bytes hashed.
    /// Default: `false`; tenants: `true` (their digests are what `hookbox serve` records and
    /// an operator may hold a changed reload on).
    pub record: bool,
    /// Whether approved hooks run under `require` in a private mount namespace that shows the
    /// snapshot at the plugin folder's own path (`auto`, where the kernel allows it) or through
    /// `CLAUDE_PLUGIN_ROOT` alone (`off`, and wherever the namespace cannot be made). Default:
    /// [`TrustNamespace::Auto`]; the CLI reads `"trust_namespace"` from the user's settings.
    pub namespace: TrustNamespace,
}

impl Default for TrustPolicy {
    fn default() -> Self {
        TrustPolicy {
            mode: TrustMode::Off,
            store: None,
            max_pinned_file_bytes: DEFAULT_MAX_PINNED_FILE_BYTES,
            max_pinned_bytes: DEFAULT_MAX_PINNED_BYTES,
            record: false,
            namespace: TrustNamespace::Auto,
        }
    }
}

impl TrustPolicy {
    /// A policy of `mode` reading approvals from `store`.
    pub fn new(mode: TrustMode, store: Option<PathBuf>) -> TrustPolicy {
        TrustPolicy {
            mode,
            store,
            ..TrustPolicy::default()
        }
    }
}
