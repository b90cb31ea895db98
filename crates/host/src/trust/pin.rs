//! Reading the files a rule runs, once, and running exactly those bytes.
//!
//! A file is opened beneath its root (the plugin folder, the project, the home folder) one
//! component at a time without following any symlink, without blocking (a FIFO in its place is
//! refused, never waited on), must be a regular file of at most
//! [`TrustPolicy::max_pinned_file_bytes`](super::TrustPolicy::max_pinned_file_bytes), and is
//! read from that descriptor, bounded, into memory. Its SHA-256 is taken over those bytes.
//!
//! When the rule runs under `trust = require`, the bytes go into a *sealed memfd* (`memfd_create`, then
//! `F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL`): an anonymous file nobody can
//! change, not even us. The hook runs it as `/proc/self/fd/N` — the kernel follows that link
//! to the memfd, and a script's interpreter reads the same descriptor — so replacing, editing
//! or renaming the file on disk after it was hashed changes nothing that runs. A script sees
//! `/proc/self/fd/N` as `$0` (or `sys.argv[0]`, `__filename`); it finds its plugin through
//! `${CLAUDE_PLUGIN_ROOT}`, as Claude Code's plugins do.

use std::io::Write as _;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::sync::Arc;

use hookbox_core::files::{CheckedFile, ReadError, ReadErrorKind, open_beneath_dir};
use hookbox_trust::Digest;
use hookbox_wasm::MountDir;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// A file read once: its bytes, their digest, and its permission bits.
#[derive(Debug)]
pub(crate) struct PinnedFile {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) sha256: Digest,
    /// `st_mode & 0o7777` of the file read: a script that was not executable stays so.
    pub(crate) mode: u32,
}

/// Why a file could not be pinned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PinError {
    /// No such file.
    #[error("no such file")]
    Missing,
    /// A symlink on the way or at the end.
    #[error("`{0}` is a symbolic link; pinned files are opened without following symlinks")]
    Symlink(String),
    /// A folder, FIFO, device…
    #[error("not a regular file")]
    NotAFile,
    /// Over the per-file bound.
    #[error("{size} bytes, over the limit of {max} (trust.max_pinned_file_bytes)")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Over the host's bound on pinned bytes in memory.
    #[error("this host already keeps {max} bytes of pinned files (trust.max_pinned_bytes)")]
    Budget {
        /// The limit.
        max: u64,
    },
    /// The system cannot run a sealed copy (no memfd, no /proc).
    #[error("{0}")]
    Unsupported(String),
    /// Another failure of the operating system.
    #[error("{0}")]
    Io(String),
}

/// Reads `rel` (normalised, `/`-separated, not empty) beneath `root` with core's reader: no
/// symlink on the way or at the end, opened without blocking, checked on the descriptor (a
/// regular file of at most `max`), read bounded; the permission bits are those of the file read.
pub(crate) fn read_beneath(root: &MountDir, rel: &str, max: u64) -> Result<PinnedFile, PinError> {
    let shown = root.path().join(rel);
    let file = open_beneath_dir(root.as_fd(), Path::new(rel), &shown).map_err(refused)?;
    let checked = CheckedFile::new(file, &shown, max).map_err(refused)?;
    let mode = checked.metadata().mode() & 0o7777;
    let bytes = checked.read().map_err(refused)?;
    Ok(PinnedFile {
        sha256: Digest::of(&bytes),
        bytes: Arc::from(bytes),
        mode,
    })
}

/// Why the reader refused a file, as a pinning error.
fn refused(e: ReadError) -> PinError {
    match e.kind {
        ReadErrorKind::NotFound => PinError::Missing,
        // A file where a folder of the path should be: nothing to pin there either.
        ReadErrorKind::Io(e) if e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) => {
            PinError::Missing
        }
        ReadErrorKind::Symlink { at } => PinError::Symlink(at.file_name().map_or_else(
            || at.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )),
        ReadErrorKind::NotAFile { .. } => PinError::NotAFile,
        ReadErrorKind::TooLarge { size, max } => PinError::TooLarge { size, max },
        other => PinError::Io(other.to_string()),
    }
}

/// A sealed, read-only memfd holding `file`'s bytes, with its permission bits: what the hook
/// runs as `/proc/self/fd/N`. Close-on-exec in this process (a concurrent spawn of another
/// hook never inherits it); the runner keeps it open in the one hook it is for.
#[cfg(target_os = "linux")]
pub(crate) fn sealed_copy(file: &PinnedFile) -> Result<OwnedFd, PinError> {
    use rustix::fs::{MemfdFlags, SealFlags};
    if !Path::new("/proc/self/fd").is_dir() {
        return Err(PinError::Unsupported(
            "this system has no /proc/self/fd, through which hookbox runs the bytes it hashed"
                .into(),
        ));
    }
    let io = |what: &str, e: Errno| PinError::Io(format!("{what}: {e}"));
    let flags = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
    // Linux 6.3+ wants executable memfds asked for (`MFD_EXEC`); older kernels refuse the flag.
    let memfd = match rustix::fs::memfd_create("hookbox-pinned", flags | MemfdFlags::EXEC) {
        Err(Errno::INVAL) => rustix::fs::memfd_create("hookbox-pinned", flags),
        other => other,
    }
    .map_err(|e| PinError::Unsupported(format!("memfd_create: {e}")))?;
    let mut f = std::fs::File::from(memfd);
    f.write_all(&file.bytes)
        .map_err(|e| PinError::Io(format!("writing the copy: {e}")))?;
    rustix::fs::fchmod(&f, Mode::from_raw_mode(file.mode & 0o777)).map_err(|e| io("fchmod", e))?;
    rustix::fs::fcntl_add_seals(
        &f,
        SealFlags::WRITE | SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL,
    )
    .map_err(|e| io("sealing the copy", e))?;
    // Reopened read-only, and the writable descriptor closed: the hook gets no descriptor that
    // was ever writable (and `execve` never sees the file open for writing).
    let ro = rustix::fs::open(
        format!("/proc/self/fd/{}", f.as_raw_fd()),
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io("reopening the copy", e))?;
    drop(f);
    // Never 0, 1 or 2: the child's stdin, stdout and stderr are set up over those numbers.
    if ro.as_raw_fd() < 3 {
        return rustix::io::fcntl_dupfd_cloexec(&ro, 3).map_err(|e| io("fcntl", e));
    }
    Ok(ro)
}

