//! `hookbox bench`: the side-by-side benchmark of SPEC §9, in one process and one run. The same
//! trivial hook logic (read the payload, answer nothing) as a native `sh -c` command hook, a
//! typed wasm component and a `wasi:cli` wasm component, each through `HookHost::dispatch`;
//! then engine settings, tenants (isolation, memory, reload), guests in other languages, and
//! (`--serve`) `hookbox serve` over loopback. `--compare FILE` prints each figure's ratio to a
//! saved report and names every figure more than 1.3× worse. Run it from a release build.
//!
//! Layout (no module imports its parent): this facade runs the sections in order; `measure`
//! holds what they all measure with; `host_figures`, `engine`, `tenants`, `polyglot` and `serve`
//! are the sections; `report` and `table` are the result and its text; `compare` reads two
//! reports; `machine` says where a report was taken.

mod compare;
mod count;
mod engine;
mod floor;
mod host_figures;
mod machine;
mod measure;
mod output;
mod polyglot;
mod report;
mod serve;
mod snapshot_views;
mod table;
mod tenants;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use hookbox_host::{HookHost, HookRuntime, RuntimeSettings};
use serde_json::json;

use crate::cli::{BenchArgs, BenchSection};
use crate::guests;
use crate::host_setup::{runtime, wasm_runtime_config};
use host_figures::{Latency, bash_event, idle, load_times, memory, one_rule_host};
use measure::{quiet_policy, throughput};
use report::Report;

/// Typed events measured at an agent's pace ([`floor::paced`]), each side: ~5 s each at one
/// event every 5 ms.
const PACED_RUNS: usize = 1_000;

/// Runs `hookbox bench`.
pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    if let (Some(baseline), Some(saved)) = (&args.compare, &args.from) {
        return compare::files(baseline, saved);
    }
    if args.serve {
        return serve::run(args);
    }
    if let Some(kind) = args.count {
        let scratch = crate::scratch::private_dir("hookbox-bench-count")?;
        let result = count::run(
            kind,
            &args.count_guest,
            args.wasm_runs,
            args.count_in_flight,
            args.count_evict_kib,
            &scratch,
        );
        let _ = std::fs::remove_dir_all(&scratch);
        return result.map(|()| ExitCode::SUCCESS);
    }
    output::measure_and_print(args, "hookbox-bench", run_in, table::table)
}

/// Whether `--only` leaves `section` in.
fn wanted(args: &BenchArgs, section: BenchSection) -> bool {
    args.only.is_empty() || args.only.contains(&section)
}

