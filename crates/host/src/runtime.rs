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
use crate::replay::{ReplayOutput, ReplayQuota, ReplaySink, ReplayStream};

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
    /// Dispatches admitted at once across all hosts ([`HookHost::admit`](crate::HookHost::admit):
    /// `hookbox serve`'s requests); one more is refused at once. Default **256**.
    pub max_dispatches_in_flight: usize,
    /// Of those, how many are kept for hosts that have none in flight, so no single tenant can
    /// take the last ones. Default **16**.
    pub reserved_dispatches: usize,
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
    /// Bytes of replay records the queue may hold before they are redacted (hook output above
    /// all): within it a dispatch hands its record to the writer thread as it is, and the writer
    /// redacts and serialises it off the dispatch's path; past it the dispatch builds its record
    /// itself, so the queue's memory stays bounded whatever the hooks print (one record can
    /// hold megabytes, so `replay_queue` alone does not bound it). A queued record holds a
    /// hook's names and output, never its answer's texts (which it does not write), and weighs
    /// every text it holds. Default **16 MiB**.
    pub replay_queue_bytes: usize,
    /// Replay files kept open at once; the least recently written is closed beyond it, and any
    /// file idle for `replay_idle_close` is closed. Default **64** and **30 s**.
    pub replay_open_files: usize,
    /// See `replay_open_files`.
    pub replay_idle_close: Duration,
    /// What each host's replay folder may hold (bytes, files — one per session); over it the
    /// least recently written files are removed. Default: [`ReplayQuota`]'s (64 MiB, 256).
    pub replay_quota: ReplayQuota,
    /// Where replay records go: per-session files in each host's state folder, or JSON lines
    /// on standard output (the same records, redacted and bounded alike, each naming its host;
    /// a line over `replay_quota.max_bytes` is dropped and counted). Default **files**.
    pub replay_output: ReplayOutput,
    /// With [`ReplayOutput::Stdout`]: how long the writer thread waits for standard output to
    /// take more bytes (a log pipeline that stopped reading) before it drops the records it
    /// holds, counted in `replay_dropped`. Dispatches never wait for it. Default **5 s**.
    pub replay_stream_stall: Duration,
    /// Per-session data folders (the Ghast dialect's) one plugin of a host keeps; opening one
    /// more removes the least recently used. Session ids are the client's to choose. Default
    /// **256**.
    pub max_session_dirs: usize,
    /// Variables native hooks see on top of this process's environment, replacing an inherited
    /// one of the same name (the `env_policy` deny-list still applies). Default: none.
    /// `hookbox test` sets a case's `env` here.
    pub extra_env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            wasm: RuntimeConfig::default(),
            max_hooks_in_flight: 256,
            reserved_hooks: 16,
            reserved_slots: 16,
            max_dispatches_in_flight: 256,
            reserved_dispatches: 16,
            admission_wait: Duration::from_secs(1),
            command_limits: CommandLimits::default(),
            env_policy: EnvPolicy::default(),
            containment: ContainmentPolicy::default(),
            http_limits: HttpLimits::default(),
            replay_queue: 4096,
            replay_queue_bytes: 16 << 20,
            replay_open_files: 64,
            replay_idle_close: Duration::from_secs(30),
            replay_quota: ReplayQuota::default(),
            replay_output: ReplayOutput::Files,
            replay_stream_stall: Duration::from_secs(5),
            max_session_dirs: 256,
            extra_env: Vec::new(),
        }
    }
}

