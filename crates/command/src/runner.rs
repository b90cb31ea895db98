//! The runner: one command hook from spawn to reaped, under its timeout and output caps.

use std::ffi::OsString;
use std::fmt;
use std::io::ErrorKind;
use std::process::ExitStatus;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hookbox_core::event::wire::cut_chars;
use hookbox_core::output::HookFailure;
use hookbox_core::output::RawOutput;
use hookbox_core::rule::CommandLine;
use tokio::io::AsyncWriteExt;
use tracing::Instrument;

use crate::capture::{Capture, drain};
use crate::child::HookStdin;
use crate::containment::{Active, Containment, ContainmentPolicy};
use crate::env_policy::EnvPolicy;
use crate::environment::inherited;
use crate::error::SpawnError;
use crate::exit::{code_and_signal, shell_exit_note, signal_note};
use crate::group::ProcessGroup;
use crate::limits::CommandLimits;
use crate::request::CommandRequest;
use crate::spawn::{Spawned, spawn};

/// Runs command hooks. Cheap to clone, `Send + Sync`: share one across concurrent runs.
#[derive(Clone)]
pub struct CommandRunner {
    limits: CommandLimits,
    env_policy: EnvPolicy,
    /// The host environment hooks start from, before the deny-list.
    host_env: Arc<[(OsString, OsString)]>,
    /// `host_env` minus the deny-listed and managed names, computed once, not per run.
    inherited: Arc<[(OsString, OsString)]>,
    containment_policy: ContainmentPolicy,
    /// What `containment_policy` gave, set up on the first run (or the first question about
    /// it), so a runner that never runs a hook creates no cgroup. Shared by clones.
    containment: Arc<OnceLock<Active>>,
}

/// One finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRun {
    /// Exit code and captured, capped output, for `hookbox-core` to interpret.
    ///
    /// `timed_out` with `exit_code: None` is a hook killed at its deadline. `timed_out` with an
    /// exit code is a hook that exited by itself but left processes holding its stdout or
    /// stderr open until the deadline (they were then killed; a note says so).
    pub output: RawOutput,
    /// From just before the spawn to the hook reaped.
    pub wall_time: Duration,
    /// The leader's process id, which is also its process group id.
    pub pid: Option<u32>,
    /// The signal that ended the leader (SIGKILL after a timeout), if any.
    pub signal: Option<i32>,
    /// Human explanations of anything unusual, for reports and replay: timeout, signal,
    /// truncation, exit 126/127, output held open past the exit, processes that left the
    /// process group and were killed, a hook that ran without its cgroup.
    pub notes: Vec<String>,
}