/// Runs `f`, saying on stderr what it measures and how long it took (a section can take minutes).
fn section<T>(what: &str, f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    eprintln!("bench: {what}…");
    let started = Instant::now();
    let out = f();
    eprintln!(
        "bench: {what}: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    out
}

fn run_in(args: &BenchArgs, scratch: &Path) -> anyhow::Result<Report> {
    let rt = runtime()?;
    let scale = if args.quick { 10 } else { 1 };
    let cache = scratch.join("cache");
    let hooks = HookRuntime::new(RuntimeSettings {
        wasm: wasm_runtime_config().with_cache_dir(&cache),
        ..RuntimeSettings::default()
    })
    .context("cannot start the runtime")?;
    let event = bash_event(scratch);
    let dur = Duration::from_millis(args.throughput_ms / scale as u64);
    let n = args.concurrency;
    let mut report = Report {
        build: machine::build(),
        machine: machine::Machine::this(),
        concurrency: n,
        latency: Vec::new(),
        ratio_native_over_typed_wasm_p50: None,
        ratio_native_hook_over_bare_spawn_p50: None,
        ratio_native_over_cli_wasm_p50: None,
        ratio_throughput_typed_wasm_over_native: None,
        ratio_typed_wasm_throughput_n_over_1: None,
        paced: None,
        idle_ns_per_dispatch_empty_host: None,
        idle_ns_per_dispatch_10k_rules: None,
        loads: Vec::new(),
        memory: None,
        tenants: None,
        engine: None,
        polyglot: None,
        snapshot: None,
    };
    if wanted(args, BenchSection::Hosts) {
        let native = one_rule_host(
            scratch,
            "native",
            json!({"type": "command", "command": host_figures::NATIVE_COMMAND, "matcher": "Bash"}),
            &hooks,
            None,
        )?;
        let typed = one_rule_host(
            scratch,
            "typed",
            json!({"type": "wasm", "component": "hooks/noop.wasm", "matcher": "Bash"}),
            &hooks,
            Some(("noop.wasm", guests::wasm("noop")?)),
        )?;
        let cli = one_rule_host(
            scratch,
            "cli",
            json!({"type": "wasm", "component": "hooks/noop_cli.wasm", "matcher": "Bash"}),
            &hooks,
            Some(("noop_cli.wasm", guests::wasm("noop_cli")?)),
        )?;
        let typed_floor = floor::FloorRun::new(&hooks, guests::wasm("noop")?, &event, "null")?;
        let cli_floor = floor::FloorRun::new(&hooks, guests::wasm("noop_cli")?, &event, "null")?;
        // The native hook and the same command spawned bare alternate in rounds (their ratio
        // is a goal); the bare row is printed after the others.
        let payload = hookbox_core::event::wire::payload(&event, hookbox_core::Dialect::Claude)
            .to_string()
            .into_bytes();
        let native_runs = (args.native_runs / scale).max(10);
        let (native_samples, bare_samples) = rt.block_on(host_figures::native_beside_bare(
            &native,
            &event,
            &payload,
            native_runs,
        ))?;
        for (kind, host, runs, at_floor) in [
            ("native sh -c", &native, args.native_runs / scale, None),
            (
                "wasm typed (hook world)",
                &typed,
                args.wasm_runs / scale,
                Some(&typed_floor),
            ),
            (
                "wasm wasi:cli command",
                &cli,
                args.wasm_runs / scale,
                Some(&cli_floor),
            ),
        ] {
            let row = section(kind, || {
                let Some(at_floor) = at_floor else {
                    return Ok(Latency::of(
                        kind,
                        &native_samples,
                        rt.block_on(throughput(host, &event, 1, dur)),
                        rt.block_on(throughput(host, &event, n, dur)),
                    ));
                };
                // Hookbox and the floor alternate: rounds of latencies, then each throughput.
                let (samples, bare) =
                    rt.block_on(floor::side_by_side(host, &event, at_floor, runs.max(10)))?;
                let throughput_1 = rt.block_on(throughput(host, &event, 1, dur));
                let floor_1 = rt.block_on(at_floor.throughput(1, dur))?;
                let throughput_n = rt.block_on(throughput(host, &event, n, dur));
                let floor_n = rt.block_on(at_floor.throughput(n, dur))?;
                let mut row = Latency::of(kind, &samples, throughput_1, throughput_n);
                row.floor = Some(floor::figures(&bare, row.p50_us, Some((floor_1, floor_n))));
                Ok(row)
            })?;
            report.latency.push(row);
        }
        // The same command spawned bare, for the cost hookbox adds to a spawn.
        let row = section("bare sh -c (no hookbox)", || {
            Ok(Latency::of(
                "bare sh -c (no hookbox)",
                &bare_samples,
                rt.block_on(host_figures::bare_throughput(&payload, 1, dur)),
                rt.block_on(host_figures::bare_throughput(&payload, n, dur)),
            ))
        })?;
        report.latency.push(row);
        let (nat, typ, cl) = (&report.latency[0], &report.latency[1], &report.latency[2]);
        report.ratio_native_hook_over_bare_spawn_p50 = Some(nat.p50_us / report.latency[3].p50_us);
        report.ratio_native_over_typed_wasm_p50 = Some(nat.p50_us / typ.p50_us);
        report.ratio_native_over_cli_wasm_p50 = Some(nat.p50_us / cl.p50_us);
        report.ratio_throughput_typed_wasm_over_native = Some(typ.throughput_n / nat.throughput_n);
        report.ratio_typed_wasm_throughput_n_over_1 = Some(typ.throughput_n / typ.throughput_1);
        report.paced = Some(section("wasm typed, one event every 5 ms", || {
            rt.block_on(floor::paced(
                &typed,
                &event,
                &typed_floor,
                PACED_RUNS / scale,
            ))
        })?);
        // An approved hook run from its snapshot in a private mount namespace (trust =
        // require) beside the same hook from the live folder and the bare spawn.
        report.snapshot = Some(section(
            "native hook from its snapshot (namespace)",
            || rt.block_on(snapshot_views::measure(scratch, native_runs, &payload)),
        )?);
    }
    if wanted(args, BenchSection::Idle) {
        section("idle overhead", || {
            let empty = HookHost::with_runtime(&hooks, quiet_policy(&scratch.join("empty")))
                .context("empty host")?;
            report.idle_ns_per_dispatch_empty_host =
                Some(rt.block_on(idle(&empty, &event, 200_000 / scale)));
            let many = HookHost::with_runtime(&hooks, quiet_policy(&scratch.join("many")))
                .context("10k host")?;
            let (plugins, rules) = host_figures::ten_thousand_rules();
            many.install(plugins, rules);
            report.idle_ns_per_dispatch_10k_rules =
                Some(rt.block_on(idle(&many, &event, 200_000 / scale)));
            Ok(())
        })?;
    }
    if wanted(args, BenchSection::Loads) {
        report.loads = section("component loads", || {
            Ok(vec![
                load_times(
                    "noop (17 KB)",
                    guests::wasm("noop")?,
                    &scratch.join("loads-noop"),
                )?,
                load_times(
                    "shell_guard (147 KB)",
                    guests::wasm("shell_guard")?,
                    &scratch.join("loads-shell-guard"),
                )?,
            ])
        })?;
    }
    if wanted(args, BenchSection::Memory) && args.memory_hooks > 0 {
        let what = format!("memory with {} concurrent wasm hooks", args.memory_hooks);
        report.memory = Some(section(&what, || {
            rt.block_on(memory(scratch, &hooks, args.memory_hooks))
        })?);
    }
    if wanted(args, BenchSection::Engine) {
        report.engine = Some(section("engine settings (fuel, pagemap_scan)", || {
            rt.block_on(engine::measure(scratch, &cache, args.wasm_runs / scale))
        })?);
    }
    if wanted(args, BenchSection::Tenants) {
        report.tenants = Some(section("tenants", || {
            let tenant_runtime = HookRuntime::new(RuntimeSettings {
                wasm: wasm_runtime_config().with_cache_dir(&cache),
                ..RuntimeSettings::default()
            })
            .context("cannot start the tenants' runtime")?;
            rt.block_on(tenants::measure(tenant_runtime, scratch, scale))
        })?);
    }
    if wanted(args, BenchSection::Polyglot) {
        report.polyglot = Some(section(
            "JavaScript and Python guests beside native node and python3 hooks",
            || rt.block_on(polyglot::measure(scratch, &hooks, &cache, scale)),
        )?);
    }
    Ok(report)
}
