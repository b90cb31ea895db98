//! Resource limits of one command-hook run. The timeout itself is per rule (it comes from the
//! rule's `CommandSpec`), so it lives on the request, not here.

use std::time::Duration;

/// Limits applied to every command hook a [`crate::CommandRunner`] runs.
///
/// | field | default | when exceeded |
/// | --- | --- | --- |
/// | [`max_stdout_bytes`](Self::max_stdout_bytes) | 1 MiB | the first bytes are kept, the rest is read and discarded, `stdout_truncated` is set |
/// | [`max_stderr_bytes`](Self::max_stderr_bytes) | 1 MiB | the same for stderr, `stderr_truncated` |
/// | [`reap_timeout`](Self::reap_timeout) | 5 s | the run returns what it has, with a note; the leader is reaped in the background |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandLimits {
    /// Bytes of stdout kept. Default 1 MiB (SPEC §4.1).
    ///
    /// Beyond the cap the runner keeps reading and discarding, so a chatty hook never blocks on
    /// a full pipe, and reports `stdout_truncated: true`. A cut that splits a UTF-8 character
    /// drops the partial character.
    pub max_stdout_bytes: usize,
    /// Bytes of stderr kept. Default 1 MiB; exceeded as for stdout (`stderr_truncated`).
    pub max_stderr_bytes: usize,
    /// How long the runner waits, after it killed the process group, for the output pipes to
    /// close and the hook to be reaped. Default 5 s.
    ///
    /// SIGKILL normally ends everything at once; this bounds the odd cases (a process stuck in
    /// uninterruptible I/O, or one that left the group with `setsid` while holding the pipes).
    /// When exceeded, the run returns what it captured with a note, and the leader is reaped in
    /// the background as soon as it dies.
    pub reap_timeout: Duration,
}

impl CommandLimits {
    /// The default stdout and stderr cap: 1 MiB each.
    pub const DEFAULT_OUTPUT_BYTES: usize = 1024 * 1024;
    /// The default [`reap_timeout`](Self::reap_timeout): 5 s.
    pub const DEFAULT_REAP_TIMEOUT: Duration = Duration::from_secs(5);

    /// These limits with a stdout cap of `bytes`.
    pub fn with_max_stdout_bytes(mut self, bytes: usize) -> Self {
        self.max_stdout_bytes = bytes;
        self
    }

    /// These limits with a stderr cap of `bytes`.
    pub fn with_max_stderr_bytes(mut self, bytes: usize) -> Self {
        self.max_stderr_bytes = bytes;
        self
    }

    /// These limits with a [`reap_timeout`](Self::reap_timeout) of `timeout`.
    pub fn with_reap_timeout(mut self, timeout: Duration) -> Self {
        self.reap_timeout = timeout;
        self
    }
}

impl Default for CommandLimits {
    fn default() -> Self {
        CommandLimits {
            max_stdout_bytes: Self::DEFAULT_OUTPUT_BYTES,
            max_stderr_bytes: Self::DEFAULT_OUTPUT_BYTES,
            reap_timeout: Self::DEFAULT_REAP_TIMEOUT,
        }
    }
}
