//! Host folders handed to guests by **handle**, never by a name re-resolved later.
//!
//! A [`MountDir`] is an open directory file descriptor. It is opened once: either at a path the
//! operator chose ([`MountDir::open`], a trusted root such as the project or a plugin folder),
//! or beneath another `MountDir` one component at a time with `O_NOFOLLOW | O_DIRECTORY`
//! ([`MountDir::open_beneath`], [`MountDir::create_beneath`]), so no symlink anywhere on the way
//! is followed and `..` never appears. What a rule mounts is resolved that way when the rule is
//! loaded, and the handle is kept: renaming the folder afterwards, or replacing it (or one of its
//! parents) with a symlink to `/`, changes nothing for the guest.
//!
//! wasmtime-wasi 48 only preopens a directory by path (`WasiCtxBuilder::preopened_dir`), so each
//! event preopens `/proc/self/fd/<fd>`: the kernel resolves that magic link to the very
//! directory the handle holds, whatever has happened to its name since. That needs Linux with
//! `/proc` mounted; elsewhere opening a mount fails with [`MountError::NoProcFs`].

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Why a folder could not be opened as a mount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MountError {
    /// Nothing at that path. Mounts are never created implicitly (except the host's own data
    /// folders, through [`MountDir::create_beneath`]).
    #[error("`{path}` does not exist; create the folder before mounting it")]
    Missing {
        /// The folder asked for.
        path: PathBuf,
    },
    /// A component of the path is a symbolic link: mounts never follow symlinks.
    #[error(
        "`{path}`: `{component}` is a symbolic link; mounts are opened without following symlinks — mount the real folder"
    )]
    Symlink {
        /// The folder asked for.
        path: PathBuf,
        /// The component that is a symlink.
        component: String,
    },
    /// A component of the path is not a folder.
    #[error("`{path}`: `{component}` is not a folder")]
    NotADirectory {
        /// The folder asked for.
        path: PathBuf,
        /// The component that is not a folder.
        component: String,
    },
    /// The relative path is absolute or contains `..`.
    #[error("`{path}` leaves the folder it must stay beneath (absolute path or `..`)")]
    Escapes {
        /// The relative path as given.
        path: PathBuf,
    },
    /// Any other failure of the operating system.
    #[error("cannot open `{path}`: {reason}")]
    Io {
        /// The folder asked for.
        path: PathBuf,
        /// The operating system's message.
        reason: String,
    },
    /// Mount handles are handed to wasmtime-wasi through `/proc/self/fd`, which is missing.
    #[error(
        "cannot mount `{path}`: hookbox hands mounts to guests through /proc/self/fd, which this system does not have (Linux with /proc mounted is required for wasm mounts)"
    )]
    NoProcFs {
        /// The folder asked for.
        path: PathBuf,
    },
}

/// An open host folder: what a guest mount is made of. Cheap to clone (the descriptor is
/// shared); the descriptor closes when the last clone drops.
#[derive(Clone)]
pub struct MountDir {
    fd: Arc<OwnedFd>,
    /// The path it was opened as, for messages only: never used to reach the folder again.
    path: PathBuf,
}

impl std::fmt::Debug for MountDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("MountDir").field(&self.path).finish()
    }
}

impl PartialEq for MountDir {
    /// Two handles are equal when they hold the same folder (device and inode).
    fn eq(&self, other: &Self) -> bool {
        match (rustix::fs::fstat(&*self.fd), rustix::fs::fstat(&*other.fd)) {
            (Ok(a), Ok(b)) => (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino),
            _ => false,
        }
    }
}

impl Eq for MountDir {}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

impl MountDir {
    /// Opens the folder at `path` as given by the operator (the project, a plugin folder, a
    /// path on the command line): symlinks in *this* path are the operator's own and are
    /// followed. Everything a rule names beneath it goes through [`MountDir::open_beneath`].
    pub fn open(path: &Path) -> Result<MountDir, MountError> {
        check_procfs(path)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
            Errno::NOENT => MountError::Missing {
                path: path.to_owned(),
            },
            Errno::NOTDIR => MountError::NotADirectory {
                path: path.to_owned(),
                component: path.display().to_string(),
            },
            e => MountError::Io {
                path: path.to_owned(),
                reason: e.to_string(),
            },
        })?;
        Ok(MountDir {
            fd: Arc::new(fd),
            path: path.to_owned(),
        })
    }

    /// Opens `rel` beneath this folder, one component at a time, refusing symlinks, `..`,
    /// absolute paths and missing folders. `rel` empty (or `.`) is this folder itself.
    pub fn open_beneath(&self, rel: &Path) -> Result<MountDir, MountError> {
        self.walk(rel, None)
    }

    /// Like [`MountDir::open_beneath`], creating missing folders (mode `mode`, e.g. `0o700`) on
    /// the way. For folders the host owns (plugin data), never for what a rule names.
    pub fn create_beneath(&self, rel: &Path, mode: u32) -> Result<MountDir, MountError> {
        self.walk(rel, Some(Mode::from_raw_mode(mode)))
    }

    fn walk(&self, rel: &Path, create: Option<Mode>) -> Result<MountDir, MountError> {
        let full = self.path.join(rel);
        let mut names = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => names.push(n),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(MountError::Escapes {
                        path: rel.to_owned(),
                    });
                }
            }
        }
        let mut dir = self.fd.clone();
        for name in names {
            let next = match rustix::fs::openat(&*dir, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) if create.is_some() => {
                    let mode = create.unwrap_or(Mode::RWXU);
                    match rustix::fs::mkdirat(&*dir, name, mode) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(io(&full, e)),
                    }
                    rustix::fs::openat(&*dir, name, DIR_FLAGS, Mode::empty())
                        .map_err(|e| classify(&dir, name, &full, e))?
                }
                Err(e) => return Err(classify(&dir, name, &full, e)),
            };
            dir = Arc::new(next);
        }
        Ok(MountDir {
            fd: dir,
            path: full,
        })
    }

    /// The path it was opened as (for messages; the folder may have been renamed since).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether an entry `name` (file, folder or link — not followed) exists directly inside.
    pub fn has_entry(&self, name: &str) -> bool {
        rustix::fs::statat(&*self.fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// A new descriptor for the same folder, as a `std::fs::File` (for cap-std).
    pub fn try_clone_std(&self) -> std::io::Result<std::fs::File> {
        Ok(std::fs::File::from(self.fd.try_clone()?))
    }

    /// The descriptor, for `openat`-style use by the host (replay files, data folders).
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The path wasmtime-wasi opens to reach this very folder: the handle's magic link.
    pub(crate) fn preopen_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }
}

