//! The snapshot store: content-addressed, read-only copies of approved folders, kept in the
//! approval store's own private folder (`<store>/snapshots/`). An approval is a snapshot: hooks
//! approved run from it (`crate::trust_gate`), so a library a script sources, a module it
//! imports or a config it reads is the approved one.
//!
//! - `objects/<sha256>.x` and `objects/<sha256>.r`: one file per distinct content and
//!   executable bit (`0500`, `0400`) — a direct `exec` of a script needs its execute bit, so the
//!   bit is part of the name. Written to a fresh temporary file (`O_EXCL`, `0600`), synced, made
//!   read-only, renamed into place without replacing (content already there: the copy goes).
//! - `trees/<id>/`: each snapshot's folders in the plugin's own layout — `plugin/…`,
//!   `project/.claude/hooks/…`, `home/…`, `root/…` for the roots it holds — made of hard links
//!   to the objects (no second copy of any content) and its symbolic links recreated as
//!   recorded (never followed); every folder `0500`. Built in a temporary folder, each folder
//!   synced, then renamed into place: a tree is whole or absent.
//! - `manifests/<id>.json`: what the tree holds ([`SnapshotManifest`]), named by its id, written
//!   and read as every private file of the store is (`private_file`).
//!
//! A file whose version (`super::file_version`: device, inode, size, times) was hashed before
//! and whose object is stored is not read again: a tenant reloaded, or a plugin approved
//! again, costs a `stat` per unchanged file, not a read and a hash. Only settled versions are
//! remembered (a file written within the last second is read every time), at most
//! [`MAX_CACHED_FILES`] of them per process.
//!
//! Taking a snapshot and removing those no approval references ([`SnapshotStore::collect`])
//! hold an exclusive `flock` on the folder, so a collection never removes a snapshot being
//! taken. Nothing ever writes into a tree again: what runs reads it.
//!
//! For a tenant folder (or any other embedder): [`SnapshotStore::take`] the folder when it is
//! approved, keep the [`SnapshotRef`] beside the approval, [`SnapshotStore::open`] it to run
//! from ([`Snapshot::root_path`], [`Snapshot::base_dir`]), and [`SnapshotStore::collect`] with
//! every id still referenced.

mod error;
mod import;
mod limits;
#[cfg(test)]
mod tests;
mod tree;
mod walk;

use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use hookbox_core::files::{CheckedFile, open_beneath_dir};
use hookbox_trust::{
    Base, Digest, EntryKind, MAX_MANIFEST_BYTES, SNAPSHOT_VERSION, SnapshotEntry, SnapshotManifest,
    SnapshotRef, SnapshotRoot,
};
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, RenameFlags};
use rustix::io::Errno;

pub use error::{RootProblem, SnapshotError};
pub use limits::{DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_SNAPSHOT_FILES, SnapshotLimits};
pub(crate) use walk::{Found, walk};

use super::file_version::{DigestCache, FileVersion};
use super::private_file::{read_private, remove_private, write_private, write_temp};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// File versions whose digests one process remembers while taking snapshots (a server's
/// tenants' plugin files, or a CLI's approvals). Past it, the cache starts again.
pub(crate) const MAX_CACHED_FILES: usize = 65_536;

/// The digests of file versions already copied into a store (see the module).
static FILE_DIGESTS: DigestCache = DigestCache::new(MAX_CACHED_FILES);

const OBJECTS: &str = "objects";
const TREES: &str = "trees";
const MANIFESTS: &str = "manifests";

/// A folder (or one file) to snapshot: where it is beneath its base folder, and that folder,
/// open.
#[derive(Debug)]
pub struct SnapshotSource<'a> {
    /// The kind of base folder.
    pub base: Base,
    /// Beneath it, `/`-separated (empty: the base folder itself).
    pub path: String,
    /// Whether it is one file rather than a folder.
    pub single_file: bool,
    /// The base folder, open.
    pub base_dir: BorrowedFd<'a>,
    /// The base folder's path, for messages.
    pub base_path: &'a Path,
}

