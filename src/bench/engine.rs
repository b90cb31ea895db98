//! `hookbox bench`'s engine settings side by side, in one run: the trivial typed wasm hook with
//! fuel metering off and on (issue 9: fuel is part of the product — what does metering cost?),
//! with the pool's `PAGEMAP_SCAN` reset off (the default, issue 8 #23) and on, and with the sound
//! reset keeping 0 B to 2 MiB of linear memory resident (reset in place with `memset` instead of
//! `madvise` and refaults: issue 18 asks which costs less). Every variant is measured in
//! alternating rounds so a drift of the machine hits all alike.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use hookbox_core::{Event, EventName};
use hookbox_host::{HookHost, HookRuntime, HostPolicy, RuntimeSettings};
use hookbox_wasm::RuntimeConfig;
use serde::Serialize;
use serde_json::json;

use super::floor::FloorRun;

/// One engine configuration's latency.
#[derive(Debug, Serialize)]
pub(crate) struct Variant {
    pub(crate) name: &'static str,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    /// Whether `PAGEMAP_SCAN` was really in use (it needs Linux ≥ 6.7 and no swap).
    pub(crate) pagemap_scan_active: bool,
    /// The same component at the floor on the same engine (least wasmtime needs), p50 µs.
    pub(crate) floor_p50_us: f64,
    /// `p50_us ÷ floor_p50_us`.
    pub(crate) ratio_over_floor_p50: f64,
}

/// The engine comparisons.
#[derive(Debug, Serialize)]
pub(crate) struct EngineNumbers {
    pub(crate) variants: Vec<Variant>,
    /// typed wasm p50 with fuel metering on ÷ off (goal ≤ 1.15).
    pub(crate) ratio_fuel_on_over_off_p50: f64,
    /// typed wasm p50 with `pagemap_scan` on ÷ off.
    pub(crate) ratio_pagemap_on_over_off_p50: f64,
}

/// A host with one typed no-op wasm rule on its own runtime with `config`.
fn host(scratch: &Path, name: &str, config: RuntimeConfig) -> anyhow::Result<HookHost> {
    let plugin = scratch.join(format!("engine-{name}"));
    std::fs::create_dir_all(plugin.join("hooks")).context("mkdir")?;
    std::fs::write(plugin.join("hooks/noop.wasm"), guests::wasm("noop")?).context("write noop")?;
    let hooks = json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/noop.wasm", "matcher": "Bash"}]}});
    std::fs::write(plugin.join("hooks/hooks.json"), hooks.to_string()).context("hooks.json")?;
    // The small pool of `measure` keeps a reserve for idle tenants below its size (the default
    // reserve, 16, is refused for a pool of 16: it must be below it).
    let reserved_slots = (config.pool.slots / 4) as usize;
    let runtime = HookRuntime::new(RuntimeSettings {
        wasm: config,
        reserved_slots,
        ..RuntimeSettings::default()
    })
    .context("runtime")?;
    let mut policy = HostPolicy::for_project(&plugin);
    policy.replay = false;
    let host = HookHost::with_runtime(&runtime, policy).context("host")?;
    let report = host.load(&[&plugin], &Default::default());
    anyhow::ensure!(
        report.rules.len() == 1,
        "engine bench plugin: {:?}",
        report.diagnostics
    );
    Ok(host)
}

async fn samples(host: &HookHost, event: &Event, runs: usize, out: &mut Vec<f64>) {
    for _ in 0..runs {
        let event = event.clone();
        let t = Instant::now();
        host.dispatch(event).await;
        out.push(t.elapsed().as_secs_f64() * 1e6);
    }
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

/// Measures each pair with `runs` dispatches per side, in 10 alternating rounds.
pub(crate) async fn measure(
    scratch: &Path,
    cache: &Path,
    runs: usize,
) -> anyhow::Result<EngineNumbers> {
    let mut base = RuntimeConfig::default().with_cache_dir(cache);
    // One dispatch in flight: a small pool keeps eight runtimes' address space reservations low.
    base.pool.slots = 16;
    let keep = |bytes: u64| {
        let mut c = base.clone();
        c.pool.memory_keep_resident = bytes;
        c
    };
    let configs: [(&'static str, RuntimeConfig); 8] = [
        ("typed wasm, fuel off", base.clone().with_fuel(false)),
        ("typed wasm, fuel on", base.clone().with_fuel(true)),
        ("typed wasm, pagemap_scan off (default)", base.clone()),
        ("typed wasm, pagemap_scan on", {
            let mut c = base.clone();
            c.pool.pagemap_scan = true;
            c
        }),
        ("typed wasm, memory_keep_resident 0", keep(0)),
        ("typed wasm, memory_keep_resident 256 KiB", keep(256 << 10)),
        ("typed wasm, memory_keep_resident 1 MiB", keep(1 << 20)),
        ("typed wasm, memory_keep_resident 2 MiB", keep(2 << 20)),
    ];
    let mut hosts = Vec::new();
    for (i, (name, c)) in configs.iter().enumerate() {
        hosts.push((*name, host(scratch, &i.to_string(), c.clone())?));
    }
    let event = Event::from_payload(
        Some(EventName::PreToolUse),
        json!({"tool_name": "Bash", "tool_input": {"command": "git status"}}),
        "bench",
        "/",
    )
    .context("event")?;
    let mut floors = Vec::new();
    for (_, h) in &hosts {
        floors.push(FloorRun::new(
            h.runtime(),
            guests::wasm("noop")?,
            &event,
            "null",
        )?);
    }
    let mut all: Vec<Vec<f64>> = vec![Vec::new(); hosts.len()];
    let mut at_floor: Vec<Vec<f64>> = vec![Vec::new(); hosts.len()];
    for ((_, h), f) in hosts.iter().zip(&floors) {
        samples(h, &event, 100, &mut Vec::new()).await;
        for _ in 0..100 {
            f.once().await?;
        }
    }
    let rounds = 10;
    let per_round = (runs / rounds).max(10);
    for _ in 0..rounds {
        for (i, (_, h)) in hosts.iter().enumerate() {
            samples(h, &event, per_round, &mut all[i]).await;
            at_floor[i]
                .extend(super::measure::sample_within(per_round, || floors[i].once()).await?);
        }
    }
    let mut variants = Vec::new();
    for (((name, h), mut v), mut f) in hosts.iter().zip(all).zip(at_floor) {
        let p50_us = pct(&mut v, 0.5);
        let floor_p50_us = pct(&mut f, 0.5);
        variants.push(Variant {
            name,
            p50_us,
            p99_us: pct(&mut v, 0.99),
            pagemap_scan_active: h.runtime().wasm().pagemap_scan_active(),
            floor_p50_us,
            ratio_over_floor_p50: p50_us / floor_p50_us,
        });
    }
    Ok(EngineNumbers {
        ratio_fuel_on_over_off_p50: variants[1].p50_us / variants[0].p50_us,
        ratio_pagemap_on_over_off_p50: variants[3].p50_us / variants[2].p50_us,
        variants,
    })
}
use crate::guests;
