//! `HookHost`: the library entry point. Built from a [`HostPolicy`], it holds the current rule
//! set (swapped atomically on reload), the command runner, the HookFired channel, metrics and the
//! replay writer, and answers `dispatch(event)`.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use hookbox_command::CommandRunner;
use hookbox_core::aggregate::StopState;
use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::Event;
use hookbox_core::fired::HookFired;
use hookbox_core::index::RuleSet;
use hookbox_core::rule::{Handler, PluginInfo, Rule};
use hookbox_core::stop_loop::{StopLoop, StopStep};
use hookbox_wasm::WasmRuntime;
use tokio::sync::{Semaphore, broadcast};

use crate::dispatch::Dispatch;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::policy::HostPolicy;
use crate::prepare_wasm::{self, PreparedWasm};
use crate::replay::{RecordHead, ReplayRecord, ReplayWriter};
use crate::settings::{Settings, SettingsError};

/// Subscribers that fall this far behind lose the oldest HookFired records.
const FIRED_CHANNEL_CAPACITY: usize = 1024;

/// Why a host could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// `.hookbox/settings.json` is unreadable or invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

/// What one loaded rule set carries besides the rules: prepared wasm components, by rule
/// position.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) set: RuleSet,
    pub(crate) wasm: HashMap<usize, PreparedWasm>,
}

pub(crate) struct Inner {
    pub(crate) policy: HostPolicy,
    rules: RwLock<Arc<Loaded>>,
    pub(crate) commands: CommandRunner,
    pub(crate) semaphore: Arc<Semaphore>,
    pub(crate) fired: broadcast::Sender<HookFired>,
    pub(crate) metrics: Metrics,
    replay: Option<ReplayWriter>,
    capture_full: bool,
    /// Built on the first wasm rule: a host with native rules only never starts an engine.
    wasm: OnceLock<Result<WasmRuntime, String>>,
}

/// A hook host. Cheap to clone; share one across tasks.
#[derive(Clone)]
pub struct HookHost {
    inner: Arc<Inner>,
}

impl HookHost {
    /// A host with `policy` and no rules. Reads `<project>/.hookbox/settings.json`.
    pub fn new(policy: HostPolicy) -> Result<HookHost, HostError> {
        let settings = Settings::load(&policy.project_dir)?;
        let commands = CommandRunner::new(policy.data_root())
            .with_limits(policy.command_limits)
            .with_env_policy(policy.env_policy.clone());
        let (fired, _) = broadcast::channel(FIRED_CHANNEL_CAPACITY);
        let inner = Inner {
            semaphore: Arc::new(Semaphore::new(policy.max_concurrent_hooks.max(1))),
            replay: policy.replay_dir().map(ReplayWriter::new),
            capture_full: settings
                .replay
                .capture_flags
                .capture_plugin_hook_output_full,
            rules: RwLock::new(Arc::new(Loaded {
                set: RuleSet::empty(),
                wasm: HashMap::new(),
            })),
            wasm: OnceLock::new(),
            commands,
            fired,
            metrics: Metrics::default(),
            policy,
        };
        Ok(HookHost {
            inner: Arc::new(inner),
        })
    }

    /// The policy.
    pub fn policy(&self) -> &HostPolicy {
        &self.inner.policy
    }

    /// Loads plugin folders and hook files (see `hookbox_core::config::load_paths`) and installs
    /// their rules in place of the current ones. The report keeps every diagnostic, including
    /// wasm rules refused when they were prepared; its `rules` are the rules installed.
    pub fn load<P: AsRef<std::path::Path>>(&self, paths: &[P], opts: &LoadOptions) -> LoadReport {
        let mut report = load_paths(paths, opts);
        let (rules, diagnostics) =
            self.install(report.plugins.clone(), std::mem::take(&mut report.rules));
        report.rules = rules;
        report.diagnostics.extend(diagnostics);
        report
    }