impl SnapshotSource<'_> {
    fn shown(&self) -> String {
        if self.path.is_empty() {
            self.base_path.display().to_string()
        } else {
            self.base_path.join(&self.path).display().to_string()
        }
    }
}

/// A snapshot in the store.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Its id (the digest of its manifest).
    pub id: Digest,
    /// What it holds.
    pub manifest: Arc<SnapshotManifest>,
    /// Its tree's folder.
    pub tree: PathBuf,
    /// What the folders held that was not copied (FIFOs, sockets, devices), by path, when it was
    /// just taken.
    pub skipped: Vec<(String, &'static str)>,
}

impl Snapshot {
    /// The reference an approval keeps.
    pub fn reference(&self) -> SnapshotRef {
        self.manifest.reference()
    }

    /// The folder of the tree that holds `base`'s roots (`CLAUDE_PLUGIN_ROOT` of a plugin run
    /// from the snapshot without a mount namespace).
    pub fn base_dir(&self, base: Base) -> PathBuf {
        self.tree.join(base_folder(base))
    }

    /// Where `root` is in the tree.
    pub fn root_path(&self, root: &SnapshotRoot) -> PathBuf {
        let dir = self.base_dir(root.base);
        if root.path.is_empty() {
            dir
        } else {
            dir.join(&root.path)
        }
    }
}

/// A root of a snapshot's tree and the live path it was taken from: what a private mount
/// namespace shows read-only at the live path, so that every spelling of the live path (an
/// absolute path, `$0`, `__dirname`, a `cd`) reaches the approved bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotBind {
    /// In the tree (`<store>/snapshots/trees/<id>/plugin`, `…/project/.claude/hooks`).
    pub tree: PathBuf,
    /// The live folder (or file) it stands for (the plugin folder, `<project>/.claude/hooks`).
    pub live: PathBuf,
    /// Whether it is one file rather than a folder (a script at the top of a project).
    pub single_file: bool,
}

impl Snapshot {
    /// Every root of the snapshot as a (tree → live) pair, the live folders given by `live_base`
    /// (`Base::Plugin` → the plugin folder, `Base::Project` → the project); a root whose base
    /// has no live folder is left out.
    pub fn binds(&self, live_base: impl Fn(Base) -> Option<PathBuf>) -> Vec<SnapshotBind> {
        self.manifest
            .roots
            .iter()
            .filter_map(|root| {
                let base = live_base(root.base)?;
                let live = if root.path.is_empty() {
                    base
                } else {
                    base.join(&root.path)
                };
                Some(SnapshotBind {
                    tree: self.root_path(root),
                    live,
                    single_file: root.single_file,
                })
            })
            .collect()
    }
}

/// The folder of a base in a tree.
fn base_folder(base: Base) -> &'static str {
    match base {
        Base::Plugin => "plugin",
        Base::Project => "project",
        Base::Home => "home",
        Base::Root => "root",
    }
}

/// An object's name: its digest and whether it is executable.
fn object_name(sha256: Digest, executable: bool) -> String {
    format!("{sha256}.{}", if executable { 'x' } else { 'r' })
}

/// The snapshot folders of an approval store. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: Arc<OwnedFd>,
    path: PathBuf,
}

/// Holds the store's lock until dropped.
struct Locked<'a>(BorrowedFd<'a>);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(self.0, FlockOperation::Unlock);
    }
}

/// Opens (with `create`, makes `0700` first) the folder `name` of `dir`, never through a link;
/// `None` when it is missing and not to be made.
fn sub_folder(dir: BorrowedFd<'_>, name: &str, create: bool) -> Result<Option<OwnedFd>, Errno> {
    match tree::open_folder(dir, name) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) if create => {
            match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e),
            }
            tree::open_folder(dir, name).map(Some)
        }
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

fn store_error(path: PathBuf) -> impl Fn(Errno) -> SnapshotError {
    move |e| SnapshotError::Store {
        path: path.clone(),
        error: e.into(),
    }
}

