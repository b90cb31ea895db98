//! `HookHost`: one project's (or one tenant's) hooks. Built from a [`HookRuntime`] (shared by
//! every host of the process) and a [`HostPolicy`] (this host's own).
//!
//! A host is the **long-lived owner** of its state — its HookFired stream, enabled flag, quotas
//! (hooks, pool slots, dispatches), rate bucket and metrics ([`Live`]) — and holds one current
//! *generation*: a policy with the state folder and mount roots it names, and the rule set loaded
//! under it ([`Inner`]). Reloading swaps the rules; replacing the policy (a tenant's `PUT`)
//! swaps the whole generation, atomically, and nothing else: the stream, the flag, the units
//! held against the quotas and the counters carry on. A dispatch takes the current generation
//! when it starts and finishes on it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

use crate::admission::{DispatchRefused, DispatchTicket, Quota};
use crate::dispatch::Dispatch;
use crate::fired::{FiredHub, FiredReceiver, QueueBounds};
use crate::install;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::policy::HostPolicy;
use crate::rate::TokenBucket;
use crate::runtime::{HookRuntime, RuntimeError, RuntimeSettings};
use crate::state::StateDir;

/// Why a host could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
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

/// A rule set loaded but not yet in place (a tenant's load held for an admin's approval):
/// the generation it was loaded under and what it loaded.
pub(crate) struct Staged {
    inner: Arc<Inner>,
    /// Whether `inner` is a new generation (a policy replacement) rather than the current one.
    fresh: bool,
    loaded: Loaded,
}

impl Staged {
    /// What it loaded.
    pub(crate) fn loaded(&self) -> &Loaded {
        &self.loaded
    }
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
    /// Each rule's standing against its approval, and the files its command runs.
    pub(crate) trust: crate::trust::LoadedTrust,
}

/// The host's long-lived state: everything that must outlive a replacement of its rules and
/// policy.
pub(crate) struct Live {
    fired: FiredHub,
    pub(crate) wakes: OnceLock<broadcast::Sender<crate::wake::Wake>>,
    pub(crate) metrics: Metrics,
    pub(crate) hooks_quota: Arc<Quota>,
    pub(crate) slots_quota: Arc<Quota>,
    dispatch_quota: Arc<Quota>,
    /// Units of the runtime's shared dispatch capacity this host holds now.
    dispatches_entered: Arc<AtomicUsize>,
    pub(crate) rate: TokenBucket,
    /// This host's share of the CPU: how many of its wasm guests execute at once (`None`: no
    /// share, `wasm_cpu_share` is `usize::MAX`), with the policy value it was made from.
    /// Replaced when a new policy changes it; runs already going finish on the share they
    /// started with.
    cpu_share: RwLock<(usize, Option<CpuShare>)>,
    enabled: AtomicBool,
}

impl Live {
    fn new(policy: &HostPolicy) -> Live {
        Live {
            fired: FiredHub::default(),
            wakes: OnceLock::new(),
            metrics: Metrics::default(),
            hooks_quota: Arc::new(Quota::new(policy.max_hooks_in_flight)),
            slots_quota: Arc::new(Quota::new(policy.max_pool_slots)),
            dispatch_quota: Arc::new(Quota::new(policy.max_dispatches_in_flight)),
            dispatches_entered: Arc::new(AtomicUsize::new(0)),
            rate: TokenBucket::new(policy.dispatch_rate),
            cpu_share: RwLock::new((policy.wasm_cpu_share, cpu_share(policy.wasm_cpu_share))),
            enabled: AtomicBool::new(true),
        }
    }

    /// The CPU share the next wasm run of this host takes its turns from, if it has one.
    pub(crate) fn cpu_share(&self) -> Option<CpuShare> {
        self.cpu_share
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .clone()
    }

    /// The new policy's caps and rate; what is held stays held.
    fn apply(&self, policy: &HostPolicy) {
        self.hooks_quota.set_cap(policy.max_hooks_in_flight);
        self.slots_quota.set_cap(policy.max_pool_slots);
        self.dispatch_quota.set_cap(policy.max_dispatches_in_flight);
        self.rate.set_limit(policy.dispatch_rate);
        let mut share = self.cpu_share.write().unwrap_or_else(|p| p.into_inner());
        if share.0 != policy.wasm_cpu_share {
            *share = (policy.wasm_cpu_share, cpu_share(policy.wasm_cpu_share));
        }
    }
}

/// The share `wasm_cpu_share` asks for: none for `usize::MAX`.
fn cpu_share(turns: usize) -> Option<CpuShare> {
    (turns != usize::MAX).then(|| CpuShare::new(turns))
}

