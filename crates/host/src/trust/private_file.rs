//! Reading and writing hookbox's own small files in a private folder of its state (approval
//! records, a tenant's trust record, snapshot manifests): one discipline for all of them.
//!
//! - Written to a fresh temporary file (`O_EXCL`, `0600`, no symlink followed), synced,
//!   renamed over the old file, and the folder synced: a crash leaves the old file or the new
//!   one, never half of one.
//! - Read beneath the folder's handle without following symlinks or blocking, only if it is a
//!   regular file of ours with one link that others cannot write, of at most the caller's
//!   limit (core's reader checks the descriptor it reads, so what is checked is what is read).

use std::io::Write as _;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hookbox_core::files::{CheckedFile, ReadErrorKind, open_beneath_dir};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Why one of hookbox's private files cannot be read, written or removed.
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    /// Core's reader refused it (a symlink, not a regular file, too large, unreadable…).
    #[error("{0}")]
    Read(ReadErrorKind),
    /// Someone else owns it.
    #[error("it belongs to user {owner}, not to us")]
    NotOurs {
        /// Its owner.
        owner: u32,
    },
    /// Another name links to the same file (a planted hard link).
    #[error("it has {links} links; a record is one file of its own")]
    Links {
        /// Its link count.
        links: u64,
    },
    /// Others may write it.
    #[error("others may write it (mode {mode:o})")]
    Writable {
        /// Its permission bits.
        mode: u32,
    },
    /// A name that is not one plain file name of hookbox's choosing.
    #[error("not a plain file name")]
    BadName,
    /// A step of the write failed.
    #[error("{step}: {error}")]
    Write {
        /// Which step.
        step: &'static str,
        /// The system's error.
        error: Errno,
    },
    /// Removing it failed.
    #[error("cannot remove it: {0}")]
    Remove(Errno),
}

/// Reads the file `name` of the folder `dir` (at `dir_path`, for messages) as a private file is
/// read; `None` when there is none.
pub(crate) fn read_private(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &str,
    max: u64,
) -> Result<Option<Vec<u8>>, FileProblem> {
    let path = dir_path.join(name);
    let file = match open_beneath_dir(dir, Path::new(name), &path) {
        Ok(file) => file,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(FileProblem::Read(e.kind)),
    };
    let checked = CheckedFile::new(file, &path, max).map_err(|e| FileProblem::Read(e.kind))?;
    let st = checked.metadata();
    if st.uid() != rustix::process::geteuid().as_raw() {
        return Err(FileProblem::NotOurs { owner: st.uid() });
    }
    if st.nlink() != 1 {
        return Err(FileProblem::Links { links: st.nlink() });
    }
    if st.mode() & 0o022 != 0 {
        return Err(FileProblem::Writable {
            mode: st.mode() & 0o777,
        });
    }
    checked
        .read()
        .map(Some)
        .map_err(|e| FileProblem::Read(e.kind))
}

/// A fresh temporary file in a folder, written and synced, waiting to be put in place under
/// its name (renamed over it, or linked to it). Its temporary name is removed when it is
/// dropped, so a failed or abandoned write leaves nothing behind; after a rename there is
/// nothing left to remove.
pub(crate) struct TempFile<'a> {
    dir: BorrowedFd<'a>,
    /// `.NAME.PID.N.tmp`.
    pub(crate) name: String,
    /// The file, open for writing.
    pub(crate) file: std::fs::File,
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::unlinkat(self.dir, self.name.as_str(), AtFlags::empty());
    }
}

/// Writes `bytes` to a fresh temporary file beside `name` in `dir` — created exclusively
/// (`O_EXCL`), never through a symlink, `0600`, then given `mode` — and syncs it: every file
/// hookbox writes into its state (records, snapshot objects, the control store's files) starts
/// this way. Errors name the step that failed.
pub(crate) fn write_temp<'a>(
    dir: BorrowedFd<'a>,
    name: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<TempFile<'a>, (&'static str, Errno)> {
    let tmp = format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(0o600))
        .map_err(|e| ("cannot create a temporary file", e))?;
    let mut temp = TempFile {
        dir,
        name: tmp,
        file: std::fs::File::from(fd),
    };
    temp.file.write_all(bytes).map_err(|e| {
        (
            "cannot write",
            Errno::from_io_error(&e).unwrap_or(Errno::IO),
        )
    })?;
    if mode != 0o600 {
        rustix::fs::fchmod(&temp.file, Mode::from_raw_mode(mode))
            .map_err(|e| ("cannot set its mode", e))?;
    }
    rustix::fs::fsync(&temp.file).map_err(|e| ("cannot sync", e))?;
    Ok(temp)
}

/// Writes `bytes` as the file `name` of the folder `dir` (at `dir_path`) as a private file is
/// written, `0600`; returns its path. `name` is one plain file name of hookbox's own choosing.
pub(crate) fn write_private(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<PathBuf, FileProblem> {
    let path = dir_path.join(name);
    if name.is_empty() || name.starts_with('.') || name.contains('/') {
        return Err(FileProblem::BadName);
    }
    let step = |(step, error): (&'static str, Errno)| FileProblem::Write { step, error };
    let temp = write_temp(dir, name, bytes, 0o600).map_err(step)?;
    rustix::fs::renameat(dir, temp.name.as_str(), dir, name)
        .map_err(|e| step(("cannot rename the temporary file over it", e)))?;
    rustix::fs::fsync(dir).map_err(|e| step(("cannot sync the folder", e)))?;
    Ok(path)
}

/// Removes the file `name` of `dir` (and syncs the folder); whether there was one.
pub(crate) fn remove_private(dir: BorrowedFd<'_>, name: &str) -> Result<bool, FileProblem> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => {
            let _ = rustix::fs::fsync(dir);
            Ok(true)
        }
        Err(Errno::NOENT) => Ok(false),
        Err(e) => Err(FileProblem::Remove(e)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test helpers may panic: a panic is a failed test"
    )]

    use std::os::fd::AsFd as _;
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_temporary_file_not_put_in_place_leaves_nothing_and_one_put_in_place_has_its_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::File::open(tmp.path()).unwrap();
        let temp = write_temp(dir.as_fd(), "obj", b"bytes", 0o400).unwrap();
        assert_eq!(names(tmp.path()).len(), 1);
        drop(temp);
        assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));

        let temp = write_temp(dir.as_fd(), "obj", b"bytes", 0o400).unwrap();
        rustix::fs::renameat(dir.as_fd(), temp.name.as_str(), dir.as_fd(), "obj").unwrap();
        drop(temp);
        assert_eq!(names(tmp.path()), ["obj"]);
        let meta = std::fs::metadata(tmp.path().join("obj")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o400);
        assert_eq!(std::fs::read(tmp.path().join("obj")).unwrap(), b"bytes");
    }

    #[test]
    fn a_private_file_replaces_the_old_one_whole_and_a_bad_name_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::File::open(tmp.path()).unwrap();
        write_private(dir.as_fd(), tmp.path(), "r.json", b"one").unwrap();
        let path = write_private(dir.as_fd(), tmp.path(), "r.json", b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(tmp.path()), ["r.json"]);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        for bad in ["", ".hidden", "a/b"] {
            assert!(matches!(
                write_private(dir.as_fd(), tmp.path(), bad, b"x"),
                Err(FileProblem::BadName)
            ));
        }
        assert_eq!(names(tmp.path()), ["r.json"]);
    }
}
