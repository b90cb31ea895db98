//! A snapshot's tree on disk: built in a temporary folder of hard links to the store's objects
//! (and the links it recorded), every folder made `0500` and synced once filled, then renamed
//! into place; and removed again (folders made writable first, never through a link).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use hookbox_trust::{EntryKind, SnapshotManifest};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::walk::MAX_DEPTH;
use super::{base_folder, object_name};

/// Opens the folder `name` of `dir`, never through a link.
pub(super) fn open_folder(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Makes the folder `name` of `dir` (`0700` while it is filled) and opens it.
fn make_folder(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e),
    }
    open_folder(dir, name)
}

/// A folder being filled: its handle, its components.
struct Open {
    fd: OwnedFd,
    parts: Vec<String>,
}

/// Closes the folders of `stack` deeper than `keep` components: each made read-only and synced.
fn close_to(stack: &mut Vec<Open>, keep: usize) -> Result<(), Errno> {
    while stack.last().is_some_and(|o| o.parts.len() > keep) {
        if let Some(o) = stack.pop() {
            rustix::fs::fchmod(&o.fd, Mode::from_raw_mode(0o500))?;
            rustix::fs::fsync(&o.fd)?;
        }
    }
    Ok(())
}

/// Builds the tree of `manifest` as the folder `tmp` of `trees`, linking files from `objects`,
/// and renames it to `name`. `Ok(false)`: a tree of that name was already there (the
/// temporary one is removed).
pub(super) fn build(
    trees: BorrowedFd<'_>,
    objects: BorrowedFd<'_>,
    tmp: &str,
    name: &str,
    manifest: &SnapshotManifest,
) -> Result<bool, Errno> {
    let top = make_folder(trees, tmp)?;
    // Every path of the tree, as components from the top, in depth-first order (a folder
    // before what it holds); `None` for a folder, else the entry.
    let mut paths: Vec<(Vec<String>, Option<&EntryKind>)> = Vec::new();
    for root in &manifest.roots {
        let mut at = vec![base_folder(root.base).to_owned()];
        paths.push((at.clone(), None));
        let root_parts: Vec<&str> = root.path.split('/').filter(|p| !p.is_empty()).collect();
        let (folders, file) = match (root.single_file, root_parts.split_last()) {
            (true, Some((last, rest))) => (rest, Some(*last)),
            _ => (root_parts.as_slice(), None),
        };
        for p in folders {
            at.push((*p).to_owned());
            paths.push((at.clone(), None));
        }
        for e in &root.entries {
            let mut parts = at.clone();
            match file {
                Some(f) => parts.push(f.to_owned()),
                None => parts.extend(e.path.split('/').map(str::to_owned)),
            }
            let kind = match e.kind {
                EntryKind::Folder => None,
                ref k => Some(k),
            };
            paths.push((parts, kind));
        }
    }
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    paths.dedup_by(|a, b| a.0 == b.0 && a.1.is_none() && b.1.is_none());
    let mut stack: Vec<Open> = Vec::new();
    for (parts, kind) in &paths {
        let Some((last, parent)) = parts.split_last() else {
            continue;
        };
        close_to(&mut stack, parent.len())?;
        let at_parent = match stack.last() {
            Some(o) => o.parts.as_slice() == parent,
            None => parent.is_empty(),
        };
        if !at_parent || parts.len() > MAX_DEPTH + 8 {
            // The manifest checked that every parent is a folder listed before it.
            return Err(Errno::INVAL);
        }
        let dir = stack.last().map_or(top.as_fd(), |o| o.fd.as_fd());
        match kind {
            None => {
                let fd = make_folder(dir, last)?;
                stack.push(Open {
                    fd,
                    parts: parts.clone(),
                });
            }
            Some(EntryKind::File {
                sha256, executable, ..
            }) => {
                rustix::fs::linkat(
                    objects,
                    object_name(*sha256, *executable),
                    dir,
                    last.as_str(),
                    AtFlags::empty(),
                )?;
            }
            Some(EntryKind::Symlink { target }) => {
                rustix::fs::symlinkat(target.as_str(), dir, last.as_str())?;
            }
            Some(EntryKind::Folder) => {}
        }
    }
    close_to(&mut stack, 0)?;
    rustix::fs::fchmod(&top, Mode::from_raw_mode(0o500))?;
    rustix::fs::fsync(&top)?;
    drop(top);
    match rustix::fs::renameat_with(trees, tmp, trees, name, RenameFlags::NOREPLACE) {
        Ok(()) => {
            rustix::fs::fsync(trees)?;
            Ok(true)
        }
        Err(Errno::EXIST | Errno::NOTEMPTY) => {
            remove(trees, tmp)?;
            Ok(false)
        }
        Err(e) => {
            let _ = remove(trees, tmp);
            Err(e)
        }
    }
}

/// Removes the folder `name` of `dir` and everything in it, making each folder writable first
/// (trees are read-only); links are removed, never followed.
pub(super) fn remove(dir: BorrowedFd<'_>, name: &str) -> Result<(), Errno> {
    remove_at(dir, name, 0)
}

fn remove_at(dir: BorrowedFd<'_>, name: &str, depth: usize) -> Result<(), Errno> {
    if depth > MAX_DEPTH + 8 {
        return Err(Errno::LOOP);
    }
    let fd = match open_folder(dir, name) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        // A file or link where a folder was expected: removed as what it is.
        Err(Errno::NOTDIR | Errno::LOOP) => {
            return rustix::fs::unlinkat(dir, name, AtFlags::empty());
        }
        Err(e) => return Err(e),
    };
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))?;
    let names: Vec<(String, bool)> = {
        let dup = rustix::io::fcntl_dupfd_cloexec(&fd, 0)?;
        let mut out = Vec::new();
        for entry in rustix::fs::Dir::read_from(dup)? {
            let entry = entry?;
            let n = entry.file_name().to_bytes();
            if n == b"." || n == b".." {
                continue;
            }
            let Ok(n) = std::str::from_utf8(n) else {
                // hookbox never writes such a name into its store.
                return Err(Errno::ILSEQ);
            };
            out.push((
                n.to_owned(),
                entry.file_type() == rustix::fs::FileType::Directory,
            ));
        }
        out
    };
    for (n, is_dir) in names {
        if is_dir {
            remove_at(fd.as_fd(), &n, depth + 1)?;
        } else {
            rustix::fs::unlinkat(&fd, n.as_str(), AtFlags::empty())?;
        }
    }
    drop(fd);
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}