/// One generation of a host: a policy, what it names (state folder, mount roots) and the rules
/// loaded under it.
pub(crate) struct Inner {
    pub(crate) runtime: HookRuntime,
    pub(crate) live: Arc<Live>,
    pub(crate) policy: Arc<HostPolicy>,
    rules: RwLock<Arc<Loaded>>,
    pub(crate) state: StateDir,
    pub(crate) project: Option<MountDir>,
    pub(crate) extra_roots: Vec<MountDir>,
    /// The generation's trust mode and approval store.
    pub(crate) trust: crate::trust::HostTrust,
}

struct Shared {
    runtime: HookRuntime,
    live: Arc<Live>,
    current: RwLock<Arc<Inner>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Subscribers learn that the stream ended rather than waiting forever.
        self.live.fired.close();
    }
}

/// A hook host. Cheap to clone; share one across tasks.
#[derive(Clone)]
pub struct HookHost {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HookHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookHost")
            .field("project_dir", &self.current().policy.project_dir)
            .finish_non_exhaustive()
    }
}

impl HookHost {
    /// A host with `policy` and no rules, on a runtime of its own with default settings (the
    /// one-host case). It reads nothing from the project: settings come in `policy`.
    pub fn new(policy: HostPolicy) -> Result<HookHost, HostError> {
        let runtime = HookRuntime::new(RuntimeSettings::default())?;
        HookHost::with_runtime(&runtime, policy)
    }

    /// A host with `policy` and no rules, on a shared `runtime`.
    pub fn with_runtime(runtime: &HookRuntime, policy: HostPolicy) -> Result<HookHost, HostError> {
        let live = Arc::new(Live::new(&policy));
        let inner = Inner::new(runtime, live.clone(), policy)?;
        Ok(HookHost {
            shared: Arc::new(Shared {
                runtime: runtime.clone(),
                live,
                current: RwLock::new(Arc::new(inner)),
            }),
        })
    }

    /// The current generation.
    pub(crate) fn current(&self) -> Arc<Inner> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is intact.
        self.shared
            .current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The policy in force.
    pub fn policy(&self) -> Arc<HostPolicy> {
        self.current().policy.clone()
    }

    /// The runtime it runs on.
    pub fn runtime(&self) -> &HookRuntime {
        &self.shared.runtime
    }

    /// The Stop re-entry cap in force (the policy's `stop_reentry_cap`).
    pub fn stop_reentry_cap(&self) -> u32 {
        self.current().policy.stop_reentry_cap
    }

    /// Loads plugin folders and hook files (see `hookbox_core::config::load_paths`) and installs
    /// what loaded in place of the current rules, errors or not (the CLI's behaviour: run what
    /// could be loaded, report the rest). The report keeps every diagnostic, including rules
    /// refused when they were prepared; its `rules` are the rules installed.
    pub fn load<P: AsRef<std::path::Path>>(&self, paths: &[P], opts: &LoadOptions) -> LoadReport {
        let inner = self.current();
        let mut report = load_paths(paths, opts);
        let built = install::build(
            &inner,
            install::protected_by_load(paths),
            report.plugins.clone(),
            std::mem::take(&mut report.rules),
        );
        report.rules = built.rules;
        report.diagnostics.extend(built.diagnostics);
        inner.swap(built.loaded);
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
        let (report, staged) = self.stage_reload(paths, opts, check)?;
        self.commit(staged);
        Ok(report)
    }

    /// Loads `paths` under the current generation's policy without putting the rules in place:
    /// [`HookHost::commit`] does that (or the staged set is dropped). `Err` (with every
    /// diagnostic) when anything is an error.
    pub(crate) fn stage_reload<P: AsRef<std::path::Path>>(
        &self,
        paths: &[P],
        opts: &LoadOptions,
        check: impl FnOnce(&LoadReport) -> Vec<Diagnostic>,
    ) -> Result<(LoadReport, Staged), LoadReport> {
        let inner = self.current();
        let (report, loaded) = inner.load_checked(paths, opts, check)?;
        Ok((
            report,
            Staged {
                inner,
                fresh: false,
                loaded,
            },
        ))
    }