/// Elsewhere there is no memfd to run from: pinned files cannot be run.
#[cfg(not(target_os = "linux"))]
pub(crate) fn sealed_copy(_file: &PinnedFile) -> Result<OwnedFd, PinError> {
    Err(PinError::Unsupported(
        "running pinned files needs Linux (a sealed memfd run through /proc/self/fd)".into(),
    ))
}

/// The path a hook runs a sealed copy as.
pub(crate) fn fd_path(fd: &OwnedFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::FileType;
    use std::os::unix::fs::{PermissionsExt, symlink};

    const MAX: u64 = 1 << 20;

    fn root() -> (tempfile::TempDir, MountDir) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("hooks")).unwrap();
        let d = MountDir::open(t.path()).unwrap();
        (t, d)
    }

    #[test]
    fn a_file_is_read_beneath_its_root_and_hashed() {
        let (t, d) = root();
        std::fs::write(t.path().join("hooks/a.sh"), "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(
            t.path().join("hooks/a.sh"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        let p = read_beneath(&d, "hooks/a.sh", MAX).unwrap();
        assert_eq!(&*p.bytes, b"#!/bin/sh\necho hi\n");
        assert_eq!(p.sha256, Digest::of(b"#!/bin/sh\necho hi\n"));
        assert_eq!(p.mode, 0o750);
    }

    #[test]
    fn symlinks_fifos_folders_missing_and_oversize_files_are_refused() {
        let (t, d) = root();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("evil.sh"), "x").unwrap();
        symlink(
            outside.path().join("evil.sh"),
            t.path().join("hooks/link.sh"),
        )
        .unwrap();
        symlink(outside.path(), t.path().join("linked")).unwrap();
        std::fs::write(t.path().join("hooks/in.sh"), "x").unwrap();
        symlink("in.sh", t.path().join("hooks/inner-link.sh")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            t.path().join("hooks/fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        std::fs::write(t.path().join("hooks/big.sh"), vec![b'#'; 2048]).unwrap();
        let read = |rel| read_beneath(&d, rel, 1024);
        assert_eq!(
            read("hooks/link.sh").unwrap_err(),
            PinError::Symlink("link.sh".into())
        );
        assert_eq!(
            read("hooks/inner-link.sh").unwrap_err(),
            PinError::Symlink("inner-link.sh".into())
        );
        assert_eq!(
            read("linked/evil.sh").unwrap_err(),
            PinError::Symlink("linked".into())
        );
        assert_eq!(read("hooks/fifo").unwrap_err(), PinError::NotAFile);
        assert_eq!(read("hooks").unwrap_err(), PinError::NotAFile);
        assert_eq!(read("hooks/none.sh").unwrap_err(), PinError::Missing);
        assert_eq!(read("none/x.sh").unwrap_err(), PinError::Missing);
        assert_eq!(
            read("hooks/big.sh").unwrap_err(),
            PinError::TooLarge {
                size: 2048,
                max: 1024
            }
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_sealed_copy_cannot_be_changed_and_runs_what_was_hashed() {
        let (t, d) = root();
        let script = t.path().join("hooks/a.sh");
        std::fs::write(&script, "#!/bin/sh\necho pinned \"$@\"\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let pinned = read_beneath(&d, "hooks/a.sh", MAX).unwrap();
        let fd = sealed_copy(&pinned).unwrap();
        assert!(fd.as_raw_fd() >= 3);
        // The file on disk is swapped after hashing: the copy still holds what was hashed.
        std::fs::write(&script, "#!/bin/sh\necho swapped\n").unwrap();
        let path = fd_path(&fd);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"#!/bin/sh\necho pinned \"$@\"\n"
        );
        // Nobody can write it, not through a new descriptor either, nor truncate it.
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert!(w.write_all(b"#!/bin/sh\necho changed\n").is_err());
        assert!(w.set_len(1).is_err());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"#!/bin/sh\necho pinned \"$@\"\n"
        );
        let flags = rustix::io::fcntl_getfd(&fd).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        let seals = rustix::fs::fcntl_get_seals(&fd).unwrap();
        assert!(seals.contains(rustix::fs::SealFlags::WRITE | rustix::fs::SealFlags::SEAL));
        let st = rustix::fs::fstat(&fd).unwrap();
        assert_eq!(st.st_mode & 0o777, 0o755);
    }
}
