//! hookbox-server: `hookbox serve`, the hook host as an HTTP service for agent runtimes in any
//! language and for Claude Code's `http` hooks, over a tenants folder
//! (`<tenants_dir>/<tenant-id>/tenant.toml` and `…/plugins/`).
//!
//! - [`ServerConfig`]: the TOML configuration, every key documented with its default
//!   ([`DEFAULT_CONFIG`]);
//! - [`Server`]: binds, loads the tenants, serves the API (`docs/api.md`) and drains on
//!   shutdown; [`ServerHandle`] shuts it down or reloads every tenant;
//!
//! The dispatch answer is the host's `hookbox_host::dispatch_json` and Claude Code's is
//! `hookbox_agents::claude_code_json`: the CLI prints the same objects without this crate.
//!
//! The server speaks plain HTTP/1.1 and listens on loopback by default: TLS belongs to a proxy in
//! front of it. It keeps no state but the tenants folder, the compile cache and the replay
//! files, so replicas behind a load balancer scale it out (`docs/deploy.md`).
//!
//! This crate sits on `hookbox-host` (tenants, runtime) and `hookbox-core` (events, verdicts);
//! nothing of ours depends on it but the `hookbox` binary.

#![forbid(unsafe_code)]

mod answer;
mod api_error;
mod app;
mod auth;
mod body;
mod config;
mod connection;
mod http_metrics;
mod listener;
mod loader;
pub mod logging;
mod prometheus;
mod registry;
mod request;
mod routes;
mod server;
mod tenant_file;
mod token;
mod watch;

pub use config::{
    ConfigError, ControlSettings, DEFAULT_CONFIG, DEFAULT_PORT, Limits, LogFormat,
    MAX_ADMISSION_WAIT_MS, MAX_ANSWER_BYTES_LIMIT, MAX_BODY_BYTES_LIMIT, MAX_HEADER_BYTES_LIMIT,
    MAX_POLL_INTERVAL_SECS, MAX_SHUTDOWN_DELAY_SECS, MAX_STREAM_STALL_SECS, MAX_WORKER_THREADS,
    ReplaySettings, ReplaySinkKind, RuntimeKnobs, ServerConfig,
};
pub use server::{ReloadSummary, ServeError, Server, ServerHandle, ShutdownReport};
pub use tenant_file::{MAX_TENANT_FILE_BYTES, TENANT_FILE, TenantFile, TenantFileError};
pub use token::{TokenHash, TokenHashError};
