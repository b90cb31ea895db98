//! Starting a hook straight inside its cgroup, the way `posix_spawn` starts a process:
//! `clone3(CLONE_INTO_CGROUP | CLONE_VM | CLONE_VFORK)` on a stack of its own, then `execve`.
//!
//! Why not std's `Command` with a `pre_exec` closure that writes to `cgroup.procs` (the fallback,
//! `join.rs`): moving a process between cgroups takes the kernel's `cgroup_threadgroup_rwsem`
//! for writing, which waits for an RCU grace period (milliseconds) and stalls every `fork` on
//! the machine meanwhile; and any `pre_exec` closure makes std `fork` instead of `vfork`, which
//! copies the page tables of the whole host. Born inside its cgroup, the hook is never moved,
//! never outside it (not even before its first instruction), and nothing is copied: the child
//! borrows the parent's memory until it executes, while the parent thread waits.
//!
//! Between `clone3` and `execve` the child shares the parent's memory: it may only make raw
//! system calls on data the parent prepared (program path, argv, envp, working directory,
//! descriptors). It runs with every signal handler reset to default by the kernel
//! (`CLONE_CLEAR_SIGHAND`), so no handler of the host can run on the borrowed memory, and
//! reports a failure's errno through the shared plan before it exits.
//!
//! x86_64 Linux only (a small piece of assembly starts the child on its stack); elsewhere, and
//! on a kernel without `clone3` or its flags (before 5.7), the runner uses std's spawn.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString, c_char};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use rustix::process::{Signal, WaitId, WaitIdOptions, pidfd_send_signal, waitid};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use crate::views::ViewPlan;

/// Set once `clone3` turned out to be missing or to refuse our flags: every later spawn goes
/// through std.
static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// Whether this path is worth trying.
pub(crate) fn available() -> bool {
    !UNSUPPORTED.load(Ordering::Relaxed)
}

/// What to start.
pub(crate) struct Launch<'a> {
    /// As the rule names it: an absolute or relative path, or a name looked up on `PATH`.
    pub(crate) program: &'a str,
    pub(crate) args: &'a [String],
    /// The whole environment, in order; a later value of a name replaces an earlier one.
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) cwd: Option<&'a Path>,
    /// The run's cgroup folder, opened: the child is created inside it.
    pub(crate) cgroup: Option<BorrowedFd<'a>>,
    /// Descriptors that stay open across `execve` (their close-on-exec flag is cleared in the
    /// child only).
    pub(crate) pass_fds: &'a [Arc<OwnedFd>],
    /// Read-only views: the child gets a private mount namespace (and a user namespace, for an
    /// ordinary user) and mounts them before it executes (`views.rs`).
    pub(crate) views: Option<&'a ViewPlan>,
}

/// Why a spawn through `clone3` did not happen.
#[derive(Debug)]
pub(crate) enum Clone3Error {
    /// The kernel has no `clone3`, or not with these flags: use std's spawn (from now on).
    Unsupported,
    /// The spawn failed: the program or working directory is missing, the kernel refused the
    /// cgroup, ...
    Io(io::Error),
}

impl From<io::Error> for Clone3Error {
    fn from(e: io::Error) -> Self {
        Clone3Error::Io(e)
    }
}

/// A hook started by [`spawn`]: its pidfd (for exit and the kill), its pipes. Dropped
/// unreaped, it is killed and reaped in the background.
#[derive(Debug)]
pub(crate) struct DirectChild {
    pid: u32,
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
    pub(crate) stdin: Option<pipe::Sender>,
    pub(crate) stdout: Option<pipe::Receiver>,
    pub(crate) stderr: Option<pipe::Receiver>,
}

impl DirectChild {
    pub(crate) fn id(&self) -> u32 {
        self.pid
    }

