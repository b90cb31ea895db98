//! `HookHost`: one project's (or one tenant's) hooks. Built from a [`HookRuntime`] (shared by
//! every host of the process) and a [`HostPolicy`] (this host's own), it holds the current rule
//! set (swapped atomically on reload), its state folder (plugin data, replay), its quotas, its
//! metrics and HookFired stream, and answers `dispatch(event)`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use hookbox_core::aggregate::StopState;
use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::Event;
use hookbox_core::fired::HookFired;
use hookbox_core::index::RuleSet;
use hookbox_core::rule::{Handler, PluginInfo, Rule};
use hookbox_core::stop_loop::{StopLoop, StopStep};
use hookbox_wasm::{CpuShare, MountDir, PreparedHook};
use tokio::sync::broadcast;

use crate::admission::Quota;
use crate::dispatch::Dispatch;
use crate::install;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::policy::HostPolicy;
use crate::rate::TokenBucket;
use crate::runtime::{HookRuntime, RuntimeError, RuntimeSettings};
use crate::settings::{Settings, SettingsError};
use crate::state::StateDir;

/// Subscribers that fall this far behind lose the oldest HookFired records. The channel is
/// only allocated on the first `subscribe`, so a host nobody watches costs nothing for it.
const FIRED_CHANNEL_CAPACITY: usize = 1024;

/// Why a host could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// `.hookbox/settings.json` is unreadable or invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The runtime (for `HookHost::new`) could not be built.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The state folder cannot be used.
    #[error("state folder {path}: {reason}")]
    State {
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The policy cannot be enforced by this runtime, or names a folder that cannot be used.
    #[error("host policy: {0}")]
    Policy(String),
}

/// What one loaded rule set carries besides the rules.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) set: RuleSet,
    /// Prepared wasm components, by rule position.
    pub(crate) wasm: HashMap<usize, PreparedHook>,
    /// Persistent plugin data folders, by plugin position (per-session ones are made at
    /// dispatch).
    pub(crate) data: HashMap<usize, MountDir>,
}

pub(crate) struct Inner {
    pub(crate) runtime: HookRuntime,
    pub(crate) policy: HostPolicy,
    pub(crate) stop_cap: u32,
    pub(crate) capture_full: bool,
    rules: RwLock<Arc<Loaded>>,
    pub(crate) state: StateDir,
    pub(crate) project: Option<MountDir>,
    pub(crate) extra_roots: Vec<MountDir>,
    fired: OnceLock<broadcast::Sender<HookFired>>,
    pub(crate) wakes: OnceLock<broadcast::Sender<crate::wake::Wake>>,
    pub(crate) metrics: Metrics,
    pub(crate) hooks_quota: Arc<Quota>,
    pub(crate) slots_quota: Arc<Quota>,
    pub(crate) rate: Option<TokenBucket>,
    /// This host's share of the CPU: how many of its wasm guests execute at once (`None`: no
    /// share, `wasm_cpu_share` is `usize::MAX`).
    pub(crate) cpu_share: Option<CpuShare>,
    enabled: AtomicBool,
}

/// A hook host. Cheap to clone; share one across tasks.
#[derive(Clone)]
pub struct HookHost {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for HookHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookHost")
            .field("project_dir", &self.inner.policy.project_dir)
            .finish_non_exhaustive()
    }
}

impl HookHost {
    /// A host with `policy` and no rules, on a runtime of its own with default settings (the
    /// one-host case). Reads `<project>/.hookbox/settings.json`.
    pub fn new(policy: HostPolicy) -> Result<HookHost, HostError> {
        let runtime = HookRuntime::new(RuntimeSettings::default())?;
        HookHost::with_runtime(&runtime, policy)
    }

