//! Walking a folder someone else controls (a plugin, a project's hook folder), beneath an open
//! handle, without following any symbolic link and without opening anything that could block:
//! each entry is `lstat`ed (`statat` with `AT_SYMLINK_NOFOLLOW`) before it is opened, a folder is
//! opened `O_DIRECTORY | O_NOFOLLOW`, a link is read as text (`readlinkat`), a FIFO, socket or
//! device is reported and skipped. Bounded: it stops past four entries per file the limits
//! allow ([`SnapshotLimits::max_files`]) and [`MAX_DEPTH`] folders deep; the caller checks the
//! files' count and bytes against the limits before it reads any of them.
//!
//! A `.git` folder (or file) is skipped: version control's own data is not part of what a hook
//! runs, and a clone's history would dwarf the plugin.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::error::{SnapshotError, largest};
use super::limits::SnapshotLimits;

/// Folders deeper than this are refused (a plugin is never this deep; a loop of bind mounts
/// could be).
pub(crate) const MAX_DEPTH: usize = 64;

/// What the walk found at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    Folder,
    File {
        size: u64,
        executable: bool,
    },
    Symlink {
        target: String,
    },
    /// A FIFO, socket or device: not copied.
    Other {
        kind: &'static str,
    },
}

/// Every entry beneath `dir`, by path (`/`-separated, sorted folder first, depth first).
pub(crate) fn walk(
    dir: BorrowedFd<'_>,
    shown: &str,
    limits: &SnapshotLimits,
) -> Result<Vec<(String, Found)>, SnapshotError> {
    let mut out = Vec::new();
    let mut sizes: Vec<(u64, String)> = Vec::new();
    let io = |at: &str, e: Errno| SnapshotError::Io {
        path: join(shown, at),
        error: e.into(),
    };
    // (folder handle, its path beneath the root, its depth)
    let root = rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(|e| io("", e))?;
    let mut stack: Vec<(OwnedFd, String, usize)> = vec![(root, String::new(), 0)];
    while let Some((fd, prefix, depth)) = stack.pop() {
        let mut names = Vec::new();
        let listing = rustix::fs::Dir::read_from(fd.as_fd()).map_err(|e| io(&prefix, e))?;
        for entry in listing {
            let entry = entry.map_err(|e| io(&prefix, e))?;
            let raw = entry.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            let name = std::str::from_utf8(raw).map_err(|_| SnapshotError::NotUtf8 {
                path: join(shown, &join(&prefix, &String::from_utf8_lossy(raw))),
            })?;
            names.push(name.to_owned());
        }
        names.sort();
        let mut folders = Vec::new();
        for name in names {
            let path = join(&prefix, &name);
            let st = rustix::fs::statat(&fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| io(&path, e))?;
            let found = match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory if name == ".git" => continue,
                FileType::Directory => {
                    if depth + 1 > MAX_DEPTH {
                        return Err(SnapshotError::TooDeep {
                            path: join(shown, &path),
                            max: MAX_DEPTH,
                        });
                    }
                    let sub = rustix::fs::openat(
                        &fd,
                        name.as_str(),
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| io(&path, e))?;
                    folders.push((sub, path.clone(), depth + 1));
                    Found::Folder
                }
                FileType::RegularFile if name == ".git" => continue,
                FileType::RegularFile => {
                    let size = u64::try_from(st.st_size).unwrap_or(0);
                    sizes.push((size, join(shown, &path)));
                    Found::File {
                        size,
                        executable: st.st_mode & 0o111 != 0,
                    }
                }
                FileType::Symlink => {
                    let target = rustix::fs::readlinkat(&fd, name.as_str(), Vec::new())
                        .map_err(|e| io(&path, e))?;
                    let target = target.into_string().map_err(|_| SnapshotError::NotUtf8 {
                        path: join(shown, &path),
                    })?;
                    Found::Symlink { target }
                }
                other => Found::Other {
                    kind: kind_name(other),
                },
            };
            out.push((path, found));
            if out.len() > limits.max_entries() {
                return Err(SnapshotError::TooManyFiles {
                    found: sizes.len(),
                    max: limits.max_files,
                    largest: largest(&mut sizes),
                });
            }
        }
        // Depth first, in name order: the last pushed is walked first.
        stack.extend(folders.into_iter().rev());
    }
    Ok(out)
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}/{b}"),
    }
}

/// What a file type is, in messages.
fn kind_name(t: FileType) -> &'static str {
    match t {
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "not a regular file",
    }
}