impl RuntimeSettings {
    /// Checks every value a runtime is built from, naming the field of the first one out of
    /// range: a capacity of 0, a reserve that is not below its capacity. Nothing is clamped —
    /// a value that would be silently changed into another is refused. [`HookRuntime::new`]
    /// calls it; a configuration file can call it to report the error where it was written.
    pub fn validate(&self) -> Result<(), RuntimeError> {
        let at_least_one = |field: &'static str, v: u64| {
            if v == 0 {
                return Err(RuntimeError::Invalid {
                    field,
                    reason: "is 0: it must be at least 1".into(),
                });
            }
            Ok(())
        };
        let below = |field: &'static str, v: usize, of: &'static str, total: usize| {
            if v >= total {
                return Err(RuntimeError::Invalid {
                    field,
                    reason: format!("is {v}: it must be below {of} ({total})"),
                });
            }
            Ok(())
        };
        at_least_one("max_hooks_in_flight", self.max_hooks_in_flight as u64)?;
        below(
            "reserved_hooks",
            self.reserved_hooks,
            "max_hooks_in_flight",
            self.max_hooks_in_flight,
        )?;
        at_least_one("wasm.pool.slots", u64::from(self.wasm.pool.slots))?;
        below(
            "reserved_slots",
            self.reserved_slots,
            "wasm.pool.slots",
            self.slots(),
        )?;
        at_least_one(
            "max_dispatches_in_flight",
            self.max_dispatches_in_flight as u64,
        )?;
        below(
            "reserved_dispatches",
            self.reserved_dispatches,
            "max_dispatches_in_flight",
            self.max_dispatches_in_flight,
        )?;
        at_least_one("replay_queue", self.replay_queue as u64)?;
        at_least_one("replay_queue_bytes", self.replay_queue_bytes as u64)?;
        at_least_one("replay_open_files", self.replay_open_files as u64)?;
        at_least_one("replay_quota.max_bytes", self.replay_quota.max_bytes)?;
        at_least_one("replay_quota.max_files", self.replay_quota.max_files as u64)?;
        at_least_one("max_session_dirs", self.max_session_dirs as u64)?;
        Ok(())
    }

    /// The wasm pool's slots, the capacity of the runtime's slot pool.
    fn slots(&self) -> usize {
        usize::try_from(self.wasm.pool.slots).unwrap_or(usize::MAX)
    }
}

