//! The cost of running an approved native hook from its snapshot under `trust = require`: the
//! same `sh -c` hook through hookbox's command runner from a live plugin folder, then with the
//! views a `require` host gives an approved plugin (its snapshot's tree over the plugin folder
//! and the approval store over itself, read-only, in a private mount namespace), beside the
//! command spawned bare — p50s, ratios, and the namespace's own setup cost (views p50 − live
//! p50). Measured in alternating rounds so drift on a shared machine falls on both alike.
//! Where the machine makes no namespace, the row says why and has no figures.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use hookbox_command::{CommandRequest, CommandRunner, HookContext, ReadOnlyView, ViewPolicy};
use hookbox_core::Dialect;
use hookbox_core::rule::CommandSpec;
use hookbox_host::trust::{Isolation, TrustNamespace};
use serde::Serialize;

use super::host_figures::{NATIVE_COMMAND, bare_spawn};
use super::measure::{percentile, sample_within};

/// Rounds of alternating samples (each round: live, views, bare).
const ROUNDS: usize = 5;

/// The snapshot row of the native section.
#[derive(Debug, Serialize)]
pub(crate) struct SnapshotFigures {
    /// `mount-namespace` or `variable-only` (then no figures, and why).
    pub(crate) isolation: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) isolation_reason: Option<String>,
    pub(crate) runs: usize,
    /// The hook through the runner, from the live folder (no views).
    pub(crate) live_p50_us: f64,
    /// The same hook with the snapshot's views, in a private mount namespace.
    pub(crate) namespace_p50_us: f64,
    /// The command spawned bare (no hookbox).
    pub(crate) bare_p50_us: f64,
    /// `namespace_p50_us − live_p50_us`: making the namespace and its mounts.
    pub(crate) namespace_setup_us: f64,
    pub(crate) ratio_namespace_over_live_p50: f64,
    pub(crate) ratio_namespace_over_bare_p50: f64,
}

/// Measures the row in `scratch`, `runs` samples of each kind, feeding `payload`.
pub(crate) async fn measure(
    scratch: &Path,
    runs: usize,
    payload: &[u8],
) -> anyhow::Result<SnapshotFigures> {
    let isolation = Isolation::of(TrustNamespace::Auto);
    let mut figures = SnapshotFigures {
        isolation: isolation.name(),
        isolation_reason: isolation.reason().map(str::to_owned),
        runs: 0,
        live_p50_us: 0.0,
        namespace_p50_us: 0.0,
        bare_p50_us: 0.0,
        namespace_setup_us: 0.0,
        ratio_namespace_over_live_p50: 0.0,
        ratio_namespace_over_bare_p50: 0.0,
    };
    if !isolation.has_views() {
        return Ok(figures);
    }
    // A plugin folder, its snapshot tree and a store folder, as a `require` host has them.
    let plugin = scratch.join("snapshot-bench/plugin");
    let store = scratch.join("snapshot-bench/store");
    let tree = store.join("snapshots/trees/bench/plugin");
    for dir in [&plugin, &tree] {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    let plugin = plugin.canonicalize().context("plugin folder")?;
    let store = store.canonicalize().context("store folder")?;
    let tree = tree.canonicalize().context("tree folder")?;
    let runner = CommandRunner::new();
    let stdin: Arc<[u8]> = Arc::from(payload);
    let request = |views: Vec<ReadOnlyView>| {
        CommandRequest::new(
            CommandSpec::shell(NATIVE_COMMAND, 30.0),
            HookContext::new(Dialect::Claude).with_plugin_root(&plugin),
        )
        .with_stdin(stdin.clone())
        .with_cwd(&plugin)
        .with_views(views, ViewPolicy::Auto)
    };
    let live = request(Vec::new());
    let viewed = request(vec![
        ReadOnlyView {
            source: tree.clone(),
            target: plugin.clone(),
        },
        ReadOnlyView {
            source: store.clone(),
            target: store.clone(),
        },
    ]);
    let run = |req: &CommandRequest| {
        let runner = &runner;
        let req = req.clone();
        async move {
            let r = runner
                .run(&req)
                .await
                .map_err(|f| anyhow::anyhow!("{}", f.message))?;
            anyhow::ensure!(r.output.exit_code == Some(0), "the hook failed: {r:?}");
            Ok(())
        }
    };
    // Warm-up: the runner's containment, the page cache, the probe already done above.
    for _ in 0..runs.min(20) {
        run(&live).await?;
        run(&viewed).await?;
    }
    let per_round = (runs / ROUNDS).max(5);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.extend(sample_within(per_round, || run(&live)).await?);
        b.extend(sample_within(per_round, || run(&viewed)).await?);
        c.extend(sample_within(per_round, || bare_spawn(payload)).await?);
    }
    for s in [&mut a, &mut b, &mut c] {
        s.sort_by(f64::total_cmp);
    }
    figures.runs = a.len().min(b.len()).min(c.len());
    figures.live_p50_us = percentile(&a, 0.50);
    figures.namespace_p50_us = percentile(&b, 0.50);
    figures.bare_p50_us = percentile(&c, 0.50);
    figures.namespace_setup_us = figures.namespace_p50_us - figures.live_p50_us;
    figures.ratio_namespace_over_live_p50 = figures.namespace_p50_us / figures.live_p50_us;
    figures.ratio_namespace_over_bare_p50 = figures.namespace_p50_us / figures.bare_p50_us;
    Ok(figures)
}
