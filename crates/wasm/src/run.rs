//! Running one event: a fresh store with a closed WASI context (only the rule's mounts and env,
//! captured and capped stdio, stdin = payload for commands), limits applied before the first
//! instruction, the call under an epoch deadline plus a timer backstop, and a classified result.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, HookFailure, HookResponse, RawOutput};
use hookbox_core::rule::Access;
use serde::{Deserialize, Serialize};
use wasmtime::component::ResourceTable;
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, I32Exit};

use crate::bindings;
use crate::capture::{CappedPipe, Captured};
use crate::classify::{self, Budget, Phase};
use crate::cpu_share::Turn;
use crate::limits::WasmLimits;
use crate::links::MountLinks;
use crate::mount::MountDir;
use crate::quota::WriteQuota;
use crate::runtime::{LoadedComponent, Prepared, WasmRuntime};
use crate::scope::{FuelMeter, RunScope};
use crate::state::{HostState, Limiter, StoreState, Wasi};

/// How long after its timeout a run stuck in a host call (where epochs cannot reach) is dropped.
const BACKSTOP_GRACE: Duration = Duration::from_millis(10);

/// A host folder made visible to the guest, opened once as a handle (see [`MountDir`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedMount {
    /// The host folder, held open: the guest gets this very folder, whatever happened to its
    /// path since it was opened.
    pub host: MountDir,
    /// The guest's absolute path for it.
    pub guest: String,
    /// `ro` (default) or `rw`, as resolved against the policy.
    pub access: Access,
    /// Whether the guest may create symbolic links in it (the rule's `"symlinks": true`; only
    /// meaningful for `rw`). Without it `symlink-at` is refused with `not-permitted`, and so are
    /// hard-linking and moving an existing link into it.
    pub symlinks: bool,
}

/// One event for one component.
#[derive(Debug, Clone)]
pub struct Invocation<'a> {
    /// The event (typed hooks get it as the WIT `event` record, with the flat payload).
    pub event: &'a Event,
    /// The payload as JSON text. For `wasi:cli/run` components: the rule's dialect's payload,
    /// written to stdin. For typed hooks: the flat payload (Claude Code's shape) that becomes
    /// the WIT event's `payload` field; empty means "serialise it here".
    pub payload_json: &'a str,
    /// The event's `tool_input` as compact JSON when the caller already has it — the host's is a
    /// slice of the flat payload it serialised ([`wire::flat_payload`]) — so a typed hook's WIT
    /// event borrows it; `None`: serialised here from the event. Must be
    /// `serde_json::to_string` of the event's `tool_input`.
    ///
    /// [`wire::flat_payload`]: hookbox_core::event::wire::flat_payload
    pub tool_input_json: Option<&'a str>,
    /// Limits from [`resolve`](crate::resolve).
    pub limits: &'a WasmLimits,
    /// Folders the guest sees; nothing else of the host filesystem is visible.
    pub mounts: &'a [ResolvedMount],
    /// The guest's whole environment; the host's is never inherited.
    pub env: &'a [(String, String)],
    /// The rule's `config` as JSON text, returned by `host.config`.
    pub config_json: Arc<str>,
    /// The rule, for log records.
    pub label: Arc<str>,
}

/// Level of a guest log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs, reason = "the usual log levels")]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// One `host.log` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestLog {
    /// Its level.
    pub level: LogLevel,
    /// The message, cut at `log_message_bytes`.
    pub message: String,
    /// True when the message was cut.
    pub truncated: bool,
}

/// What a successful run answered.
#[derive(Debug, Clone, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per run, moved once; boxing would add an allocation per event"
)]
pub enum WasmOutput {
    /// A typed hook's response.
    Typed(HookResponse),
    /// A command's exit code and captured output, to be read exactly like a native command's in
    /// the rule's dialect. A command stopped at its timeout is a [`FailedRun`] of class
    /// `timeout` (its output in the report), never a `RawOutput` with `timed_out`.
    Command(RawOutput),
}