    /// Replaces the rule set with `rules` from `plugins`, atomically: a dispatch in flight keeps
    /// the set it started with. Wasm rules are prepared first (read beneath their plugin,
    /// compiled or fetched from the cache, checked against the policy); a rule that cannot be is
    /// left out with an error diagnostic. Returns the rules installed (renumbered in order) and
    /// those diagnostics.
    pub fn install(
        &self,
        plugins: Vec<PluginInfo>,
        rules: Vec<Rule>,
    ) -> (Vec<Rule>, Vec<Diagnostic>) {
        let mut kept = Vec::with_capacity(rules.len());
        let mut wasm = HashMap::new();
        let mut diagnostics = Vec::new();
        for mut rule in rules {
            if let Handler::Wasm(spec) = &rule.handler {
                let Some(plugin) = plugins.get(rule.plugin) else {
                    continue;
                };
                let prepared = self.inner.wasm_runtime().and_then(|rt| {
                    prepare_wasm::prepare(rt, &self.inner.policy, &rule, spec, plugin)
                });
                match prepared {
                    Ok(p) => {
                        wasm.insert(kept.len(), p);
                    }
                    Err(why) => {
                        diagnostics.push(prepare_wasm::diagnostic(&rule, plugin, &why));
                        continue;
                    }
                }
            }
            rule.index = kept.len();
            kept.push(rule);
        }
        let set = RuleSet::new(plugins, kept.clone(), self.inner.policy.aliases.clone());
        self.inner.swap(Loaded { set, wasm });
        (kept, diagnostics)
    }

    /// The current rule set.
    pub fn rules(&self) -> Arc<RuleSet> {
        Arc::new(self.inner.loaded().set.clone())
    }

    /// Runs the hooks that match `event` and returns the aggregated verdict.
    pub async fn dispatch(&self, event: Event) -> Dispatch {
        let stop = StopState {
            reentries: 0,
            cap: self.inner.policy.stop_reentry_cap,
        };
        self.inner.dispatch(event, stop).await
    }

    /// Runs the hooks for `event` with explicit Stop loop state (how many re-entries this turn
    /// already made); for agents that keep that state themselves.
    pub async fn dispatch_with_stop_state(&self, event: Event, stop: StopState) -> Dispatch {
        self.inner.dispatch(event, stop).await
    }

    /// Dispatches a `Stop` (or `SubagentStop`) inside a turn: marks re-entries with
    /// `stop_hook_active`, applies the re-entry cap, and says whether to run another round.
    pub async fn dispatch_stop(
        &self,
        mut event: Event,
        turn: &mut StopLoop,
    ) -> (Dispatch, StopStep) {
        turn.prepare(&mut event);
        let d = self.inner.dispatch(event, turn.state()).await;
        let step = match &d.verdict {
            hookbox_core::Verdict::Stop(r) => turn.record(r),
            _ => StopStep::Finish,
        };
        (d, step)
    }

    /// A Stop loop for one turn, with the policy's re-entry cap.
    pub fn stop_loop(&self) -> StopLoop {
        StopLoop::new(self.inner.policy.stop_reentry_cap)
    }

    /// HookFired records of every dispatch from now on (none for dispatches nothing matched).
    pub fn subscribe(&self) -> broadcast::Receiver<HookFired> {
        self.inner.fired.subscribe()
    }

    /// The operator metrics.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.metrics.snapshot()
    }

    /// Where replay files are written, if replay is on.
    pub fn replay_dir(&self) -> Option<&std::path::Path> {
        self.inner.replay.as_ref().map(ReplayWriter::dir)
    }
}

impl Inner {
    /// The wasm engine, built on first use with the policy's runtime config.
    pub(crate) fn wasm_runtime(&self) -> Result<&WasmRuntime, String> {
        self.wasm
            .get_or_init(|| {
                let rt = WasmRuntime::new(self.policy.wasm_runtime.clone())
                    .map_err(|e| format!("cannot start the wasm runtime: {e}"))?;
                rt.check_policy(&self.policy.wasm)
                    .map_err(|e| format!("the host's wasm policy cannot be enforced: {e}"))?;
                Ok(rt)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    pub(crate) fn loaded(&self) -> Arc<Loaded> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is intact.
        self.rules.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn swap(&self, loaded: Loaded) {
        *self.rules.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    pub(crate) fn record_replay(&self, d: &Dispatch) {
        let Some(w) = &self.replay else { return };
        let head = RecordHead {
            session_id: &d.event.session_id,
            event: d.event.name.as_str(),
            outcome: d.verdict.outcome().as_str(),
            matched_rule_count: d.matched_rule_count,
            duration_ms: d.duration.as_secs_f64() * 1000.0,
            hook_fired: d.hook_fired.as_ref(),
        };
        let record = ReplayRecord::new(&head, &d.reports, self.capture_full);
        if let Err(e) = w.append(&record) {
            tracing::warn!(error = %e, "replay record not written");
        }
    }
}
