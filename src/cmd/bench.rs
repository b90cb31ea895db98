//! `hookbox bench`: the side-by-side benchmark of SPEC §9, in one process and one run. The same
//! trivial hook logic (read the payload, answer nothing) as a native `sh -c` command hook, a
//! typed wasm component and a `wasi:cli` wasm component, each through `HookHost::dispatch`:
//! latency percentiles, throughput at 1 and N concurrent dispatches, the native ÷ wasm ratios,
//! the idle cost of 10,000 loaded rules that do not match, cached vs uncached component loads,
//! and resident memory per concurrently running wasm hook. Run it from a release build.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hookbox_core::config::LoadOptions;
use hookbox_core::matcher::Matcher;
use hookbox_core::rule::{CommandSpec, Handler, PluginInfo, Rule, RuleSource};
use hookbox_core::{Dialect, Event, EventName};
use hookbox_host::{HookHost, HookRuntime, HostPolicy, RuntimeSettings};
use hookbox_wasm::{CacheStatus, WasmRuntime};
use serde::Serialize;
use serde_json::json;

use crate::cli::BenchArgs;
use crate::guests;
use crate::host_setup::{runtime, wasm_runtime_config};

/// Latency percentiles of one kind of hook, in microseconds.
#[derive(Debug, Serialize)]
struct Latency {
    kind: &'static str,
    runs: usize,
    p50_us: f64,
    p99_us: f64,
    mean_us: f64,
    /// Dispatches per second with one dispatch in flight.
    throughput_1: f64,
    /// Dispatches per second with `concurrency` in flight.
    throughput_n: f64,
}

#[derive(Debug, Serialize)]
struct Loads {
    component: &'static str,
    uncached_ms: f64,
    cached_disk_ms: f64,
    cached_memory_ms: f64,
}

#[derive(Debug, Serialize)]
struct Memory {
    concurrent_hooks: usize,
    baseline_rss_mib: f64,
    peak_rss_mib: f64,
    growth_per_hook_mib: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    build: &'static str,
    cpus: usize,
    concurrency: usize,
    latency: Vec<Latency>,
    ratio_native_over_typed_wasm_p50: f64,
    ratio_native_over_cli_wasm_p50: f64,
    ratio_throughput_typed_wasm_over_native: f64,
    idle_ns_per_dispatch_empty_host: f64,
    idle_ns_per_dispatch_10k_rules: f64,
    loads: Vec<Loads>,
    memory: Option<Memory>,
    tenants: super::bench_tenants::TenantNumbers,
    /// The isolation figures again on a runtime whose pool resets with `pagemap_scan` (off by
    /// default): what the memory reset costs tenants of each other.
    tenants_pagemap_scan: super::bench_tenants::Isolation,
    /// Whether `pagemap_scan` was in force for those (the kernel has it and no swap is set up).
    tenants_pagemap_scan_active: bool,
    engine: super::bench_engine::EngineNumbers,
    polyglot: super::bench_polyglot::PolyglotNumbers,
}

/// Runs `hookbox bench`.
pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    if args.serve {
        return super::bench_serve::run(args);
    }
    measure_and_print(args, "hookbox-bench", run_in, table)
}

