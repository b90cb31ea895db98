//! The folder control store's snapshots (issue 27 item 6): what a tenant's approved sets name,
//! for replicas that did not load those files themselves.
//!
//! ```text
//! control/
//!   .snapshots/            0700 (a tenant id never starts with a dot)
//!     manifests/<id>.json  0600: a snapshot's manifest, named by its id (its digest)
//!     objects/<sha256>     0600: one file's bytes, named by their SHA-256
//! ```
//!
//! Everything is content-addressed and written once: a fresh temporary file (`O_EXCL`),
//! synced, then hard-linked to its name (`link` fails on a name that exists, atomic on NFS), so
//! a reader sees whole files only. Nothing here is trusted: the reader checks a manifest
//! against its id and every object against the manifest's size and digest
//! ([`SnapshotStore::import`](crate::trust::SnapshotStore::import)).

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use hookbox_core::files::{CheckedFile, open_beneath_dir};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{ControlError, FolderControl, check_private};
use crate::trust::private_file::write_temp;

/// The snapshots' folder in the control folder.
const SNAPSHOTS: &str = ".snapshots";
/// Manifests, by id.
pub(super) const MANIFESTS: &str = "manifests";
/// Objects, by SHA-256.
pub(super) const OBJECTS: &str = "objects";

impl FolderControl {
    /// `.snapshots/<sub>`, each folder private and ours; with `create`, made `0700` when
    /// missing, else `None`.
    fn snapshot_dir(&self, sub: &str, create: bool) -> Result<Option<OwnedFd>, ControlError> {
        let mut dir: Option<OwnedFd> = None;
        for name in [SNAPSHOTS, sub] {
            let at = dir.as_ref().map_or(self.dir.as_fd(), |d| d.as_fd());
            if create {
                match rustix::fs::mkdirat(at, name, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => {
                        return Err(self.snapshot_error(sub, format!("cannot create it: {e}")));
                    }
                }
            }
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match rustix::fs::openat(at, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => return Ok(None),
                Err(e) => return Err(self.snapshot_error(sub, format!("cannot open it: {e}"))),
            };
            check_private(&fd).map_err(|r| self.snapshot_error(sub, r))?;
            dir = Some(fd);
        }
        Ok(dir)
    }

    pub(super) fn snapshot_place(&self, sub: &str, name: &str) -> String {
        self.path
            .join(SNAPSHOTS)
            .join(sub)
            .join(name)
            .display()
            .to_string()
    }

    fn snapshot_error(&self, sub: &str, reason: String) -> ControlError {
        ControlError::Unusable {
            place: self.path.join(SNAPSHOTS).join(sub).display().to_string(),
            reason,
        }
    }

    /// Writes `bytes` as `sub/name` unless that name exists (content-addressed: the same name
    /// is the same content, and a reader checks it).
    pub(super) fn put_snapshot_file(
        &self,
        sub: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<(), ControlError> {
        let Some(dir) = self.snapshot_dir(sub, true)? else {
            return Err(self.snapshot_error(sub, "it vanished while being created".into()));
        };
        if rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            return Ok(());
        }
        let fail = |what: &str, e: &dyn std::fmt::Display| ControlError::Unusable {
            place: self.snapshot_place(sub, name),
            reason: format!("{what}: {e}"),
        };
        let temp =
            write_temp(dir.as_fd(), name, bytes, 0o600).map_err(|(what, e)| fail(what, &e))?;
        match rustix::fs::linkat(&dir, temp.name.as_str(), &dir, name, AtFlags::empty()) {
            // Another replica stored the same content first.
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(fail("cannot link the temporary file to its name", &e)),
        }
        drop(temp);
        rustix::fs::fsync(&dir).map_err(|e| fail("cannot sync the folder", &e))
    }

    /// The size of `sub/name`, if it is a regular file.
    pub(super) fn snapshot_file_size(&self, sub: &str, name: &str) -> Option<u64> {
        let dir = self.snapshot_dir(sub, false).ok()??;
        let st = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile)
            .then(|| u64::try_from(st.st_size).ok())
            .flatten()
    }

    /// Reads `sub/name` (at most `max` bytes; a regular file of ours that others cannot write,
    /// opened beneath its folder without following a link); `None` when it is not there.
    pub(super) fn read_snapshot_file(
        &self,
        sub: &str,
        name: &str,
        max: u64,
    ) -> Result<Option<Vec<u8>>, ControlError> {
        let Some(dir) = self.snapshot_dir(sub, false)? else {
            return Ok(None);
        };
        let place = self.snapshot_place(sub, name);
        let fail = |reason: String| ControlError::Unusable {
            place: place.clone(),
            reason,
        };
        let shown = Path::new(&place);
        let file = match open_beneath_dir(&dir, Path::new(name), shown) {
            Ok(f) => f,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(fail(e.kind.to_string())),
        };
        let checked = CheckedFile::new(file, shown, max).map_err(|e| fail(e.kind.to_string()))?;
        let st = checked.metadata();
        let me = rustix::process::geteuid().as_raw();
        if st.uid() != me || st.mode() & 0o077 != 0 {
            return Err(fail(format!(
                "not a private file of ours (owner {}, mode {:o})",
                st.uid(),
                st.mode() & 0o777
            )));
        }
        checked
            .read()
            .map(Some)
            .map_err(|e| fail(e.kind.to_string()))
    }
}