/// What happened during a run, successful or not.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunReport {
    /// `host.log` calls, in order, up to `log_calls`.
    pub logs: Vec<GuestLog>,
    /// `host.log` calls beyond `log_calls`.
    pub logs_dropped: u64,
    /// Captured stdout (for commands, the same text as in [`RawOutput`]).
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// Fuel used, whenever the runtime meters fuel ([`RuntimeConfig::fuel`](crate::RuntimeConfig::fuel)),
    /// with or without a budget; `None` on a runtime without metering.
    pub fuel_consumed: Option<u64>,
    /// Bytes written to files of `rw` mounts (counted against `write_bytes`).
    pub bytes_written: u64,
    /// Files, folders and links created in `rw` mounts (counted against `write_files`).
    pub files_created: u64,
    /// Wall-clock time from the call to `run` to its result (including any wait for a slot).
    pub duration: Duration,
}

/// A successful run.
#[derive(Debug, Clone, PartialEq)]
pub struct WasmRun {
    /// The answer.
    pub output: WasmOutput,
    /// Logs, output, fuel, time.
    pub report: RunReport,
}

/// A failed run: the classified failure and what the guest left behind.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{failure}")]
pub struct FailedRun {
    /// Why it failed.
    pub failure: HookFailure,
    /// Logs and output up to the failure.
    pub report: RunReport,
}

impl FailedRun {
    /// The failure class.
    pub fn class(&self) -> FailureClass {
        self.failure.class
    }
}

impl From<FailedRun> for HookFailure {
    fn from(f: FailedRun) -> HookFailure {
        f.failure
    }
}

/// What `execute` produced before conversion.
#[allow(clippy::large_enum_variant, reason = "lives on the stack for one run")]
enum Answer {
    Typed(Result<HookResponse, HookFailure>),
    Exit(i32),
}

/// Hostcall fuel for a run whose responses are capped at `response_bytes`: never below
/// [`WasmLimits::MIN_HOSTCALL_BYTES`], so ordinary WASI calls keep working under a tiny cap.
fn hostcall_fuel(response_bytes: u64) -> usize {
    usize::try_from(response_bytes.max(WasmLimits::MIN_HOSTCALL_BYTES)).unwrap_or(usize::MAX)
}

/// Epoch ticks covering `timeout`: rounded up, plus one because the first tick may come at once.
fn epoch_ticks(timeout: Duration, tick: Duration) -> u64 {
    let ticks = timeout.as_nanos().div_ceil(tick.as_nanos().max(1));
    u64::try_from(ticks).unwrap_or(u64::MAX).saturating_add(1)
}

/// A run's store, with what it needs to account for its fuel: when it is dropped before
/// [`RunStore::finish`] — the caller dropped the run's future mid-run — it records the fuel used
/// so far in the run's meter, so a cancelled run is billed too.
struct RunStore<'m> {
    store: Option<Store<StoreState>>,
    /// The fuel the store started with, when the runtime meters fuel.
    fuel_start: Option<u64>,
    meter: Option<&'m FuelMeter>,
}

impl RunStore<'_> {
    fn get(&mut self) -> &mut Store<StoreState> {
        self.store
            .as_mut()
            .expect("the store is only taken by finish")
    }

    fn data(&self) -> &StoreState {
        self.store
            .as_ref()
            .expect("the store is only taken by finish")
            .data()
    }

    /// Fuel used so far: what the store started with minus what is left.
    fn consumed(&self) -> Option<u64> {
        let store = self.store.as_ref()?;
        self.fuel_start
            .map(|start| start.saturating_sub(store.get_fuel().unwrap_or(0)))
    }

    /// The run is over: its fuel (also recorded in the meter) and its store's data. Dropping the
    /// store frees its pool slot.
    fn finish(mut self) -> (StoreState, Option<u64>) {
        let consumed = self.consumed();
        self.record(consumed);
        let store = self.store.take().expect("finish is called once");
        (store.into_data(), consumed)
    }

    fn record(&self, consumed: Option<u64>) {
        if let (Some(meter), Some(c)) = (self.meter, consumed) {
            meter.record(c);
        }
    }
}

