//! The control store as a folder on shared storage (the default backend): one private folder
//! per tenant, one file per generation.
//!
//! ```text
//! control/                 0700, ours; never inside the tenants or state folders
//!   acme/                  0700
//!     g00000000000000000007.json   0600: generation 7
//!     g00000000000000000008.json
//! ```
//!
//! The protocol holds on NFS, which has no reliable `flock` and no `rename` that refuses to
//! replace: a record is written whole to a fresh temporary file (`O_EXCL`, `0600`) and synced,
//! then **hard-linked** to its generation's name. `link` is atomic on every NFS version and
//! fails when the name exists, so of two replicas writing the same generation exactly one
//! wins; a lost reply to a retried `link` is told apart by the temporary file's link count (2:
//! it was made), as `open(2)` advises for NFS. Readers therefore only ever see whole files.
//! The temporary name is then removed and the folder synced. Generations more than
//! [`KEEP_GENERATIONS`] below the newest are removed by the writer.
//!
//! Reads are bounded: at most [`MAX_CONTROL_ENTRIES`] names in a tenant's folder and
//! [`MAX_CONTROL_BYTES`] per record, each opened beneath the folder's handle without following
//! symlinks or blocking, a regular file of ours that others cannot write. The newest record
//! that reads and parses wins; one that does not (a half-written file copied in by hand, a
//! planted one) is logged and skipped, never taken for another generation.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use hookbox_core::files::{CheckedFile, open_beneath_dir};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

mod snapshots;

use super::{ControlError, ControlRead, ControlRecord, ControlStore};
use crate::tenant_id::TenantId;
use crate::trust::private_file::write_temp;

/// Largest control record read: an approved set of thousands of rules is a few MiB.
pub const MAX_CONTROL_BYTES: u64 = 16 << 20;

/// Most names a tenant's control folder may hold (generations, temporary files) before a read
/// refuses it.
pub const MAX_CONTROL_ENTRIES: usize = 256;

/// Generations kept below the newest (a replica reading one just replaced still finds it).
pub const KEEP_GENERATIONS: u64 = 8;

/// A control store in a folder (see the module doc).
#[derive(Debug)]
pub struct FolderControl {
    dir: OwnedFd,
    path: PathBuf,
}

impl FolderControl {
    /// Opens the control folder at `path`, creating it (and missing parents) `0700`. Refused if
    /// it is a symbolic link, not ours, or others may read or write it.
    pub fn open(path: &Path) -> Result<FolderControl, ControlError> {
        use std::os::unix::fs::DirBuilderExt;
        let fail = |reason: String| ControlError::Unusable {
            place: path.display().to_string(),
            reason,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(|e| fail(format!("cannot create it: {e}")))?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => {
                fail("it is not a real folder (a symbolic link, or a file)".into())
            }
            e => fail(format!("cannot open it: {e}")),
        })?;
        check_private(&dir).map_err(fail)?;
        Ok(FolderControl {
            dir,
            path: path.to_owned(),
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn unusable(&self, tenant: &TenantId, reason: String) -> ControlError {
        ControlError::Unusable {
            place: self.path.join(tenant.as_str()).display().to_string(),
            reason,
        }
    }

    /// The tenant's folder, `None` when nothing was written for it yet.
    fn tenant_dir(&self, tenant: &TenantId, create: bool) -> Result<Option<OwnedFd>, ControlError> {
        // Ids are `[A-Za-z0-9_-]{1,64}` (TenantId): one plain name beneath the folder.
        if create {
            match rustix::fs::mkdirat(&self.dir, tenant.as_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(self.unusable(tenant, format!("cannot create it: {e}"))),
            }
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.dir, tenant.as_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.unusable(tenant, format!("cannot open it: {e}"))),
        };
        check_private(&fd).map_err(|r| self.unusable(tenant, r))?;
        Ok(Some(fd))
    }

    /// The generations named in the tenant's folder, newest first.
    fn generations(&self, tenant: &TenantId, dir: &OwnedFd) -> Result<Vec<u64>, ControlError> {
        let fail = |e: Errno| self.unusable(tenant, format!("cannot list it: {e}"));
        let dup = rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(fail)?;
        let listing = rustix::fs::Dir::read_from(dup).map_err(fail)?;
        let mut generations = Vec::new();
        let mut seen = 0usize;
        for entry in listing {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name().to_string_lossy();
            if name == "." || name == ".." {
                continue;
            }
            seen += 1;
            if seen > MAX_CONTROL_ENTRIES {
                return Err(self.unusable(
                    tenant,
                    format!(
                        "it holds more than {MAX_CONTROL_ENTRIES} entries; remove the stray files"
                    ),
                ));
            }
            if let Some(g) = generation_of(&name) {
                generations.push(g);
            }
        }
        generations.sort_unstable_by(|a, b| b.cmp(a));
        Ok(generations)
    }

    fn read_one(
        &self,
        tenant: &TenantId,
        dir: &OwnedFd,
        generation: u64,
    ) -> Result<Option<ControlRecord>, String> {
        let name = file_name(generation);
        let shown = self.path.join(tenant.as_str()).join(&name);
        let file = match open_beneath_dir(dir, Path::new(&name), &shown) {
            Ok(f) => f,
            // Removed by a writer's pruning since the listing.
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e.kind.to_string()),
        };
        let checked =
            CheckedFile::new(file, &shown, MAX_CONTROL_BYTES).map_err(|e| e.kind.to_string())?;
        let st = checked.metadata();
        let me = rustix::process::geteuid().as_raw();
        if st.uid() != me {
            return Err(format!("it belongs to user {}, not to us ({me})", st.uid()));
        }
        if st.mode() & 0o077 != 0 {
            return Err(format!(
                "others may read or write it (mode {:o})",
                st.mode() & 0o777
            ));
        }
        let text = checked.read_text().map_err(|e| e.kind.to_string())?;
        let record = ControlRecord::parse(&text, tenant)?;
        if record.generation != generation {
            return Err(format!(
                "it says generation {}, its name {generation} (a file copied under another name)",
                record.generation
            ));
        }
        Ok(Some(record))
    }

