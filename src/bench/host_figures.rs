//! The host figures of `hookbox bench`: the same trivial hook as a native `sh -c` command, a
//! typed wasm component and a `wasi:cli` component through `HookHost::dispatch` (latency,
//! throughput at 1 and N in flight), the idle cost of 10,000 rules that do not match, component
//! load times, and resident memory per concurrently running wasm hook. Beside the native hook,
//! the same command spawned bare (no hookbox), so the cost hookbox adds to a process start shows.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hookbox_core::matcher::Matcher;
use hookbox_core::rule::{CommandSpec, Handler, PluginInfo, Rule, RuleSource};
use hookbox_core::{Dialect, Event, EventName};
use hookbox_host::{HookHost, HookRuntime};
use hookbox_wasm::{CacheStatus, WasmRuntime};
use serde::Serialize;
use serde_json::json;

use super::floor::FloorFigures;
use super::measure::{host_with_rule, percentile, rss_mib};
use crate::guests;
use crate::host_setup::wasm_runtime_config;

/// Latency percentiles of one kind of hook, in microseconds.
#[derive(Debug, Serialize)]
pub(crate) struct Latency {
    pub(crate) kind: &'static str,
    pub(crate) runs: usize,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) mean_us: f64,
    /// Dispatches per second with one dispatch in flight.
    pub(crate) throughput_1: f64,
    /// Dispatches per second with `concurrency` in flight.
    pub(crate) throughput_n: f64,
    /// The same component at the floor, in alternating rounds (wasm rows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) floor: Option<FloorFigures>,
}

impl Latency {
    /// A row from its sorted samples (µs) and throughputs.
    pub(crate) fn of(
        kind: &'static str,
        samples: &[f64],
        throughput_1: f64,
        throughput_n: f64,
    ) -> Latency {
        Latency {
            kind,
            runs: samples.len(),
            p50_us: percentile(samples, 0.50),
            p99_us: percentile(samples, 0.99),
            mean_us: samples.iter().sum::<f64>() / samples.len().max(1) as f64,
            throughput_1,
            throughput_n,
            floor: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Loads {
    pub(crate) component: &'static str,
    pub(crate) uncached_ms: f64,
    pub(crate) cached_disk_ms: f64,
    pub(crate) cached_memory_ms: f64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Memory {
    pub(crate) concurrent_hooks: usize,
    pub(crate) baseline_rss_mib: f64,
    pub(crate) peak_rss_mib: f64,
    pub(crate) growth_per_hook_mib: f64,
}

pub(crate) fn one_rule_host(
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

pub(crate) fn bash_event(cwd: &Path) -> Event {
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

/// The native hook's command, and the payload its dispatch writes to it.
pub(crate) const NATIVE_COMMAND: &str = "cat >/dev/null";

/// One `sh -c NATIVE_COMMAND` spawned bare through `tokio::process::Command` (no cgroup, no
/// `pre_exec`, the process's own environment), fed `payload` on stdin, its stdout and stderr
/// read to the end, reaped: what a native hook costs without hookbox.
pub(crate) async fn bare_spawn(payload: &[u8]) -> anyhow::Result<()> {
    use std::process::Stdio;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::new("/bin/sh")
        .args(["-c", NATIVE_COMMAND])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .context("spawn sh")?;
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let feed = async {
        if let Some(mut pipe) = stdin {
            let _ = pipe.write_all(payload).await;
        }
    };
    let read = |pipe: Option<tokio::process::ChildStdout>| async move {
        let mut sink = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut sink).await;
        }
    };
    let read_err = async {
        let mut sink = Vec::new();
        if let Some(mut pipe) = stderr {
            let _ = pipe.read_to_end(&mut sink).await;
        }
    };
    let (_, _, _, status) = tokio::join!(feed, read(stdout), read_err, child.wait());
    status.context("wait for sh")?;
    Ok(())
}

/// The native hook's latencies (through `host`) and the same command's spawned bare, measured
/// in alternating rounds as hookbox and the floor are ([`super::floor::ROUNDS`]), so a machine
/// that slows down mid-run slows both alike and their ratio stays readable. Sorted samples, µs.
pub(crate) async fn native_beside_bare(
    host: &HookHost,
    event: &Event,
    payload: &[u8],
    runs: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let event = &super::measure::shared(event);
    for _ in 0..runs.min(50) {
        host.dispatch(event.clone()).await;
        bare_spawn(payload).await?;
    }
    let per_round = (runs / super::floor::ROUNDS).max(1);
    let (mut native, mut bare) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..super::floor::ROUNDS {
        native.extend(
            super::measure::sample_within(per_round, || {
                let event = event.clone();
                async move {
                    host.dispatch(event).await;
                    Ok(())
                }
            })
            .await?,
        );
        bare.extend(super::measure::sample_within(per_round, || bare_spawn(payload)).await?);
    }
    native.sort_by(f64::total_cmp);
    bare.sort_by(f64::total_cmp);
    Ok((native, bare))
}

/// Bare spawns per second with `n` in flight for `dur`.
pub(crate) async fn bare_throughput(payload: &[u8], n: usize, dur: Duration) -> f64 {
    let start = Instant::now();
    let deadline = start + dur;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let payload = payload.to_vec();
        tasks.spawn(async move {
            let mut done = 0u64;
            while Instant::now() < deadline && bare_spawn(&payload).await.is_ok() {
                done += 1;
            }
            done
        });
    }
    let mut done = 0;
    while let Some(n) = tasks.join_next().await {
        done += n.unwrap_or(0);
    }
    done as f64 / start.elapsed().as_secs_f64()
}

/// Mean nanoseconds of a dispatch that matches nothing.
pub(crate) async fn idle(host: &HookHost, event: &Event, runs: usize) -> f64 {
    let event = super::measure::shared(event);
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
pub(crate) fn ten_thousand_rules() -> (Vec<PluginInfo>, Vec<Rule>) {
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
            parsed: vec![],
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
pub(crate) const UNCACHED_LOADS: usize = 3;
pub(crate) const CACHED_LOADS: usize = 15;

pub(crate) fn load_times(
    name: &'static str,
    bytes: &[u8],
    scratch: &Path,
) -> anyhow::Result<Loads> {
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

/// Resident memory while `n` wasm hooks run at once (each sleeps 400 ms inside the guest).
pub(crate) async fn memory(
    scratch: &Path,
    runtime: &HookRuntime,
    n: usize,
) -> anyhow::Result<Memory> {
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
