//! What every bench section measures with: a host with one rule, latency samples and their
//! percentiles, throughput with N in flight, resident memory. Sections import from here; nothing
//! here imports a section.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hookbox_core::config::LoadOptions;
use hookbox_core::{Event, EventName};
use hookbox_host::{HookHost, HookRuntime, HostPolicy};
use serde_json::json;

/// The policy of every bench host: no replay files (disk I/O is not what is measured).
pub(crate) fn quiet_policy(project: &Path) -> HostPolicy {
    let mut p = HostPolicy::for_project(project);
    p.replay = false;
    p
}

/// A host with one plugin `name` (in `scratch`) holding one rule on `event`, and its component,
/// run with [`quiet_policy`].
pub(crate) fn host_with_rule(
    scratch: &Path,
    name: &str,
    event: EventName,
    rule: serde_json::Value,
    runtime: &HookRuntime,
    component: Option<(&str, &[u8])>,
) -> anyhow::Result<HookHost> {
    let policy = quiet_policy(&scratch.join(name));
    host_with_policy(scratch, name, event, rule, runtime, component, policy)
}

/// [`host_with_rule`] with `policy` instead of the quiet one.
pub(crate) fn host_with_policy(
    scratch: &Path,
    name: &str,
    event: EventName,
    rule: serde_json::Value,
    runtime: &HookRuntime,
    component: Option<(&str, &[u8])>,
    policy: HostPolicy,
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
    let host = HookHost::with_runtime(runtime, policy).context("cannot build a host")?;
    let report = host.load(&[&plugin], &LoadOptions::default());
    if report.rules.len() != 1 {
        bail!("bench plugin {name} did not load: {:?}", report.diagnostics);
    }
    Ok(host)
}

/// `event` as the bench hands it to every dispatch of a measurement: shared, as a caller that
/// keeps its event passes it (`HookHost::dispatch` takes `impl Into<Arc<Event>>`). A deep copy
/// per run would be the bench's cost counted as the dispatch's; the floor borrows its input.
pub(crate) fn shared(event: &Event) -> Arc<Event> {
    Arc::new(event.clone())
}

/// Dispatch latencies of `event` on `host` (sorted, µs): `runs` of them after a warm-up, or as
/// many as fit in [`SAMPLING_BUDGET`].
pub(crate) async fn latencies(host: &HookHost, event: &Event, runs: usize) -> Vec<f64> {
    let event = &shared(event);
    for _ in 0..runs.min(50) {
        host.dispatch(event.clone()).await;
    }
    let one = move || {
        let event = event.clone();
        async move {
            host.dispatch(event).await;
            Ok(())
        }
    };
    sample_within(runs, one).await.unwrap_or_default()
}

pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// Dispatches per second with `n` dispatches in flight for `dur`.
pub(crate) async fn throughput(host: &HookHost, event: &Event, n: usize, dur: Duration) -> f64 {
    let event = shared(event);
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

/// Resident memory of this process, MiB.
pub(crate) fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The longest one latency measurement of a bench section may take: past it the samples taken so
/// far are the figure (and their count says so), so a section whose hooks slowed down by orders of
/// magnitude still finishes and reports it instead of running for hours.
pub(crate) const SAMPLING_BUDGET: Duration = Duration::from_secs(20);

/// Latencies of `runs` calls of `one` (sorted, µs), or of as many as fit in [`SAMPLING_BUDGET`]
/// (at least one). Each sample is the future's time from its first poll to its end.
pub(crate) async fn sample_within<F, Fut>(runs: usize, one: F) -> anyhow::Result<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    sample_paced(runs, Duration::ZERO, one).await
}

/// [`sample_within`], the task sleeping `pause` before each call (outside its sample): its worker
/// parks and whatever runs meanwhile takes the caches, as between an agent's events.
pub(crate) async fn sample_paced<F, Fut>(
    runs: usize,
    pause: Duration,
    mut one: F,
) -> anyhow::Result<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let started = Instant::now();
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        // The future is made before the clock starts: what `one` prepares for it (the caller's
        // handle on the event) is the caller's, not the dispatch's.
        let next = one();
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let t = Instant::now();
        next.await?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
        if started.elapsed() > SAMPLING_BUDGET {
            break;
        }
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples)
}