    /// Removes generations more than [`KEEP_GENERATIONS`] below `newest`. Best effort: a
    /// failure leaves files a later write removes.
    fn prune(&self, dir: &OwnedFd, tenant: &TenantId, newest: u64) {
        let Ok(generations) = self.generations(tenant, dir) else {
            return;
        };
        for g in generations {
            if g + KEEP_GENERATIONS < newest {
                let _ = rustix::fs::unlinkat(dir, file_name(g), AtFlags::empty());
            }
        }
    }
}

impl ControlStore for FolderControl {
    fn read(&self, tenant: &TenantId) -> Result<ControlRead, ControlError> {
        let empty = ControlRead {
            record: ControlRecord::empty(tenant),
            latest: 0,
        };
        let Some(dir) = self.tenant_dir(tenant, false)? else {
            return Ok(empty);
        };
        let generations = self.generations(tenant, &dir)?;
        let latest = generations.first().copied().unwrap_or(0);
        for g in generations {
            match self.read_one(tenant, &dir, g) {
                Ok(Some(record)) => return Ok(ControlRead { record, latest }),
                Ok(None) => {}
                Err(reason) => tracing::error!(
                    tenant = %tenant,
                    file = %self.path.join(tenant.as_str()).join(file_name(g)).display(),
                    error = %reason,
                    "control record unreadable; skipped (the newest readable one is used, and the next write supersedes it)"
                ),
            }
        }
        Ok(ControlRead { latest, ..empty })
    }

    fn write(&self, record: &ControlRecord) -> Result<(), ControlError> {
        let tenant = TenantId::new(&record.tenant).map_err(|e| ControlError::Unusable {
            place: self.path.display().to_string(),
            reason: format!("a record of an invalid tenant id: {e}"),
        })?;
        let Some(dir) = self.tenant_dir(&tenant, true)? else {
            return Err(self.unusable(&tenant, "it vanished while being created".into()));
        };
        let name = file_name(record.generation);
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            self.unusable(&tenant, format!("{name}: {what}: {e}"))
        };
        let temp = write_temp(dir.as_fd(), &name, record.to_json().as_bytes(), 0o600)
            .map_err(|(what, e)| fail(what, &e))?;
        let linked = rustix::fs::linkat(&dir, temp.name.as_str(), &dir, &name, AtFlags::empty());
        // NFS: a retried `link` whose first reply was lost answers EEXIST although it made the
        // link; the temporary file's link count says what happened.
        let made = rustix::fs::fstat(temp.file.as_fd()).is_ok_and(|st| st.st_nlink == 2);
        match linked {
            _ if made => {}
            Err(Errno::EXIST) => {
                return Err(ControlError::Conflict {
                    tenant: tenant.clone(),
                    generation: record.generation,
                });
            }
            Err(e) => return Err(fail("cannot link the temporary file to its name", &e)),
            Ok(()) => {}
        }
        drop(temp);
        rustix::fs::fsync(&dir).map_err(|e| fail("cannot sync the folder", &e))?;
        self.prune(&dir, &tenant, record.generation);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("folder {}", self.path.display())
    }

    fn local_path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn put_snapshot_manifest(
        &self,
        id: hookbox_trust::Digest,
        text: &str,
    ) -> Result<(), ControlError> {
        self.put_snapshot_file(snapshots::MANIFESTS, &format!("{id}.json"), text.as_bytes())
    }

    fn put_snapshot_object(
        &self,
        sha256: hookbox_trust::Digest,
        bytes: &[u8],
    ) -> Result<(), ControlError> {
        self.put_snapshot_file(snapshots::OBJECTS, &sha256.to_string(), bytes)
    }

    fn has_snapshot_object(&self, sha256: hookbox_trust::Digest, size: u64) -> bool {
        self.snapshot_file_size(snapshots::OBJECTS, &sha256.to_string()) == Some(size)
    }

    fn snapshot_manifest(&self, id: hookbox_trust::Digest) -> Result<Option<String>, ControlError> {
        let name = format!("{id}.json");
        let Some(bytes) = self.read_snapshot_file(
            snapshots::MANIFESTS,
            &name,
            hookbox_trust::MAX_MANIFEST_BYTES,
        )?
        else {
            return Ok(None);
        };
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ControlError::Unusable {
                place: self.snapshot_place(snapshots::MANIFESTS, &name),
                reason: "not UTF-8".into(),
            })
    }

    fn snapshot_object(
        &self,
        sha256: hookbox_trust::Digest,
        size: u64,
    ) -> Result<Vec<u8>, ControlError> {
        let name = sha256.to_string();
        self.read_snapshot_file(snapshots::OBJECTS, &name, size)?
            .ok_or_else(|| ControlError::Unusable {
                place: self.snapshot_place(snapshots::OBJECTS, &name),
                reason: "missing".into(),
            })
    }
}

