//! How a [`WasmRuntime`](crate::WasmRuntime) is built: instance pool sizing, epoch tick, fuel,
//! wasm stack, and where compiled components are cached. Per-event limits live in
//! [`WasmLimits`](crate::WasmLimits); this is the engine-wide part, fixed for the runtime's life.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Whether the engine uses wasmtime's pooling instance allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PoolingMode {
    /// Use the pool; if its virtual address space cannot be reserved (small VA, `ulimit -v`),
    /// fall back to on-demand allocation with a warning. The default.
    #[default]
    Auto,
    /// Use the pool or fail to build the runtime.
    Required,
    /// Allocate each instance on demand (slower instantiation, no up-front reservation).
    Disabled,
}

/// Sizing of the instance pool. Each running hook holds one slot; slots are reused. The runtime
/// does not queue runs for a slot: its embedder admits them (the host's pool, sized to `slots`,
/// waits `RuntimeSettings::admission_wait` for one); a run the pool cannot place fails at once,
/// `overloaded`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolConfig {
    /// Hooks that may run at once. Default **256**. Also the size of the host's slot pool, which
    /// admits runs to it, pooled or not.
    pub slots: u32,
    /// Core instances one component may create. Default **128**: a Rust or C hook creates 1–3,
    /// componentize-js's 4, componentize-py's 38. It is only a counter in wasmtime's pool (no
    /// memory is reserved per instance: measured, 16 or 128 change neither virtual nor resident
    /// memory), so it is set well above every toolchain's. A component over it is refused at
    /// load, before compiling, naming this setting.
    pub core_instances_per_slot: u32,
    /// Linear memories per component. Default **4** (every toolchain above defines 1). Each
    /// costs a virtual-address reservation of 4 GiB + 32 MiB guard per slot (measured: 4 → 8
    /// adds 4 TiB of address space for 256 slots, +116 KiB resident), so it stays low.
    pub memories_per_slot: u32,
    /// Tables per component. Default **16** (every toolchain above defines 1–2). Each costs
    /// `max_table_elements` × 8 bytes of address space per slot (16 → 32: +3 GiB for 256
    /// slots, +224 KiB resident).
    pub tables_per_slot: u32,
    /// Hard cap on one linear memory, in bytes: no policy may allow more. Default **256 MiB**.
    pub max_memory_bytes: u64,
    /// Hard cap on one table's elements: no policy may allow more. Default **100 000**.
    pub max_table_elements: u32,
    /// Linear-memory bytes kept resident and reset in place when a slot is freed (zeroed and
    /// the image restored with `memset`/`memcpy`) instead of given back with `madvise` — which
    /// costs a syscall, TLB shootdowns that stall the other cores, and a page fault for every
    /// page the next event touches again. Past this prefix pages are given back. Default
    /// **256 KiB**: a guest built with a small stack (the example guests use 64 KiB, see
    /// `guest-examples/.cargo/config.toml`) touches only that prefix on an event, so its reset
    /// makes no `madvise` call at all; measured, the typed no-op's dispatch p50 falls from ~46 µs
    /// (64 KiB) to ~20 µs, faster than `pagemap_scan` (docs/performance.md). Only what a guest's
    /// memory actually holds is reset, so a larger prefix costs nothing for small guests and a
    /// `memset` of the whole prefix per event for large ones (JavaScript, Python). Sound at
    /// every value: both halves of the reset are independent of what the guest wrote.
    pub memory_keep_resident: u64,
    /// Table bytes kept resident and reset in place, as for memory. Default **64 KiB**.
    pub table_keep_resident: u64,
    /// Use Linux's `PAGEMAP_SCAN` (kernel ≥ 6.7) to find dirtied pages when resetting a slot.
    /// Default **false**, because in wasmtime 48.0.8 the scan reports only pages that are dirty
    /// *and present*: a dirty page the kernel swapped out is neither reset nor decommitted, so
    /// the next instance in that slot could read the previous guest's data (upstream PR #14357).
    /// Set to `true`, it is used only when `/proc/swaps` lists no swap when the engine is built
    /// (otherwise it stays off, with a warning naming the risk), and where the kernel has it;
    /// see [`WasmRuntime::pagemap_scan_active`](crate::WasmRuntime::pagemap_scan_active).
    pub pagemap_scan: bool,
    /// Unused slots kept warm for reuse by the same component. Default **100**.
    pub max_unused_warm_slots: u32,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            slots: 256,
            core_instances_per_slot: 128,
            memories_per_slot: 4,
            tables_per_slot: 16,
            max_memory_bytes: 256 << 20,
            max_table_elements: 100_000,
            memory_keep_resident: 256 << 10,
            table_keep_resident: 64 << 10,
            pagemap_scan: false,
            max_unused_warm_slots: 100,
        }
    }
}

