//! `[replay]` of `serve.toml`: where the replay records go — per-session files in each
//! tenant's state folder, or JSON lines on standard output for the cluster's log pipeline
//! (replay that outlives a pod, whose state folder is an `emptyDir`).

use std::time::Duration;

use hookbox_host::replay::ReplayOutput;
use serde::Deserialize;

/// Longest `replay.stream_stall_secs` (a minute): the writer holds its records that long.
pub const MAX_STREAM_STALL_SECS: u64 = 60;

/// The replay sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplaySinkKind {
    /// Per-session files in each tenant's state folder (`<state_dir>/<tenant>/replay/`).
    #[default]
    Files,
    /// JSON lines on standard output, one record a line with a `host` field (the tenant).
    Stdout,
}

impl From<ReplaySinkKind> for ReplayOutput {
    fn from(k: ReplaySinkKind) -> ReplayOutput {
        match k {
            ReplaySinkKind::Files => ReplayOutput::Files,
            ReplaySinkKind::Stdout => ReplayOutput::Stdout,
        }
    }
}

/// `[replay]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplaySettings {
    /// `"files"` (the default) or `"stdout"`.
    pub sink: ReplaySinkKind,
    /// With `sink = "stdout"`: seconds the writer waits for standard output to take more bytes
    /// before it drops the records it holds (counted in `hookbox_replay_dropped_total`).
    /// Default **5**, above 0, at most 60.
    #[serde(
        rename = "stream_stall_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub stream_stall: Duration,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings {
            sink: ReplaySinkKind::Files,
            stream_stall: Duration::from_secs(5),
        }
    }
}
