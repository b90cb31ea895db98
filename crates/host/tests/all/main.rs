//! hookbox-host integration tests: real processes through `HookHost::dispatch`, no mocked runner.
//! One binary (wasmtime links once); modules by concern.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

mod cannot_run;
mod concurrency;
mod exit_codes;
mod hardening;
mod observe;
mod processes;
mod replay;
mod stop;
mod tenant_control;
mod tenant_fixture;
mod tenant_snapshots;
mod tenant_trust;
mod tenants;
mod trust;
mod util;
mod wasm;