impl SnapshotStore {
    /// The snapshot folder of the approval store whose folder is `store` (at `store_path`):
    /// with `create`, made (`0700`) when missing; else `None` when missing.
    pub(crate) fn open_in(
        store: BorrowedFd<'_>,
        store_path: &Path,
        create: bool,
    ) -> Result<Option<SnapshotStore>, SnapshotError> {
        let path = store_path.join("snapshots");
        let Some(dir) =
            sub_folder(store, "snapshots", create).map_err(store_error(path.clone()))?
        else {
            return Ok(None);
        };
        Ok(Some(SnapshotStore {
            dir: Arc::new(dir),
            path,
        }))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> Result<Locked<'_>, SnapshotError> {
        rustix::fs::flock(self.dir.as_fd(), FlockOperation::LockExclusive)
            .map_err(store_error(self.path.clone()))?;
        Ok(Locked(self.dir.as_fd()))
    }

    fn folder(&self, name: &str, create: bool) -> Result<Option<OwnedFd>, SnapshotError> {
        sub_folder(self.dir.as_fd(), name, create).map_err(store_error(self.path.join(name)))
    }

    fn required(&self, name: &str) -> Result<OwnedFd, SnapshotError> {
        self.folder(name, true)?
            .ok_or_else(|| SnapshotError::Store {
                path: self.path.join(name),
                error: std::io::ErrorKind::NotFound.into(),
            })
    }

