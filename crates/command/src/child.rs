//! A started hook, whichever way it was started: std's spawn (`tokio::process::Child`) or
//! `clone3` straight into its cgroup (`clone3::DirectChild`). The runner and the process group
//! see one interface: its pid, its pipes, waiting for and reaping it.

use std::io;
use std::process::ExitStatus;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::Child;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use crate::clone3::DirectChild;

/// The write end of a hook's stdin.
pub(crate) type HookStdin = Box<dyn AsyncWrite + Send + Unpin>;
/// The read end of a hook's stdout or stderr.
pub(crate) type HookOutput = Box<dyn AsyncRead + Send + Unpin>;

/// A started hook. Dropped unreaped, it is killed (and reaped in the background).
#[derive(Debug)]
pub(crate) enum HookChild {
    Std(Child),
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    Direct(DirectChild),
}

impl HookChild {
    /// The pid, while it is not reaped.
    pub(crate) fn id(&self) -> Option<u32> {
        match self {
            HookChild::Std(c) => c.id(),
            #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
            HookChild::Direct(c) => Some(c.id()),
        }
    }

    /// Takes the three pipes: stdin, stdout, stderr.
    pub(crate) fn take_pipes(
        &mut self,
    ) -> (Option<HookStdin>, Option<HookOutput>, Option<HookOutput>) {
        match self {
            HookChild::Std(c) => (
                c.stdin.take().map(|p| Box::new(p) as HookStdin),
                c.stdout.take().map(|p| Box::new(p) as HookOutput),
                c.stderr.take().map(|p| Box::new(p) as HookOutput),
            ),
            #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
            HookChild::Direct(c) => (
                c.stdin.take().map(|p| Box::new(p) as HookStdin),
                c.stdout.take().map(|p| Box::new(p) as HookOutput),
                c.stderr.take().map(|p| Box::new(p) as HookOutput),
            ),
        }
    }

    /// Waits for the hook to exit and reaps it. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            HookChild::Std(c) => c.wait().await,
            #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
            HookChild::Direct(c) => c.wait().await,
        }
    }

    /// Reaps the hook if it exited.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self {
            HookChild::Std(c) => c.try_wait(),
            #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
            HookChild::Direct(c) => c.try_wait(),
        }
    }
}
