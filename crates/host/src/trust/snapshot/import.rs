//! A snapshot that comes from elsewhere, and one read back before it serves (issue 27 item 6):
//! [`SnapshotStore::import`] stores a snapshot whose manifest and file bytes another store
//! holds (the control store replicas share), checking every file's size and SHA-256 against
//! the manifest — whose id is its digest — before it is stored, so bytes another writer
//! swapped are refused, never run; [`SnapshotStore::verify`] reads a tree of this store back
//! against its manifest, for a tree about to serve that nothing has checked since it was made.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

use hookbox_core::files::{CheckedFile, open_beneath_dir};
use hookbox_trust::{Digest, EntryKind, SnapshotManifest, SnapshotRoot};
use rustix::io::Errno;

use super::{
    MANIFESTS, OBJECTS, Snapshot, SnapshotError, SnapshotLimits, SnapshotStore, TEMP_COUNTER,
    TREES, base_folder, put_object, store_error, tree, write_private,
};

/// Each regular file of `manifest`: its path in a tree, its digest, size and execute bit.
fn files(manifest: &SnapshotManifest) -> Vec<(String, Digest, u64, bool)> {
    let mut out = Vec::new();
    for root in &manifest.roots {
        for e in &root.entries {
            if let EntryKind::File {
                sha256,
                size,
                executable,
            } = e.kind
            {
                out.push((tree_path(root, &e.path), sha256, size, executable));
            }
        }
    }
    out
}

/// Where an entry of `root` is in a tree (`plugin/hooks/g.sh`).
fn tree_path(root: &SnapshotRoot, entry: &str) -> String {
    let mut p = base_folder(root.base).to_owned();
    for part in [
        root.path.as_str(),
        if root.single_file { "" } else { entry },
    ] {
        if !part.is_empty() {
            p.push('/');
            p.push_str(part);
        }
    }
    p
}

impl SnapshotStore {
    /// Reads every file of `snapshot`'s tree back (beneath the tree, no link followed, each
    /// within `limits`) and checks its size and SHA-256 against the manifest.
    ///
    /// # Errors
    /// [`SnapshotError::Corrupt`] naming the first file that differs or cannot be read.
    pub fn verify(
        &self,
        snapshot: &Snapshot,
        limits: &SnapshotLimits,
    ) -> Result<(), SnapshotError> {
        self.read_back(snapshot, limits, |_, _| true, |_, _| Ok(()))
    }

    /// Reads back each file of `snapshot`'s tree that `wanted` (by digest and size) asks for,
    /// checks it against the manifest and hands its bytes to `each` (to publish them elsewhere:
    /// never a copy that differs from what was approved).
    ///
    /// # Errors
    /// [`SnapshotError::Corrupt`] naming the first file that differs or cannot be read, or
    /// whose bytes `each` could not take.
    pub fn read_back(
        &self,
        snapshot: &Snapshot,
        limits: &SnapshotLimits,
        wanted: impl Fn(Digest, u64) -> bool,
        mut each: impl FnMut(Digest, &[u8]) -> Result<(), String>,
    ) -> Result<(), SnapshotError> {
        let name = snapshot.id.to_string();
        let trees = self.required(TREES)?;
        let dir = tree::open_folder(trees.as_fd(), &name)
            .map_err(store_error(self.path.join(TREES).join(&name)))?;
        for (path, sha256, size, _) in files(&snapshot.manifest) {
            if !wanted(sha256, size) {
                continue;
            }
            let shown = snapshot.tree.join(&path);
            let corrupt = |reason: String| SnapshotError::Corrupt {
                path: shown.display().to_string(),
                reason,
            };
            let file = open_beneath_dir(dir.as_fd(), Path::new(&path), &shown)
                .map_err(|e| corrupt(e.kind.to_string()))?;
            // One byte past its size is read: a file that grew is told apart.
            let bytes = CheckedFile::new(file, &shown, limits.max_file_bytes.min(size + 1))
                .and_then(|c| c.read())
                .map_err(|e| corrupt(e.kind.to_string()))?;
            check(&bytes, sha256, size).map_err(corrupt)?;
            each(sha256, &bytes).map_err(corrupt)?;
        }
        Ok(())
    }

    /// Stores the snapshot `id` whose manifest is `text` (its id checked), each file's bytes
    /// got from `fetch` (by digest and size) and checked against the manifest before anything
    /// is stored; then builds its tree. A snapshot already here is opened as it is.
    ///
    /// # Errors
    /// A manifest that is not `id`'s or over `limits`; [`SnapshotError::Corrupt`] for bytes
    /// that `fetch` could not get or that are not the manifest's; a store that cannot be
    /// written.
    pub fn import(
        &self,
        text: &str,
        id: Digest,
        limits: &SnapshotLimits,
        mut fetch: impl FnMut(Digest, u64) -> Result<Vec<u8>, String>,
    ) -> Result<Snapshot, SnapshotError> {
        if let Ok(s) = self.open(id) {
            return Ok(s);
        }
        let file = format!("{id}.json");
        let manifest =
            SnapshotManifest::parse(text, id).map_err(|source| SnapshotError::Manifest {
                path: self.path.join(MANIFESTS).join(&file),
                source,
            })?;
        let wanted = files(&manifest);
        let mut sizes: Vec<(u64, String)> =
            wanted.iter().map(|(p, _, s, _)| (*s, p.clone())).collect();
        limits.check(&mut sizes)?;
        let _lock = self.lock()?;
        let objects = self.required(OBJECTS)?;
        for (path, sha256, size, executable) in &wanted {
            let corrupt = |reason: String| SnapshotError::Corrupt {
                path: format!("{path} (object {sha256})"),
                reason,
            };
            let bytes = fetch(*sha256, *size).map_err(corrupt)?;
            check(&bytes, *sha256, *size).map_err(corrupt)?;
            put_object(objects.as_fd(), &bytes, *sha256, *executable)
                .map_err(store_error(self.path.join(OBJECTS)))?;
        }
        rustix::fs::fsync(&objects).map_err(store_error(self.path.join(OBJECTS)))?;
        let name = id.to_string();
        let trees = self.required(TREES)?;
        match tree::open_folder(trees.as_fd(), &name) {
            Ok(_) => {}
            Err(Errno::NOENT) => {
                let tmp = format!(
                    ".{name}.{}.{}.tmp",
                    std::process::id(),
                    TEMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                );
                tree::build(trees.as_fd(), objects.as_fd(), &tmp, &name, &manifest)
                    .map_err(store_error(self.path.join(TREES).join(&name)))?;
            }
            Err(e) => return Err(store_error(self.path.join(TREES).join(&name))(e)),
        }
        let manifests = self.required(MANIFESTS)?;
        write_private(
            manifests.as_fd(),
            &self.path.join(MANIFESTS),
            &file,
            manifest.to_json().as_bytes(),
        )
        .map_err(|problem| SnapshotError::File {
            path: self.path.join(MANIFESTS).join(&file),
            problem,
        })?;
        Ok(Snapshot {
            id,
            manifest: Arc::new(manifest),
            tree: self.path.join(TREES).join(&name),
            skipped: Vec::new(),
        })
    }
}

/// Whether `bytes` are the file the manifest names.
fn check(bytes: &[u8], sha256: Digest, size: u64) -> Result<(), String> {
    if bytes.len() as u64 != size {
        return Err(format!(
            "{} bytes where the manifest says {size}",
            bytes.len()
        ));
    }
    let found = Digest::of(bytes);
    if found != sha256 {
        return Err(format!(
            "its SHA-256 is {found}, the manifest says {sha256}"
        ));
    }
    Ok(())
}
