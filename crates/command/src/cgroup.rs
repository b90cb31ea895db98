//! A cgroup v2 per hook: the one place Linux lets us find and kill every process a hook started,
//! including those that left its process group (`setsid`, a daemon's double fork).
//!
//! Layout: the runner creates one folder, `hookbox-<pid>-<n>`, beside the processes of its own
//! cgroup (or under [`crate::ContainmentPolicy::cgroup_parent`]); each run gets `run-<n>` in it.
//! The hook is created inside its cgroup (`clone3.rs`; where `clone3` is missing, it joins it
//! before it executes, `join.rs`), so it cannot fork out first.
//! When the run ends, `cgroup.kill` SIGKILLs everything inside at once (the kernel also catches
//! processes forking at that moment), the runner waits for the cgroup to empty, and removes it.
//!
//! A run's cgroup that its hook left empty (the usual end: nothing was killed) is not removed
//! but kept as a spare, open, for the next run: creating a cgroup and removing it take the
//! kernel's cgroup lock and build and tear down its files (`mkdir`, `rmdir` and the `open` of
//! the folder, per hook; issue 30). An empty cgroup with no controller holds nothing of the
//! run before, and no process can enter it (only this runner starts processes there); one that
//! had processes killed in it is removed as before. At most [`MAX_SPARE_CGROUPS`] are kept;
//! they are removed with the runner's folder.
//!
//! No controller is enabled: the cgroups are only used to hold and kill processes, so they work
//! under a parent that has processes of its own (cgroup v2's "no internal processes" rule only
//! concerns controllers).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::procfs;

/// Empty run cgroups a runner keeps for its next runs instead of removing them: more than
/// hooks usually run at once. Beyond it, a run's cgroup is removed as it ends.
pub(crate) const MAX_SPARE_CGROUPS: usize = 64;

