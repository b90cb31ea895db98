//! Running a native command rule: its context (project, plugin root, per-session data folder,
//! event), the dialect's payload on stdin, the session's cwd, and the host's concurrency bound.
//! `async: true` rules start in the background and do not hold up the dispatch.

use std::path::PathBuf;
use std::sync::Arc;

use hookbox_command::{CommandRequest, HookContext};
use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, HookFailure, RunOutput};
use hookbox_core::rule::{CommandSpec, Rule};

use crate::dispatch::combined_output;
use crate::host::{Inner, Loaded};
use crate::payloads::Payloads;

impl Inner {
    pub(crate) async fn run_command(
        &self,
        loaded: &Loaded,
        rule: &Rule,
        spec: &CommandSpec,
        event: &Arc<Event>,
        payloads: &Payloads,
    ) -> (RunOutput, Option<String>) {
        if !self.policy.allow_native_commands {
            return (
                RunOutput::Failed(HookFailure::new(
                    FailureClass::SpawnError,
                    "native command hooks are disabled by this host's policy (allow_native_commands = false); use a wasm hook",
                )),
                None,
            );
        }
        let req = match self.command_request(loaded, rule, spec, event, payloads) {
            Ok(r) => r,
            Err(f) => return (RunOutput::Failed(f), None),
        };
        if spec.run_async {
            let (runner, sem) = (self.commands.clone(), self.semaphore.clone());
            let label = spec.label();
            tokio::spawn(async move {
                let _permit = sem.acquire_owned().await;
                match runner.run(&req).await {
                    Ok(run) => {
                        tracing::info!(hook = %label, exit = ?run.output.exit_code, "async command hook finished")
                    }
                    Err(e) => {
                        tracing::warn!(hook = %label, error = %e, "async command hook failed")
                    }
                }
            });
            return (
                RunOutput::Command(hookbox_core::output::RawOutput::exited(0, "", "")),
                Some("(async: running in the background; its answer is not awaited)".into()),
            );
        }
        // The semaphore is never closed, so acquiring only waits.
        let _permit = self.semaphore.acquire().await;
        match self.commands.run(&req).await {
            Ok(run) => {
                let text = combined_output(&run.output.stdout, &run.output.stderr);
                (RunOutput::Command(run.output), text)
            }
            Err(f) => (RunOutput::Failed(f), None),
        }
    }

    fn command_request(
        &self,
        loaded: &Loaded,
        rule: &Rule,
        spec: &CommandSpec,
        event: &Arc<Event>,
        payloads: &Payloads,
    ) -> Result<CommandRequest, HookFailure> {
        let plugin = loaded.set.plugins().get(rule.plugin);
        let mut ctx = HookContext::new(rule.dialect)
            .with_project_dir(&self.policy.project_dir)
            .with_event(event.clone());
        if let Some(p) = plugin {
            let data = self
                .commands
                .plugin_data_dir(&p.name, &event.session_id)
                .map_err(|e| {
                    HookFailure::new(
                        FailureClass::SpawnError,
                        format!("cannot create the plugin data folder: {e}"),
                    )
                })?;
            // Hooks run in the session's cwd, so a relative plugin root would point elsewhere.
            let root = std::path::absolute(&p.root).unwrap_or_else(|_| p.root.clone());
            ctx = ctx.with_plugin_root(root).with_plugin_data(data);
        }
        let mut req = CommandRequest::new(spec.clone(), ctx).with_stdin(payloads.get(rule.dialect));
        if !event.cwd.is_empty() {
            req = req.with_cwd(PathBuf::from(&event.cwd));
        }
        Ok(req)
    }
}
