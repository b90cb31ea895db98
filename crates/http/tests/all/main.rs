//! Integration tests of the http runner against a real HTTP server on 127.0.0.1 (started by
//! each test, on a free port). No traffic leaves loopback: names that resolve elsewhere come
//! from a fake resolver and are refused before any connection.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail the test on a broken setup"
)]

mod server;

mod answers;
mod headers;
mod limits;
mod policy;
mod tls;
