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

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use hookbox_core::aggregate::StopState;
use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::Event;
use hookbox_core::index::RuleSet;
use hookbox_core::rule::{PluginInfo, Rule};
use hookbox_core::stop_loop::{StopLoop, StopStep};
use tokio::sync::broadcast;

use crate::admission::{DispatchRefused, DispatchTicket};
use crate::dispatch::{self, Dispatch};
use crate::fired::FiredReceiver;
use crate::inner::{Inner, Live};
use crate::install;
use crate::metrics::MetricsSnapshot;
use crate::policy::HostPolicy;
use crate::runtime::{HookRuntime, RuntimeSettings};
use crate::trust::{ApprovalStore, SubjectReport, TrustMode};

use crate::error::HostError;
use crate::inner::Loaded;

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

    /// What it loaded, to note what it runs from (a tenant's snapshots) before it is in place.
    pub(crate) fn loaded_mut(&mut self) -> &mut Loaded {
        &mut self.loaded
    }
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
        policy.validate()?;
        let live = Arc::new(Live::new(runtime, &policy)?);
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

    /// Waits until none of this host's hooks is running or `deadline` passes, woken by the
    /// last one ending; returns how many still run.
    pub(crate) async fn hooks_finished(&self, deadline: tokio::time::Instant) -> usize {
        self.shared.live.hooks_quota.idle(deadline).await
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
    ///
    /// # Blocking
    /// Reads files and may compile wasm components (seconds for a large one): call it from
    /// `spawn_blocking` in async code.
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
    ///
    /// # Blocking
    /// Reads files and may compile wasm components (seconds for a large one): call it from
    /// `spawn_blocking` in async code.
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
        let (mut report, staged) = self.stage_reload(paths, opts, check)?;
        if let Err(e) = self.commit(staged) {
            // Only a new policy's CPU share can be refused, and a reload keeps the policy: kept
            // for the type's sake, reported like any other load error.
            let at = paths
                .first()
                .map_or_else(Default::default, |p| p.as_ref().to_owned());
            report
                .diagnostics
                .push(Diagnostic::error(at, e.to_string()));
            return Err(report);
        }
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
        let (report, loaded) = install::load_checked(&inner, paths, opts, check)?;
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
        Ok(
            install::load_checked(&inner, paths, opts, check).map(|(report, loaded)| {
                (
                    report,
                    Staged {
                        inner: Arc::new(inner),
                        fresh: true,
                        loaded,
                    },
                )
            }),
        )
    }

    /// Puts a staged rule set in place, atomically: a new generation (a staged replacement)
    /// replaces the current one and its policy's caps apply; a staged reload replaces the rules
    /// of the generation it was loaded under.
    pub(crate) fn commit(&self, staged: Staged) -> Result<(), HostError> {
        let Staged {
            inner,
            fresh,
            loaded,
        } = staged;
        // A staged reload is loaded under the current generation (tenants stage under their
        // admin lock, and every new load drops the one staged before); should that generation
        // have been replaced since, the rules still go in with the one they were built for.
        let replace = fresh || !Arc::ptr_eq(&inner, &self.current());
        if replace {
            // The new policy's caps and CPU share first: refused, nothing changes.
            self.shared.live.apply(&inner.policy)?;
        }
        inner.swap(loaded);
        if replace {
            *self
                .shared
                .current
                .write()
                .unwrap_or_else(|p| p.into_inner()) = inner.clone();
        }
        Ok(())
    }

    /// Replaces the rule set with `rules` from `plugins`, atomically: a dispatch in flight keeps
    /// the set it started with. Wasm rules are prepared first (read beneath their plugin,
    /// compiled or fetched from the cache, checked against the policy); a rule that cannot be is
    /// left out with an error diagnostic. Returns the rules installed (renumbered in order) and
    /// those diagnostics.
    ///
    /// # Blocking
    /// Reads files and may compile wasm components (seconds for a large one): call it from
    /// `spawn_blocking` in async code.
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

    /// Runs the hooks that match `event` and returns the aggregated verdict. The event is
    /// shared, never copied: a caller that dispatches one it keeps (a replay, a bench) passes an
    /// `Arc<Event>`, one it made for this dispatch passes the `Event` itself.
    ///
    /// The future is the dispatch's own (no wrapper around it) and holds no borrow of the host.
    pub fn dispatch(
        &self,
        event: impl Into<Arc<Event>>,
    ) -> impl std::future::Future<Output = Dispatch> + 'static {
        let inner = self.current();
        let stop = StopState {
            reentries: 0,
            cap: inner.policy.stop_reentry_cap,
        };
        dispatch::run(inner, event.into(), stop)
    }

    /// Runs the hooks for `event` with explicit Stop loop state (how many re-entries this turn
    /// already made); for agents that keep that state themselves.
    pub fn dispatch_with_stop_state(
        &self,
        event: impl Into<Arc<Event>>,
        stop: StopState,
    ) -> impl std::future::Future<Output = Dispatch> + 'static {
        dispatch::run(self.current(), event.into(), stop)
    }

    /// Dispatches a `Stop` (or `SubagentStop`) inside a turn: marks re-entries with
    /// `stop_hook_active`, applies the re-entry cap, and says whether to run another round.
    pub async fn dispatch_stop(
        &self,
        mut event: Event,
        turn: &mut StopLoop,
    ) -> (Dispatch, StopStep) {
        turn.prepare(&mut event);
        let d = dispatch::run(self.current(), Arc::new(event), turn.state()).await;
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

    /// Where replay files are written, if replay is on and goes to files.
    pub fn replay_dir(&self) -> Option<PathBuf> {
        self.current()
            .state
            .replay
            .as_ref()
            .and_then(|r| r.path())
            .map(Path::to_owned)
    }
}

impl HookHost {
    /// The trust mode in force: the policy's, made stricter by the project's settings.
    pub fn trust_mode(&self) -> TrustMode {
        self.current().trust.mode
    }

    /// The approval store this host reads, if it has one.
    pub fn trust_store(&self) -> Option<ApprovalStore> {
        self.current().trust.store.clone()
    }

    /// Every subject of the current rule set with its rules' records and verdicts; empty when
    /// trust is `off` (unless the policy `record`s). The hook files' digests are those of the
    /// bytes the loader parsed (nothing is read again).
    pub fn trust_report(&self) -> Vec<SubjectReport> {
        crate::trust_report::subject_reports(&self.current().loaded())
    }
}
