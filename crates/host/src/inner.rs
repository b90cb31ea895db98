//! One generation of a host ([`Inner`]: a policy, the state folder and mount roots it names, the
//! rules loaded under it) and the host's long-lived state ([`Live`]: HookFired hub, enabled
//! flag, quotas, rate bucket, metrics, CPU share) that outlives every generation. Defined here,
//! below the [`HookHost`](crate::HookHost) facade, and implemented only here: the dispatch,
//! runners, installer, permits and trust gate are free functions of their own modules over
//! `&Inner`, never further `impl Inner` blocks.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use hookbox_core::fired::HookFired;
use hookbox_core::index::RuleSet;
use hookbox_core::rule::Rule;
use hookbox_wasm::{CpuShare, MountDir, PolicyError, PreparedHook};
use tokio::sync::broadcast;

use crate::admission::Quota;
use crate::by_position::ByPosition;
use crate::error::HostError;
use crate::fired::{FiredHub, QueueBounds};
use crate::metrics::HostMetrics;
use crate::policy::HostPolicy;
use crate::rate::TokenBucket;
use crate::runtime::HookRuntime;
use crate::state::StateDir;

/// What one loaded rule set carries besides the rules.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) set: RuleSet,
    /// Prepared wasm components, by rule position.
    pub(crate) wasm: ByPosition<PreparedHook>,
    /// Persistent plugin data folders, by plugin position (per-session ones are made at
    /// dispatch).
    pub(crate) data: ByPosition<MountDir>,
    /// Each rule's standing against its approval, and the files its command runs.
    pub(crate) trust: crate::trust::LoadedTrust,
    /// Rules kept although they cannot run (a missing script or component, a handler the
    /// policy forbids), by rule position, with the failure each gives at dispatch.
    pub(crate) cannot_run: ByPosition<hookbox_core::output::HookFailure>,
    /// Each rule's plugin name and label, by rule position, made once here so that a report
    /// shares them instead of copying them per event.
    pub(crate) names: Vec<RuleNames>,
}

/// A rule's names as its reports carry them.
#[derive(Debug, Clone)]
pub(crate) struct RuleNames {
    pub(crate) plugin: Arc<str>,
    pub(crate) label: Arc<str>,
}

impl RuleNames {
    /// `rule`'s names in `set`: its plugin's name (else the name its source gives) and its
    /// handler's label.
    pub(crate) fn of(set: &RuleSet, rule: &Rule) -> RuleNames {
        let plugin = set
            .plugins()
            .get(rule.plugin)
            .map_or(rule.source.plugin.as_str(), |p| p.name.as_str());
        RuleNames {
            plugin: plugin.into(),
            label: rule.handler.label().into(),
        }
    }
}

impl Loaded {
    /// The name of the plugin `rule` came from, if it came from one.
    pub(crate) fn plugin_name(&self, rule: &Rule) -> Option<&str> {
        self.set.plugins().get(rule.plugin).map(|p| p.name.as_str())
    }

    /// `rule`'s names: those made at load (a rule's index is its position here), else made now.
    pub(crate) fn names(&self, rule: &Rule) -> RuleNames {
        match self.names.get(rule.index) {
            Some(n) => n.clone(),
            None => RuleNames::of(&self.set, rule),
        }
    }
}

/// The host's long-lived state: everything that must outlive a replacement of its rules and
/// policy.
pub(crate) struct Live {
    pub(crate) fired: FiredHub,
    pub(crate) wakes: OnceLock<broadcast::Sender<crate::wake::Wake>>,
    /// This host's counters, forwarding each record to the runtime's.
    pub(crate) metrics: HostMetrics,
    pub(crate) hooks_quota: Arc<Quota>,
    pub(crate) slots_quota: Arc<Quota>,
    pub(crate) dispatch_quota: Arc<Quota>,
    /// Units of the runtime's shared dispatch capacity this host holds now.
    pub(crate) dispatches_entered: Arc<AtomicUsize>,
    pub(crate) rate: TokenBucket,
    /// This host's share of the CPU: how many of its wasm guests execute at once (`None`: no
    /// share, `wasm_cpu_share` is `usize::MAX`), with the policy value it was made from.
    /// Replaced when a new policy changes it; runs already going finish on the share they
    /// started with.
    cpu_share: RwLock<(usize, Option<CpuShare>)>,
    pub(crate) enabled: AtomicBool,
}

