//! The floor beside every wasm figure (issue 30): the same component run by the least wasmtime
//! needs ([`hookbox_wasm::floor`]: a fresh store per event on the same engine, pool, compiled
//! code and limits; instantiate, call, drop), measured in alternating rounds with hookbox's own
//! dispatch in the same run, so a machine that slows down mid-run slows both alike. The figure
//! that matters is the ratio: hookbox's p50 ÷ the floor's (goal ≤ 1.25).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use hookbox_core::event::wire;
use hookbox_core::{Dialect, Event};
use hookbox_host::{HookHost, HookRuntime};
use hookbox_wasm::WasmLimits;
use hookbox_wasm::floor::{Floor, FloorHook, FloorInput};
use serde::Serialize;

use super::measure::{percentile, sample_paced, shared};

/// Rounds each latency measurement is split into, hookbox and floor alternating.
pub(crate) const ROUNDS: usize = 10;

/// One component at the floor, with the event it is given.
pub(crate) struct FloorRun {
    hook: Arc<FloorHook>,
    input: Arc<FloorInput>,
    limits: Arc<WasmLimits>,
}

impl FloorRun {
    /// `component` (the bytes a host's rule runs) at the floor of `runtime`, given `event` as a
    /// host gives it: the flat payload to a typed hook, the Claude payload to a command (the
    /// bench's rules are Claude's), and the rule's `config_json`.
    pub(crate) fn new(
        runtime: &HookRuntime,
        component: &[u8],
        event: &Event,
        config_json: &str,
    ) -> anyhow::Result<FloorRun> {
        let wasm = runtime.wasm();
        let loaded = wasm
            .load_bytes(component)
            .context("cannot load the component for the floor")?;
        let hook = Floor::new(wasm)
            .and_then(|floor| floor.prepare(&loaded))
            .context("cannot prepare the floor")?;
        let payload = wire::payload_bytes(event, Dialect::Claude).context("payload")?;
        let payload = String::from_utf8(payload).context("payload")?;
        let run = FloorRun {
            hook: Arc::new(hook),
            input: Arc::new(FloorInput::new(event, &payload, config_json)),
            limits: Arc::new(WasmLimits::default()),
        };
        Ok(run)
    }

    /// One event at the floor.
    pub(crate) async fn once(&self) -> anyhow::Result<()> {
        self.hook
            .run(&self.input, &self.limits)
            .await
            .map_err(|e| anyhow::anyhow!("the floor run failed: {e}"))
    }

