//! The one reader for small files that someone else may control — hook files, manifests,
//! `.hookbox/settings.json`, `tenant.toml`, `serve.toml`: open first, without blocking and
//! without following symlinks, then check the *opened* file (fstat: a regular file, not over
//! the limit), then read at most the limit. Never a `stat` of the path before opening: a FIFO
//! swapped in between would block the reader in `open` until a writer came, and a file swapped
//! in would be read unchecked.
//!
//! Four ways to open, one way to check and read:
//! - [`open_beneath`] / [`open_beneath_dir`]: a relative path beneath a root (a path or an open
//!   folder handle), one component at a time, refusing `..`, absolute paths and every symlink on
//!   the way (`O_NOFOLLOW`);
//! - [`open_within`]: a relative path beneath an open plugin folder (a `cap_std` handle),
//!   following only symlinks that stay inside it;
//! - [`open_path`]: a path the operator named, its last component followed or not
//!   ([`Symlinks`]);
//! - [`CheckedFile`]: the checks on any opened file, keeping the metadata of the descriptor they
//!   were made on (mode, owner, links, size, device and inode) for callers with checks of their
//!   own, then the bounded read; [`read_opened`] / [`read_text`] do both in one call.
//!
//! [`read_file_beneath`] and [`read_file`] open, check and read in one call. Every error is a
//! [`ReadError`] quoting the path.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::config::span::Locator;

/// Why a file could not be read: the path as the caller gave it, and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("cannot read `{}`: {kind}", path.display())]
pub struct ReadError {
    /// The file, as given (joined to its root for the `beneath` forms).
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub kind: ReadErrorKind,
}

