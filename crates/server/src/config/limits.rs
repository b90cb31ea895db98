//! `[limits]` of `serve.toml`: HTTP limits, each a bound on what one client (or all of them)
//! can make the server hold, with its default.

use std::time::Duration;

use serde::Deserialize;

/// HTTP limits, each a bound on what one client (or all of them) can make the server hold.
/// Durations are [`Duration`]s named for what they bound; their keys in the file end in `_secs`
/// (the unit they are written in).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest request body in bytes (413 over it). Default **1 MiB**, at most 64 MiB.
    pub max_body_bytes: u64,
    /// Largest request head in bytes (431 over it). Default **16 KiB**, at most 1 MiB.
    pub max_header_bytes: usize,
    /// Largest dispatch answer in bytes: hook outputs in an answer are previews, and an answer
    /// still over it drops its per-hook reports (the verdict stays whole). Default **4 MiB**, at
    /// most 64 MiB.
    pub max_answer_bytes: usize,
    /// Seconds to send a request head; also the idle keep-alive bound. Default **10**.
    #[serde(
        rename = "header_read_timeout_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub header_read_timeout: Duration,
    /// Seconds to send a body once the head is in (408 after). Default **10**.
    #[serde(
        rename = "body_read_timeout_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub body_read_timeout: Duration,
    /// Tenant requests (dispatch, claude-code) running hooks at once, across all tenants (503
    /// over it, at once); a request holds one only once its body is in. Admin calls have as
    /// many places of their own. Default **256**.
    pub max_requests_in_flight: usize,
    /// Of those, how many are kept for tenants with none in flight, so no single tenant can
    /// take the last ones. Default **16**.
    pub reserved_requests: usize,
    /// Open connections (closed at accept over it). Default **1024**.
    pub max_connections: usize,
    /// Open connections from one peer — one IPv4 address, or one IPv6 /64 (what one host is
    /// usually given) — closed at accept over it, so one client cannot hold every slot.
    /// Default **64**. Behind a proxy every connection is the proxy's: raise it to
    /// `max_connections` there and cap clients at the proxy.
    pub max_connections_per_peer: usize,
    /// Seconds a connection may sit with no request in progress and nothing received before it
    /// is closed (idle keep-alive; also a fresh connection that sends nothing). Default **5**.
    #[serde(
        rename = "idle_timeout_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub idle_timeout: Duration,
    /// Event streams open at once (503 over it). Default **64**.
    pub max_sse_subscribers: usize,
    /// Event streams one tenant may hold (429 over it). Default **4**.
    pub max_sse_subscribers_per_tenant: usize,
    /// Seconds between keep-alive comments on an idle event stream. Default **15**.
    #[serde(
        rename = "sse_keepalive_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub sse_keepalive: Duration,
    /// Seconds the server keeps accepting after SIGTERM/SIGINT, answering `/readyz` 503, so a
    /// load balancer stops routing to it before it closes its port. Default **0**, at most 3600.
    #[serde(rename = "shutdown_delay_secs", with = "hookbox_host::duration::secs")]
    pub shutdown_delay: Duration,
    /// Seconds accepted requests get to be answered on SIGTERM/SIGINT. Default **30**.
    #[serde(
        rename = "shutdown_grace_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub shutdown_grace: Duration,
    /// Seconds background hooks then get before they are cancelled. Default **10**.
    #[serde(
        rename = "drain_grace_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub drain_grace: Duration,
    /// Seconds a removed tenant's running hooks get to finish. Default **5**.
    #[serde(
        rename = "remove_grace_secs",
        with = "hookbox_host::duration::positive_secs"
    )]
    pub remove_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 1 << 20,
            max_header_bytes: 16 << 10,
            max_answer_bytes: 4 << 20,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            max_requests_in_flight: 256,
            reserved_requests: 16,
            max_connections: 1024,
            max_connections_per_peer: 64,
            idle_timeout: Duration::from_secs(5),
            max_sse_subscribers: 64,
            max_sse_subscribers_per_tenant: 4,
            sse_keepalive: Duration::from_secs(15),
            shutdown_delay: Duration::ZERO,
            shutdown_grace: Duration::from_secs(30),
            drain_grace: Duration::from_secs(10),
            remove_grace: Duration::from_secs(5),
        }
    }
}