impl Live {
    pub(crate) fn new(runtime: &HookRuntime, policy: &HostPolicy) -> Result<Live, HostError> {
        let share = cpu_share(policy.wasm_cpu_share)?;
        Ok(Live {
            fired: FiredHub::default(),
            wakes: OnceLock::new(),
            metrics: HostMetrics::forwarding_to(runtime.inner.metrics.clone()),
            hooks_quota: Arc::new(Quota::new(policy.max_hooks_in_flight)),
            slots_quota: Arc::new(Quota::new(policy.max_pool_slots)),
            dispatch_quota: Arc::new(Quota::new(policy.max_dispatches_in_flight)),
            dispatches_entered: Arc::new(AtomicUsize::new(0)),
            rate: TokenBucket::new(policy.dispatch_rate),
            cpu_share: RwLock::new((policy.wasm_cpu_share, share)),
            enabled: AtomicBool::new(true),
        })
    }

    /// The CPU share the next wasm run of this host takes its turns from, if it has one.
    pub(crate) fn cpu_share(&self) -> Option<CpuShare> {
        self.cpu_share
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .clone()
    }

    /// The new policy's caps, rate and CPU share; what is held stays held. Refused, changing
    /// nothing, when the share cannot be made.
    pub(crate) fn apply(&self, policy: &HostPolicy) -> Result<(), HostError> {
        let mut share = self.cpu_share.write().unwrap_or_else(|p| p.into_inner());
        if share.0 != policy.wasm_cpu_share {
            *share = (policy.wasm_cpu_share, cpu_share(policy.wasm_cpu_share)?);
        }
        drop(share);
        self.hooks_quota.set_cap(policy.max_hooks_in_flight);
        self.slots_quota.set_cap(policy.max_pool_slots);
        self.dispatch_quota.set_cap(policy.max_dispatches_in_flight);
        self.rate.set_limit(policy.dispatch_rate);
        Ok(())
    }
}

/// The share `wasm_cpu_share` asks for: none for `usize::MAX`; 0 turns is refused.
fn cpu_share(turns: usize) -> Result<Option<CpuShare>, PolicyError> {
    (turns != usize::MAX)
        .then(|| CpuShare::new(turns))
        .transpose()
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

impl Inner {
    /// A generation under `policy`, with no rules: its state folder opened (created), its
    /// mount roots opened.
    pub(crate) fn new(
        runtime: &HookRuntime,
        live: Arc<Live>,
        policy: HostPolicy,
    ) -> Result<Inner, HostError> {
        policy.validate()?;
        runtime.wasm().check_policy(&policy.wasm)?;
        let settings = &runtime.inner.settings;
        let state = StateDir::open(&policy, settings.max_session_dirs, settings.replay_output)?;
        let trust = host_trust(&policy)?;
        let absolute = |field, p| {
            hookbox_core::files::path::absolute(p)
                .map_err(|source| HostError::Path { field, source })
        };
        // A project folder that does not exist is no mount root (nothing to mount there).
        let project = MountDir::open(&absolute("project_dir", &policy.project_dir)?).ok();
        let extra_roots = policy
            .extra_mount_roots
            .iter()
            .map(|r| {
                MountDir::open(&absolute("extra_mount_roots", r)?).map_err(HostError::MountRoot)
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

    pub(crate) fn loaded(&self) -> Arc<Loaded> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is intact.
        self.rules.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn swap(&self, loaded: Loaded) {
        *self.rules.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    pub(crate) fn enabled(&self) -> bool {
        self.live.enabled.load(Ordering::Acquire)
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

/// The policy's trust (a project's `"trust"` setting has made it stricter already, through
/// [`Settings::apply`](crate::Settings::apply)), and its store opened (when the mode is on and
/// the folder exists). The store must be outside the project and every folder rules may mount:
/// hooks must never reach the approvals.
fn host_trust(policy: &HostPolicy) -> Result<crate::trust::HostTrust, HostError> {
    let mode = policy.trust.mode;
    let mut store = None;
    let mut store_error = None;
    if mode.is_on()
        && let Some(dir) = &policy.trust.store
    {
        policy.check_trust_store_outside(dir)?;
        // A store that cannot be used approves nothing: the rules load and trust judges them
        // (warn runs them and says why, require refuses them) — never a host that does not
        // start, which leaves every guard to the agent's fail-open.
        match crate::trust::ApprovalStore::open(dir) {
            Ok(s) => store = s,
            Err(e) => {
                tracing::warn!(store = %dir.display(), error = %e, "approval store unusable: nothing is approved");
                store_error = Some(crate::trust::StoreUnusable {
                    path: dir.clone(),
                    reason: e.to_string(),
                });
            }
        }
    }
    Ok(crate::trust::HostTrust {
        mode,
        store,
        store_error,
        policy: policy.trust.clone(),
    })
}