    /// Replaces the policy and the rules together, validate-then-swap, in two steps: a new
    /// generation is built under `policy` (its state folder, mount roots) and `paths` are loaded
    /// into it; only when nothing is an error, and once [`HookHost::commit`] puts it in place,
    /// does it replace the current one, in one step. The host's stream, enabled flag, quotas
    /// (with what their running hooks hold), rate bucket and metrics carry on; the new policy's
    /// caps apply from the swap. Blocking (reads files, may compile).
    pub(crate) fn stage_reconfigure<P: AsRef<std::path::Path>>(
        &self,
        policy: HostPolicy,
        paths: &[P],
        opts: &LoadOptions,
        check: impl FnOnce(&LoadReport) -> Vec<Diagnostic>,
    ) -> Result<Result<(LoadReport, Staged), LoadReport>, HostError> {
        let inner = Inner::new(&self.shared.runtime, self.shared.live.clone(), policy)?;
        Ok(inner
            .load_checked(paths, opts, check)
            .map(|(report, loaded)| {
                (
                    report,
                    Staged {
                        inner: Arc::new(inner),
                        fresh: true,
                        loaded,
                    },
                )
            }))
    }

    /// Puts a staged rule set in place, atomically: a new generation (a staged replacement)
    /// replaces the current one and its policy's caps apply; a staged reload replaces the rules
    /// of the generation it was loaded under.
    pub(crate) fn commit(&self, staged: Staged) {
        let Staged {
            inner,
            fresh,
            loaded,
        } = staged;
        inner.swap(loaded);
        // A staged reload is loaded under the current generation (tenants stage under their
        // admin lock, and every new load drops the one staged before); should that generation
        // have been replaced since, the rules still go in with the one they were built for.
        if fresh || !Arc::ptr_eq(&inner, &self.current()) {
            *self
                .shared
                .current
                .write()
                .unwrap_or_else(|p| p.into_inner()) = inner.clone();
            self.shared.live.apply(&inner.policy);
        }
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
        let inner = self.current();
        let built = install::build(&inner, Vec::new(), plugins, rules);
        inner.swap(built.loaded);
        (built.rules, built.diagnostics)
    }

    /// The current rule set.
    pub fn rules(&self) -> Arc<RuleSet> {
        Arc::new(self.current().loaded().set.clone())
    }

    /// Counts of the current rules by handler type (`command`, `prompt`, `wasm`, `http`).
    pub fn rule_counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let loaded = self.current().loaded();
        let mut counts = std::collections::BTreeMap::new();
        for r in loaded.set.rules() {
            *counts.entry(r.handler.handler_type().as_str()).or_insert(0) += 1;
        }
        counts
    }

    /// Turns the host off (it then behaves as one with no rules: nothing runs, no HookFired,
    /// no replay) or on again. In-flight dispatches finish as they started. The flag belongs to
    /// the host's owner: no reload or policy replacement changes it.
    pub fn set_enabled(&self, enabled: bool) {
        self.shared.live.enabled.store(enabled, Ordering::Release);
    }

    /// Whether the host runs hooks.
    pub fn is_enabled(&self) -> bool {
        self.shared.live.enabled.load(Ordering::Acquire)
    }

    /// Admits one dispatch against this host's quota (`max_dispatches_in_flight`), at once or
    /// not at all; nothing of the runtime's shared capacity is taken yet. A server takes the
    /// ticket before reading a request's body, then [`DispatchTicket::enter`]s it once the body
    /// is in, and drops it when the answer is sent.
    pub fn admit(&self) -> Result<DispatchTicket, DispatchRefused> {
        let live = &self.shared.live;
        DispatchTicket::take(
            &live.dispatch_quota,
            &live.dispatches_entered,
            &self.shared.runtime.inner.dispatches,
        )
    }

    /// Runs the hooks that match `event` and returns the aggregated verdict.
    pub async fn dispatch(&self, event: Event) -> Dispatch {
        let inner = self.current();
        let stop = StopState {
            reentries: 0,
            cap: inner.policy.stop_reentry_cap,
        };
        inner.dispatch(event, stop).await
    }

    /// Runs the hooks for `event` with explicit Stop loop state (how many re-entries this turn
    /// already made); for agents that keep that state themselves.
    pub async fn dispatch_with_stop_state(&self, event: Event, stop: StopState) -> Dispatch {
        self.current().dispatch(event, stop).await
    }

    /// Dispatches a `Stop` (or `SubagentStop`) inside a turn: marks re-entries with
    /// `stop_hook_active`, applies the re-entry cap, and says whether to run another round.
    pub async fn dispatch_stop(
        &self,
        mut event: Event,
        turn: &mut StopLoop,
    ) -> (Dispatch, StopStep) {
        turn.prepare(&mut event);
        let d = self.current().dispatch(event, turn.state()).await;
        let step = match &d.verdict {
            hookbox_core::Verdict::Stop(r) => turn.record(r),
            _ => StopStep::Finish,
        };
        (d, step)
    }

    /// A Stop loop for one turn, with the re-entry cap in force.
    pub fn stop_loop(&self) -> StopLoop {
        StopLoop::new(self.stop_reentry_cap())
    }

    /// HookFired records of every dispatch from now on (none for dispatches nothing matched), as
    /// previews, on a queue bounded by the policy's `fired_queue_records` and
    /// `fired_queue_bytes`: a subscriber that falls behind past them is dropped and reads
    /// [`FiredError::Lagged`](crate::FiredError::Lagged). The stream outlives every reload and
    /// policy replacement.
    pub fn subscribe(&self) -> FiredReceiver {
        self.shared.live.fired.subscribe()
    }

    /// Ends the HookFired stream (a tenant removed): subscribers read what they have, then
    /// `Closed`.
    pub(crate) fn close_fired(&self) {
        self.shared.live.fired.close();
    }

    /// Wake requests of `asyncRewake` hooks (a background hook that exited 2) from now on.
    pub fn subscribe_wakes(&self) -> broadcast::Receiver<crate::wake::Wake> {
        self.shared
            .live
            .wakes
            .get_or_init(|| broadcast::channel(64).0)
            .subscribe()
    }

    /// This host's metrics, with its own gauges (hooks in flight, pool slots held).
    pub fn metrics(&self) -> MetricsSnapshot {
        let live = &self.shared.live;
        let mut m = live.metrics.snapshot();
        m.hooks_in_flight = live.hooks_quota.held() as u64;
        m.pool_slots_in_use = live.slots_quota.held() as u64;
        m
    }

    /// Where replay files are written, if replay is on.
    pub fn replay_dir(&self) -> Option<PathBuf> {
        self.current()
            .state
            .replay
            .as_ref()
            .map(|r| r.path().to_owned())
    }
}

