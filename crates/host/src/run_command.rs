//! Running a native command rule: its context (project, plugin root, plugin data folder, event),
//! the dialect's payload on stdin, the session's cwd, and admission (this host's quota and the
//! runtime's shared bound). `async: true` rules run in the background, tracked by the runtime so
//! they finish after the verdict instead of being killed with the process; the runner's notes
//! (timeout, signal, exit 127…) go into the report.

use std::path::PathBuf;
use std::sync::Arc;

use hookbox_command::{CommandRequest, HookContext};
use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, HookFailure, RawOutput, RunOutput};
use hookbox_core::rule::{CommandSpec, Rule};

use crate::hook_report::{Ran, combined_output, with_notes};
use crate::inner::{Inner, Loaded};
use crate::install::plugin_root;
use crate::payloads::Payloads;
use crate::permits;
use crate::trust_gate as gate;

pub(crate) async fn run(
    inner: &Inner,
    loaded: &Loaded,
    rule: &Rule,
    spec: &CommandSpec,
    event: &Arc<Event>,
    payloads: &Payloads,
) -> Ran {
    // Refused at load when the policy forbids native hooks; this guards rules built in code.
    if !inner.policy.allow_native_commands {
        return Ran::failed(
            FailureClass::SpawnError,
            "native command hooks are disabled by this host's policy (allow_native_commands = false); use a wasm hook",
        );
    }
    let req = match command_request(inner, loaded, rule, spec, event, payloads) {
        Ok(r) => r,
        Err(f) => {
            return Ran::failure(f);
        }
    };
    // Under `require`, an approved plugin's hook runs from its snapshot (shown at the plugin's
    // own path where the kernel allows a mount namespace), other files from sealed copies of
    // what was hashed; under `warn` and `off` it runs from the live folder, as the agent would.
    let (req, trust_note) = match gate::pin_request(inner, loaded, rule.index, req) {
        Ok(pinned) => pinned,
        Err(refused) => return refused,
    };
    let permit = match permits::hook(inner).await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    if spec.run_async || spec.async_rewake {
        let runner = inner.runtime.inner.commands.clone();
        let label = spec.label();
        let rewake = spec
            .async_rewake
            .then(|| inner.live.wakes.get().cloned())
            .flatten();
        let wake = crate::wake::Wake {
            session_id: event.session_id.clone(),
            plugin: loaded.plugin_name(rule).unwrap_or_default().to_owned(),
            hook: label.clone(),
            message: String::new(),
        };
        let is_rewake = spec.async_rewake;
        inner.runtime.inner.background.spawn(async move {
            let _permit = permit;
            match runner.run(&req).await {
                Ok(run) if is_rewake && run.output.exit_code == Some(2) => {
                    tracing::info!(hook = %label, "asyncRewake hook exited 2: it asks to wake the agent");
                    if let Some(tx) = rewake {
                        let _ = tx.send(crate::wake::Wake {
                            message: run.output.stderr.trim_end().to_owned(),
                            ..wake
                        });
                    }
                }
                Ok(run) => {
                    tracing::info!(hook = %label, exit = ?run.output.exit_code, notes = ?run.notes, "background command hook finished");
                }
                Err(e) => {
                    tracing::warn!(hook = %label, error = %e, "background command hook failed");
                }
            }
        });
        return Ran {
            out: RunOutput::Command(RawOutput::exited(0, "", "")),
            text: Some(
                "(async: running in the background until it finishes or times out; its answer does not change the verdict)".into(),
            ),
            fuel: None,
        };
    }
    let result = inner.runtime.inner.commands.run(&req).await;
    drop(permit);
    match result {
        Ok(mut run) => {
            let text = combined_output(&run.output.stdout, &run.output.stderr);
            run.notes.extend(trust_note);
            Ran {
                text: with_notes(text, &run.notes),
                out: RunOutput::Command(run.output),
                fuel: None,
            }
        }
        Err(f) => Ran::failure(f),
    }
}

fn command_request(
    inner: &Inner,
    loaded: &Loaded,
    rule: &Rule,
    spec: &CommandSpec,
    event: &Arc<Event>,
    payloads: &Payloads,
) -> Result<CommandRequest, HookFailure> {
    let plugin = loaded.set.plugins().get(rule.plugin);
    let mut ctx = HookContext::new(rule.dialect)
        .with_project_dir(&inner.policy.project_dir)
        .with_event(event.clone());
    if let Some(p) = plugin {
        let data = match loaded.data.get(rule.plugin) {
            Some(d) => d.clone(),
            None => inner.state.plugin_data(p, &event.session_id).map_err(|e| {
                HookFailure::new(
                    FailureClass::SpawnError,
                    format!("cannot create the plugin data folder: {e}"),
                )
            })?,
        };
        // Hooks run in the session's cwd, so a relative plugin root would point elsewhere.
        ctx = ctx
            .with_plugin_root(plugin_root(p))
            .with_plugin_data(data.path().to_owned());
    }
    let stdin = payloads.shared(rule.dialect)?;
    let mut req = CommandRequest::new(spec.clone(), ctx).with_stdin(stdin);
    if !event.cwd.is_empty() {
        req = req.with_cwd(PathBuf::from(&event.cwd));
    }
    Ok(req)
}