impl CommandRunner {
    /// A runner with default limits, environment policy and containment, starting hooks from
    /// this process's environment as it is now. The plugin data folder of a hook comes with its
    /// request ([`crate::HookContext::with_plugin_data`]; see [`crate::create_plugin_data_dir`]).
    #[allow(
        clippy::new_without_default,
        reason = "building a runner reads the process environment: not a plain default value"
    )]
    pub fn new() -> CommandRunner {
        let env_policy = EnvPolicy::default();
        let host_env: Arc<[_]> = std::env::vars_os().collect();
        let inherited = inherited(host_env.iter().cloned(), &env_policy).into();
        CommandRunner {
            limits: CommandLimits::default(),
            env_policy,
            host_env,
            inherited,
            containment_policy: ContainmentPolicy::default(),
            containment: Arc::new(OnceLock::new()),
        }
    }

    /// This runner catching processes that leave a hook's process group as `policy` says
    /// (default: a cgroup v2 per hook where possible, no subreaper).
    pub fn with_containment(mut self, policy: ContainmentPolicy) -> Self {
        self.containment_policy = policy;
        self.containment = Arc::new(OnceLock::new());
        self
    }

    /// The containment policy.
    pub fn containment_policy(&self) -> &ContainmentPolicy {
        &self.containment_policy
    }

    /// What this runner uses to catch processes that leave a hook's process group, and when
    /// that is only the process group, why. Sets it up if no hook ran yet (creating the
    /// runner's cgroup folder, or making this process a subreaper when the policy allows).
    /// A host shows it at start and in `hookbox doctor`-style reports.
    pub fn containment(&self) -> Containment {
        self.active().describe()
    }

    fn active(&self) -> &Active {
        self.containment
            .get_or_init(|| Active::set_up(&self.containment_policy))
    }

    /// This runner with `limits`.
    pub fn with_limits(mut self, limits: CommandLimits) -> Self {
        self.limits = limits;
        self
    }

    /// This runner with `policy` deciding which inherited variables hooks do not see.
    pub fn with_env_policy(mut self, policy: EnvPolicy) -> Self {
        self.inherited = inherited(self.host_env.iter().cloned(), &policy).into();
        self.env_policy = policy;
        self
    }

    /// This runner starting hooks from `vars` instead of this process's environment (the
    /// deny-list still applies). For a host that serves tenants with their own environment.
    pub fn with_host_env<K: Into<OsString>, V: Into<OsString>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.host_env = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.inherited = inherited(self.host_env.iter().cloned(), &self.env_policy).into();
        self
    }

    /// The limits.
    pub fn limits(&self) -> &CommandLimits {
        &self.limits
    }

    /// The environment policy.
    pub fn env_policy(&self) -> &EnvPolicy {
        &self.env_policy
    }

    /// Runs one command hook to completion, its timeout, or cancellation.
    ///
    /// - The hook leads its own process group. When the run ends — it exited, its timeout
    ///   expired, or this future was dropped — the whole group gets SIGKILL and the leader is
    ///   reaped, so nothing of the hook is left running. Processes that left the group
    ///   (`setsid`) are killed too when the runner has a cgroup per hook or is a subreaper
    ///   ([`CommandRunner::containment`]); a note counts them.
    /// - A shell-form hook runs under its rule's `shell`: `/bin/sh -c`, `bash -c`, or
    ///   `pwsh -NoProfile -Command` (`powershell` when only that is installed).
    /// - stdin gets `req.stdin` and is closed; a hook that does not read it is fine.
    /// - stdout and stderr are read concurrently until both close, capped per
    ///   [`CommandLimits`]. A hook that exits while a background child still holds them is
    ///   waited for until the timeout, no longer.
    /// - A non-zero exit, a shell's 127 for a missing command, a signal: all are an `Ok` run.
    ///
    /// # Errors
    /// A [`HookFailure`] of class `SpawnError` when the hook could not be started: an `args`
    /// program that is missing or not executable, a shell that is not installed, a missing
    /// working directory, no command.
    ///
    /// The process must not die of SIGPIPE when a hook closes stdin early: Rust binaries ignore
    /// it by default; a host embedding this crate otherwise must ignore it too.
    pub async fn run(&self, req: &CommandRequest) -> Result<CommandRun, HookFailure> {
        let span = tracing::info_span!(
            "command.run",
            label = %cut_chars(&req.spec.label(), 200),
            dialect = %req.context.dialect,
            pid = tracing::field::Empty,
        );
        self.run_inner(req)
            .instrument(span)
            .await
            .map_err(HookFailure::from)
    }

    async fn run_inner(&self, req: &CommandRequest) -> Result<CommandRun, SpawnError> {
        let started = Instant::now();
        let mut notes = Vec::new();
        // Declared before the group: on cancellation the group is killed first, then the
        // scope (its cgroup), so both kills happen whatever was dropped mid-way.
        let mut scope = self.active().scope(&mut notes);
        let Spawned {
            mut child,
            notes: spawn_notes,
        } = spawn(req, &self.inherited, &scope)?;
        notes.extend(spawn_notes);
        let (stdin, mut stdout, mut stderr) = child.take_pipes();
        let mut group = ProcessGroup::new(child);
        tracing::Span::current().record("pid", group.pid());

        let mut out = Capture::new(self.limits.max_stdout_bytes);
        let mut err = Capture::new(self.limits.max_stderr_bytes);
        let mut status: Option<ExitStatus> = None;
        let mut feed_error = None;

        // Phase 1, until the deadline: the hook is done when the leader exited and both pipes
        // reached end of file. Feeding stdin runs alongside but is not waited for: a background
        // process may inherit stdin and never read it.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(req.timeout)
            .unwrap_or_else(|| far_future(now));
        let finished = tokio::time::timeout_at(deadline, async {
            let done = async {
                tokio::join!(
                    drain(&mut stdout, &mut out),
                    drain(&mut stderr, &mut err),
                    async {
                        match group.wait().await {
                            Ok(s) => status = Some(s),
                            Err(e) => notes.push(format!("cannot wait for the hook: {e}")),
                        }
                    }
                )
            };
            let feed = async {
                feed_error = feed_stdin(stdin, &req.stdin).await;
                std::future::pending::<()>().await;
            };
            tokio::select! {
                _ = done => {}
                () = feed => {}
            }
        })
        .await
        .is_ok();
        let exited_by_itself = status;
        notes.extend(feed_error);

        // Phase 2: kill whatever is left of the group (background children, or everything at
        // the deadline) and what left it (the scope: its cgroup or the subreaper's sweep), then
        // collect the last output and reap the leader, bounded. Together: a process that left
        // the group may hold the pipes open until the scope kills it.
        group.kill();
        let pgid = group.pid().and_then(|p| i32::try_from(p).ok());
        let reap = self.limits.reap_timeout;
        let (settled, scope_notes) = tokio::join!(
            tokio::time::timeout(reap, async {
                tokio::join!(
                    drain(&mut stdout, &mut out),
                    drain(&mut stderr, &mut err),
                    async {
                        if status.is_none() {
                            status = group.wait().await.ok();
                        }
                    }
                )
            }),
            scope.finish(pgid, reap),
        );
        let settled = settled.is_ok();

        let timed_out = !finished;
        let (mut exit_code, signal) = status.map(code_and_signal).unwrap_or_default();
        if timed_out && exited_by_itself.is_none() {
            // Killed by us: report no code even if it raced us and exited at the last moment.
            exit_code = None;
            notes.push(format!(
                "timed out after {} s; its process group was killed",
                req.timeout.as_secs_f64()
            ));
        } else {
            if timed_out {
                notes.push(format!(
                    "the hook exited, but processes it started kept stdout or stderr open until \
                     the {} s timeout; they were killed",
                    req.timeout.as_secs_f64()
                ));
            }
            if let Some(signal) = signal {
                notes.push(signal_note(signal));
            }
        }
        if let (Some(code), CommandLine::Shell { .. }) = (exit_code, &req.spec.command) {
            notes.extend(shell_exit_note(code).map(str::to_owned));
        }
        notes.extend(scope_notes);
        if !settled {
            notes.push(format!(
                "after the kill, the hook's output stayed open or it was not reaped within {} s; \
                 a process may have left its process group",
                self.limits.reap_timeout.as_secs_f64()
            ));
        }
        let (stdout, stdout_truncated) = out.finish();
        let (stderr, stderr_truncated) = err.finish();
        if stdout_truncated {
            notes.push(format!(
                "stdout cut at {} bytes",
                self.limits.max_stdout_bytes
            ));
        }
        if stderr_truncated {
            notes.push(format!(
                "stderr cut at {} bytes",
                self.limits.max_stderr_bytes
            ));
        }

        let run = CommandRun {
            output: RawOutput {
                exit_code,
                stdout,
                stderr,
                stdout_truncated,
                stderr_truncated,
                timed_out,
            },
            wall_time: started.elapsed(),
            pid: group.pid(),
            signal,
            notes,
        };
        tracing::debug!(
            exit_code = run.output.exit_code,
            timed_out,
            wall_ms = run.wall_time.as_millis(),
            "command hook finished"
        );
        Ok(run)
    }
}

