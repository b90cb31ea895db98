//! Per-event latency of the wasm runtime and the cost of loading a component, against SPEC §9
//! (wasm hook p50 ≤ 20 µs, p99 ≤ 60 µs; cached load ≤ 1 ms; ≥ 20 000 dispatches/s on 2 cores).
//! Not a test: numbers only mean something in a release build on a quiet machine.
//!
//! ```text
//! cargo run --release -p hookbox-wasm --example bench [-- EVENTS]
//! ```
//!
//! Guests are the trivial `noop` (typed) and `noop-cli` (command) from hookbox-test-artifacts.

use std::path::Path;
use std::time::{Duration, Instant};

use hookbox_core::Event;
use hookbox_test_artifacts::{NOOP, NOOP_CLI};
use hookbox_wasm::{CacheStatus, Invocation, RuntimeConfig, WasmLimits, WasmRuntime};
use serde_json::json;

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    format!(
        "p50 {:>7.1?}  p90 {:>7.1?}  p99 {:>7.1?}  mean {:>7.1?}  (n={})",
        at(0.50),
        at(0.90),
        at(0.99),
        mean,
        samples.len()
    )
}

fn event() -> Event {
    Event::from_payload(
        None,
        json!({"hook_event_name": "PreToolUse", "session_id": "bench", "cwd": "/work",
               "tool_name": "Bash", "tool_input": {"command": "ls -la"}}),
        "d",
        "/",
    )
    .expect("valid payload")
}

async fn per_event(rt: &WasmRuntime, path: &str, events: usize) -> Vec<Duration> {
    let component = rt.load_file(Path::new(path)).expect("guest loads");
    let event = event();
    let payload = serde_json::Value::Object(hookbox_core::event::wire::flat(&event)).to_string();
    let limits = WasmLimits::default();
    let config: std::sync::Arc<str> = "null".into();
    let label: std::sync::Arc<str> = "bench".into();
    let mut samples = Vec::with_capacity(events);
    for i in 0..events + events / 10 {
        let inv = Invocation {
            event: &event,
            payload_json: &payload,
            tool_input_json: None,
            limits: &limits,
            mounts: &[],
            env: &[],
            config_json: config.clone(),
            label: label.clone(),
        };
        let t = Instant::now();
        rt.run(&component, inv).await.expect("noop guest succeeds");
        // The first tenth warms caches and the instance pool.
        if i >= events / 10 {
            samples.push(t.elapsed());
        }
    }
    samples
}

fn main() {
    let events: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let dir = std::env::temp_dir().join(format!("hookbox-wasm-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = RuntimeConfig::default().with_cache_dir(&dir);

    println!(
        "== load (noop, {} bytes)",
        std::fs::metadata(NOOP).map(|m| m.len()).unwrap_or(0)
    );
    let t = Instant::now();
    let first = WasmRuntime::new(config.clone()).expect("runtime");
    println!(
        "runtime new (engine, pool, linker)     {:>9.2?}",
        t.elapsed()
    );
    let t = Instant::now();
    assert_eq!(
        first.precompile_file(Path::new(NOOP)).expect("compiles"),
        CacheStatus::Compiled
    );
    println!(
        "uncached load (compile + write .cwasm) {:>9.2?}",
        t.elapsed()
    );
    let mut disk = Vec::new();
    for _ in 0..20 {
        let rt = WasmRuntime::new(config.clone()).expect("runtime");
        let t = Instant::now();
        let c = rt.load_file(Path::new(NOOP)).expect("loads");
        disk.push(t.elapsed());
        assert_eq!(c.cache_status(), CacheStatus::Disk);
    }
    println!(
        "cached load (disk .cwasm, link)        {}",
        percentiles(disk)
    );
    let mut memory = Vec::new();
    for _ in 0..1000 {
        let t = Instant::now();
        first.load_file(Path::new(NOOP)).expect("loads");
        memory.push(t.elapsed());
    }
    println!(
        "cached load (memory: read + sha256)    {}",
        percentiles(memory)
    );

    let rt = WasmRuntime::new(config).expect("runtime");
    println!("\n== per event, one task (pooled: {})", rt.is_pooled());
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let typed = tokio.block_on(per_event(&rt, NOOP, events));
    println!("typed noop      {}", percentiles(typed));
    let cli = tokio.block_on(per_event(&rt, NOOP_CLI, events / 4));
    println!("wasi:cli noop   {}", percentiles(cli));

    println!("\n== throughput, 2 worker threads, 8 tasks");
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let rt = std::sync::Arc::new(rt);
    let per_task = events / 2;
    let t = Instant::now();
    tokio.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let rt = rt.clone();
                tokio::spawn(async move { per_event(&rt, NOOP, per_task).await.len() })
            })
            .collect();
        for task in tasks {
            task.await.expect("task");
        }
    });
    let total = 8 * (per_task + per_task / 10);
    println!(
        "typed noop      {:.0} events/s",
        total as f64 / t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
