//! Builds the one wasmtime `Engine` of a runtime (pooling allocator with an on-demand fallback,
//! epoch interruption, optional fuel, only the WebAssembly proposals of
//! [`proposals`](crate::proposals)) and runs its epoch ticker: a single thread holding a weak
//! engine handle, so it exits once the engine is gone.

use std::thread;
use std::time::Duration;

use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
    WasmBacktraceDetails,
};

use crate::config::{PoolConfig, PoolingMode, RuntimeConfig};
use crate::error::WasmError;

/// An engine, whether it got its instance pool, and whether that pool resets slots with
/// `PAGEMAP_SCAN`.
pub(crate) struct BuiltEngine {
    pub(crate) engine: Engine,
    pub(crate) pooled: bool,
    pub(crate) pagemap_scan: bool,
}

/// Builds the engine described by `config` and starts its epoch ticker.
pub(crate) fn build(config: &RuntimeConfig) -> Result<BuiltEngine, WasmError> {
    check(config)?;
    let pagemap = pagemap_decision(
        config.pool.pagemap_scan,
        std::fs::read_to_string("/proc/swaps").ok().as_deref(),
        PoolingAllocationConfig::is_pagemap_scan_available(),
    );
    if let Some(warning) = &pagemap.warning {
        tracing::warn!("{warning}");
    }
    let pagemap_scan = pagemap.active;
    let built = match config.pooling {
        PoolingMode::Disabled => BuiltEngine {
            engine: on_demand(config)?,
            pooled: false,
            pagemap_scan: false,
        },
        PoolingMode::Required => BuiltEngine {
            engine: pooled(config, pagemap_scan)?,
            pooled: true,
            pagemap_scan,
        },
        PoolingMode::Auto => match pooled(config, pagemap_scan) {
            Ok(engine) => BuiltEngine {
                engine,
                pooled: true,
                pagemap_scan,
            },
            Err(err) => {
                // Small address spaces (`ulimit -v`, 32-bit VA, some containers) cannot reserve
                // the pool; hooks still run, with slower instantiation.
                tracing::warn!(error = %err, "wasm instance pool could not be reserved; using on-demand allocation");
                BuiltEngine {
                    engine: on_demand(config)?,
                    pooled: false,
                    pagemap_scan: false,
                }
            }
        },
    };
    spawn_epoch_ticker(&built.engine, config.epoch_tick)?;
    Ok(built)
}

fn check(config: &RuntimeConfig) -> Result<(), WasmError> {
    let bad = |what: String| Err(WasmError::Config(what));
    if config.epoch_tick.is_zero() || config.yield_interval.is_zero() {
        return bad("epoch_tick and yield_interval must be above zero".into());
    }
    if config.fuel_slice == 0 {
        return bad("fuel_slice must be above zero".into());
    }
    if config.max_wasm_stack == 0 || config.max_wasm_stack >= config.async_stack_bytes {
        return bad(format!(
            "max_wasm_stack ({}) must be above zero and below async_stack_bytes ({})",
            config.max_wasm_stack, config.async_stack_bytes
        ));
    }
    if config.pool.slots == 0 {
        return bad("pool.slots must be at least 1".into());
    }
    if config.memory_budget_bytes < 64 << 10 {
        return bad(format!(
            "memory_budget_bytes ({}) is below one wasm page (65536): it admits no run at all",
            config.memory_budget_bytes
        ));
    }
    if config.max_component_bytes == 0 {
        return bad("max_component_bytes must be above zero".into());
    }
    Ok(())
}

/// Settings shared by both allocation strategies.
fn base(config: &RuntimeConfig) -> Config {
    let mut cfg = Config::new();
    cfg.epoch_interruption(true)
        .consume_fuel(config.fuel)
        .max_wasm_stack(config.max_wasm_stack)
        .async_stack_size(config.async_stack_bytes)
        // Concurrent (component-model-async) execution would add per-store state to every event;
        // hooks are one synchronous call each.
        .concurrency_support(false)
        // `Config::new` reads WASMTIME_BACKTRACE_DETAILS from the environment; the host decides.
        .wasm_backtrace_details(WasmBacktraceDetails::Disable)
        .cranelift_opt_level(OptLevel::Speed)
        .parallel_compilation(true);
    // Validation refuses every proposal hooks do not need, the GC type rules that abort
    // wasmtime 48.0.8 first among them.
    crate::proposals::restrict(&mut cfg);
    cfg
}

