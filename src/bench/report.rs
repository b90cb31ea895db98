//! The report of one `hookbox bench` run: every figure, by section, as `--json` prints it and
//! `--compare` reads it back. A section left out with `--only` is absent.

use serde::Serialize;

use super::engine::EngineNumbers;
use super::host_figures::{Latency, Loads, Memory};
use super::machine::Machine;
use super::polyglot::PolyglotNumbers;
use super::tenants::TenantNumbers;

#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub(crate) build: &'static str,
    /// The machine the figures were taken on (a baseline is only comparable on the same kind).
    pub(crate) machine: Machine,
    pub(crate) concurrency: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) latency: Vec<Latency>,
    /// The native `sh -c` hook's p50 through `HookHost::dispatch` ÷ the same command spawned
    /// bare in the same run (goal ≤ 1.15: hookbox adds little to a process start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio_native_hook_over_bare_spawn_p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio_native_over_typed_wasm_p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio_native_over_cli_wasm_p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio_throughput_typed_wasm_over_native: Option<f64>,
    /// Typed wasm dispatches per second with N in flight ÷ with 1 in flight (goal ≥ 1.7 on two
    /// cores: more concurrency must do more work).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio_typed_wasm_throughput_n_over_1: Option<f64>,
    /// The typed hook and its floor at an agent's pace (one event after each idle pause) rather
    /// than back to back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) paced: Option<super::floor::Paced>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idle_ns_per_dispatch_empty_host: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idle_ns_per_dispatch_10k_rules: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) loads: Vec<Loads>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) memory: Option<Memory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tenants: Option<TenantNumbers>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) engine: Option<EngineNumbers>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) polyglot: Option<PolyglotNumbers>,
    /// The native hook run as `require` runs an approved plugin's: from its snapshot, in a
    /// private mount namespace, beside the live folder and a bare spawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot: Option<super::snapshot_views::SnapshotFigures>,
}