/// What went wrong reading a file.
#[derive(Debug, thiserror::Error)]
pub enum ReadErrorKind {
    /// Nothing at that path.
    #[error("no such file")]
    NotFound,
    /// A directory, FIFO, device…: reading it could block or mean nothing.
    #[error("not a regular file ({kind})")]
    NotAFile {
        /// What it is instead: `a directory`, `a FIFO`, `a character device`, …
        kind: &'static str,
    },
    /// A symbolic link where none is followed (the file itself, or a folder on the way).
    #[error("it is a symbolic link ({at}), and this file is never read through one")]
    Symlink {
        /// The link: the path up to and including it.
        at: PathBuf,
    },
    /// The path leaves its root (through `..`, an absolute path or a symlink).
    #[error("path leaves its folder (through `..`, an absolute path or a symlink)")]
    Escapes,
    /// Larger than the caller's limit.
    #[error("file is {size} bytes, over the limit of {max} bytes")]
    TooLarge {
        /// Its size (or the bytes read before stopping, if it grew while being read).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Not UTF-8.
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// Its 1-based line.
        line: u32,
        /// Its 1-based column, in characters.
        column: u32,
    },
    /// Any other I/O failure.
    #[error("{0}")]
    Io(#[source] io::Error),
}

impl ReadErrorKind {
    /// Line and column, when the error is about a place in the file.
    pub fn location(&self) -> Option<(u32, u32)> {
        match self {
            ReadErrorKind::InvalidUtf8 { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }

    /// This kind, about `path`.
    pub(crate) fn at(self, path: &Path) -> ReadError {
        ReadError {
            path: path.to_path_buf(),
            kind: self,
        }
    }

    pub(crate) fn from_io(e: io::Error) -> ReadErrorKind {
        match e.kind() {
            io::ErrorKind::NotFound => ReadErrorKind::NotFound,
            // cap-std reports an escape attempt (`..`, absolute path, symlink out) this way.
            io::ErrorKind::PermissionDenied
                if e.to_string().contains("outside of the filesystem") =>
            {
                ReadErrorKind::Escapes
            }
            _ => ReadErrorKind::Io(e),
        }
    }
}

impl ReadError {
    /// Whether nothing was at the path (so a caller can treat an absent optional file as
    /// defaults).
    pub fn is_not_found(&self) -> bool {
        matches!(self.kind, ReadErrorKind::NotFound)
    }
}

/// Whether the last component of a path given to [`open_path`] may be a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks {
    /// A symlink is refused ([`ReadErrorKind::Symlink`]): files an untrusted party could
    /// replace (a tenant's `tenant.toml`, a project's settings).
    Refuse,
    /// A symlink is followed: a file the user named on the command line (their
    /// `~/.claude/settings.json` may well be a link into a dotfiles repository).
    Follow,
}

/// Reads the regular file `rel` beneath the folder `root`: `rel` may not leave `root` and no
/// component of it may be a symlink; the file is opened without blocking, refused unless the
/// opened file is a regular file of at most `max_bytes` bytes, and must be UTF-8. `root` itself
/// is opened as given (it is the caller's trusted folder). For files a repository or a tenant
/// controls, such as `.hookbox/settings.json`: a symlink to `/dev/zero` or to another tenant's
/// file, or a FIFO, is refused, never read or waited on.
pub fn read_file_beneath(root: &Path, rel: &Path, max_bytes: u64) -> Result<String, ReadError> {
    let shown = root.join(rel);
    let file = open_beneath(root, rel)?;
    read_text(file, &shown, max_bytes)
}

/// Reads the regular file at `path` (at most `max_bytes`, UTF-8), opened without blocking; with
/// [`Symlinks::Refuse`] a symlink as its last component is refused (its folders are the
/// operator's choice and are followed).
pub fn read_file(path: &Path, max_bytes: u64, symlinks: Symlinks) -> Result<String, ReadError> {
    let file = open_path(path, symlinks)?;
    read_text(file, path, max_bytes)
}

/// Opens `rel` beneath the folder `root` for reading, following no symlink (see
/// [`open_beneath_dir`]).
pub fn open_beneath(root: &Path, rel: &Path) -> Result<File, ReadError> {
    let shown = root.join(rel);
    let dir = open_root(root).map_err(|k| k.at(root))?;
    open_beneath_at(&dir, rel).map_err(|k| k.at(&shown))
}

/// Opens `rel` beneath the open folder `dir` (a handle kept from earlier, so a folder renamed or
/// replaced since changes nothing), one component at a time: `..`, an absolute path and every
/// symlink are refused, folders are opened `O_DIRECTORY | O_NOFOLLOW`, the file `O_NOFOLLOW |
/// O_NONBLOCK | O_NOCTTY` (a FIFO's open returns at once, a terminal never becomes ours).
/// `shown` names the file in errors. The file is not checked yet: read it with [`read_opened`]
/// or [`read_text`].
#[cfg(unix)]
pub fn open_beneath_dir(
    dir: impl std::os::fd::AsFd,
    rel: &Path,
    shown: &Path,
) -> Result<File, ReadError> {
    open_beneath_at(dir.as_fd(), rel).map_err(|k| k.at(shown))
}

/// Opens `rel` beneath the plugin folder `dir` for reading, without blocking whatever it turns
/// out to be: `..` and absolute paths may not leave the folder, and a symlink is followed only
/// while it stays inside it (cap-std resolves it beneath the folder; one leading out, dangling or
/// looping is refused). For files a plugin's manifest names (hook files, components), where a
/// link inside the plugin is part of its layout. `shown` names the file in errors. The file is
/// not checked yet: read it with [`CheckedFile`].
pub fn open_within(dir: &cap_std::fs::Dir, rel: &Path, shown: &Path) -> Result<File, ReadError> {
    open_within_kind(dir, rel).map_err(|k| k.at(shown))
}

/// [`open_within`], the error without its path.
pub(crate) fn open_within_kind(dir: &cap_std::fs::Dir, rel: &Path) -> Result<File, ReadErrorKind> {
    let mut opts = cap_std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut opts, flag_bits(nonblocking_flags()));
    dir.open_with(rel, &opts)
        .map(cap_std::fs::File::into_std)
        .map_err(ReadErrorKind::from_io)
}

/// Opens `path` for reading without blocking; its last component is followed or not as
/// `symlinks` says. The file is not checked yet: read it with [`read_opened`] or
/// [`read_text`].
pub fn open_path(path: &Path, symlinks: Symlinks) -> Result<File, ReadError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        let mut flags = nonblocking_flags();
        if symlinks == Symlinks::Refuse {
            flags |= rustix::fs::OFlags::NOFOLLOW;
        }
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, flag_bits(flags));
    }
    match opts.open(path) {
        Ok(f) => Ok(f),
        #[cfg(unix)]
        Err(e) if symlinks == Symlinks::Refuse && is_symlink_refusal(&e) => {
            Err(ReadErrorKind::Symlink {
                at: path.to_path_buf(),
            }
            .at(path))
        }
        Err(e) => Err(ReadErrorKind::from_io(e).at(path)),
    }
}

