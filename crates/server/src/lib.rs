//! hookbox-server: `hookbox serve`, the hook host as an HTTP service for agent runtimes in any
//! language and for Claude Code's `http` hooks, over a tenants folder
//! (`<tenants_dir>/<tenant-id>/tenant.toml` and `…/plugins/`).
//!
//! - [`ServerConfig`]: the TOML configuration, every key documented with its default
//!   ([`DEFAULT_CONFIG`]);
//! - [`Server`]: binds, loads the tenants, serves the API (`docs/api.md`) and drains on
//!   shutdown; [`ServerHandle`] shuts it down or reloads every tenant;
//! - [`dispatch_json`]: the dispatch answer, shared with the CLI (Claude Code's answer is
//!   core's `agent::claude_code_json`, shared the same way).
//!
//! The server speaks plain HTTP/1.1 and listens on loopback by default: TLS belongs to a proxy in
//! front of it. It keeps no state but the tenants folder, the compile cache and the replay
//! files, so replicas behind a load balancer scale it out (`docs/deploy.md`).
//!
//! This crate sits on `hookbox-host` (tenants, runtime) and `hookbox-core` (events, verdicts);
//! nothing of ours depends on it but the `hookbox` binary.

#![forbid(unsafe_code)]

mod api_error;
mod app;
mod auth;
mod body;
mod config;
mod connection;
mod dispatch_json;
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

pub use config::{
    ConfigError, DEFAULT_CONFIG, DEFAULT_PORT, Limits, LogFormat, RuntimeKnobs, ServerConfig,
};
pub use dispatch_json::dispatch_json;
pub use server::{ReloadSummary, ServeError, Server, ServerHandle, ShutdownReport};
pub use tenant_file::{MAX_TENANT_FILE_BYTES, TENANT_FILE, TenantFile, TenantFileError};
pub use token::{TokenHash, TokenHashError};