    /// Reaps the child if it exited. Cancel-safe and repeatable.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let Some(fd) = &self.pidfd else {
            return Err(io::Error::other("the hook was already released"));
        };
        let status = reap(fd.get_ref().as_fd(), WaitIdOptions::NOHANG)?;
        self.status = status;
        Ok(status)
    }

    /// Waits for the child to exit and reaps it. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            let Some(fd) = &self.pidfd else {
                return Err(io::Error::other("the hook was already released"));
            };
            // A pidfd polls readable once its process exited.
            let mut ready = fd.readable().await?;
            ready.clear_ready();
        }
    }
}

impl Drop for DirectChild {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        let Some(fd) = self.pidfd.take() else { return };
        // Kill on drop, as the std path's `kill_on_drop(true)`: through the pidfd, which names
        // this process and no other even after it died.
        let _ = pidfd_send_signal(fd.get_ref(), Signal::KILL);
        if let Ok(Some(_)) = reap(fd.get_ref().as_fd(), WaitIdOptions::NOHANG) {
            return;
        }
        // Still dying: reap it without blocking this thread.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    loop {
                        match reap(fd.get_ref().as_fd(), WaitIdOptions::NOHANG) {
                            Ok(None) => {}
                            Ok(Some(_)) | Err(_) => return,
                        }
                        match fd.readable().await {
                            Ok(mut ready) => ready.clear_ready(),
                            Err(_) => return,
                        }
                    }
                });
            }
            Err(_) => {
                let fd = fd.into_inner();
                // No runtime (it is shutting down): a thread waits the moment until the killed
                // process is gone.
                std::thread::spawn(move || {
                    let _ = reap(fd.as_fd(), WaitIdOptions::empty());
                });
            }
        }
    }
}