/// Why hooks cannot get a cgroup of their own here.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CgroupError {
    /// `/proc/self/cgroup` has no cgroup v2 (`0::`) line.
    #[error("this process is in no cgroup v2 hierarchy (`/proc/self/cgroup` has no `0::` line)")]
    NoHierarchy,
    /// The cgroup v2 path of this process is not under any cgroup2 mount.
    #[error("no cgroup2 mount in `/proc/self/mountinfo` holds this process's cgroup `{0}`")]
    NotMounted(String),
    /// The parent folder is not a cgroup v2 folder.
    #[error("`{0}` is not a cgroup v2 folder (it has no `cgroup.procs`)")]
    NotACgroup(PathBuf),
    /// Creating a cgroup failed (read-only mount, no delegation, `cgroup.max.descendants`).
    #[error("cannot create the cgroup `{path}`: {source}")]
    Create {
        /// The folder.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The kernel predates `cgroup.kill` (Linux 5.14).
    #[error("`{0}` has no `cgroup.kill`: the kernel is older than Linux 5.14")]
    NoKill(PathBuf),
    /// Moving processes needs write access to the common ancestor's `cgroup.procs`.
    #[error("cannot move processes into `{dir}`: `{procs}` is not writable ({source})")]
    NotWritable {
        /// The cgroup hooks would be moved into.
        dir: PathBuf,
        /// The file whose write permission the kernel checks.
        procs: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// Reading or writing a cgroup file failed.
    #[error("cannot use `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

/// The runner's folder of hook cgroups. Removed when the runner and its last run are gone.
#[derive(Debug)]
pub(crate) struct CgroupTree {
    dir: PathBuf,
    next: AtomicU64,
    /// Set when the kernel refused to move a hook in: later runs do not try again.
    broken: AtomicBool,
    /// Empty run cgroups, open, for the next runs (at most [`MAX_SPARE_CGROUPS`]).
    spares: Mutex<Vec<(PathBuf, File)>>,
}

/// Distinguishes the folders of several runners of one process.
static TREES: AtomicU64 = AtomicU64::new(0);

impl CgroupTree {
    /// Creates the runner's folder under `parent`, or beside this process's own cgroup.
    pub(crate) fn create(parent: Option<&Path>) -> Result<CgroupTree, CgroupError> {
        let own = own_cgroup_dir()?;
        let parent = parent.map_or_else(|| own.clone(), Path::to_path_buf);
        if !parent.join("cgroup.procs").is_file() {
            return Err(CgroupError::NotACgroup(parent));
        }
        remove_stale(&parent);
        let dir = parent.join(format!(
            "hookbox-{}-{}",
            std::process::id(),
            TREES.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).map_err(|source| CgroupError::Create {
            path: dir.clone(),
            source,
        })?;
        let tree = CgroupTree {
            dir,
            next: AtomicU64::new(0),
            broken: AtomicBool::new(false),
            spares: Mutex::new(Vec::new()),
        };
        if !tree.dir.join("cgroup.kill").is_file() {
            return Err(CgroupError::NoKill(tree.dir.clone()));
        }
        // The kernel lets a process move between cgroups only if the mover may write the
        // `cgroup.procs` of their common ancestor: this process's cgroup and the tree's.
        let procs = common_ancestor(&own, &tree.dir).join("cgroup.procs");
        if let Err(source) = OpenOptions::new().write(true).open(&procs) {
            return Err(CgroupError::NotWritable {
                dir: tree.dir.clone(),
                procs,
                source,
            });
        }
        Ok(tree)
    }

    /// The runner's folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the kernel refused to move a hook into one of these cgroups.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    /// Records that the kernel refused to move a hook in; later runs skip the cgroup.
    pub(crate) fn mark_broken(&self) {
        self.broken.store(true, Ordering::Relaxed);
    }

    /// An empty cgroup for one run: a spare one if there is one, else a new one.
    pub(crate) fn hook(self: &Arc<Self>) -> Result<HookCgroup, CgroupError> {
        if let Some((dir, handle)) = self.spares().pop() {
            return Ok(HookCgroup {
                tree: Arc::clone(self),
                dir,
                handle: Some(handle),
                kept: None,
                empty: false,
                killed: false,
                removed: false,
            });
        }
        let dir = self
            .dir
            .join(format!("run-{}", self.next.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).map_err(|source| CgroupError::Create {
            path: dir.clone(),
            source,
        })?;
        let mut cgroup = HookCgroup {
            tree: Arc::clone(self),
            dir,
            handle: None,
            kept: None,
            empty: false,
            killed: false,
            removed: false,
        };
        // std opens with O_CLOEXEC: the hook never inherits this descriptor past its `exec`.
        let handle = File::open(&cgroup.dir).map_err(|source| CgroupError::Io {
            path: cgroup.dir.clone(),
            source,
        })?;
        cgroup.handle = Some(handle);
        Ok(cgroup)
    }

    /// The spares. A run that panicked holding the lock left the list whole: use it.
    fn spares(&self) -> std::sync::MutexGuard<'_, Vec<(PathBuf, File)>> {
        self.spares
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps an empty run cgroup for a later run; `Err` gives it back when the list is full.
    fn keep_spare(&self, dir: PathBuf, handle: File) -> Result<(), PathBuf> {
        let mut spares = self.spares();
        if spares.len() >= MAX_SPARE_CGROUPS {
            return Err(dir);
        }
        spares.push((dir, handle));
        Ok(())
    }
}

impl Drop for CgroupTree {
    fn drop(&mut self) {
        for (dir, handle) in self.spares().drain(..) {
            drop(handle);
            if let Err(e) = std::fs::remove_dir(&dir) {
                tracing::debug!(dir = %dir.display(), error = %e, "cannot remove a spare hook cgroup");
            }
        }
        // Fails (EBUSY) only if a run's cgroup is still being emptied; then the folder stays
        // until a later runner of a new process removes it as stale.
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::debug!(dir = %self.dir.display(), error = %e, "cannot remove the hook cgroup folder");
        }
    }
}

/// One run's cgroup. Dropping it kills whatever is still inside and removes it.
#[derive(Debug)]
pub(crate) struct HookCgroup {
    tree: Arc<CgroupTree>,
    dir: PathBuf,
    /// The folder, opened: `clone3` creates the hook inside it (`CLONE_INTO_CGROUP`).
    handle: Option<File>,
    /// The open folder after the kill, kept for the next run if the hook left it empty.
    kept: Option<File>,
    /// Found empty when it was to be killed: nothing to wait for.
    empty: bool,
    killed: bool,
    removed: bool,
}

impl HookCgroup {
    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The open folder, for `clone3` to create the hook in; `None` once killed.
    #[cfg_attr(
        not(all(target_os = "linux", target_arch = "x86_64")),
        allow(
            dead_code,
            reason = "only the x86_64 Linux spawn starts hooks inside the folder"
        )
    )]
    pub(crate) fn handle(&self) -> Option<&File> {
        self.handle.as_ref()
    }

    /// `cgroup.procs`, opened for a child to join before it executes (std's spawn, when
    /// `clone3` is not available).
    pub(crate) fn procs(&self) -> io::Result<Arc<File>> {
        OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.procs"))
            .map(Arc::new)
    }

    /// The tree this cgroup belongs to.
    pub(crate) fn tree(&self) -> &CgroupTree {
        &self.tree
    }

    /// Counts the live processes that left the process group `pgid`, then SIGKILLs everything
    /// in the cgroup. Returns that count. Only the first call does anything.
    ///
    /// An empty cgroup (the common end of a run: the hook exited, nothing it started is left)
    /// costs one read of `cgroup.events`: no process list, no `cgroup.kill`. Nothing can enter
    /// it afterwards: only this runner may move or start processes there, and it closes its
    /// handle first.
    pub(crate) fn kill(&mut self, pgid: Option<i32>) -> Result<usize, CgroupError> {
        if std::mem::replace(&mut self.killed, true) {
            return Ok(0);
        }
        let handle = self.handle.take();
        if !populated(&self.dir) {
            self.empty = true;
            self.kept = handle;
            return Ok(0);
        }
        let path = self.dir.join("cgroup.procs");
        let members =
            procfs::read_pids(&path).map_err(|source| CgroupError::Io { path, source })?;
        let escaped = members
            .iter()
            .filter_map(|&pid| procfs::stat(pid))
            .filter(|s| !s.is_zombie() && Some(s.pgrp) != pgid)
            .count();
        let path = self.dir.join("cgroup.kill");
        OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| f.write_all(b"1"))
            .map_err(|source| CgroupError::Io { path, source })?;
        Ok(escaped)
    }

    /// Waits until no process is left in the cgroup, polling; `false` if `limit` passed first.
    pub(crate) async fn emptied(&self, limit: Duration) -> bool {
        if self.empty {
            return true;
        }
        let start = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            if !populated(&self.dir) {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Done with the (empty) cgroup: kept as a spare for the next run when its hook left it
    /// empty (nothing was killed in it), else removed once the run has returned: `rmdir` of a
    /// cgroup takes the kernel's cgroup lock and tears its files down (tens of µs), which the
    /// hook's caller need not wait for. In a blocking-pool thread when a runtime is there,
    /// here otherwise.
    pub(crate) fn release(&mut self) {
        self.removed = true;
        let dir = match self.kept.take() {
            Some(handle) if self.empty && !self.tree.is_broken() => {
                match self.tree.keep_spare(self.dir.clone(), handle) {
                    Ok(()) => return,
                    Err(dir) => dir,
                }
            }
            _ => self.dir.clone(),
        };
        // The tree's folder can only go once this one is gone: the task keeps it.
        let tree = Arc::clone(&self.tree);
        let remove = move || {
            if let Err(e) = std::fs::remove_dir(&dir) {
                tracing::debug!(dir = %dir.display(), error = %e, "cannot remove a hook's cgroup");
            }
            drop(tree);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(remove);
            }
            Err(_) => remove(),
        }
    }
}

impl Drop for HookCgroup {
    fn drop(&mut self) {
        // The run was cancelled or could not clean up: kill what is left, then remove the
        // folder once the kernel has emptied it (in the background when a runtime is there).
        if !self.killed
            && let Err(e) = self.kill(None)
        {
            tracing::warn!(error = %e, "cannot kill a hook's cgroup");
        }
        if self.removed {
            return;
        }
        // SIGKILLed processes are gone within moments: a few short tries here spare most
        // cancelled runs a background task (which a runtime shutting down would drop).
        for _ in 0..10 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let dir = self.dir.clone();
        let tree = Arc::clone(&self.tree);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    for _ in 0..600 {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        if std::fs::remove_dir(&dir).is_ok() {
                            return;
                        }
                    }
                    tracing::warn!(dir = %dir.display(), "a hook's cgroup never emptied; it is left behind");
                    drop(tree);
                });
            }
            Err(_) => {
                tracing::debug!(dir = %dir.display(), "a hook's cgroup is not empty yet; it is left behind");
            }
        }
    }
}

