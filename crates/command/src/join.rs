//! Moving a hook into its cgroup between `fork` and `exec`: the only `unsafe` in this crate.
//!
//! Why it must happen there: moving the hook after the spawn returned leaves a window in which
//! the hook already runs and can fork a process that stays outside the cgroup (and so escapes
//! the kill). `clone3(CLONE_INTO_CGROUP)` would close it too, but neither std nor tokio spawns
//! that way. Writing `0` to the cgroup's `cgroup.procs` from the child itself, before `exec`,
//! moves the child before any of the hook's own code runs; everything it forks is born inside.

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
