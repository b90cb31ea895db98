//! `HookRuntime`: what one process shares between all the hosts (tenants) it serves — the wasm
//! engine with its instance pool and compile cache, the command runner, the shared admission
//! pools (hooks in flight, wasm slots) with their reserves, the background hooks, the replay
//! writer thread and the process-wide metrics. It is built once from [`RuntimeSettings`]: a bad
//! engine configuration fails here, not at the first wasm rule. Each [`HookHost`](crate::HookHost)
//! is then built from it with its own policy, rules, state folder and quotas (Spin's shape:
//! runtime-wide init, per-app configure, per-instance prepare). The single-project CLI is the
//! one-host case.

use std::sync::Arc;
use std::time::Duration;

use hookbox_command::{CommandLimits, CommandRunner, ContainmentPolicy, EnvPolicy};
use hookbox_http::{HttpError, HttpLimits, HttpRunner};
use hookbox_wasm::{RuntimeConfig, WasmError, WasmRuntime};

use crate::admission::Pool;
use crate::background::{Background, DrainReport};
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::replay::{ReplayQuota, ReplaySink};

/// Process-wide settings, each with its default.
#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// The wasm engine: pooling, epoch tick, fuel metering, compile cache, memory budget.
    /// Default: [`RuntimeConfig::default`] (no disk cache, no fuel metering); the CLI and the
    /// server turn fuel metering and the disk cache on.
    pub wasm: RuntimeConfig,
    /// Hooks of any kind running at once across all hosts. Default **256**.
    pub max_hooks_in_flight: usize,
    /// Of those, how many are kept for hosts that have none running (so a flood from some
    /// tenants never leaves another without a hook). Default **16**.
    pub reserved_hooks: usize,
    /// Wasm instance-pool slots kept for hosts that hold none. Default **16** (of the pool's
    /// `slots`, 256 by default).
    pub reserved_slots: usize,
    /// How long a hook may wait for shared capacity (a hook permit or a wasm slot) before it
    /// fails with `overloaded`. A host over its own quota never waits. Default **1 s**.
    pub admission_wait: Duration,
    /// Output caps and reaping of native commands. Default: 1 MiB stdout, 1 MiB stderr.
    pub command_limits: CommandLimits,
    /// Inherited environment variables native hooks do not see. Default: provider API keys and
    /// cloud credentials ([`EnvPolicy::default`]).
    pub env_policy: EnvPolicy,
    /// How processes a native hook starts are killed with it: a cgroup v2 per hook where the
    /// host may create one, else (opt-in) a child subreaper. Default: cgroup on, subreaper off
    /// (a library must not reap its embedder's children); the CLI and `hookbox serve` turn the
    /// subreaper on.
    pub containment: ContainmentPolicy,
    /// Limits of `http` hooks' answers and of the connection pool. Default: [`HttpLimits`]'s.
    pub http_limits: HttpLimits,
    /// Replay records waiting to be written before new ones are dropped (and counted). The
    /// writer is a thread of its own, so a dispatch never waits for the disk. Default **4096**.
    pub replay_queue: usize,
    /// Replay files kept open at once; the least recently written is closed beyond it, and any
    /// file idle for `replay_idle_close` is closed. Default **64** and **30 s**.
    pub replay_open_files: usize,
    /// See `replay_open_files`.
    pub replay_idle_close: Duration,
    /// What each host's replay folder may hold (bytes, files — one per session); over it the
    /// least recently written files are removed. Default: [`ReplayQuota`]'s (64 MiB, 256).
    pub replay_quota: ReplayQuota,
    /// Per-session data folders (the Ghast dialect's) one plugin of a host keeps; opening one
    /// more removes the least recently used. Session ids are the client's to choose. Default
    /// **256**.
    pub max_session_dirs: usize,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            wasm: RuntimeConfig::default(),
            max_hooks_in_flight: 256,
            reserved_hooks: 16,
            reserved_slots: 16,
            admission_wait: Duration::from_secs(1),
            command_limits: CommandLimits::default(),
            env_policy: EnvPolicy::default(),
            containment: ContainmentPolicy::default(),
            http_limits: HttpLimits::default(),
            replay_queue: 4096,
            replay_open_files: 64,
            replay_idle_close: Duration::from_secs(30),
            replay_quota: ReplayQuota::default(),
            max_session_dirs: 256,
        }
    }
}

