//! What an approval snapshots: the list of every file, folder and symbolic link of the folders a
//! subject runs from (a plugin folder; for a settings file, the hook folders its commands name),
//! with each file's digest, size and whether it is executable — a *manifest*. The manifest is
//! content-addressed: its [`SnapshotManifest::id`] is the SHA-256 of its canonical JSON, so the
//! same files always make the same snapshot and a snapshot is never changed, only replaced.
//!
//! The host copies the files into a read-only store (`hookbox-host`'s trust module) and runs
//! approved hooks from that copy; this module is the pure model: the manifest, its bounds, its
//! id, reading it back, and comparing it with the folders as they are now.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::digest::{Digest, digest_of};
use crate::record::MAX_FIELD_BYTES;
use crate::resolve::Base;

/// The version of the manifest format written by this build.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The domain tag of manifest ids.
const SNAPSHOT_DOMAIN: &str = "hookbox-trust-snapshot-v1";

/// Most entries (files, folders, links) one manifest may list: far above a hook plugin, below
/// what would make a manifest too large to read (`MAX_MANIFEST_BYTES`).
pub const MAX_SNAPSHOT_ENTRIES: usize = 100_000;

/// Most roots (folders or single files) one snapshot may hold.
pub const MAX_SNAPSHOT_ROOTS: usize = 64;

/// Largest manifest read back, in bytes.
pub const MAX_MANIFEST_BYTES: u64 = 32 << 20;

/// What one entry of a snapshot is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryKind {
    /// A folder (stored `0500`).
    Folder,
    /// A regular file (stored `0500` when any execute bit was set, else `0400`).
    File {
        /// SHA-256 of its bytes.
        sha256: Digest,
        /// Its size in bytes.
        size: u64,
        /// Whether it may be executed.
        executable: bool,
    },
    /// A symbolic link, recorded as what it is: its target text, never followed.
    Symlink {
        /// The target as written in the link.
        target: String,
    },
}

/// One entry of a root, by its path beneath the root (`/`-separated; empty for a root that is a
/// single file, or for the root folder itself, which is not listed).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SnapshotEntry {
    /// Beneath the root: normalised, `/`-separated, no `.` or `..`.
    pub path: String,
    /// What it is.
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// A folder (or a single file) a snapshot holds, and where it lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRoot {
    /// The folder `path` is relative to.
    pub base: Base,
    /// Beneath `base` (empty: `base` itself, as for a plugin folder).
    pub path: String,
    /// Whether the root is one file rather than a folder.
    pub single_file: bool,
    /// Its entries, sorted by path (for a single file: one entry with an empty path).
    pub entries: Vec<SnapshotEntry>,
}

impl SnapshotRoot {
    /// The root as written in messages (`${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PROJECT_DIR}/.claude/hooks`).
    pub fn shown(&self) -> String {
        let prefix = self.base.prefix().trim_end_matches('/');
        if self.path.is_empty() {
            prefix.to_owned()
        } else {
            format!("{prefix}/{}", self.path)
        }
    }

    /// The path of `entry` beneath the root's base (`hooks/a.sh` for the plugin root,
    /// `.claude/hooks/a.sh` for a project hook folder).
    pub fn base_path(&self, entry: &str) -> String {
        match (self.path.is_empty(), entry.is_empty()) {
            (true, _) => entry.to_owned(),
            (false, true) => self.path.clone(),
            (false, false) => format!("{}/{entry}", self.path),
        }
    }
}

/// Every file, folder and link of an approved subject's roots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotManifest {
    /// [`SNAPSHOT_VERSION`].
    pub version: u32,
    /// The roots, in the order they were taken.
    pub roots: Vec<SnapshotRoot>,
}

