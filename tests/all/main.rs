//! End-to-end tests of the `hookbox` binary: each module runs the real executable
//! (`CARGO_BIN_EXE_hookbox`) on temporary folders and on the copied hook-file corpus, and checks
//! exit codes, stdout and stderr.

mod agents;
mod bench;
mod build_js;
mod demo;
mod dispatch;
mod example_layouts;
mod guards;
mod hook;
mod hook_hostile;
mod install;
mod kit;
mod packaging;
mod sandbox;
mod serve;
mod serve_connections;
mod serve_held;
mod serve_ops;
mod serve_replicas;
mod serve_security;
mod serve_tenants;
mod serve_trust;
mod serve_util;
mod trust;
mod trust_guards;
mod trust_plugins;
mod trust_programs;
mod trust_settings_snapshot;
mod trust_views;
mod util;
mod validate;
mod wasm;
