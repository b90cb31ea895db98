//! Limits of the `http` hook runner. The timeout is per rule (`HttpSpec::timeout_secs`), so
//! it is not here.

use std::time::Duration;

/// Limits applied to every `http` hook an [`crate::HttpRunner`] runs.
///
/// | field | default | when exceeded |
/// | --- | --- | --- |
/// | [`max_body_bytes`](Self::max_body_bytes) | 1 MiB | the hook fails with `http_error` (a cut JSON answer is no answer); the connection is closed |
/// | [`max_error_body_bytes`](Self::max_error_body_bytes) | 1 KiB | read of a non-2xx body, to quote its start in the failure message; the rest is not read |
/// | [`max_header_bytes`](Self::max_header_bytes) | 64 KiB | the response head is refused (`http_error`) |
/// | [`idle_timeout`](Self::idle_timeout) | 4 s | an idle pooled connection is closed instead of reused |
/// | [`max_idle_per_destination`](Self::max_idle_per_destination) | 4 | a connection returned beyond it is closed |
/// | [`max_idle_total`](Self::max_idle_total) | 64 | the same, over all destinations |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Bytes of a 2xx response body read (SPEC §4.2a: capped like command output). Default
    /// 1 MiB. A longer body fails the hook with `http_error` rather than being cut: the answer
    /// is a JSON object, and a cut one would not parse anyway.
    pub max_body_bytes: usize,
    /// Bytes of a non-2xx response body read to quote its start (up to 200 characters) in the
    /// failure message. Default 1 KiB.
    pub max_error_body_bytes: usize,
    /// Bytes of a response's status line and headers. Default 64 KiB (hyper's minimum, 8 KiB,
    /// applies below that).
    pub max_header_bytes: usize,
    /// How long an idle connection stays in the pool for the next hook to the same
    /// destination. Default 4 s: below the 5 s keep-alive of Node.js servers, the most common
    /// small hook endpoints, so the pool does not hand out a connection the server is closing.
    pub idle_timeout: Duration,
    /// Idle connections kept per destination (scheme, host, port and the checked address).
    /// Default 4.
    pub max_idle_per_destination: usize,
    /// Idle connections kept in all. Default 64 (each holds a socket).
    pub max_idle_total: usize,
}

impl HttpLimits {
    /// The default body cap: 1 MiB, as command output.
    pub const DEFAULT_BODY_BYTES: usize = 1024 * 1024;
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: Self::DEFAULT_BODY_BYTES,
            max_error_body_bytes: 1024,
            max_header_bytes: 64 * 1024,
            idle_timeout: Duration::from_secs(4),
            max_idle_per_destination: 4,
            max_idle_total: 64,
        }
    }
}
