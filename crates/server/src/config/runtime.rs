//! `[runtime]` of `serve.toml`: the [`RuntimeSettings`] an operator tunes (the rest keep the
//! library's defaults), the settings built from them, and a runtime error located at the key
//! that set the value.

use std::path::Path;
use std::time::Duration;

use hookbox_host::{RuntimeError, RuntimeSettings};
use hookbox_wasm::{PoolingMode, RuntimeConfig};
use serde::Deserialize;

use super::{ConfigError, ServerConfig};

/// The [`RuntimeSettings`] an operator tunes; the rest keep the library's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeKnobs {
    /// Meter wasm fuel. Default **true**.
    pub fuel_metering: bool,
    /// Instance pool mode. Default **auto**.
    pub pooling: PoolingMode,
    /// Wasm hooks running at once (pool slots). Default **256**.
    pub pool_slots: u32,
    /// Hooks of any kind running at once. Default **256**.
    pub max_hooks_in_flight: usize,
    /// Hook permits kept for idle tenants. Default **16**.
    pub reserved_hooks: usize,
    /// Pool slots kept for idle tenants. Default **16**.
    pub reserved_slots: usize,
    /// Milliseconds a hook may wait for shared capacity. Default **1000**.
    pub admission_wait_ms: u64,
    /// Replay records queued before new ones are dropped. Default **4096**.
    pub replay_queue: usize,
    /// Bytes of replay records (hook output above all) that may wait for the writer thread to
    /// redact them; past it a dispatch redacts its own record. Default **16 MiB**.
    pub replay_queue_bytes: usize,
    /// Replay files kept open. Default **64**.
    pub replay_open_files: usize,
    /// Bytes of replay files one tenant's folder may hold; over it its least recently written
    /// files are removed. Default **64 MiB**.
    pub replay_max_bytes: u64,
    /// Replay files (sessions) one tenant's folder may hold; the same. Default **256**.
    pub replay_max_files: usize,
    /// Per-session data folders (Ghast plugins') one tenant's plugin may keep; opening one more
    /// removes the least recently used. Default **256**.
    pub max_session_dirs: usize,
    /// Reset a freed pool slot by restoring only the pages its guest dirtied (Linux
    /// `PAGEMAP_SCAN`). Must stay **false** (the default; `true` is refused by
    /// [`ServerConfig::validate`]): in wasmtime 48.0.8 the scan keeps only pages that are
    /// present, so a dirty page swapped out or being migrated by the kernel survives into the
    /// next instance of its slot, and in a server that instance may be another tenant's. The key
    /// is kept so that a configuration setting it gets that explanation, not "unknown key".
    pub pagemap_scan: bool,
}

impl Default for RuntimeKnobs {
    fn default() -> Self {
        let lib = RuntimeSettings::default();
        RuntimeKnobs {
            fuel_metering: true,
            pooling: PoolingMode::Auto,
            pool_slots: lib.wasm.pool.slots,
            max_hooks_in_flight: lib.max_hooks_in_flight,
            reserved_hooks: lib.reserved_hooks,
            reserved_slots: lib.reserved_slots,
            admission_wait_ms: u64::try_from(lib.admission_wait.as_millis()).unwrap_or(u64::MAX),
            replay_queue: lib.replay_queue,
            replay_queue_bytes: lib.replay_queue_bytes,
            replay_open_files: lib.replay_open_files,
            replay_max_bytes: lib.replay_quota.max_bytes,
            replay_max_files: lib.replay_quota.max_files,
            max_session_dirs: lib.max_session_dirs,
            pagemap_scan: lib.wasm.pool.pagemap_scan,
        }
    }
}

impl ServerConfig {
    /// The runtime settings: the library's defaults with the operator's knobs, the compile cache
    /// in `cache_dir`.
    pub fn runtime_settings(&self, cache_dir: &Path) -> RuntimeSettings {
        let r = &self.runtime;
        let mut wasm = RuntimeConfig::default()
            .with_cache_dir(cache_dir)
            .with_fuel(r.fuel_metering);
        wasm.pooling = r.pooling;
        wasm.pool.slots = r.pool_slots;
        wasm.pool.pagemap_scan = r.pagemap_scan;
        RuntimeSettings {
            wasm,
            max_hooks_in_flight: r.max_hooks_in_flight,
            reserved_hooks: r.reserved_hooks,
            reserved_slots: r.reserved_slots,
            admission_wait: Duration::from_millis(r.admission_wait_ms),
            max_dispatches_in_flight: self.limits.max_requests_in_flight,
            reserved_dispatches: self.limits.reserved_requests,
            replay_queue: r.replay_queue,
            replay_queue_bytes: r.replay_queue_bytes,
            replay_open_files: r.replay_open_files,
            replay_quota: hookbox_host::replay::ReplayQuota {
                max_bytes: r.replay_max_bytes,
                max_files: r.replay_max_files,
            },
            max_session_dirs: r.max_session_dirs,
            replay_output: self.replay.sink.into(),
            replay_stream_stall: self.replay.stream_stall,
            ..RuntimeSettings::default()
        }
    }
}

/// A runtime setting's error, at the `serve.toml` key that set it.
pub(super) fn located(e: RuntimeError) -> ConfigError {
    match e {
        RuntimeError::Invalid { field, reason } => ConfigError::Invalid {
            key: key_of(field),
            reason: format!("{reason} (the runtime's `{field}`)"),
        },
        other => ConfigError::Invalid {
            key: "runtime",
            reason: other.to_string(),
        },
    }
}

/// The `serve.toml` key that sets a [`RuntimeSettings`] field.
fn key_of(field: &str) -> &'static str {
    match field {
        "max_hooks_in_flight" => "runtime.max_hooks_in_flight",
        "reserved_hooks" => "runtime.reserved_hooks",
        "wasm.pool.slots" => "runtime.pool_slots",
        "reserved_slots" => "runtime.reserved_slots",
        "max_dispatches_in_flight" => "limits.max_requests_in_flight",
        "reserved_dispatches" => "limits.reserved_requests",
        "replay_queue" => "runtime.replay_queue",
        "replay_queue_bytes" => "runtime.replay_queue_bytes",
        "replay_open_files" => "runtime.replay_open_files",
        "replay_quota.max_bytes" => "runtime.replay_max_bytes",
        "replay_quota.max_files" => "runtime.replay_max_files",
        "max_session_dirs" => "runtime.max_session_dirs",
        _ => "runtime",
    }
}
