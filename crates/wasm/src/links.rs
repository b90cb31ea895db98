//! Symbolic links in mounts: a guest may create one — or hard-link or move an existing one, which
//! changes what a relative link resolves to — only in a mount whose rule says
//! `"symlinks": true`.
//!
//! Why: wasmtime-wasi keeps the guest's own paths beneath its mounts, and hookbox never follows a
//! link when it opens a mount, but the user's shell, editor or build tool will: a hook that plants
//! `notes -> ../../.ssh/id_ed25519` or `Makefile -> /etc/…` in the project reaches outside its
//! mount the next time a person or a tool opens it.
//!
//! Which mount a guest's folder belongs to is decided from the folder itself, not from a path:
//! starting at the descriptor's directory, walk up through `..` (each step opened without
//! following links) until a directory is one of the run's mount roots (device and inode); the
//! nearest one decides. A folder under no mount root, or deeper than [`MAX_DEPTH`], allows no
//! links. The walk costs a few system calls, and only on `symlink-at`, or on `link-at` and
//! `rename-at` of a link.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags};

use crate::mount::MountDir;
use crate::run::ResolvedMount;

/// How far up a guest's folder may be from its mount root before links are refused without
/// looking further (far deeper than any path the kernel resolves in one call).
pub(crate) const MAX_DEPTH: usize = 4096;

/// The mounts of one run, when at least one allows links; `None` (no allocation) otherwise.
#[derive(Debug)]
pub(crate) struct MountLinks {
    mounts: Vec<(MountDir, bool)>,
}

impl MountLinks {
    /// What a run with `mounts` may link: `None` when no mount allows links.
    pub(crate) fn of(mounts: &[ResolvedMount]) -> Option<MountLinks> {
        mounts.iter().any(|m| m.symlinks).then(|| MountLinks {
            mounts: mounts
                .iter()
                .map(|m| (m.host.clone(), m.symlinks))
                .collect(),
        })
    }

    /// Whether the guest may create links in the folder `dir` (one of its descriptors): the
    /// nearest mount root above it allows them.
    pub(crate) fn allowed_in(&self, dir: BorrowedFd<'_>) -> bool {
        let roots: Vec<Option<(u64, u64)>> = self
            .mounts
            .iter()
            .map(|(m, _)| identity(m.as_fd()))
            .collect();
        enclosing(dir, &roots).is_some_and(|i| self.mounts[i].1)
    }
}

/// Device and inode of an open directory.
fn identity(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    let st = rustix::fs::fstat(fd).ok()?;
    Some((st.st_dev, st.st_ino))
}

/// The index in `roots` of the nearest root at or above the directory `dir`; `None` when the
/// walk reaches `/`, fails, or goes past [`MAX_DEPTH`].
fn enclosing(dir: BorrowedFd<'_>, roots: &[Option<(u64, u64)>]) -> Option<usize> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let mut here = identity(dir)?;
    let mut parent: Option<OwnedFd> = None;
    for _ in 0..MAX_DEPTH {
        if let Some(i) = roots.iter().position(|r| *r == Some(here)) {
            return Some(i);
        }
        let up = {
            let from = parent.as_ref().map_or(dir, AsFd::as_fd);
            rustix::fs::openat(from, "..", flags, Mode::empty()).ok()?
        };
        let above = identity(up.as_fd())?;
        if above == here {
            // `..` of `/` is `/`: no mount root on the way.
            return None;
        }
        here = above;
        parent = Some(up);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_nearest_mount_root_decides() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("outer/inner/deep/er")).unwrap();
        std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
        let outer = MountDir::open(&t.path().join("outer")).unwrap();
        let inner = outer.open_beneath(Path::new("inner")).unwrap();
        let roots = [identity(outer.as_fd()), identity(inner.as_fd())];
        let deep = inner.open_beneath(Path::new("deep/er")).unwrap();
        assert_eq!(enclosing(deep.as_fd(), &roots), Some(1));
        assert_eq!(enclosing(inner.as_fd(), &roots), Some(1));
        assert_eq!(enclosing(outer.as_fd(), &roots), Some(0));
        let elsewhere = MountDir::open(&t.path().join("elsewhere")).unwrap();
        assert_eq!(enclosing(elsewhere.as_fd(), &roots), None);
    }
}