impl Drop for RunStore<'_> {
    fn drop(&mut self) {
        if self.store.is_some() {
            self.record(self.consumed());
        }
    }
}

impl WasmRuntime {
    /// Runs `component` on one event in a fresh store. Every failure is classified; the runtime
    /// keeps serving afterwards. Needs a tokio runtime with timers enabled. The run belongs to no
    /// CPU share; see [`WasmRuntime::run_in`].
    pub async fn run(
        &self,
        component: &LoadedComponent,
        inv: Invocation<'_>,
    ) -> Result<WasmRun, FailedRun> {
        self.run_in(component, inv, RunScope::default()).await
    }

    /// [`WasmRuntime::run`] within `scope`: the guest executes only while it holds a turn of
    /// `scope.share` (taken before its first instruction, given back and taken again at each
    /// yield point, waited for within the run's timeout), and the fuel it used is recorded in
    /// `scope.fuel` whatever ends the run, its caller dropping this future included.
    pub async fn run_in(
        &self,
        component: &LoadedComponent,
        inv: Invocation<'_>,
        scope: RunScope<'_>,
    ) -> Result<WasmRun, FailedRun> {
        let started = Instant::now();
        let limits = inv.limits;
        let early = |class, msg: String| FailedRun {
            failure: HookFailure::new(class, msg),
            report: RunReport {
                duration: started.elapsed(),
                ..RunReport::default()
            },
        };
        if !wasmtime::Engine::same(&component.engine, &self.engine) {
            return Err(early(
                FailureClass::InstantiateError,
                "component was loaded by another runtime".into(),
            ));
        }
        if limits.fuel.is_some() && !self.config.fuel {
            return Err(early(
                FailureClass::InstantiateError,
                "a fuel budget was given, but this runtime was built without fuel metering".into(),
            ));
        }
        let shape = component.shape;
        if shape.core_instances > limits.instances {
            return Err(early(
                FailureClass::InstantiateError,
                format!(
                    "component creates {} core instances, above this rule's `instances` limit of {}; raise `instances` to at least {}",
                    shape.core_instances, limits.instances, shape.core_instances
                ),
            ));
        }
        let wait = scope.admission_wait.min(limits.timeout);
        let _admitted = match self
            .admission
            .admit(limits.memory_bytes, shape.memories.max(1), wait)
            .await
        {
            Ok(admitted) => admitted,
            Err(failure) => {
                return Err(FailedRun {
                    failure,
                    ..early(FailureClass::Overloaded, String::new())
                });
            }
        };
        let stdout = CappedPipe::new(limits.output_bytes);
        let stderr = CappedPipe::new(limits.output_bytes);
        let turn = scope.share.map(Turn::new);
        let mut store = match self.new_store(component, &inv, &stdout, &stderr, turn.clone()) {
            Ok(store) => RunStore {
                store: Some(store),
                fuel_start: self.config.fuel.then(|| limits.fuel.unwrap_or(u64::MAX)),
                meter: scope.fuel,
            },
            Err(failure) => {
                return Err(FailedRun {
                    failure,
                    ..early(FailureClass::InstantiateError, String::new())
                });
            }
        };
        // One deadline for instantiation, the call and reading the answer: epochs stop the guest,
        // this timer stops a host call that outlives them, and a late answer (one whose reading
        // ran past it) is a timeout too.
        let deadline = tokio::time::Instant::now() + limits.timeout.saturating_add(BACKSTOP_GRACE);
        let budget = Budget {
            timeout: limits.timeout,
            fuel: limits.fuel,
            response_bytes: limits.response_bytes,
        };
        // The guest's run (instantiate and call: wasmtime's futures, kilobytes) is made once,
        // pinned where it is, and only a pointer to it goes into the gate and the timer: moving
        // it into each of them copied it whole every time (a `memmove` per event in the profile).
        let executed = {
            let mut run = std::pin::pin!(execute(component, store.get(), &inv, limits));
            tokio::time::timeout_at(deadline, async {
                match &turn {
                    Some(turn) => turn.gate(run.as_mut()).await,
                    None => run.as_mut().await,
                }
            })
            .await
        };
        let outcome = match executed {
            Ok(Ok(_)) if tokio::time::Instant::now() > deadline => {
                Err(classify::timeout(limits.timeout))
            }
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err((phase, err))) => Err(classify::classify(
                &err,
                phase,
                store.data(),
                &stderr,
                &budget,
            )),
            Err(_elapsed) => Err(classify::timeout(limits.timeout)),
        };
        // The turn goes back with the run, not when the caller gets round to dropping it.
        drop(turn);
        // Read once, at the end: a run without a budget started with all the fuel there is.
        // Dropping the store frees the pool slot here, before `_permit` lets the next run in.
        // Handing the store to a background thread to drop was measured and was slower (p50
        // 13–18 µs inline vs 21–28 µs; see docs/performance.md): keep it inline.
        let (state, fuel_consumed) = store.finish();
        let host = state.host;
        let report = RunReport {
            logs: host.logs,
            logs_dropped: host.logs_dropped,
            stdout: stdout.take(),
            stderr: stderr.take(),
            fuel_consumed,
            bytes_written: state.quota.bytes_written(),
            files_created: state.quota.files_created(),
            duration: started.elapsed(),
        };
        let output = match outcome {
            Ok(Answer::Typed(Ok(response))) => WasmOutput::Typed(response),
            Ok(Answer::Exit(code)) => WasmOutput::Command(RawOutput {
                exit_code: Some(code),
                stdout: report.stdout.text.clone(),
                stderr: report.stderr.text.clone(),
                stdout_truncated: report.stdout.truncated,
                stderr_truncated: report.stderr.truncated,
                timed_out: false,
            }),
            Ok(Answer::Typed(Err(failure))) | Err(failure) => {
                return Err(FailedRun { failure, report });
            }
        };
        Ok(WasmRun { output, report })
    }

    /// A store for one run: closed WASI context, limiter, deadline and fuel set.
    fn new_store(
        &self,
        component: &LoadedComponent,
        inv: &Invocation<'_>,
        stdout: &CappedPipe,
        stderr: &CappedPipe,
        turn: Option<Turn>,
    ) -> Result<Store<StoreState>, HookFailure> {
        let limits = inv.limits;
        // WasiCtxBuilder starts closed: no preopens, env, args, network; stdin empty. A typed
        // hook without mounts gets it at its first WASI call (see `state`).
        let wasi = match (&component.pre, inv.mounts) {
            (Prepared::Typed(_), []) => Wasi::later(stdout, stderr, inv.env),
            _ => {
                let mut wasi = Wasi::closed(stdout, stderr, inv.env);
                if let Prepared::Command(_) = component.pre {
                    wasi.stdin(MemoryInputPipe::new(Bytes::copy_from_slice(
                        inv.payload_json.as_bytes(),
                    )));
                }
                for m in inv.mounts {
                    let perms = match m.access {
                        Access::Ro => FsPerms::ReadOnly,
                        Access::Rw => FsPerms::ReadWrite,
                    };
                    wasi.preopened_dir(m.host.preopen_path(), &m.guest, perms)
                        .map_err(|e| {
                            HookFailure::new(
                                FailureClass::InstantiateError,
                                format!(
                                    "cannot mount `{}` at `{}`: {e:#}",
                                    m.host.path().display(),
                                    m.guest
                                ),
                            )
                        })?;
                }
                Wasi::ready(wasi.build(), stdout, stderr)
            }
        };
        let mut table = ResourceTable::new();
        table.set_max_capacity(usize::try_from(limits.resource_handles).unwrap_or(usize::MAX));
        let state = StoreState {
            wasi,
            table,
            limiter: Limiter::new(limits),
            host: HostState::new(inv.label.clone(), inv.config_json.clone(), limits),
            quota: WriteQuota::new(limits.write_bytes, limits.write_files),
            links: MountLinks::of(inv.mounts).map(Arc::new),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        // The most the host copies out of the guest in one call (wasmtime's default: 128 MiB):
        // the response cap, so an oversized answer or log line is refused while it is lifted.
        store.set_hostcall_fuel(hostcall_fuel(limits.response_bytes));
        self.set_deadline(&mut store, limits.timeout, turn);
        if self.config.fuel {
            // A store starts with no fuel: a run without a budget on a metering engine gets all
            // of it, and only the wall clock bounds it. Compiled code keeps its count in a
            // register and writes it back only at calls, returns and when its slice is used up
            // (not at an epoch interrupt, a trap or a cancel): handing fuel out in slices bounds
            // what a run stopped mid-loop leaves uncounted to one slice.
            let cannot = |e: wasmtime::Error| {
                HookFailure::new(
                    FailureClass::InstantiateError,
                    format!("cannot set fuel: {e:#}"),
                )
            };
            store
                .set_fuel(limits.fuel.unwrap_or(u64::MAX))
                .map_err(cannot)?;
            store
                .fuel_async_yield_interval(Some(self.config.fuel_slice))
                .map_err(cannot)?;
        }
        Ok(store)
    }
}

