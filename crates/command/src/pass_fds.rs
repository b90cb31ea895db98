//! Keeping chosen descriptors open in one hook's process, and in no other.
//!
//! The host runs a pinned script from a sealed copy held by a descriptor (`/proc/self/fd/N`,
//! see `hookbox-host`'s trust module). Every descriptor hookbox opens is close-on-exec, so a
//! hook spawned at the same time never inherits another's; for the one hook that runs the copy,
//! the flag is cleared between `fork` and `exec`, in the child only (here for std's spawn;
//! `clone3.rs` does the same in its child). The number stays the same
//! (a forked child has the parent's descriptor table), so `/proc/self/fd/N` written in the
//! command names it in the hook too.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use tokio::process::Command;

/// Makes `fds` survive the `exec` of `cmd`'s child. Each must be 3 or above (0–2 become the
/// child's stdin, stdout and stderr before this runs).
pub(crate) fn keep_open(cmd: &mut Command, fds: &[Arc<OwnedFd>]) {
    let fds: Vec<Arc<OwnedFd>> = fds.to_vec();
    let keep = move || -> io::Result<()> {
        for fd in &fds {
            rustix::io::fcntl_setfd(&**fd, rustix::io::FdFlags::empty())?;
        }
        Ok(())
    };
    // SAFETY: `pre_exec` runs `keep` in the forked child, where only async-signal-safe work is
    // allowed. `keep` takes no lock and allocates nothing: it iterates the `Vec` it owns by
    // reference (no clone, no drop: the child either executes or exits without running
    // destructors), makes one `fcntl(F_SETFD)` system call per descriptor through rustix, and on
    // failure turns the raw errno into an `io::Error` without allocating. The descriptors are
    // valid in the child: the `Arc`s keep them open in the parent for as long as `cmd` lives,
    // and the child's table is a copy of the parent's at the fork.
    #[allow(
        unsafe_code,
        reason = "a descriptor is made inheritable in the child only, between fork and exec; see SAFETY"
    )]
    unsafe {
        cmd.pre_exec(keep);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::os::fd::AsRawFd;

    use hookbox_core::Dialect;
    use hookbox_core::rule::CommandSpec;

    use crate::{CommandRequest, CommandRunner, HookContext};

    #[tokio::test]
    async fn a_passed_descriptor_is_open_in_its_hook_only() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"passed").unwrap();
        let fd = std::sync::Arc::new(std::os::fd::OwnedFd::from(f));
        let n = fd.as_raw_fd();
        let runner = CommandRunner::new();
        let read = format!("cat /proc/self/fd/{n} 2>/dev/null || echo closed");
        let req = |pass: bool| {
            let r = CommandRequest::new(
                CommandSpec::shell(&read, 10.0),
                HookContext::new(Dialect::Claude),
            );
            if pass {
                r.with_pass_fds(vec![fd.clone()])
            } else {
                r
            }
        };
        let with = runner.run(&req(true)).await.unwrap();
        assert_eq!(with.output.stdout, "passed");
        // Another hook, spawned without it, never sees it: the parent's copy stays close-on-exec.
        let without = runner.run(&req(false)).await.unwrap();
        assert_eq!(without.output.stdout.trim(), "closed");
        let flags = rustix::io::fcntl_getfd(&*fd).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
    }
}
