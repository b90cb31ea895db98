//! Per-event limits of a wasm hook: what one run may use before it is stopped, each with its
//! default and what happens when it is exceeded. A rule's [`WasmSpec`](hookbox_core::rule::WasmSpec)
//! becomes a `WasmLimits` through [`resolve`](crate::resolve), never by a silent clamp.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Limits applied to one run of one component, before its first instruction executes.
///
/// Every field is enforced per event: each run gets a fresh store, so nothing (memory, fuel
/// left over, log quota) carries from one event to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WasmLimits {
    /// Wall-clock budget for instantiation, the call and reading the answer.
    ///
    /// Default **5 s**. Enforced by an epoch deadline (the engine's ticker, 1 ms by default, so the
    /// guest is stopped within about one tick after the budget) and by a `tokio` timer backstop
    /// for time spent inside host calls, which epochs cannot interrupt. Exceeded: failure class
    /// `timeout`.
    pub timeout: Duration,
    /// Deterministic instruction budget (wasmtime fuel; most operators cost 1).
    ///
    /// Default **none**: only the wall clock bounds CPU. Needs a runtime built with
    /// [`RuntimeConfig::fuel`](crate::RuntimeConfig::fuel) and a policy that allows it. Exceeded:
    /// failure class `out_of_fuel`.
    pub fuel: Option<u64>,
    /// Cap on each linear memory, in bytes (the rule's `memory_mb`).
    ///
    /// Default **64 MiB**. Checked when a memory is created and on every `memory.grow`; a grow past
    /// the cap traps instead of returning -1. Exceeded: failure class `memory_limit`.
    pub memory_bytes: u64,
    /// Cap on each table's elements.
    ///
    /// Default **10 000**. A `table.grow` past it traps. Exceeded: failure class `memory_limit`.
    pub table_elements: u64,
    /// Cap on core instances created while instantiating the component (a Rust component needs
    /// 1–5, componentize-js's 4–8, componentize-py's 38).
    ///
    /// Default **64**, so every guest toolchain this repository ships fits. Exceeded:
    /// instantiation fails, class `instantiate_error`; a component whose structure already
    /// needs more is refused before it is instantiated, with the count it needs.
    pub instances: u64,
    /// Cap on captured stdout and on captured stderr, each, in bytes.
    ///
    /// Default **1 MiB** (as for native command hooks). Bytes beyond it are dropped and the
    /// capture is marked truncated; the guest's writes keep succeeding, so a flood is not a crash.
    pub output_bytes: u64,
    /// Cap on `host.log` calls per event.
    ///
    /// Default **100**. Calls beyond it are counted in `logs_dropped` and otherwise ignored.
    pub log_calls: u64,
    /// Cap on one `host.log` message, in bytes.
    ///
    /// Default **4 KiB** (policy-only: rules cannot ask for more). Longer messages are cut at a
    /// character boundary and marked truncated.
    pub log_message_bytes: u64,
    /// Cap on the bytes of a typed hook's response: the text of all its strings (contexts,
    /// reasons, `updated-input`, follow-up, system message) together (the rule's
    /// `response_bytes`).
    ///
    /// Default **1 MiB** (policy maximum 16 MiB). Enforced twice: while the response is lifted
    /// out of the guest's memory (wasmtime's hostcall fuel is set to this cap, at least
    /// [`WasmLimits::MIN_HOSTCALL_BYTES`], so the host never copies more than that from the
    /// guest in one call — a response, a log message or a write alike), and on the lifted
    /// response. Exceeded: class `invalid_output`, naming the field and the cap.
    pub response_bytes: u64,
    /// Cap on bytes written to files of `rw` mounts during one event, all mounts together
    /// (`write`, streams, and growth by `set-size`; holes of sparse files are not counted).
    ///
    /// Default **16 MiB**; a rule's `write_bytes` may ask up to the policy's maximum (by default
    /// the same 16 MiB). Exceeded: the write fails inside the guest with
    /// `insufficient-space` ("No space left on device"); the run goes on.
    pub write_bytes: u64,
    /// Cap on files, folders and links created in `rw` mounts during one event.
    ///
    /// Default **1 000**; a rule's `write_files` may ask up to the policy's maximum (by default
    /// the same 1 000). Exceeded: the create fails inside the guest with
    /// `insufficient-space`; the run goes on.
    pub write_files: u64,
    /// Cap on live resource handles (open files, streams, pollables) the guest may make the host
    /// hold.
    ///
    /// Default **1 000** (policy-only). Exceeded: the WASI call fails inside the guest, which
    /// usually ends in a trap.
    pub resource_handles: u64,
}