impl WasmRuntime {
    /// The wall-clock budget as epoch deadlines. The guest runs in slices of `yield_interval`
    /// and yields to the executor between them, so a CPU-bound guest does not hold a tokio worker
    /// for its whole timeout; at the first slice boundary past the budget it is interrupted. With
    /// a `turn`, each yield also passes the turn of its owner's CPU share to the owner's next
    /// waiting guest.
    fn set_deadline(&self, store: &mut Store<StoreState>, timeout: Duration, turn: Option<Turn>) {
        let tick = self.config.epoch_tick;
        let slice = self
            .config
            .yield_interval
            .as_nanos()
            .div_ceil(tick.as_nanos().max(1));
        let slice = u64::try_from(slice).unwrap_or(u64::MAX).max(1);
        store.set_epoch_deadline(epoch_ticks(timeout, tick).min(slice));
        // `None` (a budget past the end of time) is only ever stopped by the timer backstop.
        let deadline = Instant::now().checked_add(timeout);
        store.epoch_deadline_callback(move |_| {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let ticks = match left {
                Some(left) if left.is_zero() => return Ok(UpdateDeadline::Interrupt),
                Some(left) => epoch_ticks(left, tick).min(slice),
                None => slice,
            };
            Ok(match &turn {
                Some(turn) => UpdateDeadline::YieldCustom(ticks, Box::pin(turn.pass())),
                None => UpdateDeadline::Yield(ticks),
            })
        });
    }
}