fn on_demand(config: &RuntimeConfig) -> Result<Engine, WasmError> {
    Engine::new(&base(config)).map_err(|e| WasmError::Engine(format!("{e:#}")))
}

fn pooled(config: &RuntimeConfig, pagemap_scan: bool) -> Result<Engine, WasmError> {
    let mut cfg = base(config);
    cfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool(
        &config.pool,
        pagemap_scan,
    )?));
    Engine::new(&cfg).map_err(|e| WasmError::Engine(format!("{e:#}")))
}

/// Whether the pool resets slots with `PAGEMAP_SCAN`, and the warning to log when it was asked
/// for and refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PagemapDecision {
    pub(crate) active: bool,
    pub(crate) warning: Option<String>,
}

/// `PAGEMAP_SCAN` only when `requested`, available, and no swap is configured: in wasmtime
/// 48.0.8 the scan misses dirty pages that were swapped out, so with swap a slot could keep
/// the previous guest's data. `swaps` is the text of `/proc/swaps` (`None`: unreadable, so
/// swap cannot be ruled out).
pub(crate) fn pagemap_decision(
    requested: bool,
    swaps: Option<&str>,
    available: bool,
) -> PagemapDecision {
    let off = |warning: Option<String>| PagemapDecision {
        active: false,
        warning,
    };
    if !requested || !available {
        return off(None);
    }
    let swap_devices = swaps.map(|text| {
        text.lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .count()
    });
    match swap_devices {
        Some(0) => PagemapDecision {
            active: true,
            warning: None,
        },
        Some(n) => off(Some(format!(
            "pool.pagemap_scan is on but /proc/swaps lists {n} swap device(s): using it would let a \
             guest's swapped-out dirty pages survive into the next instance of its slot (wasmtime \
             48.0.8 resets only dirty pages that are present; upstream PR #14357), so it stays off"
        ))),
        None => off(Some(
            "pool.pagemap_scan is on but /proc/swaps cannot be read, so swap cannot be ruled out: \
             a guest's swapped-out dirty pages could survive into the next instance of its slot \
             (wasmtime 48.0.8, upstream PR #14357), so it stays off"
                .to_owned(),
        )),
    }
}

fn pool(p: &PoolConfig, pagemap_scan: bool) -> Result<PoolingAllocationConfig, WasmError> {
    let total = |per: u32, what: &str| {
        p.slots.checked_mul(per).ok_or_else(|| {
            WasmError::Config(format!(
                "pool.slots × {what} overflows ({} × {per})",
                p.slots
            ))
        })
    };
    let as_usize = |v: u64, what: &str| {
        usize::try_from(v)
            .map_err(|_| WasmError::Config(format!("{what} ({v}) does not fit this platform")))
    };
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(p.slots)
        .total_stacks(p.slots)
        .total_core_instances(total(p.core_instances_per_slot, "core_instances_per_slot")?)
        .total_memories(total(p.memories_per_slot, "memories_per_slot")?)
        .total_tables(total(p.tables_per_slot, "tables_per_slot")?)
        .max_core_instances_per_component(p.core_instances_per_slot)
        .max_memories_per_component(p.memories_per_slot)
        .max_tables_per_component(p.tables_per_slot)
        .max_memory_size(as_usize(p.max_memory_bytes, "pool.max_memory_bytes")?)
        .table_elements(as_usize(
            u64::from(p.max_table_elements),
            "pool.max_table_elements",
        )?)
        .linear_memory_keep_resident(keep_resident(
            p.memory_keep_resident,
            "pool.memory_keep_resident",
        )?)
        .table_keep_resident(keep_resident(
            p.table_keep_resident,
            "pool.table_keep_resident",
        )?)
        .pagemap_scan(if pagemap_scan {
            Enabled::Auto
        } else {
            Enabled::No
        })
        .max_unused_warm_slots(p.max_unused_warm_slots);
    Ok(pool)
}

