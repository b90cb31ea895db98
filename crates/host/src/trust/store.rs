//! The approval store: one file per approved subject in a private folder of hookbox's state
//! (`~/.local/state/hookbox/trust/` for the CLI), never in a project or a mount.
//!
//! - The folder is created `0700`; an existing one is refused if it is a symbolic link, not
//!   ours, readable or writable by others, or below a folder someone else could write or own
//!   (they could swap it), unless that folder is sticky (`/tmp`).
//! - A record is written to a fresh temporary file (`O_EXCL`, `0600`), `fsync`ed, renamed over
//!   the old one and the folder `fsync`ed: a crash leaves the old approval or the new one,
//!   never half of one.
//! - A record is read beneath the folder without following symlinks, without blocking, only if
//!   it is a regular file of ours with one link that others cannot write, of at most
//!   [`MAX_APPROVAL_BYTES`]; its digests are checked ([`Approval::parse`]) and its subject
//!   must be the one asked for.
//!
//! File names are the first 32 hex digits of the SHA-256 of the subject, so any subject (a
//! path, a tenant's plugin name) is a safe file name.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hookbox_core::files::{CheckedFile, open_beneath_dir};
use hookbox_trust::{Approval, Base, Digest, EntryKind, FileState, RecordError, SnapshotEntry};

use super::private_file::write_private;
use super::snapshot::{
    RootProblem, Snapshot, SnapshotError, SnapshotLimits, SnapshotSource, SnapshotStore,
};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Largest approval record read: a 10,000-rule plugin's record is a few MiB.
pub const MAX_APPROVAL_BYTES: u64 = 16 << 20;

/// Most records `list` reads.
pub const MAX_STORED_APPROVALS: usize = 100_000;

/// Why the store or one of its records cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The folder cannot be used.
    #[error("approval store {path}: {reason}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// A record cannot be read or written.
    #[error("approval record {path}: {reason}")]
    Record {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A record was read but is not a valid approval.
    #[error("approval record {path}: {source}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: RecordError,
    },
}

/// An open approval store. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ApprovalStore {
    dir: Arc<OwnedFd>,
    path: PathBuf,
}

impl ApprovalStore {
    /// Opens the store at `path`; `None` when it does not exist (nothing was approved yet).
    pub fn open(path: &Path) -> Result<Option<ApprovalStore>, StoreError> {
        match rustix::fs::lstat(path) {
            Err(Errno::NOENT) => Ok(None),
            _ => ApprovalStore::open_existing(path).map(Some),
        }
    }