    /// Copies `sources` into the store (each content once per executable bit) and returns the
    /// snapshot; the same files make the same snapshot, stored once.
    ///
    /// # Errors
    /// A source over `limits` (named, with its largest files), a file that changed while it was
    /// copied, a name that is not UTF-8, roots that overlap, a store that cannot be written.
    pub fn take(
        &self,
        sources: &[SnapshotSource<'_>],
        limits: &SnapshotLimits,
    ) -> Result<Snapshot, SnapshotError> {
        let _lock = self.lock()?;
        // First every root is listed and the limits checked, before a byte is read.
        let mut listed = Vec::with_capacity(sources.len());
        let mut sizes: Vec<(u64, String)> = Vec::new();
        for src in sources {
            let shown = src.shown();
            let (dir, found) = if src.single_file {
                (None, vec![(String::new(), stat_file(src, &shown)?)])
            } else {
                let dir = open_root_folder(src, &shown)?;
                let found = walk(dir.as_fd(), &shown, limits)?;
                (Some(dir), found)
            };
            for (path, f) in &found {
                if let Found::File { size, .. } = f {
                    sizes.push((*size, join_shown(&shown, path)));
                }
            }
            listed.push((src, shown, dir, found));
        }
        limits.check(&mut sizes)?;
        let objects = self.required(OBJECTS)?;
        let mut roots = Vec::with_capacity(listed.len());
        let mut skipped = Vec::new();
        for (src, shown, dir, found) in listed {
            let at = dir.as_ref().map_or(src.base_dir, |d| d.as_fd());
            let mut entries = Vec::with_capacity(found.len());
            for (path, f) in found {
                let kind = match f {
                    Found::Folder => EntryKind::Folder,
                    Found::Symlink { target } => EntryKind::Symlink { target },
                    Found::Other { kind } => {
                        skipped.push((join_shown(&shown, &path), kind));
                        continue;
                    }
                    Found::File { size, executable } => {
                        // A single-file root is read by its path beneath the base folder.
                        let rel = if src.single_file { &src.path } else { &path };
                        let sha256 = copy_file(
                            at,
                            rel,
                            &join_shown(&shown, &path),
                            size,
                            executable,
                            limits,
                            &objects,
                        )
                        .map_err(|e| e.at(&self.path))?;
                        EntryKind::File {
                            sha256,
                            size,
                            executable,
                        }
                    }
                };
                entries.push(SnapshotEntry { path, kind });
            }
            entries.sort_by(|a, b| a.path.cmp(&b.path));
            roots.push(SnapshotRoot {
                base: src.base,
                path: src.path.clone(),
                single_file: src.single_file,
                entries,
            });
        }
        rustix::fs::fsync(&objects).map_err(store_error(self.path.join(OBJECTS)))?;
        let manifest = SnapshotManifest {
            version: SNAPSHOT_VERSION,
            roots,
        };
        manifest.check().map_err(|source| SnapshotError::Manifest {
            path: self.path.join(MANIFESTS),
            source,
        })?;
        self.place(manifest, &objects, skipped)
    }

    /// Builds the tree of `manifest` (unless it is there) from its objects, stored in
    /// `objects`, and writes its manifest: the snapshot, whole. Under the store's lock.
    fn place(
        &self,
        manifest: SnapshotManifest,
        objects: &OwnedFd,
        skipped: Vec<(String, &'static str)>,
    ) -> Result<Snapshot, SnapshotError> {
        let id = manifest.id();
        let name = id.to_string();
        let trees = self.required(TREES)?;
        match tree::open_folder(trees.as_fd(), &name) {
            Ok(_) => {}
            Err(Errno::NOENT) => {
                let tmp = format!(
                    ".{name}.{}.{}.tmp",
                    std::process::id(),
                    TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
                );
                tree::build(trees.as_fd(), objects.as_fd(), &tmp, &name, &manifest)
                    .map_err(store_error(self.path.join(TREES).join(&name)))?;
            }
            Err(e) => return Err(store_error(self.path.join(TREES).join(&name))(e)),
        }
        let manifests = self.required(MANIFESTS)?;
        let file = format!("{name}.json");
        write_private(
            manifests.as_fd(),
            &self.path.join(MANIFESTS),
            &file,
            manifest.to_json().as_bytes(),
        )
        .map_err(|problem| SnapshotError::File {
            path: self.path.join(MANIFESTS).join(&file),
            problem,
        })?;
        Ok(Snapshot {
            id,
            manifest: Arc::new(manifest),
            tree: self.path.join(TREES).join(&name),
            skipped,
        })
    }

    /// The snapshot `id`, as the store holds it: its manifest read back (bounded, id checked)
    /// and its tree present.
    ///
    /// # Errors
    /// [`SnapshotError::Missing`] when the store no longer holds it; a manifest that fails its
    /// checks; a store that cannot be read.
    pub fn open(&self, id: Digest) -> Result<Snapshot, SnapshotError> {
        let name = id.to_string();
        let missing = || SnapshotError::Missing {
            id,
            store: self.path.clone(),
        };
        let Some(manifests) = self.folder(MANIFESTS, false)? else {
            return Err(missing());
        };
        let file = format!("{name}.json");
        let path = self.path.join(MANIFESTS).join(&file);
        let bytes = read_private(
            manifests.as_fd(),
            &self.path.join(MANIFESTS),
            &file,
            MAX_MANIFEST_BYTES,
        )
        .map_err(|problem| SnapshotError::File {
            path: path.clone(),
            problem,
        })?
        .ok_or_else(missing)?;
        let text = String::from_utf8(bytes).map_err(|_| SnapshotError::Manifest {
            path: path.clone(),
            source: hookbox_trust::ManifestError::Shape("not UTF-8".into()),
        })?;
        let manifest = SnapshotManifest::parse(&text, id)
            .map_err(|source| SnapshotError::Manifest { path, source })?;
        let Some(trees) = self.folder(TREES, false)? else {
            return Err(missing());
        };
        match tree::open_folder(trees.as_fd(), &name) {
            Ok(_) => {}
            Err(Errno::NOENT) => return Err(missing()),
            Err(e) => return Err(store_error(self.path.join(TREES).join(&name))(e)),
        }
        Ok(Snapshot {
            id,
            manifest: Arc::new(manifest),
            tree: self.path.join(TREES).join(&name),
            skipped: Vec::new(),
        })
    }

    /// Removes every snapshot whose id is not in `keep`, and every object no kept snapshot
    /// holds (a tree still linking one keeps its content: objects are hard links). Returns how
    /// many snapshots were removed.
    ///
    /// # Errors
    /// A folder of the store that cannot be listed or an entry that cannot be removed.
    pub fn collect(&self, keep: &HashSet<Digest>) -> Result<usize, SnapshotError> {
        let _lock = self.lock()?;
        let mut removed = 0;
        if let Some(trees) = self.folder(TREES, false)? {
            for name in list(trees.as_fd()).map_err(store_error(self.path.join(TREES)))? {
                let kept = name.parse::<Digest>().is_ok_and(|id| keep.contains(&id));
                if !kept {
                    tree::remove(trees.as_fd(), &name)
                        .map_err(store_error(self.path.join(TREES).join(&name)))?;
                    removed += usize::from(!name.starts_with('.'));
                }
            }
        }
        let mut used: HashSet<String> = HashSet::new();
        if let Some(manifests) = self.folder(MANIFESTS, false)? {
            for name in list(manifests.as_fd()).map_err(store_error(self.path.join(MANIFESTS)))? {
                let id = name
                    .strip_suffix(".json")
                    .and_then(|n| n.parse::<Digest>().ok());
                match id {
                    Some(id) if keep.contains(&id) => {
                        // A kept manifest that cannot be read keeps nothing: its approval will
                        // say why when it is used.
                        if let Ok(s) = self.open(id) {
                            for e in s.manifest.roots.iter().flat_map(|r| &r.entries) {
                                if let EntryKind::File {
                                    sha256, executable, ..
                                } = e.kind
                                {
                                    used.insert(object_name(sha256, executable));
                                }
                            }
                        }
                    }
                    _ => {
                        remove_private(manifests.as_fd(), &name).map_err(|problem| {
                            SnapshotError::File {
                                path: self.path.join(MANIFESTS).join(&name),
                                problem,
                            }
                        })?;
                    }
                }
            }
        }
        if let Some(objects) = self.folder(OBJECTS, false)? {
            for name in list(objects.as_fd()).map_err(store_error(self.path.join(OBJECTS)))? {
                if !used.contains(&name) {
                    rustix::fs::unlinkat(&objects, name.as_str(), AtFlags::empty())
                        .map_err(store_error(self.path.join(OBJECTS).join(&name)))?;
                }
            }
            let _ = rustix::fs::fsync(&objects);
        }
        Ok(removed)
    }
}

/// The names in a folder (not `.`, `..`), as UTF-8 (hookbox writes no other).
fn list(dir: BorrowedFd<'_>) -> Result<Vec<String>, Errno> {
    let dup = rustix::io::fcntl_dupfd_cloexec(dir, 0)?;
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(dup)? {
        let entry = entry?;
        let n = entry.file_name().to_bytes();
        if n == b"." || n == b".." {
            continue;
        }
        out.push(String::from_utf8_lossy(n).into_owned());
    }
    Ok(out)
}

fn join_shown(root: &str, path: &str) -> String {
    if path.is_empty() {
        root.to_owned()
    } else {
        format!("{root}/{path}")
    }
}

/// What a single-file root is: a regular file (never a link), its size and execute bit.
fn stat_file(src: &SnapshotSource<'_>, shown: &str) -> Result<Found, SnapshotError> {
    let root = |reason| SnapshotError::Root {
        path: shown.to_owned(),
        reason,
    };
    // Its folder is reached one component at a time; the file itself is not followed.
    let (folder, name) = match src.path.rsplit_once('/') {
        Some((f, n)) => (f, n),
        None => ("", src.path.as_str()),
    };
    let dir = open_root_folder(
        &SnapshotSource {
            base: src.base,
            path: folder.to_owned(),
            single_file: false,
            base_dir: src.base_dir,
            base_path: src.base_path,
        },
        shown,
    )?;
    match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => Ok(Found::File {
            size: u64::try_from(st.st_size).unwrap_or(0),
            executable: st.st_mode & 0o111 != 0,
        }),
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
            Err(root(RootProblem::Link))
        }
        Ok(_) => Err(root(RootProblem::NotAFile)),
        Err(e) => Err(root(RootProblem::Os(e))),
    }
}