fn keep_resident(bytes: u64, what: &str) -> Result<usize, WasmError> {
    usize::try_from(bytes)
        .map_err(|_| WasmError::Config(format!("{what} ({bytes}) does not fit this platform")))
}

/// One thread per engine advances the epoch every `tick`. It holds only a weak handle: when the
/// runtime and every component compiled by it are dropped, the next tick ends the thread.
fn spawn_epoch_ticker(engine: &Engine, tick: Duration) -> Result<(), WasmError> {
    let weak = engine.weak();
    thread::Builder::new()
        .name("hookbox-wasm-epoch".into())
        .spawn(move || {
            loop {
                thread::sleep(tick);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .map(drop)
        .map_err(|e| WasmError::Engine(format!("cannot start the epoch ticker thread: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Epoch ticker threads alive in this process (Linux: thread names from /proc).
    #[cfg(target_os = "linux")]
    fn tickers() -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
            .filter(|name| name.trim() == "hookbox-wasm-ep")
            .count()
    }

    /// Waits (up to 5 s) until `want` tickers run: a new thread names itself once it starts.
    #[cfg(target_os = "linux")]
    fn wait_for(want: usize) -> usize {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while tickers() != want && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        tickers()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_ticker_ends_with_its_engine() {
        let before = tickers();
        let config = RuntimeConfig {
            pooling: PoolingMode::Disabled,
            ..RuntimeConfig::default()
        };
        let built = build(&config).unwrap();
        assert_eq!(wait_for(before + 1), before + 1);
        drop(built);
        assert_eq!(wait_for(before), before);
    }

    const NO_SWAP: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
    const ONE_SWAP: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                            /swapfile                               file\t\t2097148\t\t0\t\t-2\n";

    #[test]
    fn pagemap_scan_is_off_by_default() {
        // Even where the kernel has it and there is no swap, the default leaves it off.
        let default = RuntimeConfig::default().pool.pagemap_scan;
        assert_eq!(
            pagemap_decision(default, Some(NO_SWAP), true),
            PagemapDecision {
                active: false,
                warning: None
            }
        );
    }

    #[test]
    fn pagemap_scan_asked_for_is_refused_with_swap() {
        let d = pagemap_decision(true, Some(ONE_SWAP), true);
        assert!(!d.active);
        assert!(d.warning.unwrap().contains("1 swap device(s)"));
        let d = pagemap_decision(true, None, true);
        assert!(!d.active && d.warning.unwrap().contains("cannot be read"));
        // Without swap it is used when the kernel has it, and silently off when not.
        assert_eq!(
            pagemap_decision(true, Some(NO_SWAP), true),
            PagemapDecision {
                active: true,
                warning: None
            }
        );
        assert!(!pagemap_decision(true, Some(NO_SWAP), false).active);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let c = RuntimeConfig {
            epoch_tick: Duration::ZERO,
            ..RuntimeConfig::default()
        };
        assert!(matches!(build(&c), Err(WasmError::Config(_))));
        let c = RuntimeConfig {
            max_wasm_stack: 4 << 20,
            ..RuntimeConfig::default()
        };
        assert!(matches!(build(&c), Err(WasmError::Config(_))));
        let mut c = RuntimeConfig::default();
        c.pool.slots = 0;
        assert!(matches!(build(&c), Err(WasmError::Config(_))));
        let c = RuntimeConfig {
            memory_budget_bytes: 1000,
            ..RuntimeConfig::default()
        };
        assert!(
            matches!(build(&c), Err(WasmError::Config(m)) if m.contains("memory_budget_bytes"))
        );
        let c = RuntimeConfig {
            max_component_bytes: 0,
            ..RuntimeConfig::default()
        };
        assert!(
            matches!(build(&c), Err(WasmError::Config(m)) if m.contains("max_component_bytes"))
        );
    }
}
