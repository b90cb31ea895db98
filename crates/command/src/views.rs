//! Read-only views: folders (or files) shown at other paths, read-only, in a private mount
//! namespace of one hook ([`CommandRequest::views`](crate::CommandRequest::views)). A host uses
//! them to show an approved copy of a plugin at the plugin folder's own path, so that every
//! spelling of a path reaches the approved bytes; the runner knows nothing of why.
//!
//! How (`clone3.rs`): the hook is created by `clone3` with `CLONE_NEWNS` — a private mount
//! namespace, enough as root (with `CAP_SYS_ADMIN`) — or, for an ordinary user, with
//! `CLONE_NEWUSER | CLONE_NEWNS`: a user namespace in which the hook keeps its own uid and gid
//! (the child writes one line to each of its `uid_map` and `gid_map` after denying `setgroups`,
//! the one mapping the kernel lets a process write for itself). Before it executes, the child
//! makes every mount private (nothing it mounts propagates back to the host), bind-mounts each
//! view's source over its target and remounts it read-only, keeping the flags the kernel locks
//! in a user namespace (`nosuid`, `nodev`, `noexec`, the atime flags of the source's mount).
//! Seen from the hook, its uid and gid are its own; files of other users show as the overflow
//! user (`nobody`), and set-user-ID programs do not gain rights inside a user namespace.
//!
//! Where it cannot be done — not x86_64 Linux, a kernel without `clone3` (before 5.7), user
//! namespaces switched off (`user.max_user_namespaces = 0`, Debian's
//! `kernel.unprivileged_userns_clone = 0`) or stripped of their rights (Ubuntu's AppArmor
//! `kernel.apparmor_restrict_unprivileged_userns = 1`), a seccomp filter (many container
//! runtimes) — [`view_support`] says so and why. It finds out once per process and policy, by
//! starting a child that shows a fresh empty folder read-only over itself and exits; the host
//! then runs without views (its fallback) and says so.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A folder or file shown read-only at another path, in the hook's own mount namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyView {
    /// What is shown: an existing folder or file (absolute).
    pub source: PathBuf,
    /// Where: an existing folder or file of the same kind (absolute). Every path beneath it
    /// shows `source`'s content, read-only, for the hook and everything it starts.
    pub target: PathBuf,
}

/// How a runner may make the mount namespace of a hook with views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ViewPolicy {
    /// As root, a mount namespace alone; otherwise a user namespace too. Default.
    #[default]
    Auto,
    /// Always a user namespace too, even as root (the path of ordinary users, for tests).
    UserNamespace,
    /// Never: no views (a host falls back to running without them).
    Off,
}

/// Whether this process can run hooks with views, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewSupport {
    /// Views work: in a private mount namespace, inside a user namespace of its own or not.
    MountNamespace {
        /// Whether the hook also gets a user namespace (an ordinary user; root needs none).
        user_namespace: bool,
    },
    /// Views cannot be made here, and why.
    Unavailable {
        /// What stopped the probe (a kernel setting, the platform, the policy).
        reason: String,
    },
}

impl ViewSupport {
    /// Whether views work.
    pub fn is_available(&self) -> bool {
        matches!(self, ViewSupport::MountNamespace { .. })
    }

    /// A short description: `a private mount namespace (in a user namespace)`, or why not.
    pub fn describe(&self) -> String {
        match self {
            ViewSupport::MountNamespace {
                user_namespace: true,
            } => "a private mount namespace, inside a user namespace".into(),
            ViewSupport::MountNamespace {
                user_namespace: false,
            } => "a private mount namespace".into(),
            ViewSupport::Unavailable { reason } => format!("no private mount namespace: {reason}"),
        }
    }
}

/// Whether hooks can get views under `policy` in this process: probed once per policy (a child
/// started with a view of an empty folder over itself), then remembered.
pub fn view_support(policy: ViewPolicy) -> ViewSupport {
    static AUTO: OnceLock<ViewSupport> = OnceLock::new();
    static USER: OnceLock<ViewSupport> = OnceLock::new();
    match policy {
        ViewPolicy::Off => ViewSupport::Unavailable {
            reason: "turned off by this host's policy".into(),
        },
        ViewPolicy::Auto => AUTO.get_or_init(|| probe(false)).clone(),
        ViewPolicy::UserNamespace => USER.get_or_init(|| probe(true)).clone(),
    }
}