/// Opens a folder root beneath its base, one component at a time, never through a link.
fn open_root_folder(src: &SnapshotSource<'_>, shown: &str) -> Result<OwnedFd, SnapshotError> {
    let fail = |e: Errno| SnapshotError::Root {
        path: shown.to_owned(),
        reason: match e {
            Errno::LOOP | Errno::NOTDIR => RootProblem::Link,
            e => RootProblem::Os(e),
        },
    };
    let mut fd = rustix::io::fcntl_dupfd_cloexec(src.base_dir, 0).map_err(fail)?;
    for part in src.path.split('/').filter(|p| !p.is_empty()) {
        if part == ".." || part == "." {
            return Err(fail(Errno::INVAL));
        }
        fd = tree::open_folder(fd.as_fd(), part).map_err(fail)?;
    }
    Ok(fd)
}

/// A failure copying one file, before the store's path is known.
enum CopyError {
    Snapshot(SnapshotError),
    Store(Errno),
}

impl CopyError {
    fn at(self, store: &Path) -> SnapshotError {
        match self {
            CopyError::Snapshot(e) => e,
            CopyError::Store(e) => SnapshotError::Store {
                path: store.join(OBJECTS),
                error: e.into(),
            },
        }
    }
}

/// Reads the file `rel` beneath `dir` (no link followed, without blocking, checked on its
/// descriptor: a regular file of the size the walk saw) and stores its bytes as an object.
fn copy_file(
    dir: BorrowedFd<'_>,
    rel: &str,
    shown: &str,
    size: u64,
    executable: bool,
    limits: &SnapshotLimits,
    objects: &OwnedFd,
) -> Result<Digest, CopyError> {
    let changed = || {
        CopyError::Snapshot(SnapshotError::ChangedMeanwhile {
            path: shown.to_owned(),
        })
    };
    let refused = |e: hookbox_core::files::ReadError| {
        CopyError::Snapshot(SnapshotError::Root {
            path: shown.to_owned(),
            reason: RootProblem::Read(e.kind),
        })
    };
    let file = open_beneath_dir(dir, Path::new(rel), Path::new(shown)).map_err(refused)?;
    // A second descriptor of the same open file: its version once the bytes are read.
    let same = file.try_clone().map_err(|_| changed())?;
    let checked =
        CheckedFile::new(file, Path::new(shown), limits.max_file_bytes).map_err(refused)?;
    let meta = checked.metadata();
    if meta.len() != size || (meta.mode() & 0o111 != 0) != executable {
        return Err(changed());
    }
    // This version of the file hashed before, and its object stored: nothing to read.
    let version = FileVersion::of(meta);
    if let Some(sha256) = FILE_DIGESTS.get(&version)
        && has_object(
            objects.as_fd(),
            &object_name(sha256, executable),
            size,
            executable,
        )
    {
        return Ok(sha256);
    }
    let bytes = checked.read().map_err(|_| changed())?;
    if bytes.len() as u64 != size {
        return Err(changed());
    }
    let sha256 = Digest::of(&bytes);
    put_object(objects.as_fd(), &bytes, sha256, executable).map_err(CopyError::Store)?;
    if same
        .metadata()
        .is_ok_and(|after| FileVersion::of(&after) == version)
    {
        FILE_DIGESTS.insert(version, sha256, SystemTime::now());
    }
    Ok(sha256)
}