/// A generation's file name.
fn file_name(generation: u64) -> String {
    format!("g{generation:020}.json")
}

/// The generation a file name names, if it is one.
fn generation_of(name: &str) -> Option<u64> {
    let digits = name.strip_prefix('g')?.strip_suffix(".json")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A folder of ours that nobody else may read or write: the control store holds what every
/// replica serves.
fn check_private(dir: &OwnedFd) -> Result<(), String> {
    let st = rustix::fs::fstat(dir).map_err(|e| e.to_string())?;
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me {
        return Err(format!(
            "it belongs to user {}, not to this user ({me}); the control store is read only from a folder of ours",
            st.st_uid
        ));
    }
    if st.st_mode & 0o077 != 0 {
        return Err(format!(
            "others may read or write it (mode {:o}); the control store is private: chmod 700 it",
            st.st_mode & 0o777
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenant_control::update;

    fn id() -> TenantId {
        TenantId::new("acme").unwrap()
    }

    fn mode_of(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    /// Records are written by generation, private, and read back newest first; a write of a
    /// generation another replica wrote first is a conflict, and [`update`] then reads again
    /// and writes the next one.
    #[test]
    fn generations_are_written_once_each_and_read_newest_first() {
        let t = tempfile::tempdir().unwrap();
        let store = FolderControl::open(&t.path().join("control")).unwrap();
        let empty = store.read(&id()).unwrap();
        assert_eq!((empty.latest, empty.record.generation), (0, 0));
        let mut r = ControlRecord::empty(&id());
        r.generation = 1;
        store.write(&r).unwrap();
        let e = store.write(&r).unwrap_err();
        assert!(
            matches!(e, ControlError::Conflict { generation: 1, .. }),
            "{e}"
        );
        let file = t.path().join("control/acme").join(file_name(1));
        assert_eq!(mode_of(&file), 0o600);
        assert_eq!(mode_of(&t.path().join("control/acme")), 0o700);
        let written = update::<ControlError>(&store, &id(), 5, |r| {
            r.rejected = Some(hookbox_trust::Digest::of(b"x"));
            Ok(true)
        })
        .unwrap();
        assert_eq!(written.generation, 2);
        assert_eq!(store.read(&id()).unwrap().record, written);
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(t.path().join("control/acme"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    }

    /// Issue 29: a half-written (or planted) newest record is skipped, never taken for a
    /// generation: the newest readable one is read, and the next write goes above the damaged
    /// one instead of fighting over its name. Old generations are pruned.
    #[test]
    fn a_half_written_record_is_skipped_and_superseded() {
        let t = tempfile::tempdir().unwrap();
        let store = FolderControl::open(&t.path().join("control")).unwrap();
        let mut r = ControlRecord::empty(&id());
        r.generation = 1;
        r.rejected = Some(hookbox_trust::Digest::of(b"good"));
        store.write(&r).unwrap();
        let half = &r.to_json()[..40];
        let bad = t.path().join("control/acme").join(file_name(2));
        std::fs::write(&bad, half).unwrap();
        std::fs::set_permissions(&bad, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let read = store.read(&id()).unwrap();
        assert_eq!(read.record, r);
        assert_eq!(read.latest, 2);
        let next = update::<ControlError>(&store, &id(), 0, |r| {
            r.rejected = None;
            Ok(true)
        })
        .unwrap();
        assert_eq!(next.generation, 3);
        for _ in 0..KEEP_GENERATIONS + 2 {
            update::<ControlError>(&store, &id(), 0, |_| Ok(true)).unwrap();
        }
        assert!(!bad.exists(), "old generations are pruned");
    }

    /// The folder must be private: one others can read or write is refused, naming the fix;
    /// so is a symlink in its place.
    #[test]
    fn a_shared_or_linked_control_folder_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("control");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o770))
            .unwrap();
        let e = FolderControl::open(&dir).unwrap_err().to_string();
        assert!(e.contains("chmod 700"), "{e}");
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let e = FolderControl::open(&link).unwrap_err().to_string();
        assert!(e.contains("not a real folder"), "{e}");
    }
}
