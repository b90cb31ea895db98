//! Running a prepared wasm rule in the sandbox: admission (a hook permit and a pool slot, each
//! within this host's quota — the only slot gate: the wasm runtime admits no slots itself), its
//! mounts (handles opened at load; a per-session data folder
//! opened beneath the state folder now), the dialect's payload; the run within this host's CPU
//! share; the answer typed (`hook` world) or read like a native command (`wasi:cli`), every
//! failure classified, and the fuel it used — recorded in the caller's meter too, so a run cut by
//! the dispatch's deadline is still billed.

use std::fmt::Write as _;
use std::sync::Arc;

use hookbox_core::Dialect;
use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, RunOutput};
use hookbox_core::rule::Rule;
use hookbox_wasm::{ComponentKind, FuelMeter, Invocation, RunReport, RunScope, WasmOutput};

use crate::hook_report::{Ran, combined_output};
use crate::inner::{Inner, Loaded};
use crate::payloads::Payloads;
use crate::permits;

pub(crate) async fn run(
    inner: &Inner,
    loaded: &Loaded,
    pos: usize,
    rule: &Rule,
    event: &Arc<Event>,
    payloads: &Payloads,
    fuel: &FuelMeter,
) -> Ran {
    let Some(prepared) = loaded.wasm.get(pos) else {
        // The installer prepares every wasm rule it keeps; reaching here is a host bug.
        return Ran::failed(FailureClass::Internal, "wasm rule was not prepared");
    };
    let session_data = match (
        &prepared.fixed_mounts,
        loaded.set.plugins().get(rule.plugin),
    ) {
        (None, Some(plugin)) => match inner.state.plugin_data(plugin, &event.session_id) {
            Ok(d) => Some(d),
            Err(e) => {
                return Ran::failed(
                    FailureClass::InstantiateError,
                    format!("cannot open the plugin data folder: {e}"),
                );
            }
        },
        _ => None,
    };
    let mounts = match prepared.mounts_for(session_data.as_ref()) {
        Ok(m) => m,
        Err(e) => return Ran::failed(FailureClass::InstantiateError, e.to_string()),
    };
    // A typed hook's WIT event carries the flat payload; a wasi:cli one reads its dialect's.
    let dialect = match prepared.component.kind() {
        ComponentKind::TypedHook => Dialect::Claude,
        ComponentKind::WasiCommand => rule.dialect,
    };
    // The typed hook's `tool_input` text is a slice of the flat payload, not serialised again.
    let got = match dialect {
        Dialect::Claude => payloads.flat(),
        _ => payloads.get(dialect).map(|p| (p, None)),
    };
    let (payload, tool_input_json) = match got {
        Ok(p) => p,
        Err(f) => {
            return Ran::failure(f);
        }
    };
    let Ok(payload_json) = std::str::from_utf8(payload) else {
        return Ran::failed(FailureClass::Internal, "the payload is not UTF-8 JSON");
    };
    let _hook = match permits::hook(inner).await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    let _slot = match permits::slot(inner).await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    let inv = Invocation {
        event,
        payload_json,
        tool_input_json,
        limits: &prepared.limits,
        mounts: &mounts,
        env: &prepared.env,
        config_json: prepared.config_json.clone(),
        label: prepared.label.clone(),
    };
    let share = inner.live.cpu_share();
    let scope = RunScope {
        share: share.as_ref(),
        fuel: Some(fuel),
        // The one admission wait: the slot above was waited for as long.
        admission_wait: inner.runtime.inner.settings.admission_wait,
    };
    match inner
        .runtime
        .inner
        .wasm
        .run_in(&prepared.component, inv, scope)
        .await
    {
        Ok(run) => {
            let text = report_text(&run.report);
            let out = match run.output {
                WasmOutput::Typed(r) => RunOutput::Response(Box::new(r)),
                WasmOutput::Command(raw) => RunOutput::Command(raw),
            };
            Ran {
                out,
                text,
                fuel: run.report.fuel_consumed,
            }
        }
        Err(failed) => Ran {
            text: report_text(&failed.report),
            fuel: failed.report.fuel_consumed,
            out: RunOutput::Failed(failed.failure),
        },
    }
}

/// The guest's stdout, stderr and log lines, and the fuel it used, for the report and replay.
fn report_text(r: &RunReport) -> Option<String> {
    let mut s = combined_output(&r.stdout.text, &r.stderr.text).unwrap_or_default();
    for log in &r.logs {
        let _ = writeln!(s, "[log {:?}] {}", log.level, log.message);
    }
    if r.logs_dropped > 0 {
        let _ = writeln!(s, "[{} more log lines dropped]", r.logs_dropped);
    }
    (!s.is_empty()).then_some(s)
}
