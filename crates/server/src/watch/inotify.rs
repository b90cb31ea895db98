//! The poll's early wake: where the kernel tells (Linux inotify on a local file system), a
//! change under the tenants folder or the control store wakes the poll at once instead of at
//! its next tick. It only wakes: what changed is still found, and acted on, by the poll
//! itself, which keeps running every `control.poll_interval_secs` — the fallback where inotify
//! cannot watch, and the only way on NFS, whose inotify sees this machine's writes but not
//! another replica's.
//!
//! One thread watches every folder beneath the given roots (at most [`MAX_WATCHES`]; past it
//! the rest is left to the poll, logged once), adds the folders created later, and ends within
//! [`STOP_CHECK`] of its [`Wake`] being dropped.

use std::collections::HashSet;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use tokio::sync::Notify;

/// Most folders watched (each an inotify watch, kernel memory the user is charged for; Linux's
/// default `max_user_watches` is 8192 or more). Folders past it are seen by the poll alone.
pub(crate) const MAX_WATCHES: usize = 4096;

/// How often the watching thread checks whether its [`Wake`] is gone.
const STOP_CHECK: Duration = Duration::from_secs(1);

/// Wakes the poll early. Dropping it ends the watching thread.
#[derive(Debug)]
pub(crate) struct Wake {
    notify: Arc<Notify>,
}

impl Wake {
    /// Resolves at the next change the kernel reported (at once if one came since the last
    /// call).
    pub(crate) async fn changed(&self) {
        self.notify.notified().await;
    }
}

/// Starts watching `roots` (and every folder beneath them); `None`, with the reason logged,
/// where inotify is not available.
pub(crate) fn watch(roots: Vec<PathBuf>) -> Option<Wake> {
    let fd = match inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK) {
        Ok(fd) => fd,
        Err(e) => {
            tracing::info!(error = %e, "inotify unavailable: the tenants folder and the control store are polled only");
            return None;
        }
    };
    let notify = Arc::new(Notify::new());
    let mut watcher = Watcher {
        fd,
        roots,
        watched: HashSet::new(),
        warned: false,
    };
    watcher.add_all();
    let theirs = Arc::downgrade(&notify);
    let spawned = std::thread::Builder::new()
        .name("hookbox-inotify".into())
        .spawn(move || watcher.run(&theirs));
    match spawned {
        Ok(_) => Some(Wake { notify }),
        Err(e) => {
            tracing::warn!(error = %e, "cannot start the inotify thread: polling only");
            None
        }
    }
}

struct Watcher {
    fd: OwnedFd,
    roots: Vec<PathBuf>,
    /// The watches in place (the kernel gives a folder watched twice its first watch again,
    /// and reports a removed folder's watch as `IGNORED`).
    watched: HashSet<i32>,
    warned: bool,
}

impl Watcher {
    fn flags() -> WatchFlags {
        WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW
    }

    /// Watches every folder beneath the roots (without following symlinks), up to the cap.
    fn add_all(&mut self) {
        let mut stack = self.roots.clone();
        while let Some(dir) = stack.pop() {
            if !self.add(&dir) {
                return;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }

    /// Watches `dir`; false once the cap is reached.
    fn add(&mut self, dir: &Path) -> bool {
        if self.watched.len() >= MAX_WATCHES {
            if !self.warned {
                self.warned = true;
                tracing::warn!(
                    max = MAX_WATCHES,
                    "more folders than inotify watches: changes past them are seen by the poll only"
                );
            }
            return false;
        }
        if let Ok(wd) = inotify::add_watch(&self.fd, dir, Self::flags()) {
            self.watched.insert(wd);
        }
        true
    }

    fn run(mut self, notify: &std::sync::Weak<Notify>) {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let timeout = Timespec::try_from(STOP_CHECK).unwrap_or(Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        });
        loop {
            let Some(wake) = notify.upgrade() else { return };
            let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "inotify failed: polling only from now on");
                    return;
                }
            }
            let mut new_folder = false;
            let mut overflow = false;
            let mut gone = Vec::new();
            {
                let mut reader = inotify::Reader::new(&self.fd, &mut buf);
                loop {
                    match reader.next() {
                        Ok(ev) => {
                            let f = ev.events();
                            new_folder |= f.contains(ReadFlags::ISDIR)
                                && f.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO);
                            overflow |= f.contains(ReadFlags::QUEUE_OVERFLOW);
                            if f.contains(ReadFlags::IGNORED) {
                                gone.push(ev.wd());
                            }
                        }
                        Err(rustix::io::Errno::AGAIN) => break,
                        Err(rustix::io::Errno::INTR) => continue,
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot read inotify events: polling only from now on");
                            return;
                        }
                    }
                }
            }
            for wd in gone {
                self.watched.remove(&wd);
            }
            wake.notify_one();
            if new_folder || overflow {
                // What was written in a new folder before its watch was added has no event:
                // wake the poll again once the watch is there, so it is seen all the same.
                self.add_all();
                wake.notify_one();
            }
        }
    }
}
