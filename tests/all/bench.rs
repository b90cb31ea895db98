//! `hookbox bench`: a section measures and reports as JSON (the format a baseline is kept in),
//! and `--compare` names every figure more than 1.3× worse than a saved report, with exit code 1,
//! and passes a report against itself.

use crate::util::{Dir, hookbox};

#[test]
fn one_section_reports_json_that_compares_clean_against_itself() {
    let dir = Dir::new();
    let run = hookbox(["bench", "--quick", "--only", "idle", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.json();
    assert!(report["idle_ns_per_dispatch_empty_host"].as_f64().unwrap() > 0.0);
    assert!(report["idle_ns_per_dispatch_10k_rules"].as_f64().unwrap() > 0.0);
    // Sections left out are absent, not zero.
    assert!(report.get("latency").is_none(), "{report}");
    assert!(report.get("tenants").is_none(), "{report}");
    assert!(report["machine"]["cores"].as_u64().unwrap() >= 1);
    let saved = dir.write("now.json", &run.stdout);
    let same = hookbox([
        "bench",
        "--compare",
        saved.to_str().unwrap(),
        "--from",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(same.code, Some(0), "{}{}", same.stdout, same.stderr);
    assert!(
        same.stdout
            .contains("no figure more than 1.3x worse than the baseline"),
        "{}",
        same.stdout
    );
}

#[test]
fn compare_names_each_figure_more_than_1_3x_worse_and_fails() {
    let dir = Dir::new();
    let base = dir.write(
        "base.json",
        r#"{"latency": [{"kind": "wasm typed (hook world)", "runs": 5000, "p50_us": 10.0, "throughput_n": 100000.0}],
            "tenants": {"isolation": {"quiet_alone_p50_us": 20.0}}}"#,
    );
    let now = dir.write(
        "now.json",
        r#"{"latency": [{"kind": "wasm typed (hook world)", "runs": 500, "p50_us": 14.0, "throughput_n": 60000.0}],
            "tenants": {"isolation": {"quiet_alone_p50_us": 21.0}}}"#,
    );
    let run = hookbox([
        "bench",
        "--compare",
        base.to_str().unwrap(),
        "--from",
        now.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "2 figure(s) more than 1.3x worse than the baseline: latency[wasm typed (hook world)].p50_us, latency[wasm typed (hook world)].throughput_n"
        ),
        "{}",
        run.stdout
    );
    // A 5 % move is not named; the run count describes the run and is not compared.
    assert!(
        !run.stdout.contains("quiet_alone_p50_us  WORSE"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("(not compared)"), "{}", run.stdout);
}

#[test]
fn the_hosts_section_measures_the_typed_hook_at_an_agents_pace_beside_its_floor() {
    let dir = Dir::new();
    let run = hookbox(["bench", "--quick", "--only", "hosts", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.json();
    let paced = &report["paced"];
    assert_eq!(paced["pace_ms"].as_f64(), Some(5.0), "{paced}");
    assert_eq!(paced["runs"].as_u64(), Some(100), "{paced}");
    let (p50, p99) = (
        paced["p50_us"].as_f64().unwrap(),
        paced["p99_us"].as_f64().unwrap(),
    );
    let floor = paced["floor_p50_us"].as_f64().unwrap();
    assert!(p50 > 0.0 && p99 >= p50, "{paced}");
    assert!(
        floor > 0.0 && paced["floor_p99_us"].as_f64().unwrap() >= floor,
        "{paced}"
    );
    let ratio = paced["ratio_over_floor_p50"].as_f64().unwrap();
    assert!((ratio - p50 / floor).abs() < 1e-9, "{paced}");
    // The pace describes the run: a report taken at another pace is not "worse" for it.
    let mut slower = report.clone();
    slower["paced"]["pace_ms"] = serde_json::json!(50.0);
    let (base, now) = (
        dir.write("base.json", &run.stdout),
        dir.write("now.json", &slower.to_string()),
    );
    let same = hookbox([
        "bench",
        "--compare",
        base.to_str().unwrap(),
        "--from",
        now.to_str().unwrap(),
    ]);
    assert_eq!(same.code, Some(0), "{}{}", same.stdout, same.stderr);
    let line = same
        .stdout
        .lines()
        .find(|l| l.contains("paced.pace_ms"))
        .unwrap_or("");
    assert!(line.ends_with("(not compared)"), "{}", same.stdout);
}

#[test]
fn compare_refuses_a_file_that_is_not_a_report_naming_it() {
    let dir = Dir::new();
    let bad = dir.write("bad.json", "not json");
    let run = hookbox([
        "bench",
        "--compare",
        bad.to_str().unwrap(),
        "--from",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("bad.json is not a `hookbox bench --json` report"),
        "{}",
        run.stderr
    );
}

/// The tenants section ends (it hung: flood loops whose dispatches never waited kept both worker
/// threads, so the timers the quiet tenant's dispatches needed never ran) and reports the tenant
/// path beside plain hosts running the same hook on the same runtime.
#[test]
fn the_tenants_section_finishes_and_sets_the_tenant_path_beside_plain_hosts() {
    let run = hookbox(["bench", "--quick", "--only", "tenants", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.json();
    let t = &report["tenants"];
    for figure in ["host_p50_us", "host_with_replay_p50_us", "tenant_p50_us"] {
        assert!(
            t["over_host"][figure].as_f64().unwrap() > 0.0,
            "{figure}: {t}"
        );
    }
    let ratio = t["over_host"]["ratio_tenant_over_host"].as_f64().unwrap();
    let (tenant, host) = (
        t["over_host"]["tenant_p50_us"].as_f64().unwrap(),
        t["over_host"]["host_with_replay_p50_us"].as_f64().unwrap(),
    );
    assert!((ratio - tenant / host).abs() < 1e-9, "{t}");
    for figure in [
        "quiet_alone_p50_us",
        "quiet_during_cheap_flood_p50_us",
        "quiet_during_hostile_flood_p50_us",
        "quiet_during_two_spinning_tenants_p50_us",
    ] {
        assert!(
            t["isolation"][figure].as_f64().unwrap() > 0.0,
            "{figure}: {t}"
        );
    }
    assert!(
        t["isolation"]["noisy_dispatches"].as_u64().unwrap() > 0,
        "{t}"
    );
    assert!(t["reload_10_cached_ms"].as_f64().unwrap() > 0.0, "{t}");
}

/// The engine section builds its eight runtimes (it stopped at the first one when settings were
/// no longer clamped: its 16-slot pools kept the default reserve of 16 slots, which a runtime
/// refuses) and reports each configuration's figures.
#[test]
fn the_engine_section_builds_its_runtimes_and_reports_each_configuration() {
    let run = hookbox([
        "bench",
        "--quick",
        "--only",
        "engine",
        "--wasm-runs",
        "200",
        "--json",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.json();
    let engine = &report["engine"];
    assert_eq!(engine["variants"].as_array().unwrap().len(), 8, "{engine}");
    assert!(
        engine["ratio_fuel_on_over_off_p50"].as_f64().unwrap() > 0.0,
        "{engine}"
    );
    assert!(
        engine["ratio_pagemap_on_over_off_p50"].as_f64().unwrap() > 0.0,
        "{engine}"
    );
}

#[test]
fn count_runs_each_path_it_names_and_says_how_many() {
    // The driver an instruction counter runs (docs/performance.md): each path runs the no-op
    // cleanly (a hook that failed would be counted as cheap, so it fails the run).
    for kind in [
        "typed",
        "typed-floor",
        "cli",
        "cli-floor",
        "prompt",
        "replay",
        "tenant",
        "native",
        "bare",
    ] {
        let run = hookbox(["bench", "--count", kind, "--wasm-runs", "3"]);
        assert_eq!(run.code, Some(0), "{kind}: {}", run.stderr);
        assert!(
            run.stderr.contains(": 3 runs, 1 in flight"),
            "{kind}: {}",
            run.stderr
        );
    }
    // Each example guest at the floor, given an event and config it acts on (one it refused
    // would fail the run).
    for guest in [
        "shell_guard",
        "context_injection",
        "empty_answer_rescue",
        "compaction_audit",
        "cli_guard",
        "noop_cli",
    ] {
        let run = hookbox([
            "bench",
            "--count",
            "guest-floor",
            "--count-guest",
            guest,
            "--wasm-runs",
            "3",
        ]);
        assert_eq!(run.code, Some(0), "{guest}: {}", run.stderr);
        assert!(run.stderr.contains(": 3 runs"), "{guest}: {}", run.stderr);
    }
    let run = hookbox([
        "bench",
        "--count",
        "typed",
        "--wasm-runs",
        "5",
        "--count-in-flight",
        "2",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(": 5 runs, 2 in flight"),
        "{}",
        run.stderr
    );
    // Writing over the caches between runs (the cold footprint under cachegrind), within its
    // bound; past it the flag is refused by name.
    let run = hookbox([
        "bench",
        "--count",
        "typed",
        "--wasm-runs",
        "3",
        "--count-evict-kib",
        "4096",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(": 3 runs, 1 in flight"),
        "{}",
        run.stderr
    );
    let run = hookbox(["bench", "--count", "typed", "--count-evict-kib", "1048577"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--count-evict-kib"), "{}", run.stderr);
}

/// `bench --serve` measures bare axum beside `hookbox serve` with the same client, an answer of
/// the same size, and prints and keeps the ratio of the two per concurrency (issue 30: the goals
/// are read from it).
#[test]
fn the_serve_section_sets_bare_axum_beside_serve_with_the_ratio() {
    let run = hookbox(["bench", "--serve", "--quick", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.json();
    assert!(report["answer_bytes"].as_u64().unwrap() > 100, "{report}");
    let rows = report["rows"].as_array().unwrap();
    let seen: Vec<u64> = rows
        .iter()
        .map(|r| r["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(seen, [1, 8, 64], "{report}");
    for row in rows {
        for figure in [
            "http_per_s",
            "bare_per_s",
            "bare_p50_us",
            "in_process_p50_us",
        ] {
            assert!(row[figure].as_f64().unwrap() > 0.0, "{figure}: {row}");
        }
        let ratio = row["http_over_bare_per_s"].as_f64().unwrap();
        let want = row["http_per_s"].as_f64().unwrap() / row["bare_per_s"].as_f64().unwrap();
        assert!((ratio - want).abs() < 1e-9, "{row}");
        let added = row["http_minus_bare_minus_local_p50_us"].as_f64().unwrap();
        let want = row["http_p50_us"].as_f64().unwrap()
            - row["bare_p50_us"].as_f64().unwrap()
            - row["in_process_p50_us"].as_f64().unwrap();
        assert!((added - want).abs() < 1e-9, "{row}");
    }
    let text = hookbox(["bench", "--serve", "--quick"]);
    assert_eq!(text.code, Some(0), "{}", text.stderr);
    for column in ["bare p50 µs", "bare /s", "serve÷bare", "serve−bare−local"] {
        assert!(text.stdout.contains(column), "{column}: {}", text.stdout);
    }
}

/// The counting driver's HTTP kinds send the bench request to `hookbox serve` and to bare axum.
#[test]
fn count_sends_the_serve_request_to_serve_and_to_bare_axum() {
    for kind in ["serve", "serve-bare"] {
        let run = hookbox(["bench", "--count", kind, "--wasm-runs", "3"]);
        assert_eq!(run.code, Some(0), "{kind}: {}", run.stderr);
        assert!(
            run.stderr.contains(": 3 runs, 1 in flight"),
            "{kind}: {}",
            run.stderr
        );
    }
}
