//! The fallback way into a hook's cgroup: moving the child there between `fork` and `exec`.
//!
//! On x86_64 Linux with `clone3` (5.7 and later) the hook is created inside its cgroup
//! (`clone3.rs`) and this module is not used. Elsewhere — another architecture, a kernel or a
//! seccomp filter without `clone3` — the hook is spawned by std and moves itself.
//!
//! Why it must happen there: moving the hook after the spawn returned leaves a window in which
//! the hook already runs and can fork a process that stays outside the cgroup (and so escapes
//! the kill). Writing `0` to the cgroup's `cgroup.procs` from the child itself, before `exec`,
//! moves the child before any of the hook's own code runs; everything it forks is born inside.
//!
//! What it costs (issue 18 §5): the move takes the kernel's `cgroup_threadgroup_rwsem` for
//! writing — an RCU grace period, milliseconds, during which every `fork` on the machine
//! waits — and a `pre_exec` closure makes std `fork` (copying the host's page tables) instead
//! of `posix_spawn`. `clone3` avoids both; see `docs/performance.md`.

use std::fs::File;
use std::io;
use std::sync::Arc;

use tokio::process::Command;

/// Makes the child of `cmd` join the cgroup whose `cgroup.procs` is `procs` before it executes
/// the hook. If the kernel refuses, the spawn fails with the kernel's error (and nothing ran).
pub(crate) fn join_before_exec(cmd: &mut Command, procs: Arc<File>) {
    let join = move || -> io::Result<()> {
        loop {
            // "0" moves the writing process itself (cgroup v2 `cgroup.procs`).
            match rustix::io::write(&*procs, b"0") {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    };
    // SAFETY: `pre_exec` runs `join` in the forked child, where only async-signal-safe work is
    // allowed (another thread of the parent may have held a lock, such as the allocator's, at
    // the fork). `join` takes no lock and allocates nothing: it reads through the `Arc` it owns
    // (no clone, no drop: the child either executes or exits without running destructors),
    // makes one `write(2)` system call through rustix, and on failure builds an `io::Error`
    // from the raw errno (`from_raw_os_error`, no allocation). The descriptor is valid in the
    // child: the `Arc` keeps the file open in the parent for as long as `cmd` lives, and
    // `O_CLOEXEC` only closes it at `exec`, after the write.
    #[allow(
        unsafe_code,
        reason = "the cgroup must be joined between fork and exec; see SAFETY"
    )]
    unsafe {
        cmd.pre_exec(join);
    }
}
