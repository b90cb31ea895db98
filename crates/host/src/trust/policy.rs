//! A host's trust settings: the mode, where approvals are read, and the bounds on pinned files.

use std::path::PathBuf;

use hookbox_trust::TrustMode;

use super::snapshot::{DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_SNAPSHOT_FILES, SnapshotLimits};

/// Default [`TrustPolicy::max_pinned_file_bytes`]: far above any hook script.
pub const DEFAULT_MAX_PINNED_FILE_BYTES: u64 = 16 << 20;

/// Default [`TrustPolicy::max_pinned_bytes`].
pub const DEFAULT_MAX_PINNED_BYTES: u64 = 64 << 20;

/// Default [`TrustPolicy::max_program_bytes`]: above `node` (≈120 MB) and every interpreter.
pub const DEFAULT_MAX_PROGRAM_BYTES: u64 = 512 << 20;

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
    /// Regular files one approval's snapshot may copy (`trust add` refuses a plugin, or a
    /// settings file's hook folders, with more, naming the largest). Default: 10,000
    /// (`trust.max_snapshot_files`).
    pub max_snapshot_files: usize,
    /// Their bytes, together. Default: 256 MiB (`trust.max_snapshot_bytes`).
    pub max_snapshot_bytes: u64,
    /// Largest program found on `PATH` that is hashed (streaming, never read into memory
    /// whole; a digest kept per process by device, inode, size, mtime and ctime); a larger one
    /// is recorded unreadable — under `require` its rule does not run. Default: 512 MiB
    /// (`trust.max_program_bytes`).
    pub max_program_bytes: u64,
    /// Also hashes the programs on `PATH` of rules whose subject has no approval yet — what
    /// `hookbox trust add` records and `trust show` shows. Default: `false`: a dispatch hashes
    /// only the programs of approved subjects (those are compared with the approval; an
    /// unapproved rule is refused or warned about whatever its programs are).
    pub pin_unapproved_programs: bool,
    /// Records every rule (its content, grants and the digests of the files it runs) at load
    /// even when `mode` is `off`: nothing is checked or reported at dispatch, but the records
    /// are there for an admin view and a command runs the sealed copies of the bytes hashed.
    /// Default: `false`; tenants: `true` (their digests are what `hookbox serve` records and
    /// an operator may hold a changed reload on).
    pub record: bool,
}

impl Default for TrustPolicy {
    fn default() -> Self {
        TrustPolicy {
            mode: TrustMode::Off,
            store: None,
            max_pinned_file_bytes: DEFAULT_MAX_PINNED_FILE_BYTES,
            max_pinned_bytes: DEFAULT_MAX_PINNED_BYTES,
            max_snapshot_files: DEFAULT_MAX_SNAPSHOT_FILES,
            max_snapshot_bytes: DEFAULT_MAX_SNAPSHOT_BYTES,
            max_program_bytes: DEFAULT_MAX_PROGRAM_BYTES,
            pin_unapproved_programs: false,
            record: false,
        }
    }
}

impl TrustPolicy {
    /// What one approval may copy into the snapshot store: these limits, each file bounded as
    /// a pinned one.
    pub fn snapshot_limits(&self) -> SnapshotLimits {
        SnapshotLimits {
            max_files: self.max_snapshot_files,
            max_bytes: self.max_snapshot_bytes,
            max_file_bytes: self.max_pinned_file_bytes,
        }
    }

    /// A policy of `mode` reading approvals from `store`.
    pub fn new(mode: TrustMode, store: Option<PathBuf>) -> TrustPolicy {
        TrustPolicy {
            mode,
            store,
            ..TrustPolicy::default()
        }
    }
}