impl fmt::Debug for CommandRunner {
    // The environment holds the host's secrets: show its size, never its values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandRunner")
            .field("limits", &self.limits)
            .field("env_policy", &self.env_policy)
            .field("containment", &self.containment_policy)
            .field("inherited_vars", &self.inherited.len())
            .finish_non_exhaustive()
    }
}

/// Writes the payload and closes stdin, so a hook reading to end of file (`cat`) finishes.
/// Returns a note when the write failed for another reason than the hook not reading it all.
async fn feed_stdin(pipe: Option<HookStdin>, bytes: &[u8]) -> Option<String> {
    let mut pipe = pipe?;
    match pipe.write_all(bytes).await {
        Ok(()) => None,
        // The hook exited or closed stdin without reading it all: allowed.
        Err(e) if e.kind() == ErrorKind::BrokenPipe => None,
        Err(e) => Some(format!(
            "writing the payload to the hook's stdin failed: {e}"
        )),
    }
}

/// A deadline for a timeout too large to add to `now`: thirty years is never reached.
fn far_future(now: tokio::time::Instant) -> tokio::time::Instant {
    now + Duration::from_secs(30 * 365 * 24 * 3600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_is_shareable_and_its_future_sendable() {
        fn assert_send_sync<T: Send + Sync>() {}
        fn assert_send<T: Send>(_: &T) {}
        assert_send_sync::<CommandRunner>();
        let runner = CommandRunner::new();
        let req = CommandRequest::new(
            hookbox_core::rule::CommandSpec::shell("true", 1.0),
            crate::HookContext::new(hookbox_core::Dialect::Claude),
        );
        assert_send(&runner.run(&req));
    }

    #[test]
    fn debug_hides_the_environment() {
        let runner = CommandRunner::new().with_host_env([("SECRET_THING", "hunter2")]);
        assert!(!format!("{runner:?}").contains("hunter2"));
    }
}