    /// Runs per second with `n` in flight for `dur`; a failed run fails the measurement.
    pub(crate) async fn throughput(&self, n: usize, dur: Duration) -> anyhow::Result<f64> {
        let done = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let deadline = start + dur;
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..n {
            let (hook, input, limits, done) = (
                self.hook.clone(),
                self.input.clone(),
                self.limits.clone(),
                done.clone(),
            );
            tasks.spawn(async move {
                while Instant::now() < deadline {
                    hook.run(&input, &limits)
                        .await
                        .map_err(|e| anyhow::anyhow!("the floor run failed: {e}"))?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                anyhow::Ok(())
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined.context("a floor task")??;
        }
        Ok(done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
    }
}

/// A wasm row's floor: the same component run by the least wasmtime needs, same run.
#[derive(Debug, Serialize)]
pub(crate) struct FloorFigures {
    pub(crate) runs: usize,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    /// Runs per second with one in flight (absent where the row measures no throughput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) throughput_1: Option<f64>,
    /// Runs per second with N in flight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) throughput_n: Option<f64>,
    /// The row's p50 ÷ the floor's p50: hookbox's share (goal ≤ 1.25).
    pub(crate) ratio_over_floor_p50: f64,
}

/// Latencies (sorted, µs) of `runs` dispatches of `event` on `host` and of `runs` floor runs,
/// in [`ROUNDS`] alternating rounds after a warm-up of each; the caller's copy of the event is
/// made before each dispatch's clock starts, as an agent hands its event over.
pub(crate) async fn side_by_side(
    host: &HookHost,
    event: &Event,
    floor: &FloorRun,
    runs: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    side_by_side_paced(host, event, floor, runs, Duration::ZERO).await
}

/// [`side_by_side`] with the task sleeping `pause` before each event of either side.
async fn side_by_side_paced(
    host: &HookHost,
    event: &Event,
    floor: &FloorRun,
    runs: usize,
    pause: Duration,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let event = &shared(event);
    for _ in 0..runs.min(50) {
        host.dispatch(event.clone()).await;
        floor.once().await?;
    }
    let per_round = (runs / ROUNDS).max(1);
    let (mut hookbox, mut bare) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..ROUNDS {
        hookbox.extend(
            sample_paced(per_round, pause, || {
                let event = event.clone();
                async move {
                    host.dispatch(event).await;
                    Ok(())
                }
            })
            .await?,
        );
        bare.extend(sample_paced(per_round, pause, || floor.once()).await?);
    }
    hookbox.sort_by(f64::total_cmp);
    bare.sort_by(f64::total_cmp);
    Ok((hookbox, bare))
}

/// How long the machine idles before each event of [`paced`]: an agent sends its events seconds
/// apart (a model's turn, a person's typing), and what ran in between (the agent, the kernel,
/// other processes — on a VM, other guests) has taken the caches, so each event starts cold.
/// Five milliseconds is enough for that on the machine measured (docs/performance.md: one
/// event every 1 ms was already 2× slower than back to back, every 5 ms 5×) and keeps the
/// section to ~10 s.
pub(crate) const PACE: Duration = Duration::from_millis(5);

/// The typed hook and its floor at an agent's pace: one event every [`PACE`], hookbox and the
/// floor alternating in [`ROUNDS`] rounds. Back to back, each event finds the caches as the
/// previous one left them — the loop measures hookbox's cost at its warmest; here each finds
/// them taken, as events from an agent do, and the ratio says how hookbox's share grows when
/// its code and data must be fetched again.
#[derive(Debug, Serialize)]
pub(crate) struct Paced {
    /// The idle time before each event, in milliseconds.
    pub(crate) pace_ms: f64,
    /// Events measured on each side.
    pub(crate) runs: usize,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) floor_p50_us: f64,
    pub(crate) floor_p99_us: f64,
    /// hookbox's p50 ÷ the floor's, both paced (the same goal as back to back: ≤ 1.25).
    pub(crate) ratio_over_floor_p50: f64,
}

/// Measures [`Paced`]: [`side_by_side`] with the task sleeping [`PACE`] before each event (its
/// worker parks: nothing of hookbox's runs meanwhile); each round stops at the sampling budget,
/// and `runs` says how many were taken.
pub(crate) async fn paced(
    host: &HookHost,
    event: &Event,
    floor: &FloorRun,
    runs: usize,
) -> anyhow::Result<Paced> {
    let (hookbox, bare) = side_by_side_paced(host, event, floor, runs, PACE).await?;
    let (p50, floor_p50) = (percentile(&hookbox, 0.50), percentile(&bare, 0.50));
    Ok(Paced {
        pace_ms: PACE.as_secs_f64() * 1e3,
        runs: hookbox.len(),
        p50_us: p50,
        p99_us: percentile(&hookbox, 0.99),
        floor_p50_us: floor_p50,
        floor_p99_us: percentile(&bare, 0.99),
        ratio_over_floor_p50: p50 / floor_p50,
    })
}

/// The floor's figures from its samples, against the row's p50.
pub(crate) fn figures(
    samples: &[f64],
    row_p50_us: f64,
    throughput: Option<(f64, f64)>,
) -> FloorFigures {
    let p50 = percentile(samples, 0.50);
    FloorFigures {
        runs: samples.len(),
        p50_us: p50,
        p99_us: percentile(samples, 0.99),
        throughput_1: throughput.map(|t| t.0),
        throughput_n: throughput.map(|t| t.1),
        ratio_over_floor_p50: row_p50_us / p50,
    }
}