/// Engine-wide configuration of a [`WasmRuntime`](crate::WasmRuntime).
///
/// `RuntimeConfig::default()` reads no environment: its disk cache is off. Use
/// [`RuntimeConfig::with_default_cache_dir`] for the usual `$HOOKBOX_CACHE_DIR` /
/// `$XDG_CACHE_HOME/hookbox/wasm` / `~/.cache/hookbox/wasm` location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RuntimeConfig {
    /// Pool or on-demand allocation. Default [`PoolingMode::Auto`].
    pub pooling: PoolingMode,
    /// Pool sizing (also used for the concurrency gate and hard caps when not pooling).
    pub pool: PoolConfig,
    /// How often the epoch ticker advances the engine's epoch, i.e. the timeout resolution.
    /// Default **1 ms** (one relaxed atomic increment per tick; the check in guest code costs
    /// +2…+16 % on realistic code).
    pub epoch_tick: Duration,
    /// How long a guest runs before yielding to the async executor (checked at epoch ticks).
    /// Default **2 ms**: a CPU-bound hook shares its tokio worker instead of holding it for its
    /// whole timeout, for one cheap callback per slice.
    pub yield_interval: Duration,
    /// Instrument guests for fuel so rules may set a deterministic instruction budget. Default
    /// **false**: fuel costs +5…+117 % guest time, and wall-clock epochs already bound every
    /// run. Changing it changes the compiled code (and the cache key).
    pub fuel: bool,
    /// With fuel metering, the fuel handed to a running guest at a time (wasmtime's
    /// `fuel_async_yield_interval`): each slice used up writes the guest's count back to its
    /// store and yields the worker once. Compiled code otherwise keeps the count in a register
    /// between calls, so a run stopped mid-loop (timeout, trap, memory limit, cancelled) would
    /// report only what was counted at its last call; with slices its `fuel_consumed` is low by
    /// less than one slice, and exact when it returns or runs out of fuel. Default
    /// **16,777,216** (about 1.4 ms of guest code here); must be above zero.
    pub fuel_slice: u64,
    /// Wasm stack a guest may use, in bytes; deeper recursion traps with a stack overflow.
    /// Default **512 KiB** (wasmtime's). Must stay well below `async_stack_bytes`.
    pub max_wasm_stack: usize,
    /// Native stack of each running hook (wasm stack plus room for host calls). Default
    /// **2 MiB**; `async_stack_bytes - max_wasm_stack` is what host functions get.
    pub async_stack_bytes: usize,
    /// Folder of precompiled `.cwasm` files; `None` keeps compiled components in memory only.
    /// It must be owned and writable by the host alone: its files are loaded as native code.
    /// The runtime refuses a folder that is writable by group or others, not owned by the
    /// effective user, or below a folder that others may write without the sticky bit or that
    /// belongs to another user than us or root.
    pub cache_dir: Option<PathBuf>,
    /// Aggregate memory budget of the runs in progress, in bytes: a run is admitted only while
    /// the sum of the memory caps of the runs in progress, its own included, fits. A run's cap
    /// is its `memory_bytes` times the linear memories its component defines (each memory is
    /// capped separately; a component with none counts as one). Default **4 GiB**.
    pub memory_budget_bytes: u64,
    /// Compiled components kept loaded by the runtime, in bytes of compiled code; past it the
    /// least recently loaded are forgotten (a rule set still holding one keeps it alive through
    /// its `Arc`; the next load takes it from the disk cache). Default **512 MiB** (a Rust hook
    /// is ~0.2 MB of code, componentize-py's Python ~40 MB).
    pub memory_cache_bytes: u64,
    /// Size of the on-disk cache, in bytes; after each write the least recently used files
    /// (by modification time, refreshed on every hit) are removed until it fits. Default
    /// **2 GiB**.
    pub disk_cache_bytes: u64,
    /// Largest component file read, in bytes; a larger file is refused without being read.
    /// Default **64 MiB**: componentize-py's output is ~19 MB, componentize-js's ~12 MB.
    pub max_component_bytes: u64,
}

impl Default for RuntimeConfig {
    fn default() -> RuntimeConfig {
        RuntimeConfig {
            pooling: PoolingMode::Auto,
            pool: PoolConfig::default(),
            epoch_tick: Duration::from_millis(1),
            yield_interval: Duration::from_millis(2),
            fuel: false,
            fuel_slice: 16 << 20,
            max_wasm_stack: 512 << 10,
            async_stack_bytes: 2 << 20,
            cache_dir: None,
            memory_budget_bytes: 4 << 30,
            memory_cache_bytes: 512 << 20,
            disk_cache_bytes: 2 << 30,
            max_component_bytes: 64 << 20,
        }
    }
}

impl RuntimeConfig {
    /// The same configuration, caching compiled components under [`default_cache_dir`].
    pub fn with_default_cache_dir(mut self) -> RuntimeConfig {
        self.cache_dir = default_cache_dir();
        self
    }

    /// The same configuration, caching compiled components in `dir`.
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> RuntimeConfig {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The same configuration with fuel instrumentation on or off.
    pub fn with_fuel(mut self, fuel: bool) -> RuntimeConfig {
        self.fuel = fuel;
        self
    }
}

/// The usual cache folder: `$HOOKBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/hookbox/wasm`, else
/// `$HOME/.cache/hookbox/wasm`; `None` when none of these is set.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("HOOKBOX_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("hookbox").join("wasm")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("hookbox").join("wasm")))
}