fn check_procfs(path: &Path) -> Result<(), MountError> {
    if Path::new("/proc/self/fd").is_dir() {
        Ok(())
    } else {
        Err(MountError::NoProcFs {
            path: path.to_owned(),
        })
    }
}

fn io(path: &Path, e: Errno) -> MountError {
    MountError::Io {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// Turns a failed `openat(O_NOFOLLOW | O_DIRECTORY)` of `name` into a precise error: the
/// kernel says `ELOOP` or `ENOTDIR` for a symlink depending on the case, so look at the entry.
fn classify(dir: &OwnedFd, name: &OsStr, full: &Path, e: Errno) -> MountError {
    let component = name.to_string_lossy().into_owned();
    if e == Errno::NOENT {
        return MountError::Missing {
            path: full.to_owned(),
        };
    }
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => MountError::Symlink {
            path: full.to_owned(),
            component,
        },
        Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::Directory => {
            MountError::NotADirectory {
                path: full.to_owned(),
                component,
            }
        }
        _ => io(full, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        std::fs::write(t.path().join("a/file"), "x").unwrap();
        symlink("/", t.path().join("a/root")).unwrap();
        symlink("b", t.path().join("a/inner")).unwrap();
        t
    }

    #[test]
    fn opens_beneath_and_refuses_symlinks_files_escapes_and_missing() {
        let t = tree();
        let root = MountDir::open(t.path()).unwrap();
        let b = root.open_beneath(Path::new("a/b")).unwrap();
        assert_eq!(b.path(), t.path().join("a/b"));
        assert_eq!(root.open_beneath(Path::new("")).unwrap(), root);
        for (rel, want) in [
            ("a/root", "symlink"),
            ("a/inner", "symlink"),
            ("a/file", "not a folder"),
            ("a/nope", "does not exist"),
            ("../x", "leaves"),
            ("/etc", "leaves"),
        ] {
            let e = root.open_beneath(Path::new(rel)).unwrap_err();
            let msg = e.to_string();
            let ok = match want {
                "symlink" => matches!(e, MountError::Symlink { .. }),
                "not a folder" => matches!(e, MountError::NotADirectory { .. }),
                "does not exist" => matches!(e, MountError::Missing { .. }),
                _ => matches!(e, MountError::Escapes { .. }),
            };
            assert!(ok, "{rel}: {msg}");
        }
    }

    #[test]
    fn the_handle_keeps_its_folder_when_the_name_is_swapped_for_a_symlink() {
        let t = tree();
        let root = MountDir::open(t.path()).unwrap();
        let b = root.open_beneath(Path::new("a/b")).unwrap();
        std::fs::write(t.path().join("a/b/mine"), "kept").unwrap();
        // The folder is moved away and its name now points at `/`.
        std::fs::rename(t.path().join("a/b"), t.path().join("a/moved")).unwrap();
        symlink("/", t.path().join("a/b")).unwrap();
        let through_handle = b.preopen_path().join("mine");
        assert_eq!(std::fs::read_to_string(through_handle).unwrap(), "kept");
        assert!(!b.preopen_path().join("etc").exists());
    }

    #[test]
    fn create_beneath_makes_missing_folders_but_never_follows_a_planted_link() {
        let t = tree();
        let root = MountDir::open(t.path()).unwrap();
        let d = root.create_beneath(Path::new("data/p/s"), 0o700).unwrap();
        assert!(t.path().join("data/p/s").is_dir());
        assert_eq!(d, root.open_beneath(Path::new("data/p/s")).unwrap());
        symlink("/", t.path().join("data/p/evil")).unwrap();
        let e = root
            .create_beneath(Path::new("data/p/evil/x"), 0o700)
            .unwrap_err();
        assert!(matches!(e, MountError::Symlink { .. }), "{e}");
    }

    #[test]
    fn entries_are_seen_without_following_them() {
        let t = tree();
        let a = MountDir::open(&t.path().join("a")).unwrap();
        assert!(a.has_entry("root") && a.has_entry("file") && !a.has_entry("nope"));
    }
}