/// Instantiates and calls the component's entry point.
async fn execute(
    component: &LoadedComponent,
    store: &mut Store<StoreState>,
    inv: &Invocation<'_>,
    limits: &WasmLimits,
) -> Result<Answer, (Phase, wasmtime::Error)> {
    match &component.pre {
        Prepared::Typed(pre) => bindings::call_handle(pre, store, inv, limits.response_bytes)
            .await
            .map(Answer::Typed),
        Prepared::Command(pre) => {
            let command = pre
                .instantiate_async(&mut *store)
                .await
                .map_err(|e| (Phase::Instantiate, e))?;
            match command.wasi_cli_run().call_run(&mut *store).await {
                Ok(Ok(())) => Ok(Answer::Exit(0)),
                Ok(Err(())) => Ok(Answer::Exit(1)),
                Err(e) => match e.downcast_ref::<I32Exit>() {
                    Some(exit) => Ok(Answer::Exit(exit.0)),
                    None => Err((Phase::Call, e)),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostcall_fuel_is_the_response_cap_with_a_floor() {
        assert_eq!(hostcall_fuel(16 << 20), 16 << 20);
        assert_eq!(hostcall_fuel(10), 1 << 20);
    }

    #[test]
    fn ticks_round_up_and_add_one() {
        let ms = Duration::from_millis(1);
        assert_eq!(epoch_ticks(Duration::from_millis(10), ms), 11);
        assert_eq!(epoch_ticks(Duration::from_micros(1500), ms), 3);
        assert_eq!(
            epoch_ticks(Duration::from_secs(u64::MAX), Duration::from_nanos(1)),
            u64::MAX
        );
    }
}
