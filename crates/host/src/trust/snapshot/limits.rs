//! The bounds of one snapshot: what `trust add` copies, at most.

use super::error::{SnapshotError, largest};

/// Default [`SnapshotLimits::max_files`].
pub const DEFAULT_MAX_SNAPSHOT_FILES: usize = 10_000;

/// Default [`SnapshotLimits::max_bytes`]: a plugin with a bundled `node_modules` fits; a folder
/// of build output or media does not, and is refused with its largest files named.
pub const DEFAULT_MAX_SNAPSHOT_BYTES: u64 = 256 << 20;

/// How much one approval may copy into the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// Regular files. Default: 10,000 (`trust.max_snapshot_files`).
    pub max_files: usize,
    /// Their bytes, together. Default: 256 MiB (`trust.max_snapshot_bytes`).
    pub max_bytes: u64,
    /// One file's bytes. Default: 16 MiB (`trust.max_pinned_file_bytes`).
    pub max_file_bytes: u64,
}

impl SnapshotLimits {
    /// Entries of every kind (files, folders, links) a walk lists before it gives up: four per
    /// file allowed, so a folder of empty folders cannot make the walk unbounded.
    pub(crate) fn max_entries(&self) -> usize {
        self.max_files
            .saturating_mul(4)
            .min(hookbox_trust::MAX_SNAPSHOT_ENTRIES)
    }
}

impl SnapshotLimits {
    /// Refuses `sizes` (each file's size and path) when they are more files or bytes than
    /// allowed, or one of them is too large, naming the limit and the largest files.
    pub(crate) fn check(&self, sizes: &mut [(u64, String)]) -> Result<(), SnapshotError> {
        let bytes = sizes.iter().fold(0u64, |t, (s, _)| t.saturating_add(*s));
        if sizes.len() > self.max_files {
            return Err(SnapshotError::TooManyFiles {
                found: sizes.len(),
                max: self.max_files,
                largest: largest(sizes),
            });
        }
        if bytes > self.max_bytes {
            return Err(SnapshotError::TooLarge {
                found: bytes,
                max: self.max_bytes,
                largest: largest(sizes),
            });
        }
        if let Some((size, path)) = sizes.iter().find(|(s, _)| *s > self.max_file_bytes) {
            return Err(SnapshotError::FileTooLarge {
                path: path.clone(),
                size: *size,
                max: self.max_file_bytes,
            });
        }
        Ok(())
    }
}