/// Why a runtime could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The wasm engine refused its configuration.
    #[error("cannot start the wasm runtime: {0}")]
    Wasm(#[from] WasmError),
    /// A setting is out of range.
    #[error("runtime settings: {0}")]
    Settings(String),
    /// The `http` hook runner could not be built (TLS roots).
    #[error("cannot start the http hook runner: {0}")]
    Http(#[from] HttpError),
    /// The replay writer thread could not start.
    #[error("cannot start the replay writer: {0}")]
    Replay(std::io::Error),
}

pub(crate) struct RuntimeInner {
    pub(crate) settings: RuntimeSettings,
    pub(crate) wasm: WasmRuntime,
    pub(crate) commands: CommandRunner,
    pub(crate) http: HttpRunner,
    pub(crate) hooks: Arc<Pool>,
    pub(crate) slots: Arc<Pool>,
    pub(crate) background: Background,
    pub(crate) replay: ReplaySink,
    pub(crate) metrics: Metrics,
}

/// The process-wide runtime. Cheap to clone; build it once and share it.
#[derive(Clone)]
pub struct HookRuntime {
    pub(crate) inner: Arc<RuntimeInner>,
}

impl std::fmt::Debug for HookRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRuntime")
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl HookRuntime {
    /// Builds the engine (and its epoch ticker), the pools, the command runner and the replay
    /// writer.
    pub fn new(settings: RuntimeSettings) -> Result<HookRuntime, RuntimeError> {
        if settings.max_hooks_in_flight == 0 {
            return Err(RuntimeError::Settings(
                "max_hooks_in_flight must be at least 1".into(),
            ));
        }
        let wasm = WasmRuntime::new(settings.wasm.clone())?;
        let slots = usize::try_from(settings.wasm.pool.slots).unwrap_or(usize::MAX);
        // Data folders are made by each host beneath its own state folder and come with each
        // request.
        let commands = CommandRunner::new()
            .with_limits(settings.command_limits)
            .with_env_policy(settings.env_policy.clone())
            .with_containment(settings.containment.clone());
        let http = HttpRunner::new(settings.http_limits)?;
        let replay = ReplaySink::start(
            settings.replay_queue,
            settings.replay_open_files,
            settings.replay_idle_close,
            settings.replay_quota,
        )
        .map_err(RuntimeError::Replay)?;
        Ok(HookRuntime {
            inner: Arc::new(RuntimeInner {
                hooks: Arc::new(Pool::new(
                    settings.max_hooks_in_flight,
                    settings.reserved_hooks,
                )),
                slots: Arc::new(Pool::new(slots, settings.reserved_slots)),
                wasm,
                commands,
                http,
                background: Background::default(),
                replay,
                metrics: Metrics::default(),
                settings,
            }),
        })
    }

    /// The settings it was built with.
    pub fn settings(&self) -> &RuntimeSettings {
        &self.inner.settings
    }

    /// The wasm runtime (for `inspect`, `compile`, benchmarks).
    pub fn wasm(&self) -> &WasmRuntime {
        &self.inner.wasm
    }

    /// Process-wide metrics (every host's dispatches and hooks), with the shared gauges.
    pub fn metrics(&self) -> MetricsSnapshot {
        let mut m = self.inner.metrics.snapshot();
        m.hooks_in_flight = self.inner.hooks.in_use() as u64;
        m.pool_slots_in_use = self.inner.slots.in_use() as u64;
        m.background_hooks = self.inner.background.running() as u64;
        m.replay_dropped = self.inner.replay.dropped();
        m.replay_errors = self.inner.replay.errors();
        m.replay_files_removed = self.inner.replay.files_removed();
        m
    }

    /// How native hooks' processes are contained here (cgroup, subreaper, or process group
    /// only, with why).
    pub fn containment(&self) -> hookbox_command::Containment {
        self.inner.commands.containment()
    }

    /// Background hooks (`async`) running now.
    pub fn background_hooks(&self) -> usize {
        self.inner.background.running()
    }

    /// Waits up to `grace` for every background hook to finish, cancels the rest, and flushes
    /// the replay writer. Call it before the process exits (the CLI does after printing; a
    /// service on SIGTERM).
    pub async fn drain(&self, grace: Duration) -> DrainReport {
        let report = self.inner.background.drain(grace).await;
        self.flush_replay();
        report
    }

    /// Blocks until every replay record queued so far is written.
    pub fn flush_replay(&self) {
        self.inner.replay.flush();
    }
}