/// Whether the hook needs a user namespace of its own under `policy`: not as root with
/// `CAP_SYS_ADMIN`, unless the policy asks for one.
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    allow(dead_code, reason = "views are made on x86_64 Linux only")
)]
pub(crate) fn wants_user_namespace(policy: ViewPolicy) -> bool {
    policy == ViewPolicy::UserNamespace || !rustix::process::geteuid().is_root()
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn probe(force_user: bool) -> ViewSupport {
    let user_namespace = force_user || !rustix::process::geteuid().is_root();
    let dir = std::env::temp_dir().join(format!(
        ".hookbox-view-probe-{}-{}",
        std::process::id(),
        u8::from(user_namespace)
    ));
    let made = {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&dir)
    };
    if let Err(e) = made {
        return ViewSupport::Unavailable {
            reason: format!(
                "cannot make a folder to probe with in {}: {e}",
                dir.display()
            ),
        };
    }
    let view = ReadOnlyView {
        source: dir.clone(),
        target: dir.clone(),
    };
    let result =
        ViewPlan::new(&[view], user_namespace).and_then(|plan| crate::clone3::probe_views(&plan));
    let _ = std::fs::remove_dir(&dir);
    match result {
        Ok(()) => ViewSupport::MountNamespace { user_namespace },
        Err(reason) => ViewSupport::Unavailable { reason },
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn probe(_force_user: bool) -> ViewSupport {
    ViewSupport::Unavailable {
        reason: "private mount namespaces are made only on x86_64 Linux".into(),
    }
}

// Mount flags (the kernel's, stable): what `mount(2)` takes.
pub(crate) const MS_RDONLY: u64 = 1;
pub(crate) const MS_NOSUID: u64 = 2;
pub(crate) const MS_NODEV: u64 = 4;
pub(crate) const MS_NOEXEC: u64 = 8;
pub(crate) const MS_REMOUNT: u64 = 32;
pub(crate) const MS_NOATIME: u64 = 1024;
pub(crate) const MS_NODIRATIME: u64 = 2048;
pub(crate) const MS_BIND: u64 = 4096;
pub(crate) const MS_REC: u64 = 16384;
pub(crate) const MS_PRIVATE: u64 = 1 << 18;
pub(crate) const MS_RELATIME: u64 = 1 << 21;

#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    allow(dead_code, reason = "views are made on x86_64 Linux only")
)]
/// Everything the child needs to set up views, prepared by the parent (the child only reads
/// it: no allocation between `clone3` and `execve`).
#[derive(Debug)]
pub(crate) struct ViewPlan {
    /// Whether to make a user namespace too, with these maps (`"<uid> <uid> 1\n"`).
    pub(crate) user_namespace: bool,
    pub(crate) uid_map: Vec<u8>,
    pub(crate) gid_map: Vec<u8>,
    /// `(source, target, flags of the read-only remount)`.
    pub(crate) binds: Vec<(CString, CString, u64)>,
}

impl ViewPlan {
    /// The plan of `views`; an error names a view whose source cannot be used.
    pub(crate) fn new(views: &[ReadOnlyView], user_namespace: bool) -> Result<ViewPlan, String> {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let mut binds = Vec::with_capacity(views.len());
        for v in views {
            let c = |p: &Path| {
                CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| format!("`{}` has a NUL byte", p.display()))
            };
            if !v.source.is_absolute() || !v.target.is_absolute() {
                return Err(format!(
                    "view {} → {}: both paths must be absolute",
                    v.source.display(),
                    v.target.display()
                ));
            }
            // The remount keeps the flags of the source's mount the kernel would refuse to
            // clear in a user namespace.
            let st = rustix::fs::statvfs(&v.source)
                .map_err(|e| format!("view source `{}`: {e}", v.source.display()))?;
            let f = st.f_flag;
            use rustix::fs::StatVfsMountFlags as F;
            let mut flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
            for (have, ms) in [
                (F::NOSUID, MS_NOSUID),
                (F::NODEV, MS_NODEV),
                (F::NOEXEC, MS_NOEXEC),
                (F::NOATIME, MS_NOATIME),
                (F::NODIRATIME, MS_NODIRATIME),
                (F::RELATIME, MS_RELATIME),
            ] {
                if f.contains(have) {
                    flags |= ms;
                }
            }
            binds.push((c(&v.source)?, c(&v.target)?, flags));
        }
        Ok(ViewPlan {
            user_namespace,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            binds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_keeps_the_flags_a_user_namespace_locks_and_maps_the_hook_to_itself() {
        // A mount with nosuid (or nodev, noexec): the read-only remount must keep each flag it
        // has (the kernel refuses to clear a locked flag in a user namespace).
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        for (opt, ms) in [
            ("nosuid", MS_NOSUID),
            ("nodev", MS_NODEV),
            ("noexec", MS_NOEXEC),
        ] {
            let Some(dir) = mounts.lines().find_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.len() > 3 && f[3].split(',').any(|o| o == opt) && !f[1].contains('\\'))
                    .then(|| f[1].to_owned())
            }) else {
                continue;
            };
            let view = ReadOnlyView {
                source: PathBuf::from(&dir),
                target: PathBuf::from(&dir),
            };
            let Ok(plan) = ViewPlan::new(&[view], true) else {
                continue;
            };
            let flags = plan.binds[0].2;
            for f in [MS_REMOUNT, MS_BIND, MS_RDONLY, ms] {
                assert_ne!(flags & f, 0, "{dir}: flag {f:#x} missing from {flags:#x}");
            }
        }
        let plan = ViewPlan::new(&[], true).unwrap();
        let uid = rustix::process::geteuid().as_raw();
        assert_eq!(plan.uid_map, format!("{uid} {uid} 1\n").into_bytes());
        let relative = ReadOnlyView {
            source: PathBuf::from("snap"),
            target: PathBuf::from("/tmp"),
        };
        let e = ViewPlan::new(&[relative], false).unwrap_err();
        assert!(e.contains("must be absolute"), "{e}");
    }
}
