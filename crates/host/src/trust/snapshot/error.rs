//! Why a snapshot could not be taken, opened or removed.

use std::path::PathBuf;

use hookbox_trust::{Digest, ManifestError};
use rustix::io::Errno;

use crate::trust::private_file::FileProblem;

/// How many of the largest files a refusal names.
const LARGEST_NAMED: usize = 5;

/// Why a snapshot could not be taken, opened or removed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// More files than the limit.
    #[error(
        "{found} files to copy, over trust.max_snapshot_files ({max}); largest: {}; fix: remove files the hooks do not need from the folder, or raise the limit (`\"trust\": {{\"max_snapshot_files\": N}}` in ~/.config/hookbox/settings.json)",
        largest_list(.largest)
    )]
    TooManyFiles {
        /// Files found (counting stops a little past the limit).
        found: usize,
        /// The limit.
        max: usize,
        /// The largest files, with their sizes.
        largest: Vec<(String, u64)>,
    },
    /// More bytes than the limit.
    #[error(
        "{found} bytes to copy, over trust.max_snapshot_bytes ({max}); largest: {}; fix: remove files the hooks do not need from the folder, or raise the limit (`\"trust\": {{\"max_snapshot_bytes\": N}}` in ~/.config/hookbox/settings.json)",
        largest_list(.largest)
    )]
    TooLarge {
        /// Its bytes.
        found: u64,
        /// The limit.
        max: u64,
        /// The largest files, with their sizes.
        largest: Vec<(String, u64)>,
    },
    /// One file over the per-file limit.
    #[error(
        "`{path}` is {size} bytes, over trust.max_pinned_file_bytes ({max}); fix: remove it from the folder, or raise the limit (`\"trust\": {{\"max_pinned_file_bytes\": N}}` in ~/.config/hookbox/settings.json)"
    )]
    FileTooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Folders nested deeper than the walk goes.
    #[error("`{path}` is more than {max} folders deep")]
    TooDeep {
        /// The folder.
        path: String,
        /// The limit.
        max: usize,
    },
    /// A name that is not UTF-8 (manifests are JSON).
    #[error("`{path}`: a name that is not UTF-8 cannot be recorded")]
    NotUtf8 {
        /// The path, its name shown lossily.
        path: String,
    },
    /// A file changed while it was copied (its size or type is not what the walk saw).
    #[error("`{path}` changed while it was copied; run the approval again")]
    ChangedMeanwhile {
        /// The file.
        path: String,
    },
    /// A root to snapshot, or a file in it, could not be opened beneath its folder.
    #[error("cannot read `{path}`: {reason}")]
    Root {
        /// The root or file.
        path: String,
        /// Why.
        reason: RootProblem,
    },
    /// A file of the store (a manifest) cannot be read or written.
    #[error("snapshot store file {path}: {problem}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        problem: FileProblem,
    },
    /// The store's snapshot folders cannot be used.
    #[error("snapshot store {path}: {error}")]
    Store {
        /// The folder or file.
        path: PathBuf,
        /// The system's error.
        error: std::io::Error,
    },
    /// A manifest read back is not valid.
    #[error("snapshot manifest {path}: {source}")]
    Manifest {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ManifestError,
    },
    /// The approval names a snapshot the store does not hold (removed, or never finished).
    #[error("snapshot {id} is not in the store {store} (it was removed); approve the plugin again")]
    Missing {
        /// The snapshot.
        id: Digest,
        /// The store's folder.
        store: PathBuf,
    },
    /// A file of a snapshot (in its tree, or brought from another store) is not what its
    /// manifest says: changed, swapped or unreadable. It is never run.
    #[error("`{path}` is not the file its snapshot's manifest names ({reason}); approve again")]
    Corrupt {
        /// The file.
        path: String,
        /// What differs.
        reason: String,
    },
    /// Another failure reading the folder being snapshotted.
    #[error("`{path}`: {error}")]
    Io {
        /// The path.
        path: String,
        /// The system's error.
        error: std::io::Error,
    },
}

/// Why a root or one of its files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RootProblem {
    /// Core's reader refused it.
    #[error("{0}")]
    Read(hookbox_core::files::ReadErrorKind),
    /// A symbolic link (or a file) where a folder of the path should be.
    #[error("a symbolic link or a file on the way; snapshots never follow a link")]
    Link,
    /// Not a regular file.
    #[error("not a regular file")]
    NotAFile,
    /// Another failure of the system.
    #[error("{0}")]
    Os(Errno),
}

fn largest_list(largest: &[(String, u64)]) -> String {
    largest
        .iter()
        .map(|(p, s)| format!("{p} ({s} bytes)"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The largest of `sizes` (size, path), for a refusal.
pub(super) fn largest(sizes: &mut [(u64, String)]) -> Vec<(String, u64)> {
    sizes.sort_by(|a, b| b.cmp(a));
    sizes
        .iter()
        .take(LARGEST_NAMED)
        .map(|(s, p)| (p.clone(), *s))
        .collect()
}