/// Reaps the process of `pidfd` if it exited (or, without `NOHANG`, once it does).
fn reap(pidfd: BorrowedFd<'_>, extra: WaitIdOptions) -> io::Result<Option<ExitStatus>> {
    loop {
        match waitid(WaitId::PidFd(pidfd), WaitIdOptions::EXITED | extra) {
            Ok(Some(s)) => {
                let raw = if let Some(code) = s.exit_status() {
                    (code & 0xff) << 8
                } else if let Some(signal) = s.terminating_signal() {
                    signal | if s.dumped() { 0x80 } else { 0 }
                } else {
                    return Ok(None);
                };
                return Ok(Some(ExitStatus::from_raw(raw)));
            }
            Ok(None) => return Ok(None),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Starts `launch` with stdin, stdout and stderr piped, leading a new process group, inside
/// `launch.cgroup` if given.
pub(crate) fn spawn(launch: &Launch<'_>) -> Result<DirectChild, Clone3Error> {
    let path = resolve(launch.program, &launch.env, launch.cwd)?;
    let path = cstring(path.as_os_str())?;
    let mut argv_owned = Vec::with_capacity(launch.args.len() + 1);
    argv_owned.push(cstring(OsStr::new(launch.program))?);
    for arg in launch.args {
        argv_owned.push(cstring(OsStr::new(arg))?);
    }
    // Sorted and one value per name, as std's `Command` builds it.
    let env: BTreeMap<&OsStr, &OsStr> = launch
        .env
        .iter()
        .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
        .collect();
    let mut envp_owned = Vec::with_capacity(env.len());
    for (k, v) in env {
        let mut pair = Vec::with_capacity(k.len() + v.len() + 1);
        pair.extend_from_slice(k.as_bytes());
        pair.push(b'=');
        pair.extend_from_slice(v.as_bytes());
        envp_owned.push(CString::new(pair).map_err(|_| nul_error())?);
    }
    // With views the child enters its working directory after mounting them, so one inside a
    // view is the view's; without a folder asked for, that is the host's own (entered again).
    let cwd = match (launch.cwd, launch.views) {
        (Some(d), _) => Some(cstring(d.as_os_str())?),
        (None, Some(_)) => Some(cstring(std::env::current_dir()?.as_os_str())?),
        (None, None) => None,
    };
    let argv = pointers(&argv_owned);
    // A file the kernel cannot execute (a script without `#!`) runs under `/bin/sh`, as
    // `execvp` (std's spawn) does: `sh PATH ARGS...`.
    let sh_argv: Vec<*const c_char> = [SH.as_ptr(), path.as_ptr()]
        .into_iter()
        .chain(argv.iter().skip(1).copied())
        .collect();
    let envp = pointers(&envp_owned);

    let (stdin_child, stdin_parent) = pipe_pair()?;
    let (stdout_parent, stdout_child) = pipe_pair()?;
    let (stderr_parent, stderr_child) = pipe_pair()?;
    let keep: Vec<i32> = launch.pass_fds.iter().map(|f| f.as_raw_fd()).collect();

    let plan = ChildPlan {
        path: path.as_ptr(),
        argv: argv.as_ptr(),
        sh_argv: sh_argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        stdio: [
            stdin_child.as_raw_fd(),
            stdout_child.as_raw_fd(),
            stderr_child.as_raw_fd(),
        ],
        keep: keep.as_ptr(),
        keep_len: keep.len(),
        ns: launch.views.map(NsPlan::of),
        probe: false,
        errno: AtomicI32::new(0),
        failed_step: AtomicUsize::new(0),
    };
    let (pid, pidfd) = match sys::clone_into(&plan, launch.cgroup) {
        Ok(started) => started,
        // With namespaces, `EINVAL` may be theirs (the probe tells): never a reason to stop
        // using `clone3` for every hook.
        Err(e) if launch.views.is_some() => {
            return Err(Clone3Error::Io(views_error(launch.views, 0, e)));
        }
        Err(e) if e == ENOSYS || e == EINVAL => {
            UNSUPPORTED.store(true, Ordering::Relaxed);
            tracing::info!(
                errno = e,
                "clone3 is not available with CLONE_INTO_CGROUP; hooks start through std's spawn"
            );
            return Err(Clone3Error::Unsupported);
        }
        Err(e) => return Err(io::Error::from_raw_os_error(e).into()),
    };
    drop((stdin_child, stdout_child, stderr_child));
    let errno = plan.errno.load(Ordering::Acquire);
    if errno != 0 {
        // The child exited without executing: reap it (it is gone or about to be) and report
        // why. Its exit is a matter of microseconds: waiting here blocks nobody for long.
        let _ = reap(pidfd.as_fd(), WaitIdOptions::empty());
        let step = plan.failed_step.load(Ordering::Acquire);
        if step != 0 {
            return Err(Clone3Error::Io(views_error(launch.views, step, errno)));
        }
        return Err(io::Error::from_raw_os_error(errno).into());
    }
    let pidfd = watch(pidfd)?;
    Ok(DirectChild {
        pid,
        pidfd: Some(pidfd),
        status: None,
        stdin: Some(pipe::Sender::from_owned_fd(stdin_parent)?),
        stdout: Some(pipe::Receiver::from_owned_fd(stdout_parent)?),
        stderr: Some(pipe::Receiver::from_owned_fd(stderr_parent)?),
    })
}

/// Starts a child that makes the namespaces and mounts of `views` and exits without executing
/// anything: whether views work here ([`crate::views::view_support`]). The error says which
/// step the kernel refused, and why.
pub(crate) fn probe_views(views: &ViewPlan) -> Result<(), String> {
    let empty: [*const c_char; 1] = [std::ptr::null()];
    let plan = ChildPlan {
        path: std::ptr::null(),
        argv: empty.as_ptr(),
        sh_argv: empty.as_ptr(),
        envp: empty.as_ptr(),
        cwd: std::ptr::null(),
        stdio: [-1; 3],
        keep: std::ptr::null(),
        keep_len: 0,
        ns: Some(NsPlan::of(views)),
        probe: true,
        errno: AtomicI32::new(0),
        failed_step: AtomicUsize::new(0),
    };
    let (_, pidfd) =
        sys::clone_into(&plan, None).map_err(|e| views_error(Some(views), 0, e).to_string())?;
    let status = reap(pidfd.as_fd(), WaitIdOptions::empty()).map_err(|e| e.to_string())?;
    let errno = plan.errno.load(Ordering::Acquire);
    if errno != 0 {
        let step = plan.failed_step.load(Ordering::Acquire);
        return Err(views_error(Some(views), step, errno).to_string());
    }
    match status {
        Some(s) if s.success() => Ok(()),
        other => Err(format!("the probe child ended with {other:?}")),
    }
}

/// The error of a spawn with views that failed at `step` (see [`step`]) with `errno`: which
/// namespace or mount the kernel refused.
fn views_error(views: Option<&ViewPlan>, step: usize, errno: i32) -> io::Error {
    let os = io::Error::from_raw_os_error(errno);
    let what = match step {
        step::CLONE => {
            let ns = if views.is_some_and(|v| v.user_namespace) {
                "a user and mount namespace"
            } else {
                "a mount namespace"
            };
            format!("the kernel refused to make {ns} for the hook")
        }
        step::SETGROUPS | step::UID_MAP | step::GID_MAP => {
            "the hook could not map its own user and group in its user namespace".to_owned()
        }
        step::PRIVATE => "the hook could not make its mounts private".to_owned(),
        n if n >= step::BINDS => {
            let i = (n - step::BINDS) / 2;
            match views.and_then(|v| v.binds.get(i)) {
                Some((source, target, _)) => format!(
                    "the hook could not {} `{}` at `{}`",
                    if (n - step::BINDS).is_multiple_of(2) {
                        "mount"
                    } else {
                        "make read-only the view of"
                    },
                    source.to_string_lossy(),
                    target.to_string_lossy()
                ),
                None => "the hook could not mount a view".to_owned(),
            }
        }
        _ => "the hook's views could not be made".to_owned(),
    };
    // Never the kind of the errno: a missing view is no missing program (the runner tries the
    // next shell on `NotFound`).
    io::Error::other(format!("{what}: {os}"))
}

/// The steps of the child that set up views, as recorded in [`ChildPlan::failed_step`]: bind
/// `i` is `BINDS + 2i`, its read-only remount `BINDS + 2i + 1`.
mod step {
    pub(super) const CLONE: usize = 0;
    pub(super) const SETGROUPS: usize = 1;
    pub(super) const UID_MAP: usize = 2;
    pub(super) const GID_MAP: usize = 3;
    pub(super) const PRIVATE: usize = 4;
    pub(super) const BINDS: usize = 8;
}

/// Registers `pidfd` with the runtime, to learn when its process exits.
fn watch(pidfd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    #[allow(
        unsafe_code,
        reason = "tokio's registration of a descriptor; see SAFETY"
    )]
    // SAFETY: tokio requires the descriptor to stay valid, open and the same file for as long
    // as the `AsyncFd` holds it: it is an `OwnedFd` that the `AsyncFd` owns, closed only when
    // that is dropped (after deregistration).
    unsafe {
        AsyncFd::register_with_interest(pidfd, Interest::READABLE).map_err(Into::into)
    }
}

/// The shell of a file without `#!`, as `execvp` runs it.
const SH: &std::ffi::CStr = c"/bin/sh";

const ENOSYS: i32 = 38;
const EINVAL: i32 = 22;
const ENOENT: i32 = 2;
const EACCES: i32 = 13;

fn nul_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "nul byte found in provided data",
    )
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| nul_error())
}