/// Runs `run_in` in a fresh private scratch folder (`name-<pid>-<n>`, removed afterwards, whatever happened)
/// and prints its report: JSON with `--json`, else `table`'s text.
pub(super) fn measure_and_print<R: Serialize>(
    args: &BenchArgs,
    name: &str,
    run_in: impl FnOnce(&BenchArgs, &Path) -> anyhow::Result<R>,
    table: impl FnOnce(&R) -> String,
) -> anyhow::Result<ExitCode> {
    let scratch = crate::scratch::private_dir(name)?;
    let result = run_in(args, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let report = result?;
    let text = if args.json {
        serde_json::to_string_pretty(&report).context("cannot encode the report")? + "\n"
    } else {
        table(&report)
    };
    anstream::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
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
    let native = one_rule_host(
        scratch,
        "native",
        json!({"type": "command", "command": "cat >/dev/null", "matcher": "Bash"}),
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
    let event = bash_event(scratch);
    let dur = Duration::from_millis(args.throughput_ms / scale as u64);
    let n = args.concurrency;
    let mut latency = Vec::new();
    for (kind, host, runs) in [
        ("native sh -c", &native, args.native_runs / scale),
        ("wasm typed (hook world)", &typed, args.wasm_runs / scale),
        ("wasm wasi:cli command", &cli, args.wasm_runs / scale),
    ] {
        eprintln!("bench: {kind}…");
        let samples = rt.block_on(latencies(host, &event, runs.max(10)));
        let throughput_1 = rt.block_on(throughput(host, &event, 1, dur));
        let throughput_n = rt.block_on(throughput(host, &event, n, dur));
        latency.push(Latency {
            kind,
            runs: samples.len(),
            p50_us: percentile(&samples, 0.50),
            p99_us: percentile(&samples, 0.99),
            mean_us: samples.iter().sum::<f64>() / samples.len() as f64,
            throughput_1,
            throughput_n,
        });
    }
    eprintln!("bench: idle overhead…");
    let empty = HookHost::with_runtime(&hooks, quiet_policy(&scratch.join("empty")))
        .context("empty host")?;
    let idle_empty = rt.block_on(idle(&empty, &event, 200_000 / scale));
    let many =
        HookHost::with_runtime(&hooks, quiet_policy(&scratch.join("many"))).context("10k host")?;
    let (plugins, rules) = ten_thousand_rules();
    many.install(plugins, rules);
    let idle_many = rt.block_on(idle(&many, &event, 200_000 / scale));
    eprintln!("bench: component loads…");
    let loads = vec![
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
    ];
    eprintln!(
        "bench: memory with {} concurrent wasm hooks…",
        args.memory_hooks
    );
    let memory = if args.memory_hooks > 0 {
        Some(rt.block_on(memory(scratch, &hooks, args.memory_hooks))?)
    } else {
        None
    };
    eprintln!("bench: engine settings (fuel, pagemap_scan)…");
    let engine = rt.block_on(super::bench_engine::measure(
        scratch,
        &cache,
        args.wasm_runs / scale,
    ))?;
    eprintln!("bench: tenants…");
    let tenant_runtime = HookRuntime::new(RuntimeSettings {
        wasm: wasm_runtime_config().with_cache_dir(&cache),
        ..RuntimeSettings::default()
    })
    .context("cannot start the tenants' runtime")?;
    let tenants = rt.block_on(super::bench_tenants::measure(
        tenant_runtime,
        scratch,
        scale,
    ))?;
    eprintln!("bench: tenants, pool reset with pagemap_scan…");
    let mut paged = wasm_runtime_config().with_cache_dir(&cache);
    paged.pool.pagemap_scan = true;
    let paged_runtime = HookRuntime::new(RuntimeSettings {
        wasm: paged,
        ..RuntimeSettings::default()
    })
    .context("cannot start the tenants' runtime with pagemap_scan")?;
    let tenants_pagemap_scan_active = paged_runtime.wasm().pagemap_scan_active();
    let paged_scratch = scratch.join("pagemap-scan");
    std::fs::create_dir_all(&paged_scratch)
        .with_context(|| format!("cannot create {}", paged_scratch.display()))?;
    let tenants_pagemap_scan = rt.block_on(super::bench_tenants::measure_isolation(
        paged_runtime,
        &paged_scratch,
        scale,
    ))?;
    eprintln!("bench: JavaScript and Python guests beside native node and python3 hooks…");
    let polyglot = rt.block_on(super::bench_polyglot::measure(
        scratch, &hooks, &cache, scale,
    ))?;
    let (nat, typ, cl) = (&latency[0], &latency[1], &latency[2]);
    Ok(Report {
        build: if cfg!(debug_assertions) {
            "debug (numbers are not meaningful: use --release)"
        } else {
            "release"
        },
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        concurrency: n,
        ratio_native_over_typed_wasm_p50: nat.p50_us / typ.p50_us,
        ratio_native_over_cli_wasm_p50: nat.p50_us / cl.p50_us,
        ratio_throughput_typed_wasm_over_native: typ.throughput_n / nat.throughput_n,
        latency,
        idle_ns_per_dispatch_empty_host: idle_empty,
        idle_ns_per_dispatch_10k_rules: idle_many,
        loads,
        memory,
        tenants,
        tenants_pagemap_scan,
        tenants_pagemap_scan_active,
        engine,
        polyglot,
    })
}

/// The policy of every bench host: no replay files (disk I/O is not what is measured).
fn quiet_policy(project: &Path) -> HostPolicy {
    let mut p = HostPolicy::for_project(project);
    p.replay = false;
    p
}

fn one_rule_host(
    scratch: &Path,
    name: &str,
    rule: serde_json::Value,
    runtime: &HookRuntime,
    component: Option<(&str, &[u8])>,
) -> anyhow::Result<HookHost> {
    host_with_rule(
        scratch,
        name,
        EventName::PreToolUse,
        rule,
        runtime,
        component,
    )
}

/// A host with one plugin `name` (in `scratch`) holding one rule on `event`, and its component.
pub(super) fn host_with_rule(
    scratch: &Path,
    name: &str,
    event: EventName,
    rule: serde_json::Value,
    runtime: &HookRuntime,
    component: Option<(&str, &[u8])>,
) -> anyhow::Result<HookHost> {
    let plugin = scratch.join(name);
    std::fs::create_dir_all(plugin.join("hooks"))
        .with_context(|| format!("cannot create {}", plugin.display()))?;
    if let Some((file, bytes)) = component {
        std::fs::write(plugin.join("hooks").join(file), bytes)
            .with_context(|| format!("cannot write {file}"))?;
    }
    let hooks = json!({"hooks": {event.as_str(): [rule]}});
    std::fs::write(plugin.join("hooks/hooks.json"), hooks.to_string())
        .context("cannot write hooks.json")?;
    let host =
        HookHost::with_runtime(runtime, quiet_policy(&plugin)).context("cannot build a host")?;
    let report = host.load(&[&plugin], &LoadOptions::default());
    if report.rules.len() != 1 {
        bail!("bench plugin {name} did not load: {:?}", report.diagnostics);
    }
    Ok(host)
}

fn bash_event(cwd: &Path) -> Event {
    let payload = json!({"tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_use_id": "toolu_bench"});
    // A valid literal payload: cannot fail.
    Event::from_payload(
        Some(EventName::PreToolUse),
        payload,
        "bench",
        &cwd.display().to_string(),
    )
    .unwrap_or_else(|_| Event::new(EventName::PreToolUse, "bench", "/"))
}

pub(super) async fn latencies(host: &HookHost, event: &Event, runs: usize) -> Vec<f64> {
    for _ in 0..runs.min(50) {
        host.dispatch(event.clone()).await;
    }
    let mut out = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let d = host.dispatch(event.clone()).await;
        out.push(t.elapsed().as_secs_f64() * 1e6);
        debug_assert_eq!(d.matched_rule_count, 1);
    }
    out.sort_by(f64::total_cmp);
    out
}

pub(super) fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// Dispatches per second with `n` dispatches in flight for `dur`.
async fn throughput(host: &HookHost, event: &Event, n: usize, dur: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + dur;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (host, event, done) = (host.clone(), event.clone(), done.clone());
        tasks.spawn(async move {
            while Instant::now() < deadline {
                host.dispatch(event.clone()).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

/// Mean nanoseconds of a dispatch that matches nothing.
async fn idle(host: &HookHost, event: &Event, runs: usize) -> f64 {
    for _ in 0..1000 {
        host.dispatch(event.clone()).await;
    }
    let t = Instant::now();
    for _ in 0..runs {
        let d = host.dispatch(event.clone()).await;
        debug_assert_eq!(d.matched_rule_count, 0);
    }
    t.elapsed().as_nanos() as f64 / runs as f64
}

/// 10,000 rules across 1,000 plugins, none matching `Bash`: mostly exact tool names (as in real
/// hook files), some regexes and object matchers, spread over several events.
fn ten_thousand_rules() -> (Vec<PluginInfo>, Vec<Rule>) {
    let events = [
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::UserPromptSubmit,
        EventName::SessionStart,
    ];
    let plugins: Vec<PluginInfo> = (0..1000)
        .map(|p| PluginInfo {
            name: format!("tenant-{p}"),
            root: PathBuf::from(format!("/plugins/tenant-{p}")),
            dialect: Dialect::Claude,
            files: vec![],
        })
        .collect();
    let rules = (0..10_000)
        .filter_map(|i| {
            let event = events[i % events.len()];
            let matcher = match i % 10 {
                0 | 1 => Matcher::from_str_for(&format!("^mcp__tenant{}__.*$", i % 1000), event),
                2 => Matcher::from_json(
                    Some(&json!({"tool_name": format!("tenant{}_*", i % 1000)})),
                    event,
                ),
                3 => Matcher::from_str_for("Edit|Write|MultiEdit", event),
                _ => {
                    Matcher::from_str_for(&format!("mcp__tenant{}__tool{}", i % 1000, i % 7), event)
                }
            }
            .ok()?;
            Some(Rule::new(
                i,
                event,
                matcher,
                Handler::Command(CommandSpec::shell("true", 5.0)),
                Dialect::Claude,
                i % 1000,
                RuleSource::new(format!("tenant-{}", i % 1000), "hooks.json"),
            ))
        })
        .collect();
    (plugins, rules)
}

/// Load samples per component: uncached loads each compile into a fresh cache folder (slow), the
/// cached ones repeat cheaply; each figure is the median, so one cold page cache does not decide.
const UNCACHED_LOADS: usize = 3;
const CACHED_LOADS: usize = 15;

fn load_times(name: &'static str, bytes: &[u8], scratch: &Path) -> anyhow::Result<Loads> {
    let time = |rt: &WasmRuntime, want: CacheStatus| -> anyhow::Result<f64> {
        let t = Instant::now();
        let status = rt.precompile_bytes(bytes).context("load")?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if status != want {
            bail!("{name}: expected a {want:?} load, got {status:?}");
        }
        Ok(ms)
    };
    let fresh = |cache: &Path| {
        WasmRuntime::new(wasm_runtime_config().with_cache_dir(cache)).context("runtime")
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        percentile(&v, 0.5)
    };
    let mut uncached = Vec::new();
    let mut memory = Vec::new();
    let cache = |i: usize| scratch.join(format!("cache-{i}"));
    for i in 0..UNCACHED_LOADS {
        let rt = fresh(&cache(i))?;
        uncached.push(time(&rt, CacheStatus::Compiled)?);
        memory.push(time(&rt, CacheStatus::Memory)?);
    }
    let mut disk = Vec::new();
    for _ in 0..CACHED_LOADS {
        // A new runtime has an empty memory cache: the load comes from the disk cache.
        let rt = fresh(&cache(0))?;
        disk.push(time(&rt, CacheStatus::Disk)?);
        memory.push(time(&rt, CacheStatus::Memory)?);
    }
    Ok(Loads {
        component: name,
        uncached_ms: median(uncached),
        cached_disk_ms: median(disk),
        cached_memory_ms: median(memory),
    })
}

/// Resident memory of this process, MiB.
pub(crate) fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Resident memory while `n` wasm hooks run at once (each sleeps 400 ms inside the guest).
async fn memory(scratch: &Path, runtime: &HookRuntime, n: usize) -> anyhow::Result<Memory> {
    let host = one_rule_host(
        scratch,
        "memory",
        json!({"type": "wasm", "component": "hooks/runaway.wasm", "matcher": "Bash"}),
        runtime,
        Some(("runaway.wasm", guests::wasm("runaway")?)),
    )?;
    let payload = json!({"tool_name": "Bash", "tool_input": {"command": "sleep:400"}});
    let event =
        Event::from_payload(Some(EventName::PreToolUse), payload, "bench", "/").context("event")?;
    host.dispatch(event.clone()).await;
    let baseline = rss_mib();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (host, event) = (host.clone(), event.clone());
        tasks.spawn(async move { host.dispatch(event).await });
    }
    let mut peak = baseline;
    while !tasks.is_empty() {
        peak = peak.max(rss_mib());
        tokio::select! {
            _ = tasks.join_next() => {}
            () = tokio::time::sleep(Duration::from_millis(5)) => {}
        }
    }
    Ok(Memory {
        concurrent_hooks: n,
        baseline_rss_mib: baseline,
        peak_rss_mib: peak,
        growth_per_hook_mib: (peak - baseline) / n as f64,
    })
}

fn table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "hookbox bench — {} build, {} CPUs, N = {} concurrent",
        r.build, r.cpus, r.concurrency
    );
    let _ = writeln!(
        s,
        "\nfull dispatch through HookHost (match + payload + run + aggregate), trivial hook:"
    );
    let _ = writeln!(
        s,
        "  {:<26} {:>8} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "hook", "runs", "p50 µs", "p99 µs", "mean µs", "1 in flight/s", "N in flight/s"
    );
    for l in &r.latency {
        let _ = writeln!(
            s,
            "  {:<26} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>12.0} {:>12.0}",
            l.kind, l.runs, l.p50_us, l.p99_us, l.mean_us, l.throughput_1, l.throughput_n
        );
    }
    let _ = writeln!(
        s,
        "\nratios: native/typed-wasm p50 = {:.0}x, native/wasi:cli-wasm p50 = {:.0}x, typed-wasm/native throughput (N) = {:.0}x",
        r.ratio_native_over_typed_wasm_p50,
        r.ratio_native_over_cli_wasm_p50,
        r.ratio_throughput_typed_wasm_over_native
    );
    let _ = writeln!(
        s,
        "idle dispatch (nothing matches): empty host {:.0} ns, 10,000 rules across 1,000 plugins {:.0} ns",
        r.idle_ns_per_dispatch_empty_host, r.idle_ns_per_dispatch_10k_rules
    );
    let _ = writeln!(
        s,
        "\ncomponent load (median of {UNCACHED_LOADS} uncached, {CACHED_LOADS} cached loads):"
    );
    for l in &r.loads {
        let _ = writeln!(
            s,
            "  {:<22} uncached (compile) {:>8.2} ms   cached on disk {:>6.3} ms   cached in memory {:>6.3} ms",
            l.component, l.uncached_ms, l.cached_disk_ms, l.cached_memory_ms
        );
    }
    let _ = writeln!(s, "\nengine settings, same run (alternating rounds):");
    for v in &r.engine.variants {
        let _ = writeln!(
            s,
            "  {:<42} p50 {:>7.1} µs   p99 {:>7.1} µs{}",
            v.name,
            v.p50_us,
            v.p99_us,
            if v.name.contains("pagemap_scan on") && !v.pagemap_scan_active {
                "   (PAGEMAP_SCAN not available here: measured without it)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        s,
        "  ratios: fuel on/off p50 = {:.2}x, pagemap_scan on/off p50 = {:.2}x",
        r.engine.ratio_fuel_on_over_off_p50, r.engine.ratio_pagemap_on_over_off_p50
    );
    let t = &r.tenants;
    let _ = writeln!(
        s,
        "\ntenants (one runtime, fuel metering on):\n  {}\n  memory per loaded tenant (10 wasm rules, {} tenants): {:.0} KiB; reload of a tenant with 10 compiled components: {:.2} ms",
        t.isolation.line(),
        t.tenants_loaded,
        t.memory_per_tenant_kib,
        t.reload_10_cached_ms
    );
    let _ = writeln!(
        s,
        "  pool reset with pagemap_scan on: {}{}",
        r.tenants_pagemap_scan.line(),
        if r.tenants_pagemap_scan_active {
            ""
        } else {
            "   (PAGEMAP_SCAN not in force here: measured without it)"
        }
    );
    let _ = writeln!(
        s,
        "\nguests in other languages beside the native hooks they replace (same logic):"
    );
    for row in &r.polyglot.rows {
        let _ = writeln!(
            s,
            "  {:<40} in a host p50 {:>9.1} µs  p99 {:>9.1} µs   whole process {:>7.1} ms",
            row.form, row.in_host_p50_us, row.in_host_p99_us, row.process_median_ms
        );
        if let (Some(p50), Some(p99)) = (row.in_host_pagemap_p50_us, row.in_host_pagemap_p99_us) {
            let _ = writeln!(
                s,
                "  {:<40} in a host p50 {p50:>9.1} µs  p99 {p99:>9.1} µs   (pool reset with pagemap_scan on)",
                ""
            );
        }
    }
    for p in &r.polyglot.pairs {
        let _ = writeln!(
            s,
            "  {} vs {}: {:.0}x faster in a host, {:.2}x as a whole process",
            p.guest, p.native, p.in_host_speedup, p.process_speedup
        );
    }
    for why in &r.polyglot.missing {
        let _ = writeln!(s, "  not measured: {why}");
    }
    if let Some(m) = &r.memory {
        let _ = writeln!(
            s,
            "\nresident memory with {} concurrent wasm hooks: {:.1} → {:.1} MiB, {:.2} MiB per hook (guest linear memory included)",
            m.concurrent_hooks, m.baseline_rss_mib, m.peak_rss_mib, m.growth_per_hook_mib
        );
    }
    s
}