/// Whether `objects` holds `name` as an object of `size` bytes with the mode of `executable`
/// (anything else under that name is replaced when the object is put).
fn has_object(objects: BorrowedFd<'_>, name: &str, size: u64, executable: bool) -> bool {
    let mode = if executable { 0o500 } else { 0o400 };
    rustix::fs::statat(objects, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
        FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
            && u64::try_from(st.st_size).ok() == Some(size)
            && st.st_mode & 0o777 == mode
    })
}

/// Stores `bytes` as the object of `sha256` and `executable`, unless it is there already.
fn put_object(
    objects: BorrowedFd<'_>,
    bytes: &[u8],
    sha256: Digest,
    executable: bool,
) -> Result<(), Errno> {
    let name = object_name(sha256, executable);
    let mode = if executable { 0o500 } else { 0o400 };
    if has_object(objects, &name, bytes.len() as u64, executable) {
        return Ok(());
    }
    let temp = write_temp(objects, &name, bytes, mode).map_err(|(_, e)| e)?;
    // A file already there under that name (another process, or one of the wrong mode or
    // size): replaced, since its name must mean these bytes with this bit.
    rustix::fs::renameat_with(
        objects,
        temp.name.as_str(),
        objects,
        name.as_str(),
        RenameFlags::empty(),
    )
}
