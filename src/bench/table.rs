//! The text of a bench report: one block per section that ran.

use std::fmt::Write as _;

use super::host_figures::{CACHED_LOADS, UNCACHED_LOADS};
use super::report::Report;

pub(crate) fn table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "hookbox bench — {} build, {} CPUs, N = {} concurrent",
        r.build, r.machine.cores, r.concurrency
    );
    let _ = writeln!(
        s,
        "machine: {} ({} cores, {} GiB, Linux {})",
        r.machine.cpu, r.machine.cores, r.machine.memory_gib, r.machine.kernel
    );
    if !r.latency.is_empty() {
        let _ = writeln!(
            s,
            "\nfull dispatch through HookHost (match + payload + run + aggregate), trivial hook:"
        );
        let _ = writeln!(
            s,
            "  {:<26} {:>8} {:>10} {:>10} {:>10} {:>12} {:>12}",
            "hook", "runs", "p50 µs", "p99 µs", "mean µs", "1 in flight/s", "N in flight/s"
        );
    }
    for l in &r.latency {
        let _ = writeln!(
            s,
            "  {:<26} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>12.0} {:>12.0}",
            l.kind, l.runs, l.p50_us, l.p99_us, l.mean_us, l.throughput_1, l.throughput_n
        );
        if let Some(f) = &l.floor {
            let _ = writeln!(
                s,
                "  {:<26} {:>8} {:>10.1} {:>10.1} {:>10} {:>12.0} {:>12.0}   hookbox/floor p50 = {:.2}x (goal <= 1.25)",
                "  at the floor (wasmtime)",
                f.runs,
                f.p50_us,
                f.p99_us,
                "",
                f.throughput_1.unwrap_or(f64::NAN),
                f.throughput_n.unwrap_or(f64::NAN),
                f.ratio_over_floor_p50
            );
        }
    }
    if let (Some(typed), Some(cli), Some(tput), Some(scale)) = (
        r.ratio_native_over_typed_wasm_p50,
        r.ratio_native_over_cli_wasm_p50,
        r.ratio_throughput_typed_wasm_over_native,
        r.ratio_typed_wasm_throughput_n_over_1,
    ) {
        let _ = writeln!(
            s,
            "\nratios: native/typed-wasm p50 = {typed:.0}x, native/wasi:cli-wasm p50 = {cli:.0}x, typed-wasm/native throughput (N) = {tput:.0}x, typed-wasm throughput N/1 in flight = {scale:.2}x"
        );
    }
    if let Some(p) = &r.paced {
        let _ = writeln!(
            s,
            "wasm typed at an agent's pace (one event every {:.0} ms, caches taken between): p50 {:.1} µs p99 {:.1} µs, at the floor p50 {:.1} µs p99 {:.1} µs: hookbox/floor p50 = {:.2}x (goal <= 1.25)",
            p.pace_ms, p.p50_us, p.p99_us, p.floor_p50_us, p.floor_p99_us, p.ratio_over_floor_p50
        );
    }
    if let Some(bare) = r.ratio_native_hook_over_bare_spawn_p50 {
        let _ = writeln!(
            s,
            "native sh -c hook p50 / the same command spawned bare = {bare:.2}x (goal <= 1.15)"
        );
    }
    if let Some(v) = &r.snapshot {
        match &v.isolation_reason {
            Some(why) => {
                let _ = writeln!(
                    s,
                    "approved hook from its snapshot: no private mount namespace here ({why})"
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "approved hook from its snapshot (mount namespace) p50 {:.0} µs, same hook from the live folder {:.0} µs, bare spawn {:.0} µs: namespace/live = {:.2}x, namespace/bare = {:.2}x (goal <= 1.15), namespace setup {:.0} µs",
                    v.namespace_p50_us,
                    v.live_p50_us,
                    v.bare_p50_us,
                    v.ratio_namespace_over_live_p50,
                    v.ratio_namespace_over_bare_p50,
                    v.namespace_setup_us
                );
            }
        }
    }
    if let (Some(empty), Some(many)) = (
        r.idle_ns_per_dispatch_empty_host,
        r.idle_ns_per_dispatch_10k_rules,
    ) {
        let _ = writeln!(
            s,
            "idle dispatch (nothing matches): empty host {empty:.0} ns, 10,000 rules across 1,000 plugins {many:.0} ns"
        );
    }
    if !r.loads.is_empty() {
        let _ = writeln!(
            s,
            "\ncomponent load (median of {UNCACHED_LOADS} uncached, {CACHED_LOADS} cached loads):"
        );
    }
    for l in &r.loads {
        let _ = writeln!(
            s,
            "  {:<22} uncached (compile) {:>8.2} ms   cached on disk {:>6.3} ms   cached in memory {:>6.3} ms",
            l.component, l.uncached_ms, l.cached_disk_ms, l.cached_memory_ms
        );
    }
    if let Some(engine) = &r.engine {
        let _ = writeln!(s, "\nengine settings, same run (alternating rounds):");
        for v in &engine.variants {
            let _ = writeln!(
                s,
                "  {:<42} p50 {:>7.1} µs   p99 {:>7.1} µs   floor p50 {:>7.1} µs ({:.2}x){}",
                v.name,
                v.p50_us,
                v.p99_us,
                v.floor_p50_us,
                v.ratio_over_floor_p50,
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
            engine.ratio_fuel_on_over_off_p50, engine.ratio_pagemap_on_over_off_p50
        );
    }
    if let Some(t) = &r.tenants {
        let _ = writeln!(
            s,
            "\ntenants (one runtime, fuel metering on):\n  {}\n  {}\n  memory per loaded tenant (10 wasm rules, {} tenants): {:.0} KiB; reload of a tenant with 10 compiled components: {:.2} ms",
            t.over_host.line(),
            t.isolation.line(),
            t.tenants_loaded,
            t.memory_per_tenant_kib,
            t.reload_10_cached_ms
        );
    }
    if let Some(polyglot) = &r.polyglot {
        let _ = writeln!(
            s,
            "\nguests in other languages beside the native hooks they replace (same logic):"
        );
        for row in &polyglot.rows {
            let _ = writeln!(
                s,
                "  {:<40} in a host p50 {:>9.1} µs  p99 {:>9.1} µs   whole process {:>7.1} ms",
                row.form, row.in_host_p50_us, row.in_host_p99_us, row.process_median_ms
            );
            if let Some(f) = &row.floor {
                let _ = writeln!(
                    s,
                    "  {:<40} at the floor p50 {:>9.1} µs  p99 {:>9.1} µs   hookbox/floor p50 = {:.2}x",
                    "", f.p50_us, f.p99_us, f.ratio_over_floor_p50
                );
            }
            if let (Some(p50), Some(p99)) = (row.in_host_pagemap_p50_us, row.in_host_pagemap_p99_us)
            {
                let _ = writeln!(
                    s,
                    "  {:<40} in a host p50 {p50:>9.1} µs  p99 {p99:>9.1} µs   (pool reset with pagemap_scan on)",
                    ""
                );
            }
        }
        for p in &polyglot.pairs {
            let _ = writeln!(
                s,
                "  {} vs {}: {:.0}x faster in a host, {:.2}x as a whole process",
                p.guest, p.native, p.in_host_speedup, p.process_speedup
            );
        }
        for why in &polyglot.missing {
            let _ = writeln!(s, "  not measured: {why}");
        }
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
