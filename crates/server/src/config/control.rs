//! `[control]` of `serve.toml`: the control store replicas share (issue 29) and how often a
//! replica looks at it and at the tenants folder.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// Longest `control.poll_interval_secs` (an hour).
pub const MAX_POLL_INTERVAL_SECS: u64 = 3600;

/// The control store and the poll.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControlSettings {
    /// The control store's folder, on storage every replica shares (never inside the tenants
    /// or state folders). Default **none**: one replica, approvals in its state folder, no
    /// poll.
    pub dir: Option<PathBuf>,
    /// Seconds between two looks at the tenants folder and the control store: a tenant whose
    /// files changed is reloaded (validate-then-swap, held where `[trust]` says), an approval
    /// or rejection made on another replica is acted on. Default **2**, at most 3600.
    #[serde(
        rename = "poll_interval_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub poll_interval: Duration,
    /// With dir set: also watch the tenants folder and the store with inotify, so a change
    /// wakes the poll at once where the kernel reports it (a local file system; NFS reports
    /// only this machine's own writes, so the poll stays). Default **true**.
    pub inotify: bool,
}

impl Default for ControlSettings {
    fn default() -> Self {
        ControlSettings {
            dir: None,
            poll_interval: Duration::from_secs(2),
            inotify: true,
        }
    }
}