/// A reference to a snapshot, as an approval keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SnapshotRef {
    /// The manifest's id.
    pub id: Digest,
    /// Regular files in it.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Why a manifest read back was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// Not JSON of the manifest's shape.
    #[error("not a snapshot manifest: {0}")]
    Shape(String),
    /// Written by another version of hookbox.
    #[error("snapshot manifest version {found}; this hookbox reads version {SNAPSHOT_VERSION}")]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// A bound is exceeded.
    #[error("{what}: {found}, over the limit of {max}")]
    TooMany {
        /// Which count.
        what: &'static str,
        /// What the manifest has.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// A path that is not normalised, leaves its root, repeats, or sits below a file.
    #[error("entry `{path}`: {why}")]
    BadPath {
        /// The path (cut for the message).
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The manifest is not the one its name says (edited, or another's).
    #[error("its id is {found}, not {expected} (the manifest was changed after it was written)")]
    WrongId {
        /// The id asked for.
        expected: Digest,
        /// The id of the text read.
        found: Digest,
    },
}

impl SnapshotManifest {
    /// Its id: the digest of its canonical JSON.
    pub fn id(&self) -> Digest {
        // A manifest is plain data: it always converts to JSON.
        let value = serde_json::to_value(self).unwrap_or_else(|_| json!(null));
        digest_of(SNAPSHOT_DOMAIN, &value)
    }

    /// The reference an approval keeps.
    pub fn reference(&self) -> SnapshotRef {
        let (files, bytes) = self.totals();
        SnapshotRef {
            id: self.id(),
            files,
            bytes,
        }
    }

    /// Regular files and their bytes.
    pub fn totals(&self) -> (u64, u64) {
        let mut files = 0u64;
        let mut bytes = 0u64;
        for e in self.roots.iter().flat_map(|r| &r.entries) {
            if let EntryKind::File { size, .. } = e.kind {
                files += 1;
                bytes = bytes.saturating_add(size);
            }
        }
        (files, bytes)
    }

    /// The manifest as stored.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the manifest stored as `expected`: its shape, version, bounds, paths and id.
    pub fn parse(text: &str, expected: Digest) -> Result<SnapshotManifest, ManifestError> {
        let m: SnapshotManifest =
            serde_json::from_str(text).map_err(|e| ManifestError::Shape(e.to_string()))?;
        if m.version != SNAPSHOT_VERSION {
            return Err(ManifestError::Version { found: m.version });
        }
        m.check()?;
        let found = m.id();
        if found != expected {
            return Err(ManifestError::WrongId { expected, found });
        }
        Ok(m)
    }

    /// Checks bounds and paths: every path normalised and unique in its root, every parent
    /// listed as a folder, no root repeated.
    pub fn check(&self) -> Result<(), ManifestError> {
        let too_many = |what, found: usize, max| {
            if found > max {
                Err(ManifestError::TooMany { what, found, max })
            } else {
                Ok(())
            }
        };
        too_many("roots", self.roots.len(), MAX_SNAPSHOT_ROOTS)?;
        let entries: usize = self.roots.iter().map(|r| r.entries.len()).sum();
        too_many("entries", entries, MAX_SNAPSHOT_ENTRIES)?;
        let mut seen_roots = std::collections::HashSet::new();
        for root in &self.roots {
            check_path(&root.path, true)?;
            if !seen_roots.insert((root.base, root.path.clone())) {
                return Err(bad(&root.path, "a root listed twice"));
            }
            if root.single_file {
                match root.entries.as_slice() {
                    [e] if e.path.is_empty() && matches!(e.kind, EntryKind::File { .. }) => {}
                    _ => return Err(bad(&root.path, "a single-file root holds one file")),
                }
                continue;
            }
            let mut kinds: BTreeMap<&str, &EntryKind> = BTreeMap::new();
            for e in &root.entries {
                check_path(&e.path, false)?;
                if let EntryKind::Symlink { target } = &e.kind
                    && (target.is_empty()
                        || target.len() > MAX_FIELD_BYTES
                        || target.contains('\0'))
                {
                    return Err(bad(
                        &e.path,
                        "a link target that is empty, too long or has a NUL",
                    ));
                }
                if kinds.insert(&e.path, &e.kind).is_some() {
                    return Err(bad(&e.path, "listed twice"));
                }
            }
            for e in &root.entries {
                if let Some((parent, _)) = e.path.rsplit_once('/')
                    && !matches!(kinds.get(parent), Some(EntryKind::Folder))
                {
                    return Err(bad(&e.path, "its folder is not listed as a folder"));
                }
            }
        }
        Ok(())
    }

    /// The entry at `path` beneath `base` (a file a rule runs), and its root.
    pub fn find(&self, base: Base, path: &str) -> Option<(&SnapshotRoot, &SnapshotEntry)> {
        self.roots.iter().filter(|r| r.base == base).find_map(|r| {
            let rel = if r.path.is_empty() {
                path
            } else if r.single_file {
                (path == r.path).then_some("")?
            } else {
                path.strip_prefix(&r.path)?.strip_prefix('/')?
            };
            r.entries.iter().find(|e| e.path == rel).map(|e| (r, e))
        })
    }

    /// The root that holds `path` beneath `base` (whether or not the file exists in it).
    pub fn root_of(&self, base: Base, path: &str) -> Option<&SnapshotRoot> {
        self.roots.iter().filter(|r| r.base == base).find(|r| {
            r.path.is_empty()
                || (r.single_file && path == r.path)
                || (!r.single_file
                    && path
                        .strip_prefix(&r.path)
                        .is_some_and(|rest| rest.starts_with('/')))
        })
    }
}

fn bad(path: &str, why: &'static str) -> ManifestError {
    ManifestError::BadPath {
        path: path.chars().take(200).collect(),
        why,
    }
}

fn check_path(path: &str, may_be_empty: bool) -> Result<(), ManifestError> {
    if path.len() > MAX_FIELD_BYTES {
        return Err(bad(path, "longer than a field may be"));
    }
    if path.is_empty() {
        return if may_be_empty {
            Ok(())
        } else {
            Err(bad(path, "an empty path in a folder root"))
        };
    }
    if path.starts_with('/')
        || path.contains('\0')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(bad(path, "not a normalised relative path"));
    }
    Ok(())
}

/// How an entry of the live folder differs from the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LiveChange {
    /// In the snapshot, not in the folder.
    Removed,
    /// In the folder, not in the snapshot.
    Added,
    /// Another kind, other bytes, another executable bit, another link target.
    Changed,
}

impl fmt::Display for LiveChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LiveChange::Removed => "removed",
            LiveChange::Added => "added",
            LiveChange::Changed => "changed",
        })
    }
}

/// The differences between a root as snapshotted and its entries as they are now, by path
/// (`now` sorted or not; the result is sorted).
pub fn compare_root(snapshot: &SnapshotRoot, now: &[SnapshotEntry]) -> Vec<(String, LiveChange)> {
    let old: BTreeMap<&str, &EntryKind> = snapshot
        .entries
        .iter()
        .map(|e| (e.path.as_str(), &e.kind))
        .collect();
    let new: BTreeMap<&str, &EntryKind> = now.iter().map(|e| (e.path.as_str(), &e.kind)).collect();
    let mut out = Vec::new();
    for (path, kind) in &old {
        match new.get(path) {
            None => out.push((snapshot.base_path(path), LiveChange::Removed)),
            Some(k) if k != kind => out.push((snapshot.base_path(path), LiveChange::Changed)),
            Some(_) => {}
        }
    }
    for path in new.keys().filter(|p| !old.contains_key(*p)) {
        out.push((snapshot.base_path(path), LiveChange::Added));
    }
    out.sort();
    out
}