/// Whether `cgroup.events` says processes are left in the cgroup (or its children). An
/// unreadable file counts as empty: the folder is gone.
fn populated(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events"))
        .map(|text| text.lines().any(|l| l.trim() == "populated 1"))
        .unwrap_or(false)
}

/// This process's cgroup v2 folder: its `0::` path in `/proc/self/cgroup`, under the cgroup2
/// mount that holds it.
fn own_cgroup_dir() -> Result<PathBuf, CgroupError> {
    let cgroups =
        std::fs::read_to_string("/proc/self/cgroup").map_err(|source| CgroupError::Io {
            path: "/proc/self/cgroup".into(),
            source,
        })?;
    let own = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or(CgroupError::NoHierarchy)?
        .to_owned();
    let mounts =
        std::fs::read_to_string("/proc/self/mountinfo").map_err(|source| CgroupError::Io {
            path: "/proc/self/mountinfo".into(),
            source,
        })?;
    cgroup2_dir(&mounts, &own).ok_or(CgroupError::NotMounted(own))
}

/// The folder of cgroup `own` under the first cgroup2 mount of `mountinfo` whose root holds it.
/// A path outside this process's cgroup namespace (`/..`) has no folder.
fn cgroup2_dir(mountinfo: &str, own: &str) -> Option<PathBuf> {
    if own.split('/').any(|c| c == "..") {
        return None;
    }
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        if fs.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let mut fields = mount.split_whitespace();
        let root = unescape(fields.nth(3)?);
        let point = unescape(fields.next()?);
        let rest = Path::new(own).strip_prefix(&root).ok()?;
        Some(Path::new(&point).join(rest))
    })
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(b)) => {
                out.push(b);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The deepest folder holding both `a` and `b`.
fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

/// Removes the empty folders of runners whose process is gone (a host that crashed or was
/// killed before its runner's `Drop`). A folder still holding processes stays (EBUSY).
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("hookbox-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dir = entry.path();
        if let Ok(runs) = std::fs::read_dir(&dir) {
            for run in runs.flatten().filter(|r| r.path().is_dir()) {
                let _ = std::fs::remove_dir(run.path());
            }
        }
        let _ = std::fs::remove_dir(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn the_cgroup2_mount_is_found_in_mountinfo() {
        assert_eq!(
            cgroup2_dir(HYBRID, "/user.slice/a.scope"),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/a.scope"))
        );
        assert_eq!(
            cgroup2_dir(HYBRID, "/"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(cgroup2_dir(HYBRID, "/../outside"), None);
        assert_eq!(
            cgroup2_dir(
                "1 0 0:1 / / rw - ext4 /dev/x rw\n",
                "/system.slice/x.service"
            ),
            None
        );
    }

    #[test]
    fn a_bind_mounted_subtree_strips_its_root() {
        let info =
            "50 1 0:40 /system.slice/hookbox.service /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_dir(info, "/system.slice/hookbox.service/worker"),
            Some(PathBuf::from("/sys/fs/cgroup/worker"))
        );
        assert_eq!(cgroup2_dir(info, "/user.slice"), None);
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(r"/a\040b\134c"), r"/a b\c");
        assert_eq!(unescape(r"/trailing\04"), r"/trailing\04");
    }

    #[test]
    fn common_ancestor_of_two_cgroups() {
        assert_eq!(
            common_ancestor(
                Path::new("/sys/fs/cgroup/a/b"),
                Path::new("/sys/fs/cgroup/a/c/d")
            ),
            PathBuf::from("/sys/fs/cgroup/a")
        );
        assert_eq!(
            common_ancestor(Path::new("/sys/fs/cgroup"), Path::new("/sys/fs/cgroup/h-1")),
            PathBuf::from("/sys/fs/cgroup")
        );
    }

    #[test]
    fn a_folder_that_is_no_cgroup_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = CgroupTree::create(Some(dir.path())).unwrap_err();
        // On a machine without cgroup v2 the discovery fails first; both name the reason.
        assert!(
            matches!(
                err,
                CgroupError::NotACgroup(_) | CgroupError::NoHierarchy | CgroupError::NotMounted(_)
            ),
            "{err}"
        );
    }
}