/// Why a runtime could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The wasm engine refused its configuration.
    #[error("cannot start the wasm runtime: {0}")]
    Wasm(#[from] WasmError),
    /// A setting is out of range: refused, never clamped to something that works.
    #[error("runtime setting `{field}` {reason}")]
    Invalid {
        /// The [`RuntimeSettings`] field (`wasm.pool.slots` for the wasm pool's size).
        field: &'static str,
        /// The value found and what it must be.
        reason: String,
    },
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
    pub(crate) dispatches: Arc<Pool>,
    pub(crate) background: Background,
    pub(crate) replay: ReplaySink,
    /// Process-wide counters; every host's [`HostMetrics`](crate::metrics::HostMetrics)
    /// forwards its records here.
    pub(crate) metrics: Arc<Metrics>,
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
    /// A setting out of range is refused ([`RuntimeSettings::validate`]).
    pub fn new(settings: RuntimeSettings) -> Result<HookRuntime, RuntimeError> {
        settings.validate()?;
        let wasm = WasmRuntime::new(settings.wasm.clone())?;
        let slots = settings.slots();
        // Data folders are made by each host beneath its own state folder and come with each
        // request.
        let mut commands = CommandRunner::new()
            .with_limits(settings.command_limits)
            .with_env_policy(settings.env_policy.clone())
            .with_containment(settings.containment.clone());
        if !settings.extra_env.is_empty() {
            let extra = &settings.extra_env;
            let mut vars: Vec<_> = std::env::vars_os()
                .filter(|(k, _)| !extra.iter().any(|(name, _)| name == k))
                .collect();
            vars.extend(extra.iter().cloned());
            commands = commands.with_host_env(vars);
        }
        let http = HttpRunner::new(settings.http_limits)?;
        let stream = match settings.replay_output {
            ReplayOutput::Files => None,
            ReplayOutput::Stdout => {
                // A handle of its own, so the writer's polls and writes never touch the
                // process's buffered `Stdout`.
                let fd = std::os::fd::AsFd::as_fd(&std::io::stdout())
                    .try_clone_to_owned()
                    .map_err(RuntimeError::Replay)?;
                Some(ReplayStream::new(fd, settings.replay_stream_stall))
            }
        };
        let replay = ReplaySink::start(
            settings.replay_queue,
            settings.replay_queue_bytes,
            settings.replay_open_files,
            settings.replay_idle_close,
            settings.replay_quota,
            stream,
        )
        .map_err(RuntimeError::Replay)?;
        Ok(HookRuntime {
            inner: Arc::new(RuntimeInner {
                hooks: Arc::new(Pool::new(
                    settings.max_hooks_in_flight,
                    settings.reserved_hooks,
                )),
                slots: Arc::new(Pool::new(slots, settings.reserved_slots)),
                dispatches: Arc::new(Pool::new(
                    settings.max_dispatches_in_flight,
                    settings.reserved_dispatches,
                )),
                wasm,
                commands,
                http,
                background: Background::default(),
                replay,
                metrics: Arc::new(Metrics::default()),
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

    /// Dispatches holding a unit of the shared dispatch capacity now, across all hosts.
    pub fn dispatches_in_flight(&self) -> usize {
        self.inner.dispatches.in_use()
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
        self.replay_flushed().await;
        report
    }

    /// Blocks until every replay record queued so far is written.
    ///
    /// # Blocking
    /// Waits for the replay writer thread (the disk): call it from synchronous code (the CLI
    /// after printing); async code awaits [`HookRuntime::replay_flushed`].
    pub fn flush_replay(&self) {
        self.inner.replay.flush();
    }

    /// Waits until every replay record queued so far is written, without blocking the thread.
    pub async fn replay_flushed(&self) {
        self.inner.replay.flushed().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(settings: RuntimeSettings) -> (&'static str, String) {
        match HookRuntime::new(settings) {
            Err(RuntimeError::Invalid { field, reason }) => (field, reason),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("built"),
        }
    }

    #[test]
    fn settings_out_of_range_are_refused_naming_the_field_not_clamped() {
        // Each of these was silently clamped by the shared pools (a reserve to total - 1, a
        // capacity of 0 to 1) and the runtime built.
        let s = RuntimeSettings {
            reserved_slots: 256,
            ..RuntimeSettings::default()
        };
        let (field, reason) = refused(s);
        assert_eq!(field, "reserved_slots");
        assert!(
            reason.contains("256") && reason.contains("wasm.pool.slots"),
            "{reason}"
        );
        let s = RuntimeSettings {
            reserved_hooks: 300,
            ..RuntimeSettings::default()
        };
        assert_eq!(refused(s).0, "reserved_hooks");
        let s = RuntimeSettings {
            max_dispatches_in_flight: 0,
            ..RuntimeSettings::default()
        };
        assert_eq!(refused(s).0, "max_dispatches_in_flight");
        let s = RuntimeSettings {
            replay_open_files: 0,
            ..RuntimeSettings::default()
        };
        assert_eq!(refused(s).0, "replay_open_files");
        let s = RuntimeSettings {
            replay_queue: 0,
            ..RuntimeSettings::default()
        };
        assert_eq!(refused(s).0, "replay_queue");
        let s = RuntimeSettings {
            replay_queue_bytes: 0,
            ..RuntimeSettings::default()
        };
        assert_eq!(refused(s).0, "replay_queue_bytes");
    }

    #[test]
    fn the_message_names_the_field_and_the_value() {
        let s = RuntimeSettings {
            max_hooks_in_flight: 0,
            ..RuntimeSettings::default()
        };
        assert_eq!(
            HookRuntime::new(s).unwrap_err().to_string(),
            "runtime setting `max_hooks_in_flight` is 0: it must be at least 1"
        );
    }
}