fn absolute(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_owned())
}

impl Inner {
    /// A generation under `policy`, with no rules: its state folder opened (created), its
    /// mount roots opened.
    fn new(runtime: &HookRuntime, live: Arc<Live>, policy: HostPolicy) -> Result<Inner, HostError> {
        runtime
            .wasm()
            .check_policy(&policy.wasm)
            .map_err(|e| HostError::Policy(format!("the wasm policy cannot be enforced: {e}")))?;
        let state = StateDir::open(&policy, runtime.inner.settings.max_session_dirs)?;
        let trust = crate::trust::HostTrust::new(&policy)?;
        let project = MountDir::open(&absolute(&policy.project_dir)).ok();
        let extra_roots = policy
            .extra_mount_roots
            .iter()
            .map(|r| {
                MountDir::open(&absolute(r))
                    .map_err(|e| HostError::Policy(format!("extra mount root: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Inner {
            runtime: runtime.clone(),
            live,
            policy: Arc::new(policy),
            rules: RwLock::new(Arc::new(Loaded::default())),
            state,
            project,
            extra_roots,
            trust,
        })
    }

    /// Loads `paths` under this generation's policy; `Err` (with every diagnostic) when
    /// anything is an error.
    fn load_checked<P: AsRef<std::path::Path>>(
        &self,
        paths: &[P],
        opts: &LoadOptions,
        check: impl FnOnce(&LoadReport) -> Vec<Diagnostic>,
    ) -> Result<(LoadReport, Loaded), LoadReport> {
        let mut report = load_paths(paths, opts);
        let refused = check(&report);
        report.diagnostics.extend(refused);
        if report.has_errors() {
            return Err(report);
        }
        let built = install::build(
            self,
            install::protected_by_load(paths),
            report.plugins.clone(),
            std::mem::take(&mut report.rules),
        );
        report.rules = built.rules;
        report.diagnostics.extend(built.diagnostics);
        if report.has_errors() {
            return Err(report);
        }
        Ok((report, built.loaded))
    }

    pub(crate) fn loaded(&self) -> Arc<Loaded> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is intact.
        self.rules.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn swap(&self, loaded: Loaded) {
        *self.rules.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    pub(crate) fn enabled(&self) -> bool {
        self.live.enabled.load(Ordering::Acquire)
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
        let full = self.policy.capture_full_output;
        let record = if d.rechecked.is_empty() {
            ReplayRecord::new(&head, &d.reports, full)
        } else {
            let all: Vec<_> = d.reports.iter().chain(&d.rechecked).cloned().collect();
            ReplayRecord::new(&head, &all, full)
        };
        self.runtime.inner.replay.send(dir, &record);
    }

    /// Sends a HookFired record (as a preview) to subscribers, if any.
    pub(crate) fn fire(&self, f: &HookFired) {
        let fired = &self.live.fired;
        if fired.has_subscribers() {
            fired.send(
                f,
                QueueBounds {
                    records: self.policy.fired_queue_records,
                    bytes: self.policy.fired_queue_bytes,
                },
            );
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