    /// Opens the store at `path`, creating it (and missing parents) private (`0700`).
    pub fn create(path: &Path) -> Result<ApprovalStore, StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(|e| StoreError::Folder {
                path: path.to_owned(),
                reason: format!("cannot create it: {e}"),
            })?;
        ApprovalStore::open_existing(path)
    }

    fn open_existing(path: &Path) -> Result<ApprovalStore, StoreError> {
        let fail = |reason: String| StoreError::Folder {
            path: path.to_owned(),
            reason,
        };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR if is_symlink(path) => {
                fail("it is a symbolic link; approvals are kept only in a real folder".into())
            }
            Errno::NOTDIR => fail("it is not a folder".into()),
            e => fail(format!("cannot open it: {e}")),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(|e| fail(e.to_string()))?;
        let me = rustix::process::geteuid().as_raw();
        if st.st_uid != me {
            return Err(fail(format!(
                "it belongs to user {}, not to this user ({me}); approvals are read only from a folder of ours",
                st.st_uid
            )));
        }
        if st.st_mode & 0o077 != 0 {
            return Err(fail(format!(
                "others may read or write it (mode {:o}); approvals are private: run `chmod 700 {}`",
                st.st_mode & 0o777,
                path.display()
            )));
        }
        check_parents(path, me).map_err(fail)?;
        Ok(ApprovalStore {
            dir: Arc::new(fd),
            path: path.to_owned(),
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The snapshot store kept in this folder (`snapshots/`): with `create`, made (`0700`) when
    /// missing; else `None` when nothing was ever snapshotted.
    ///
    /// # Errors
    /// The folder cannot be opened or made.
    pub fn snapshots(&self, create: bool) -> Result<Option<SnapshotStore>, SnapshotError> {
        SnapshotStore::open_in(self.dir.as_fd(), &self.path, create)
    }

    /// Takes the snapshot of the plugin folder `folder` (canonical) that `approval` is of, and
    /// returns the approval keeping it. Every file the approval pinned beneath the plugin must
    /// be in the snapshot with the digest approved: a file changed between the review and the
    /// copy is refused, never approved unseen.
    ///
    /// # Errors
    /// The folder over `limits`, unreadable, or changed since the review; the store unwritable.
    pub fn snapshot_plugin(
        &self,
        approval: Approval,
        folder: &Path,
        limits: &SnapshotLimits,
    ) -> Result<(Approval, Snapshot), SnapshotError> {
        let dir = open_base(folder)?;
        let sources = [SnapshotSource {
            base: Base::Plugin,
            path: String::new(),
            single_file: false,
            base_dir: dir.as_fd(),
            base_path: folder,
        }];
        self.snapshot_sources(approval, &sources, limits)
    }

    /// Takes the snapshot of the project hook folders a bare hooks or settings file's rules run
    /// (`approval` is of that file; `project` is the canonical project folder its
    /// `${CLAUDE_PROJECT_DIR}` and relative paths point at): the deepest folder holding each
    /// script pinned beneath the project ([`project_hook_roots`]: `.claude/hooks/`, never the
    /// project itself — a script at its top is taken alone — never a folder outside it), with
    /// the same store, limits and checks as a plugin's. `Ok(None)` when its rules run no file
    /// of the project (the approval then keeps its pinned files only).
    ///
    /// # Errors
    /// As [`ApprovalStore::snapshot_plugin`].
    pub fn snapshot_project_hooks(
        &self,
        approval: Approval,
        project: &Path,
        limits: &SnapshotLimits,
    ) -> Result<Option<(Approval, Snapshot)>, SnapshotError> {
        let roots = project_hook_roots(&approval);
        if roots.is_empty() {
            return Ok(None);
        }
        let dir = open_base(project)?;
        let sources: Vec<SnapshotSource<'_>> = roots
            .into_iter()
            .map(|(path, single_file)| SnapshotSource {
                base: Base::Project,
                path,
                single_file,
                base_dir: dir.as_fd(),
                base_path: project,
            })
            .collect();
        self.snapshot_sources(approval, &sources, limits).map(Some)
    }

    /// Takes the snapshot of `sources` and checks that it holds every file `approval` pinned
    /// beneath them with the digest reviewed.
    fn snapshot_sources(
        &self,
        mut approval: Approval,
        sources: &[SnapshotSource<'_>],
        limits: &SnapshotLimits,
    ) -> Result<(Approval, Snapshot), SnapshotError> {
        let store = self.snapshots(true)?.ok_or_else(|| SnapshotError::Store {
            path: self.path.join("snapshots"),
            error: std::io::ErrorKind::NotFound.into(),
        })?;
        let snapshot = store.take(sources, limits)?;
        for rule in &approval.rules {
            for f in &rule.files {
                let FileState::Pinned { sha256, .. } = f.state else {
                    continue;
                };
                if snapshot.manifest.root_of(f.base, &f.path).is_none() {
                    continue;
                }
                let held = snapshot.manifest.find(f.base, &f.path);
                if !matches!(held, Some((_, SnapshotEntry { kind: EntryKind::File { sha256: s, .. }, .. })) if *s == sha256)
                {
                    let src = sources.iter().find(|s| s.base == f.base);
                    let base = src.map_or_else(PathBuf::new, |s| s.base_path.to_owned());
                    return Err(SnapshotError::ChangedMeanwhile {
                        path: base.join(&f.path).display().to_string(),
                    });
                }
            }
        }
        approval.snapshot = Some(snapshot.reference());
        Ok((approval, snapshot))
    }

    /// Removes the snapshots no stored approval keeps. Nothing is removed while a record
    /// cannot be read (it may keep one). Returns how many were removed.
    ///
    /// # Errors
    /// The store or its snapshot folder cannot be listed or changed.
    pub fn collect_snapshots(&self) -> Result<usize, StoreError> {
        let fail = |e: SnapshotError| StoreError::Folder {
            path: self.path.join("snapshots"),
            reason: e.to_string(),
        };
        let Some(store) = self.snapshots(false).map_err(fail)? else {
            return Ok(0);
        };
        let mut keep = std::collections::HashSet::new();
        for a in self.list()? {
            match a {
                Ok(a) => keep.extend(a.snapshot.map(|s| s.id)),
                Err(_) => return Ok(0),
            }
        }
        store.collect(&keep).map_err(fail)
    }

    /// The file name a subject's record is stored under.
    pub fn file_name(subject: &str) -> String {
        format!("{}.json", &Digest::of(subject.as_bytes()).to_string()[..32])
    }

    /// The approval of `subject`, if there is one.
    pub fn get(&self, subject: &str) -> Result<Option<Approval>, StoreError> {
        let name = ApprovalStore::file_name(subject);
        let Some(a) = self.read(&name)? else {
            return Ok(None);
        };
        if a.subject != subject {
            return Err(StoreError::Record {
                path: self.path.join(&name),
                reason: format!(
                    "it approves `{}`, not `{subject}` (a file copied or planted under another name)",
                    a.subject
                ),
            });
        }
        Ok(Some(a))
    }

    fn read(&self, name: &str) -> Result<Option<Approval>, StoreError> {
        let path = self.path.join(name);
        let Some(text) = self.read_text(name)? else {
            return Ok(None);
        };
        Approval::parse(&text)
            .map(Some)
            .map_err(|source| StoreError::Invalid { path, source })
    }

    /// Reads the record file `name` of this folder as a record is read (beneath the folder, no
    /// symlink, a regular file of ours with one link, bounded); `None` when there is none.
    /// Other records of hookbox (a tenant's digests) share the folder and this read.
    pub(crate) fn read_text(&self, name: &str) -> Result<Option<String>, StoreError> {
        let path = self.path.join(name);
        let fail = |reason: String| StoreError::Record {
            path: path.clone(),
            reason,
        };
        // Core's reader: beneath the folder's handle, no symlink, without blocking, a regular
        // file of at most the limit by the descriptor's own metadata, which the checks below
        // read too — what is checked is what is read.
        let file = match open_beneath_dir(self.dir.as_fd(), Path::new(name), &path) {
            Ok(file) => file,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(fail(e.kind.to_string())),
        };
        let checked = CheckedFile::new(file, &path, MAX_APPROVAL_BYTES)
            .map_err(|e| fail(e.kind.to_string()))?;
        let st = checked.metadata();
        if st.uid() != rustix::process::geteuid().as_raw() {
            return Err(fail(format!("it belongs to user {}, not to us", st.uid())));
        }
        if st.nlink() != 1 {
            return Err(fail(format!(
                "it has {} links; a record is one file of its own",
                st.nlink()
            )));
        }
        if st.mode() & 0o022 != 0 {
            return Err(fail(format!(
                "others may write it (mode {:o})",
                st.mode() & 0o777
            )));
        }
        let text = checked.read_text().map_err(|e| fail(e.kind.to_string()))?;
        Ok(Some(text))
    }

    /// Records `approval`, replacing the subject's previous one atomically. Returns the file.
    pub fn put(&self, approval: &Approval) -> Result<PathBuf, StoreError> {
        let name = ApprovalStore::file_name(&approval.subject);
        self.write_text(&name, &approval.to_json())
    }

    /// Writes the record file `name` of this folder as a record is written (`0600`, a fresh
    /// temporary file synced and renamed over the old one, the folder synced). `name` is one
    /// plain file name of hookbox's own choosing, never a client's.
    pub(crate) fn write_text(&self, name: &str, text: &str) -> Result<PathBuf, StoreError> {
        write_private(self.dir.as_fd(), &self.path, name, text.as_bytes()).map_err(|e| {
            StoreError::Record {
                path: self.path.join(name),
                reason: e.to_string(),
            }
        })
    }

    /// Removes `subject`'s approval; whether there was one.
    pub fn remove(&self, subject: &str) -> Result<bool, StoreError> {
        let name = ApprovalStore::file_name(subject);
        match rustix::fs::unlinkat(self.dir.as_fd(), &name, AtFlags::empty()) {
            Ok(()) => {
                let _ = rustix::fs::fsync(self.dir.as_fd());
                Ok(true)
            }
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(StoreError::Record {
                path: self.path.join(&name),
                reason: format!("cannot remove it: {e}"),
            }),
        }
    }

    /// Every record (at most [`MAX_STORED_APPROVALS`]), each read as [`ApprovalStore::get`]
    /// reads one, sorted by subject; a record that cannot be read is an `Err` of its own.
    pub fn list(&self) -> Result<Vec<Result<Approval, StoreError>>, StoreError> {
        let dup = rustix::io::fcntl_dupfd_cloexec(self.dir.as_fd(), 0).map_err(|e| {
            StoreError::Folder {
                path: self.path.clone(),
                reason: e.to_string(),
            }
        })?;
        let dir = rustix::fs::Dir::read_from(dup).map_err(|e| StoreError::Folder {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| StoreError::Folder {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            if names.len() == MAX_STORED_APPROVALS {
                return Err(StoreError::Folder {
                    path: self.path.clone(),
                    reason: format!("it holds more than {MAX_STORED_APPROVALS} records"),
                });
            }
            names.push(name);
        }
        names.sort();
        let mut out: Vec<Result<Approval, StoreError>> = names
            .iter()
            .filter_map(|n| self.read(n).transpose())
            .collect();
        out.sort_by(|a, b| match (a, b) {
            (Ok(a), Ok(b)) => a.subject.cmp(&b.subject),
            (Ok(_), Err(_)) => std::cmp::Ordering::Less,
            (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
            (Err(_), Err(_)) => std::cmp::Ordering::Equal,
        });
        Ok(out)
    }
}

/// Opens a base folder (a plugin folder, the project) to snapshot beneath, never through a
/// link at its last component.
fn open_base(folder: &Path) -> Result<OwnedFd, SnapshotError> {
    rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| SnapshotError::Root {
        path: folder.display().to_string(),
        reason: RootProblem::Os(e),
    })
}

/// The roots a bare hooks or settings file's snapshot holds, beneath the project: for each
/// file its rules pin there, the folder holding it (`.claude/hooks` for
/// `.claude/hooks/g.sh`) — a folder beneath another one taken is left to it — or, for a file
/// at the top of the project, that file alone (the project itself is never taken: it is the
/// user's data, not the hooks'). `(path, single_file)`, sorted.
pub(crate) fn project_hook_roots(approval: &Approval) -> Vec<(String, bool)> {
    let mut folders: Vec<String> = Vec::new();
    let mut singles: Vec<String> = Vec::new();
    for f in approval.rules.iter().flat_map(|r| &r.files) {
        if f.base != Base::Project || !matches!(f.state, FileState::Pinned { .. }) {
            continue;
        }
        match f.path.rsplit_once('/') {
            Some((folder, _)) => folders.push(folder.to_owned()),
            None => singles.push(f.path.clone()),
        }
    }
    folders.sort();
    folders.dedup();
    // Sorted, a folder comes before those beneath it.
    let mut kept: Vec<String> = Vec::new();
    for f in folders {
        let beneath = kept.iter().any(|k| {
            f.strip_prefix(k.as_str())
                .is_some_and(|r| r.starts_with('/'))
        });
        if !beneath {
            kept.push(f);
        }
    }
    singles.sort();
    singles.dedup();
    let mut out: Vec<(String, bool)> = kept.into_iter().map(|f| (f, false)).collect();
    out.extend(singles.into_iter().map(|f| (f, true)));
    out.sort();
    out
}

fn is_symlink(path: &Path) -> bool {
    rustix::fs::lstat(path).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
}

/// Every folder above the store must belong to us or root and be writable by nobody else
/// unless sticky: otherwise someone could rename the store away and put theirs in its place.
fn check_parents(path: &Path, me: u32) -> Result<(), String> {
    let abs = std::path::absolute(path).map_err(|e| e.to_string())?;
    let real_parent = match abs.parent() {
        Some(p) => std::fs::canonicalize(p).map_err(|e| format!("`{}`: {e}", p.display()))?,
        None => return Ok(()),
    };
    for folder in real_parent.ancestors() {
        let st = rustix::fs::stat(folder).map_err(|e| format!("`{}`: {e}", folder.display()))?;
        let sticky = st.st_mode & 0o1000 != 0;
        if st.st_uid != me && st.st_uid != 0 {
            return Err(format!(
                "`{}` above it belongs to user {}; keep approvals below folders of yours",
                folder.display(),
                st.st_uid
            ));
        }
        if st.st_mode & 0o022 != 0 && !sticky {
            return Err(format!(
                "others may write `{}` above it (mode {:o}), and so replace the store",
                folder.display(),
                st.st_mode & 0o777
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_trust::RECORD_VERSION;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn approval(subject: &str) -> Approval {
        Approval {
            version: RECORD_VERSION,
            subject: subject.into(),
            plugin: "p".into(),
            approved_at: 1,
            hook_files: Vec::new(),
            rules: Vec::new(),
            snapshot: None,
        }
    }

    fn private_tmp() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        t
    }

    #[test]
    fn records_are_written_private_and_atomically_and_read_back() {
        let t = private_tmp();
        let dir = t.path().join("state/trust");
        assert!(ApprovalStore::open(&dir).unwrap().is_none());
        let store = ApprovalStore::create(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let path = store.put(&approval("/a")).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        store.put(&approval("/b")).unwrap();
        let mut again = approval("/a");
        again.approved_at = 2;
        store.put(&again).unwrap();
        assert_eq!(store.get("/a").unwrap().unwrap().approved_at, 2);
        assert!(store.get("/c").unwrap().is_none());
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let listed: Vec<String> = store
            .list()
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap().subject)
            .collect();
        assert_eq!(listed, ["/a", "/b"]);
        assert!(store.remove("/a").unwrap());
        assert!(!store.remove("/a").unwrap());
        assert!(store.get("/a").unwrap().is_none());
        let reopened = ApprovalStore::open(&dir).unwrap().unwrap();
        assert!(reopened.get("/b").unwrap().is_some());
    }

    #[test]
    fn a_store_folder_that_is_a_symlink_or_open_to_others_is_refused() {
        let t = private_tmp();
        let real = t.path().join("real");
        ApprovalStore::create(&real).unwrap();
        let link = t.path().join("link");
        symlink(&real, &link).unwrap();
        let e = ApprovalStore::open(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ApprovalStore::open(&real).unwrap_err().to_string();
        assert!(e.contains("chmod 700"), "{e}");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        // A parent others may write (not sticky): the store could be swapped.
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = ApprovalStore::create(&open.join("trust"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("others may write"), "{e}");
        // Sticky is fine (like /tmp).
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        ApprovalStore::create(&open.join("trust")).unwrap();
    }

    #[test]
    fn planted_records_are_refused() {
        let t = private_tmp();
        let dir = t.path().join("trust");
        let store = ApprovalStore::create(&dir).unwrap();
        let name = ApprovalStore::file_name("/victim");
        // A symlink to another record, a FIFO, a hard link, a record for another subject, an
        // edited record, a huge file: each is an error naming the file, never an approval.
        let other = store.put(&approval("/other")).unwrap();
        symlink(&other, dir.join(&name)).unwrap();
        assert!(
            store
                .get("/victim")
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        std::fs::remove_file(dir.join(&name)).unwrap();
        std::fs::hard_link(&other, dir.join(&name)).unwrap();
        assert!(
            store
                .get("/victim")
                .unwrap_err()
                .to_string()
                .contains("links")
        );
        std::fs::remove_file(dir.join(&name)).unwrap();
        std::fs::copy(&other, dir.join(&name)).unwrap();
        let e = store.get("/victim").unwrap_err().to_string();
        assert!(e.contains("it approves `/other`"), "{e}");
        std::fs::remove_file(dir.join(&name)).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.join(&name),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(
            store
                .get("/victim")
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
        std::fs::remove_file(dir.join(&name)).unwrap();
        std::fs::write(dir.join(&name), "{\"version\": 1, \"subject\": \"/victim\"").unwrap();
        assert!(matches!(
            store.get("/victim"),
            Err(StoreError::Invalid { .. })
        ));
        let f = std::fs::File::create(dir.join(&name)).unwrap();
        f.set_len(MAX_APPROVAL_BYTES + 1).unwrap();
        assert!(
            store
                .get("/victim")
                .unwrap_err()
                .to_string()
                .contains("over the limit")
        );
        std::fs::remove_file(dir.join(&name)).unwrap();
        std::fs::write(dir.join(&name), approval("/victim").to_json()).unwrap();
        std::fs::set_permissions(dir.join(&name), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(
            store
                .get("/victim")
                .unwrap_err()
                .to_string()
                .contains("others may write")
        );
        // `list` reports the bad one and still lists the good one.
        let listed = store.list().unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed[0].is_ok() && listed[1].is_err());
    }

    #[test]
    fn a_settings_files_snapshot_roots_are_its_script_folders_never_the_project() {
        use hookbox_trust::{FileRecord, FileRole, RuleLocation, RuleRecord};
        let file = |base, path: &str| FileRecord {
            role: FileRole::Program,
            base,
            path: path.into(),
            state: FileState::Pinned {
                sha256: Digest::of(b"x"),
                size: 1,
            },
        };
        let mut a = approval("/p/.claude/settings.json");
        a.rules = vec![RuleRecord::new(
            RuleLocation {
                file: "settings.json".into(),
                json_path: "hooks.Stop[0].hooks[0]".into(),
            },
            "x".into(),
            serde_json::json!({}),
            vec![
                file(Base::Project, ".claude/hooks/g.sh"),
                file(Base::Project, ".claude/hooks/lib/x.js"),
                file(Base::Project, "scripts/check.py"),
                file(Base::Project, "top.sh"),
                file(Base::Home, "bin/x.sh"),
                file(Base::Plugin, "hooks/y.sh"),
                FileRecord {
                    state: FileState::Unreadable {
                        reason: "missing".into(),
                    },
                    ..file(Base::Project, "gone/z.sh")
                },
            ],
            Vec::new(),
        )];
        assert_eq!(
            project_hook_roots(&a),
            [
                (".claude/hooks".to_owned(), false),
                ("scripts".to_owned(), false),
                ("top.sh".to_owned(), true),
            ]
        );
    }
}
