//! Running a prepared wasm rule in the sandbox: its mounts resolved for this session, the
//! dialect's payload, the host's concurrency bound; the answer typed (`hook` world) or read like
//! a native command (`wasi:cli`), and every failure classified.

use std::fmt::Write as _;
use std::sync::Arc;

use hookbox_core::Dialect;
use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, HookFailure, RunOutput};
use hookbox_core::rule::Rule;
use hookbox_wasm::{ComponentKind, Invocation, MountDir, ResolvedMount, RunReport, WasmOutput};

use crate::host::{Inner, Loaded};
use crate::payloads::Payloads;
use crate::prepare_wasm::MountHost;

impl Inner {
    pub(crate) async fn run_wasm(
        &self,
        loaded: &Loaded,
        pos: usize,
        rule: &Rule,
        event: &Arc<Event>,
        payloads: &Payloads,
    ) -> (RunOutput, Option<String>) {
        let (Some(prepared), Ok(runtime)) = (loaded.wasm.get(&pos), self.wasm_runtime()) else {
            // install() prepares every wasm rule it keeps; reaching here is a host bug.
            return (
                RunOutput::Failed(HookFailure::new(
                    FailureClass::InstantiateError,
                    "wasm rule was not prepared",
                )),
                None,
            );
        };
        let per_session;
        let mounts: &[ResolvedMount] = match &prepared.fixed_mounts {
            Some(m) => m,
            None => {
                let plugin = loaded
                    .set
                    .plugins()
                    .get(rule.plugin)
                    .map(|p| p.name.as_str())
                    .unwrap_or("");
                let data = match self.commands.plugin_data_dir(plugin, &event.session_id) {
                    Ok(d) => d,
                    Err(e) => {
                        let f = HookFailure::new(
                            FailureClass::InstantiateError,
                            format!("cannot create the plugin data folder: {e}"),
                        );
                        return (RunOutput::Failed(f), None);
                    }
                };
                let opened = prepared
                    .mounts
                    .iter()
                    .map(|m| {
                        Ok(ResolvedMount {
                            host: match &m.host {
                                MountHost::Fixed(d) => d.clone(),
                                MountHost::PluginData(rest) => MountDir::open(&data.join(rest))?,
                            },
                            guest: m.guest.clone(),
                            access: m.access,
                        })
                    })
                    .collect::<Result<Vec<_>, hookbox_wasm::MountError>>();
                per_session = match opened {
                    Ok(m) => m,
                    Err(e) => {
                        let f = HookFailure::new(FailureClass::InstantiateError, e.to_string());
                        return (RunOutput::Failed(f), None);
                    }
                };
                &per_session
            }
        };
        // A typed hook's WIT event carries the flat payload; a wasi:cli one reads its dialect's.
        let payload = match prepared.component.kind() {
            ComponentKind::TypedHook => payloads.get(Dialect::Claude),
            ComponentKind::WasiCommand => payloads.get(rule.dialect),
        };
        let inv = Invocation {
            event,
            payload_json: std::str::from_utf8(&payload).unwrap_or("{}"),
            limits: &prepared.limits,
            mounts,
            env: &prepared.env,
            config_json: prepared.config_json.clone(),
            label: prepared.label.clone(),
        };
        // The semaphore is never closed, so acquiring only waits.
        let _permit = self.semaphore.acquire().await;
        match runtime.run(&prepared.component, inv).await {
            Ok(run) => {
                let text = report_text(&run.report);
                let out = match run.output {
                    WasmOutput::Typed(r) => RunOutput::Response(Box::new(r)),
                    WasmOutput::Command(raw) => RunOutput::Command(raw),
                };
                (out, text)
            }
            Err(failed) => {
                let text = report_text(&failed.report);
                (RunOutput::Failed(failed.failure), text)
            }
        }
    }
}

/// The guest's stdout, stderr and log lines, for the report and replay.
fn report_text(r: &RunReport) -> Option<String> {
    let mut s =
        crate::dispatch::combined_output(&r.stdout.text, &r.stderr.text).unwrap_or_default();
    for log in &r.logs {
        let _ = writeln!(s, "[log {:?}] {}", log.level, log.message);
    }
    if r.logs_dropped > 0 {
        let _ = writeln!(s, "[{} more log lines dropped]", r.logs_dropped);
    }
    (!s.is_empty()).then_some(s)
}