/// The null-terminated pointer array of `strings`, valid while they live.
fn pointers(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// A close-on-exec pipe whose two ends are 3 or above (so moving the child's ends onto 0, 1
/// and 2 never overwrites another of them): `(read, write)`.
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = std::io::pipe()?;
    Ok((above_stdio(r.into())?, above_stdio(w.into())?))
}

fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// The file `program` executes, as `execvp` finds it: a name with a slash as it is (relative
/// to `cwd`), otherwise the first executable file of that name in the hook's `PATH` (or
/// `/bin:/usr/bin` without one). A name found but not executable is `EACCES`, none `ENOENT`.
fn resolve(program: &str, env: &[(OsString, OsString)], cwd: Option<&Path>) -> io::Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    if program.is_empty() {
        return Err(io::Error::from_raw_os_error(ENOENT));
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map_or_else(|| OsStr::new("/bin:/usr/bin"), |(_, v)| v.as_os_str());
    let mut denied = false;
    for dir in std::env::split_paths(path) {
        // An empty entry is the working directory, as for `execvp`.
        let dir = if dir.as_os_str().is_empty() {
            cwd.map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        } else if dir.is_relative() {
            cwd.map_or_else(|| dir.clone(), |c| c.join(&dir))
        } else {
            dir
        };
        let candidate = dir.join(program);
        match std::fs::metadata(&candidate) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => return Ok(candidate),
            Ok(_) => denied = true,
            Err(_) => {}
        }
    }
    Err(io::Error::from_raw_os_error(if denied {
        EACCES
    } else {
        ENOENT
    }))
}