    /// A host with `policy` and no rules, on a shared `runtime`.
    pub fn with_runtime(runtime: &HookRuntime, policy: HostPolicy) -> Result<HookHost, HostError> {
        runtime
            .wasm()
            .check_policy(&policy.wasm)
            .map_err(|e| HostError::Policy(format!("the wasm policy cannot be enforced: {e}")))?;
        let settings = Settings::load(&policy.project_dir)?;
        let state = StateDir::open(&policy, runtime.inner.settings.max_session_dirs)?;
        let project = MountDir::open(&absolute(&policy.project_dir)).ok();
        let extra_roots = policy
            .extra_mount_roots
            .iter()
            .map(|r| {
                MountDir::open(&absolute(r))
                    .map_err(|e| HostError::Policy(format!("extra mount root: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inner = Inner {
            runtime: runtime.clone(),
            stop_cap: policy
                .stop_reentry_cap_override
                .or(settings.stop.reentry_cap)
                .unwrap_or(policy.stop_reentry_cap),
            capture_full: settings
                .replay
                .capture_flags
                .capture_plugin_hook_output_full,
            rules: RwLock::new(Arc::new(Loaded::default())),
            state,
            project,
            extra_roots,
            fired: OnceLock::new(),
            wakes: OnceLock::new(),
            metrics: Metrics::default(),
            hooks_quota: Arc::new(Quota::new(policy.max_hooks_in_flight)),
            slots_quota: Arc::new(Quota::new(policy.max_pool_slots)),
            rate: policy.dispatch_rate.map(TokenBucket::new),
            cpu_share: (policy.wasm_cpu_share != usize::MAX)
                .then(|| CpuShare::new(policy.wasm_cpu_share)),
            enabled: AtomicBool::new(true),
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

    /// The runtime it runs on.
    pub fn runtime(&self) -> &HookRuntime {
        &self.inner.runtime
    }

    /// The Stop re-entry cap in force: the policy's override, else `.hookbox/settings.json`'s
    /// `stop.reentry_cap`, else the policy's default.
    pub fn stop_reentry_cap(&self) -> u32 {
        self.inner.stop_cap
    }

    /// Loads plugin folders and hook files (see `hookbox_core::config::load_paths`) and installs
    /// what loaded in place of the current rules, errors or not (the CLI's behaviour: run what
    /// could be loaded, report the rest). The report keeps every diagnostic, including rules
    /// refused when they were prepared; its `rules` are the rules installed.
    pub fn load<P: AsRef<std::path::Path>>(&self, paths: &[P], opts: &LoadOptions) -> LoadReport {
        let mut report = load_paths(paths, opts);
        let built = install::build(
            &self.inner,
            report.plugins.clone(),
            std::mem::take(&mut report.rules),
        );
        report.rules = built.rules;
        report.diagnostics.extend(built.diagnostics);
        self.inner.swap(built.loaded);
        report
    }

    /// Validate-then-swap: loads `paths` and installs the result only if nothing in it is an
    /// error; otherwise the current rules keep serving and the report (with every diagnostic)
    /// comes back as `Err`.
    pub fn reload<P: AsRef<std::path::Path>>(
        &self,
        paths: &[P],
        opts: &LoadOptions,
    ) -> Result<LoadReport, LoadReport> {
        self.reload_checked(paths, opts, |_| Vec::new())
    }

    /// [`HookHost::reload`] with an extra check of the loaded report (its errors also keep the
    /// current rules).
    pub(crate) fn reload_checked<P: AsRef<std::path::Path>>(
        &self,
        paths: &[P],
        opts: &LoadOptions,
        check: impl FnOnce(&LoadReport) -> Vec<Diagnostic>,
    ) -> Result<LoadReport, LoadReport> {
        let mut report = load_paths(paths, opts);
        let refused = check(&report);
        report.diagnostics.extend(refused);
        if report.has_errors() {
            return Err(report);
        }
        let built = install::build(
            &self.inner,
            report.plugins.clone(),
            std::mem::take(&mut report.rules),
        );
        report.rules = built.rules;
        report.diagnostics.extend(built.diagnostics);
        if report.has_errors() {
            return Err(report);
        }
        self.inner.swap(built.loaded);
        Ok(report)
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
        let built = install::build(&self.inner, plugins, rules);
        self.inner.swap(built.loaded);
        (built.rules, built.diagnostics)
    }

    /// The current rule set.
    pub fn rules(&self) -> Arc<RuleSet> {
        Arc::new(self.inner.loaded().set.clone())
    }

    /// Counts of the current rules by handler type (`command`, `prompt`, `wasm`, `http`).
    pub fn rule_counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let loaded = self.inner.loaded();
        let mut counts = std::collections::BTreeMap::new();
        for r in loaded.set.rules() {
            *counts.entry(r.handler.handler_type().as_str()).or_insert(0) += 1;
        }
        counts
    }

    /// Turns the host off (it then behaves as one with no rules: nothing runs, no HookFired,
    /// no replay) or on again. In-flight dispatches finish as they started.
    pub fn set_enabled(&self, enabled: bool) {
        self.inner.enabled.store(enabled, Ordering::Release);
    }

    /// Whether the host runs hooks.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::Acquire)
    }

    /// Runs the hooks that match `event` and returns the aggregated verdict.
    pub async fn dispatch(&self, event: Event) -> Dispatch {
        let stop = StopState {
            reentries: 0,
            cap: self.inner.stop_cap,
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

    /// A Stop loop for one turn, with the re-entry cap in force.
    pub fn stop_loop(&self) -> StopLoop {
        StopLoop::new(self.inner.stop_cap)
    }

    /// HookFired records of every dispatch from now on (none for dispatches nothing matched).
    pub fn subscribe(&self) -> broadcast::Receiver<HookFired> {
        self.inner
            .fired
            .get_or_init(|| broadcast::channel(FIRED_CHANNEL_CAPACITY).0)
            .subscribe()
    }

    /// Makes this host feed the HookFired stream `previous` feeds, so that subscribers of
    /// `previous` keep receiving, with nothing lost, when this host replaces it (a tenant
    /// reloaded with a new policy). Call it before this host is shared: a host whose stream
    /// already exists (someone subscribed, or it dispatched with a subscriber) keeps its own,
    /// and this returns false.
    pub fn continue_fired_stream_of(&self, previous: &HookHost) -> bool {
        let tx = previous
            .inner
            .fired
            .get_or_init(|| broadcast::channel(FIRED_CHANNEL_CAPACITY).0)
            .clone();
        self.inner.fired.set(tx).is_ok()
    }

    /// Wake requests of `asyncRewake` hooks (a background hook that exited 2) from now on.
    pub fn subscribe_wakes(&self) -> broadcast::Receiver<crate::wake::Wake> {
        self.inner
            .wakes
            .get_or_init(|| broadcast::channel(64).0)
            .subscribe()
    }

    /// This host's metrics, with its own gauges (hooks in flight, pool slots held).
    pub fn metrics(&self) -> MetricsSnapshot {
        let mut m = self.inner.metrics.snapshot();
        m.hooks_in_flight = self.inner.hooks_quota.held() as u64;
        m.pool_slots_in_use = self.inner.slots_quota.held() as u64;
        m
    }

    /// Where replay files are written, if replay is on.
    pub fn replay_dir(&self) -> Option<&std::path::Path> {
        self.inner.state.replay.as_ref().map(|r| r.path())
    }
}

fn absolute(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_owned())
}

impl Inner {
    pub(crate) fn loaded(&self) -> Arc<Loaded> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is intact.
        self.rules.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn swap(&self, loaded: Loaded) {
        *self.rules.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Queues the dispatch's replay record (redacted, previewed) for the runtime's writer.
    pub(crate) fn record_replay(&self, d: &Dispatch) {
        use crate::replay::{RecordHead, ReplayRecord};
        let Some(dir) = &self.state.replay else {
            return;
        };
        let head = RecordHead {
            session_id: &d.event.session_id,
            event: d.event.name.as_str(),
            outcome: d.verdict.outcome().as_str(),
            matched_rule_count: d.matched_rule_count,
            duration_ms: d.duration.as_secs_f64() * 1000.0,
            hook_fired: d.hook_fired.as_ref(),
        };
        let record = if d.rechecked.is_empty() {
            ReplayRecord::new(&head, &d.reports, self.capture_full)
        } else {
            let all: Vec<_> = d.reports.iter().chain(&d.rechecked).cloned().collect();
            ReplayRecord::new(&head, &all, self.capture_full)
        };
        self.runtime.inner.replay.send(dir, &record);
    }

    /// Sends a HookFired record to subscribers, if any.
    pub(crate) fn fire(&self, f: &HookFired) {
        if let Some(tx) = self.fired.get().filter(|tx| tx.receiver_count() > 0) {
            // A subscriber may have left since the check: `send` then fails, which is fine.
            let _ = tx.send(f.clone());
        }
    }
}

/// Whether a rule's handler is one this host's policy forbids, and why (a load error).
pub(crate) fn forbidden(policy: &HostPolicy, rule: &Rule) -> Option<&'static str> {
    match &rule.handler {
        Handler::Command(_) if !policy.allow_native_commands => Some(
            "native command hooks are not allowed by this host's policy (allow_native_commands = false): they run unsandboxed with the host's rights; write the hook as a \"type\": \"wasm\" component",
        ),
        Handler::Http(_) if !policy.http.enabled => Some(
            "http hooks are not allowed by this host's policy (allow_http = false); ask the operator to turn them on and allow-list the destination",
        ),
        _ => None,
    }
}
