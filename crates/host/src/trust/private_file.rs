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
    let tmp = format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let step = |step: &'static str| move |error: Errno| FileProblem::Write { step, error };
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(0o600))
        .map_err(step("cannot create a temporary file"))?;
    let written = (|| {
        let mut f = std::fs::File::from(fd);
        f.write_all(bytes)
            .map_err(|e| step("cannot write")(Errno::from_io_error(&e).unwrap_or(Errno::IO)))?;
        rustix::fs::fsync(&f).map_err(step("cannot sync"))?;
        rustix::fs::renameat(dir, &tmp, dir, name)
            .map_err(step("cannot rename the temporary file over it"))
    })();
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
        return Err(e);
    }
    rustix::fs::fsync(dir).map_err(step("cannot sync the folder"))?;
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