/// Everything the child needs, prepared by the parent; the child only reads it (and writes
/// `errno`). `repr(C)`: the child reaches it through a raw pointer.
#[repr(C)]
struct ChildPlan {
    path: *const c_char,
    argv: *const *const c_char,
    /// `/bin/sh`'s argv for a program without `#!` (`ENOEXEC`).
    sh_argv: *const *const c_char,
    envp: *const *const c_char,
    /// Null: stay in the parent's working directory.
    cwd: *const c_char,
    /// The child's ends of the pipes, to become its 0, 1 and 2.
    stdio: [i32; 3],
    keep: *const i32,
    keep_len: usize,
    /// Views: the namespaces to make and the mounts to make in them. `None`: the host's.
    ns: Option<NsPlan>,
    /// Exit with 0 once the views are made, without executing anything (the probe).
    probe: bool,
    /// The errno of the step that failed, written by the child before it exits.
    errno: AtomicI32,
    /// Which step of the views failed (`step`), when one did; 0 otherwise.
    failed_step: AtomicUsize,
}

/// A [`ViewPlan`] as raw pointers for the child (valid while the plan lives).
#[repr(C)]
struct NsPlan {
    user_namespace: bool,
    uid_map: *const u8,
    uid_map_len: usize,
    gid_map: *const u8,
    gid_map_len: usize,
    /// `binds_len` entries of `(source, target, remount flags)`.
    binds: *const (CString, CString, u64),
    binds_len: usize,
}

impl NsPlan {
    fn of(v: &ViewPlan) -> NsPlan {
        NsPlan {
            user_namespace: v.user_namespace,
            uid_map: v.uid_map.as_ptr(),
            uid_map_len: v.uid_map.len(),
            gid_map: v.gid_map.as_ptr(),
            gid_map_len: v.gid_map.len(),
            binds: v.binds.as_ptr(),
            binds_len: v.binds.len(),
        }
    }
}