/// An opened file that passed the reader's checks and is not read yet: a regular file of at
/// most the limit, by the metadata of the open descriptor (fstat), never of a path. The
/// metadata is kept, so a caller with checks of its own (a record's owner, link count and mode;
/// a script's permission bits) makes them on the file that will be read: a file swapped in at
/// the path after the open changes neither what was checked nor what is read.
#[derive(Debug)]
pub struct CheckedFile {
    file: File,
    meta: std::fs::Metadata,
    path: PathBuf,
    max: u64,
}

impl CheckedFile {
    /// Checks `file` (opened by one of this module's `open` functions, or by the caller without
    /// blocking): refused unless a regular file of at most `max_bytes`. `path` names it in
    /// errors.
    pub fn new(file: File, path: &Path, max_bytes: u64) -> Result<CheckedFile, ReadError> {
        let meta = check_opened(&file, max_bytes).map_err(|k| k.at(path))?;
        Ok(CheckedFile {
            file,
            meta,
            path: path.to_path_buf(),
            max: max_bytes,
        })
    }

    /// The metadata of the descriptor that was checked and will be read (on Unix, its mode,
    /// owner, links, device and inode through `std::os::unix::fs::MetadataExt`).
    pub fn metadata(&self) -> &std::fs::Metadata {
        &self.meta
    }

    /// The file's path as given, for errors.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file: at most the limit plus one byte, so a file that grew since the check or
    /// lied about its size (procfs) is refused too, naming the limit.
    pub fn read(self) -> Result<Vec<u8>, ReadError> {
        read_bounded(self.file, self.meta.len(), self.max).map_err(|k| k.at(&self.path))
    }

    /// [`CheckedFile::read`], then UTF-8 with the first invalid byte located (line and column).
    pub fn read_text(self) -> Result<String, ReadError> {
        let path = self.path.clone();
        decode_utf8(self.read()?).map_err(|k| k.at(&path))
    }
}

/// Reads an opened file: refused unless its metadata (fstat of the open file, not of a path)
/// says a regular file of at most `max_bytes`; then at most `max_bytes + 1` bytes are read, so a
/// file that grew or lied about its size (procfs) is refused too. `path` names it in errors.
pub fn read_opened(file: File, path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    CheckedFile::new(file, path, max_bytes)?.read()
}

/// [`read_opened`], then UTF-8 with the first invalid byte located (line and column).
pub fn read_text(file: File, path: &Path, max_bytes: u64) -> Result<String, ReadError> {
    CheckedFile::new(file, path, max_bytes)?.read_text()
}

/// Opens the root folder itself (followed as given: it is the caller's).
#[cfg(unix)]
fn open_root(root: &Path) -> Result<std::os::fd::OwnedFd, ReadErrorKind> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| ReadErrorKind::from_io(e.into()))
}

#[cfg(not(unix))]
fn open_root(root: &Path) -> Result<cap_std::fs::Dir, ReadErrorKind> {
    cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority())
        .map_err(ReadErrorKind::from_io)
}

/// The names of `rel`, or `Escapes` for `..`, an absolute path or a prefix.
fn components(rel: &Path) -> Result<Vec<&std::ffi::OsStr>, ReadErrorKind> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(ReadErrorKind::Escapes);
            }
        }
    }
    Ok(names)
}