impl WasmLimits {
    /// Default wall-clock budget.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
    /// Default linear-memory cap.
    pub const DEFAULT_MEMORY_BYTES: u64 = 64 << 20;
    /// Default table-element cap.
    pub const DEFAULT_TABLE_ELEMENTS: u64 = 10_000;
    /// Default core-instance cap.
    pub const DEFAULT_INSTANCES: u64 = 64;
    /// Default stdout / stderr capture cap.
    pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 20;
    /// Default response cap.
    pub const DEFAULT_RESPONSE_BYTES: u64 = 1 << 20;
    /// Least hostcall fuel a run gets whatever its `response_bytes`: the WASI calls of an
    /// ordinary guest (a 64 KiB stream write, a path) must still fit.
    pub const MIN_HOSTCALL_BYTES: u64 = 1 << 20;
    /// Default `rw` bytes written per event.
    pub const DEFAULT_WRITE_BYTES: u64 = 16 << 20;
    /// Default files created per event.
    pub const DEFAULT_WRITE_FILES: u64 = 1_000;
    /// Default `log` calls per event.
    pub const DEFAULT_LOG_CALLS: u64 = 100;
    /// Default size of one log message.
    pub const DEFAULT_LOG_MESSAGE_BYTES: u64 = 4 << 10;
    /// Default live resource handles.
    pub const DEFAULT_RESOURCE_HANDLES: u64 = 1_000;

    /// The same limits with another wall-clock budget.
    pub fn with_timeout(mut self, timeout: Duration) -> WasmLimits {
        self.timeout = timeout;
        self
    }

    /// The same limits with a fuel budget (`None`: no fuel).
    pub fn with_fuel(mut self, fuel: Option<u64>) -> WasmLimits {
        self.fuel = fuel;
        self
    }

    /// The same limits with another linear-memory cap.
    pub fn with_memory_bytes(mut self, bytes: u64) -> WasmLimits {
        self.memory_bytes = bytes;
        self
    }

    /// The same limits with another table-element cap.
    pub fn with_table_elements(mut self, elements: u64) -> WasmLimits {
        self.table_elements = elements;
        self
    }

    /// The same limits with another core-instance cap.
    pub fn with_instances(mut self, instances: u64) -> WasmLimits {
        self.instances = instances;
        self
    }

    /// The same limits with another output cap.
    pub fn with_output_bytes(mut self, bytes: u64) -> WasmLimits {
        self.output_bytes = bytes;
        self
    }

    /// The same limits with another response cap.
    pub fn with_response_bytes(mut self, bytes: u64) -> WasmLimits {
        self.response_bytes = bytes;
        self
    }

    /// The same limits with another write budget for `rw` mounts (bytes, files).
    pub fn with_write_budget(mut self, bytes: u64, files: u64) -> WasmLimits {
        self.write_bytes = bytes;
        self.write_files = files;
        self
    }

    /// The same limits with another `log` call cap.
    pub fn with_log_calls(mut self, calls: u64) -> WasmLimits {
        self.log_calls = calls;
        self
    }
}

impl Default for WasmLimits {
    fn default() -> WasmLimits {
        WasmLimits {
            timeout: WasmLimits::DEFAULT_TIMEOUT,
            fuel: None,
            memory_bytes: WasmLimits::DEFAULT_MEMORY_BYTES,
            table_elements: WasmLimits::DEFAULT_TABLE_ELEMENTS,
            instances: WasmLimits::DEFAULT_INSTANCES,
            output_bytes: WasmLimits::DEFAULT_OUTPUT_BYTES,
            log_calls: WasmLimits::DEFAULT_LOG_CALLS,
            log_message_bytes: WasmLimits::DEFAULT_LOG_MESSAGE_BYTES,
            response_bytes: WasmLimits::DEFAULT_RESPONSE_BYTES,
            write_bytes: WasmLimits::DEFAULT_WRITE_BYTES,
            write_files: WasmLimits::DEFAULT_WRITE_FILES,
            resource_handles: WasmLimits::DEFAULT_RESOURCE_HANDLES,
        }
    }
}