/// The raw system calls, and the child's side.
#[allow(
    unsafe_code,
    reason = "a raw clone3 and the child's system calls; see each SAFETY"
)]
mod sys {
    use std::arch::asm;
    use std::os::fd::AsRawFd;
    use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};
    use std::sync::atomic::Ordering;

    use super::ChildPlan;

    // x86_64 system call numbers (stable ABI).
    const SYS_DUP2: usize = 33;
    const SYS_EXECVE: usize = 59;
    const SYS_EXIT: usize = 60;
    const SYS_FCNTL: usize = 72;
    const SYS_CHDIR: usize = 80;
    const SYS_SETPGID: usize = 109;
    const SYS_RT_SIGACTION: usize = 13;
    const SYS_RT_SIGPROCMASK: usize = 14;
    const SYS_CLONE3: usize = 435;
    const SYS_WRITE: usize = 1;
    const SYS_OPEN: usize = 2;
    const SYS_CLOSE: usize = 3;
    const SYS_MOUNT: usize = 165;
    const ENOEXEC: isize = 8;
    const O_WRONLY: usize = 1;
    const O_CLOEXEC: usize = 0o2_000_000;

    const CLONE_VM: u64 = 0x100;
    const CLONE_NEWNS: u64 = 0x2_0000;
    const CLONE_NEWUSER: u64 = 0x1000_0000;
    const CLONE_PIDFD: u64 = 0x1000;
    const CLONE_VFORK: u64 = 0x4000;
    const CLONE_CLEAR_SIGHAND: u64 = 0x1_0000_0000;
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    const SIGCHLD: u64 = 17;
    const SIGPIPE: usize = 13;
    const F_SETFD: usize = 2;
    const SIG_SETMASK: usize = 2;
    /// The kernel's signal set: 64 signals, 8 bytes.
    const SIGSET_SIZE: usize = 8;

    /// The child's stack: it makes a handful of system calls, in small frames.
    const STACK_SIZE: usize = 64 * 1024;

    /// `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`).
    #[repr(C)]
    #[derive(Default)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
        set_tid: u64,
        set_tid_size: u64,
        cgroup: u64,
    }

    /// The kernel's `struct sigaction` on x86_64.
    #[repr(C)]
    struct KernelSigaction {
        handler: usize,
        flags: u64,
        restorer: usize,
        mask: u64,
    }

    /// Starts the child of `plan` (in `cgroup`, if given) and returns its pid and pidfd once it
    /// executed the program or exited (`CLONE_VFORK`); a failure is the kernel's errno.
    pub(super) fn clone_into(
        plan: &ChildPlan,
        cgroup: Option<BorrowedFd<'_>>,
    ) -> Result<(u32, OwnedFd), i32> {
        let mut stack = vec![0u8; STACK_SIZE];
        let base = stack.as_mut_ptr() as u64;
        // The stack grows down from its top, which the ABI wants 16-byte aligned.
        let top = (base + STACK_SIZE as u64) & !15;
        let mut pidfd: i32 = -1;
        let mut args = CloneArgs {
            flags: CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_CLEAR_SIGHAND,
            pidfd: &raw mut pidfd as u64,
            exit_signal: SIGCHLD,
            stack: base,
            stack_size: top - base,
            ..CloneArgs::default()
        };
        if let Some(fd) = cgroup {
            args.flags |= CLONE_INTO_CGROUP;
            args.cgroup = fd.as_raw_fd() as u64;
        }
        if let Some(ns) = &plan.ns {
            args.flags |= CLONE_NEWNS;
            if ns.user_namespace {
                args.flags |= CLONE_NEWUSER;
            }
        }
        let ret: isize;
        // SAFETY: `clone3` with `CLONE_VM | CLONE_VFORK` creates a child that shares this
        // process's memory and runs on `stack` (a buffer of ours, alive until after the call:
        // with `CLONE_VFORK` the call returns only once the child executed or exited, so the
        // child never uses the stack after it is freed). In the parent the syscall returns the
        // pid (or -errno) in rax and clobbers rcx and r11 only; the asm uses no stack of the
        // parent (`nostack`). In the child rax is 0: it jumps to `child_main` with `plan` as
        // its argument, on the new stack (rsp = stack + stack_size, 16-byte aligned, so the
        // `call` leaves the alignment the ABI expects); `child_main` never returns (it
        // executes or exits), and `ud2` traps if it ever did. `plan` and everything it points
        // to live on this thread's stack and heap, which the suspended parent keeps alive and
        // unchanged while the child reads them; the child's signal handlers are reset by the
        // kernel (`CLONE_CLEAR_SIGHAND`), so none of the host's handlers runs on the shared
        // memory. The kernel writes the pidfd into `pidfd` before the child runs.
        unsafe {
            asm!(
                "syscall",
                "test rax, rax",
                "jnz 2f",
                "xor ebp, ebp",
                "mov rdi, r12",
                "call r13",
                "ud2",
                "2:",
                inlateout("rax") SYS_CLONE3 as isize => ret,
                in("rdi") &raw mut args,
                in("rsi") size_of::<CloneArgs>(),
                in("r12") plan as *const ChildPlan,
                in("r13") child_main as extern "C" fn(*const ChildPlan) -> !,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        drop(stack);
        if ret < 0 {
            return Err(i32::try_from(-ret).unwrap_or(i32::MAX));
        }
        // SAFETY: with `CLONE_PIDFD` a successful `clone3` stored a new descriptor, owned by
        // nobody else, in `pidfd`.
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        Ok((u32::try_from(ret).unwrap_or(0), pidfd))
    }

    /// One system call with up to four arguments; returns the result or -errno.
    ///
    /// # Safety
    /// The arguments must be valid for system call `n` (pointers to live memory of the right
    /// layout).
    unsafe fn syscall4(n: usize, a1: usize, a2: usize, a3: usize, a4: usize) -> isize {
        let ret: isize;
        // SAFETY: the `syscall` instruction, with the caller's valid arguments; it clobbers
        // rcx and r11 and touches no stack of ours.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") n as isize => ret,
                in("rdi") a1,
                in("rsi") a2,
                in("rdx") a3,
                in("r10") a4,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    /// One system call with five arguments (`mount`); returns the result or -errno.
    ///
    /// # Safety
    /// As [`syscall4`].
    unsafe fn syscall5(n: usize, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize) -> isize {
        let ret: isize;
        // SAFETY: as in `syscall4`, with a fifth argument in r8.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") n as isize => ret,
                in("rdi") a1,
                in("rsi") a2,
                in("rdx") a3,
                in("r10") a4,
                in("r8") a5,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    /// Writes `len` bytes at `data` to the file at `path` (a `/proc/self` file), in one write.
    ///
    /// # Safety
    /// `path` is NUL-terminated; `data` points to `len` readable bytes.
    unsafe fn write_file(path: *const u8, data: *const u8, len: usize) -> isize {
        // SAFETY: the caller's valid pointers; the descriptor is ours and closed here.
        unsafe {
            let fd = syscall4(SYS_OPEN, path as usize, O_WRONLY | O_CLOEXEC, 0, 0);
            if fd < 0 {
                return fd;
            }
            let ret = syscall4(SYS_WRITE, fd as usize, data as usize, len, 0);
            syscall4(SYS_CLOSE, fd as usize, 0, 0, 0);
            if ret < 0 { ret } else { 0 }
        }
    }

    /// In a new mount namespace (and user namespace): maps the hook's own user and group (one
    /// line each, after denying `setgroups`: what the kernel lets a process map for itself),
    /// makes every mount private (nothing mounted here reaches the host), then shows each view:
    /// a bind mount of its source at its target, remounted read-only with the flags the kernel
    /// locks kept. Returns 0, or the failed step (`super::step`) and -errno.
    ///
    /// # Safety
    /// `ns` comes from `NsPlan::of` of a plan the suspended parent keeps alive.
    unsafe fn make_views(ns: &super::NsPlan) -> Result<(), (usize, isize)> {
        use super::step;
        use crate::views::{MS_BIND, MS_PRIVATE, MS_REC};
        // SAFETY: NUL-terminated literals, and the plan's buffers with their lengths.
        unsafe {
            if ns.user_namespace {
                let deny = b"deny";
                let ret = write_file(
                    c"/proc/self/setgroups".as_ptr().cast(),
                    deny.as_ptr(),
                    deny.len(),
                );
                if ret < 0 {
                    return Err((step::SETGROUPS, ret));
                }
                let ret = write_file(
                    c"/proc/self/uid_map".as_ptr().cast(),
                    ns.uid_map,
                    ns.uid_map_len,
                );
                if ret < 0 {
                    return Err((step::UID_MAP, ret));
                }
                let ret = write_file(
                    c"/proc/self/gid_map".as_ptr().cast(),
                    ns.gid_map,
                    ns.gid_map_len,
                );
                if ret < 0 {
                    return Err((step::GID_MAP, ret));
                }
            }
            let ret = syscall5(
                SYS_MOUNT,
                0,
                c"/".as_ptr() as usize,
                0,
                (MS_REC | MS_PRIVATE) as usize,
                0,
            );
            if ret < 0 {
                return Err((step::PRIVATE, ret));
            }
            for i in 0..ns.binds_len {
                let (source, target, flags) = &*ns.binds.add(i);
                let ret = syscall5(
                    SYS_MOUNT,
                    source.as_ptr() as usize,
                    target.as_ptr() as usize,
                    0,
                    MS_BIND as usize,
                    0,
                );
                if ret < 0 {
                    return Err((step::BINDS + 2 * i, ret));
                }
                let ret = syscall5(
                    SYS_MOUNT,
                    0,
                    target.as_ptr() as usize,
                    0,
                    *flags as usize,
                    0,
                );
                if ret < 0 {
                    return Err((step::BINDS + 2 * i + 1, ret));
                }
            }
        }
        Ok(())
    }

    /// The child, between `clone3` and `execve`, on its own stack in the parent's memory: raw
    /// system calls only (no allocation, no lock, no panic, no thread-local), reading `plan`.
    /// Leads a new process group, enters the working directory, takes its pipes as 0, 1 and 2,
    /// keeps the passed descriptors, restores SIGPIPE and an empty signal mask (as std's spawn
    /// does), and executes; on failure it records the errno and exits with 127.
    extern "C" fn child_main(plan: *const ChildPlan) -> ! {
        // SAFETY: `clone_into` passes a pointer to a live `ChildPlan`, which the suspended
        // parent keeps alive until this child executes or exits.
        let plan = unsafe { &*plan };
        let fail = |ret: isize| -> ! {
            plan.errno.store(
                i32::try_from(-ret).unwrap_or(i32::MAX).max(1),
                Ordering::Release,
            );
            // SAFETY: `exit` takes a plain integer and does not return.
            loop {
                unsafe { syscall4(SYS_EXIT, 127, 0, 0, 0) };
            }
        };
        // SAFETY (every call below): plain integers, or pointers into `plan`'s strings and
        // arrays, NUL-terminated and null-terminated by the parent, or to locals of this
        // frame with the kernel's layout.
        unsafe {
            let ret = syscall4(SYS_SETPGID, 0, 0, 0, 0);
            if ret < 0 {
                fail(ret);
            }
            // Views first: the working directory is entered after them, so one inside a view
            // is the view's.
            if let Some(ns) = &plan.ns {
                if let Err((step, ret)) = make_views(ns) {
                    plan.failed_step.store(step, Ordering::Relaxed);
                    fail(ret);
                }
                if plan.probe {
                    loop {
                        syscall4(SYS_EXIT, 0, 0, 0, 0);
                    }
                }
            }
            if !plan.cwd.is_null() {
                let ret = syscall4(SYS_CHDIR, plan.cwd as usize, 0, 0, 0);
                if ret < 0 {
                    fail(ret);
                }
            }
            for (target, fd) in plan.stdio.iter().enumerate() {
                let ret = syscall4(SYS_DUP2, *fd as usize, target, 0, 0);
                if ret < 0 {
                    fail(ret);
                }
            }
            for i in 0..plan.keep_len {
                let fd = *plan.keep.add(i);
                let ret = syscall4(SYS_FCNTL, fd as usize, F_SETFD, 0, 0);
                if ret < 0 {
                    fail(ret);
                }
            }
            // Rust programs ignore SIGPIPE; an ignored signal stays ignored across `execve`.
            // std's spawn restores the default for the child: so does this.
            let default = KernelSigaction {
                handler: 0,
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            let ret = syscall4(
                SYS_RT_SIGACTION,
                SIGPIPE,
                &raw const default as usize,
                0,
                SIGSET_SIZE,
            );
            if ret < 0 {
                fail(ret);
            }
            let empty: u64 = 0;
            let ret = syscall4(
                SYS_RT_SIGPROCMASK,
                SIG_SETMASK,
                &raw const empty as usize,
                0,
                SIGSET_SIZE,
            );
            if ret < 0 {
                fail(ret);
            }
            let ret = syscall4(
                SYS_EXECVE,
                plan.path as usize,
                plan.argv as usize,
                plan.envp as usize,
                0,
            );
            if ret != -ENOEXEC {
                fail(ret);
            }
            let ret = syscall4(
                SYS_EXECVE,
                super::SH.as_ptr() as usize,
                plan.sh_argv as usize,
                plan.envp as usize,
                0,
            );
            fail(ret);
        }
    }
}