#[cfg(unix)]
fn open_beneath_at(dir: impl std::os::fd::AsFd, rel: &Path) -> Result<File, ReadErrorKind> {
    use rustix::fs::{Mode, OFlags};
    use std::os::fd::AsFd;
    let names = components(rel)?;
    let Some((last, folders)) = names.split_last() else {
        return Err(ReadErrorKind::NotAFile {
            kind: "a directory",
        });
    };
    let mut walked = PathBuf::new();
    let mut held: Option<std::os::fd::OwnedFd> = None;
    for name in folders {
        walked.push(name);
        let at = held.as_ref().map_or(dir.as_fd(), |fd| fd.as_fd());
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(at, *name, flags, Mode::empty()) {
            Ok(fd) => held = Some(fd),
            Err(e) => return Err(refusal(at, name, e, &walked)),
        }
    }
    walked.push(last);
    let at = held.as_ref().map_or(dir.as_fd(), |fd| fd.as_fd());
    let flags = nonblocking_flags() | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(at, *last, flags, Mode::empty()) {
        Ok(fd) => Ok(File::from(fd)),
        Err(e) => Err(refusal(at, last, e, &walked)),
    }
}

#[cfg(not(unix))]
fn open_beneath_at(dir: &cap_std::fs::Dir, rel: &Path) -> Result<File, ReadErrorKind> {
    // No `O_NOFOLLOW` walk here: cap-std keeps the path beneath the folder.
    components(rel)?;
    dir.open(rel)
        .map(cap_std::fs::File::into_std)
        .map_err(ReadErrorKind::from_io)
}

/// Why `openat(at, name)` failed: a symlink (told apart from other `ELOOP`/`ENOTDIR` causes by
/// looking at the entry itself), or the error as it is.
#[cfg(unix)]
fn refusal(
    at: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    e: rustix::io::Errno,
    walked: &Path,
) -> ReadErrorKind {
    use rustix::fs::{AtFlags, FileType};
    if matches!(e, rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)
        && rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
    {
        return ReadErrorKind::Symlink {
            at: walked.to_path_buf(),
        };
    }
    ReadErrorKind::from_io(e.into())
}

/// Whether an `open` with `O_NOFOLLOW` failed because the path is a symlink.
#[cfg(unix)]
fn is_symlink_refusal(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
}

/// `O_NONBLOCK | O_NOCTTY`: opening a FIFO returns at once instead of waiting for a writer,
/// and opening a terminal never makes it ours. A regular file reads the same either way.
#[cfg(unix)]
pub(crate) fn nonblocking_flags() -> rustix::fs::OFlags {
    rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY
}

/// Open flags as `OpenOptionsExt::custom_flags` takes them.
#[cfg(unix)]
pub(crate) fn flag_bits(flags: rustix::fs::OFlags) -> i32 {
    // The flags are small positive constants (0o4000 | 0o400 | 0o400000 on Linux).
    i32::try_from(flags.bits()).unwrap_or(0)
}

/// Checks the opened file: a regular file, at most `max` bytes by its metadata (returned).
pub(crate) fn check_opened(file: &File, max: u64) -> Result<std::fs::Metadata, ReadErrorKind> {
    let meta = file.metadata().map_err(ReadErrorKind::Io)?;
    if !meta.is_file() {
        return Err(ReadErrorKind::NotAFile {
            kind: kind_of(meta.file_type()),
        });
    }
    // Refuse before reading: a 100 MB file is never pulled into memory.
    if meta.len() > max {
        return Err(ReadErrorKind::TooLarge {
            size: meta.len(),
            max,
        });
    }
    Ok(meta)
}

/// What a file that is not a regular file is, for messages.
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a file"
    }
}

/// Reads at most `max + 1` bytes of `file`; `size` (its size by fstat) is only a hint for the
/// allocation, never more than the limit.
pub(crate) fn read_bounded(file: File, size: u64, max: u64) -> Result<Vec<u8>, ReadErrorKind> {
    // The metadata may lie (procfs, a file growing meanwhile): bound the read itself too.
    let hint = size.min(max).try_into().unwrap_or(0usize);
    let mut bytes = Vec::with_capacity(hint);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadErrorKind::Io)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > max {
        return Err(ReadErrorKind::TooLarge { size: read, max });
    }
    Ok(bytes)
}

/// Bytes to text, locating the first invalid byte.
pub(crate) fn decode_utf8(bytes: Vec<u8>) -> Result<String, ReadErrorKind> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..offset]).unwrap_or("");
        let (line, column) = Locator::new(valid).line_col(offset);
        ReadErrorKind::InvalidUtf8 {
            offset,
            line,
            column,
        }
    })
}

#[cfg(test)]
mod tests;
