//! Building the runtime and the `HookHost` of one CLI invocation: the project folder
//! (`CLAUDE_PROJECT_DIR`), its `.hookbox/settings.json` read here and applied to the host's
//! policy (a host reads nothing from the project by itself; the CLI trusts the project it runs
//! in as its own), hookbox's state folder for it (plugin data and replay, kept out of the
//! project under `~/.local/state/hookbox/projects/…`), the wasm engine every command shares
//! (disk cache, fuel metering), the trust mode and approval store (`--trust`,
//! `~/.config/hookbox/settings.json`, `<state>/trust`), and the async runtime.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use hookbox_command::ContainmentPolicy;
use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_host::trust::{UserSettings, default_config_dir, default_store_dir};
use hookbox_host::{
    HookHost, HookRuntime, HostPolicy, RuntimeSettings, Settings, default_state_root,
    project_state_dir,
};
use hookbox_host::{TrustMode, TrustPolicy};
use hookbox_wasm::RuntimeConfig;

/// How long the CLI waits, when it exits, for blocking threads still stuck in the kernel (a
/// guest's open of a FIFO, say): the answer is already out; they must not keep the process.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(200);

/// A runtime and a host for one command.
pub(crate) struct HostSetup {
    pub(crate) host: HookHost,
    /// What was set aside on the way (project settings that do not read, under
    /// [`SetupOptions::lenient_settings`]): for the command to say.
    pub(crate) warnings: Vec<String>,
}

/// What a command may change in the project's host.
#[derive(Debug, Clone, Default)]
pub(crate) struct SetupOptions {
    /// Write no replay record.
    pub(crate) no_replay: bool,
    /// The Stop re-entry cap, over the project settings and the default.
    pub(crate) stop_reentry_cap: Option<u32>,
    /// `--trust`: the mode over the user's settings and the CLI's default (`warn`); the
    /// project's settings may still make it stricter.
    pub(crate) trust: Option<TrustMode>,
    /// Where approvals are read instead of `<state root>/trust` (the demo's own store).
    pub(crate) trust_store: Option<PathBuf>,
    /// Project settings that do not read are set aside with a warning instead of failing the
    /// command (`hookbox hook`: a checkout's broken `.hookbox/settings.json` must not switch the
    /// user's guards off; the file can only make things stricter, and without it the defaults
    /// hold).
    pub(crate) lenient_settings: bool,
    /// Hash the `PATH` programs of unapproved rules too (`hookbox trust`, which records them).
    pub(crate) pin_unapproved_programs: bool,
}

impl HostSetup {
    /// A host rooted at `project`, its state under the user's state folder.
    pub(crate) fn new(project: &Path, opts: &SetupOptions) -> anyhow::Result<HostSetup> {
        let state = default_state_root()
            .map(|root| project_state_dir(&root, project))
            .transpose()?;
        HostSetup::build(project, state, opts)
    }

    /// A host rooted at `project` keeping its state in `state` (the demo's scratch folder).
    #[cfg(feature = "tools")]
    pub(crate) fn with_state(
        project: &Path,
        state: &Path,
        opts: &SetupOptions,
    ) -> anyhow::Result<HostSetup> {
        HostSetup::build(project, Some(state.to_owned()), opts)
    }

    /// A host rooted at `project` whose state is a temporary folder removed with it, no
    /// replay and no trust: for commands that only load (`validate`).
    pub(crate) fn ephemeral(project: &Path) -> anyhow::Result<HostSetup> {
        let opts = SetupOptions {
            no_replay: true,
            trust: Some(TrustMode::Off),
            ..SetupOptions::default()
        };
        HostSetup::build(project, None, &opts)
    }

    /// Like [`HostSetup::ephemeral`], with trust on (`warn`) and the user's approval store: for
    /// `hookbox trust`, which loads to compute every rule's record.
    pub(crate) fn for_trust(project: &Path) -> anyhow::Result<HostSetup> {
        let opts = SetupOptions {
            no_replay: true,
            trust: Some(TrustMode::Warn),
            pin_unapproved_programs: true,
            ..SetupOptions::default()
        };
        HostSetup::build(project, None, &opts)
    }

    /// A host for one `hookbox test` case on `runtime` (shared by the run's cases): rooted at the
    /// case's scratch `project`, its state (plugin data) in `state`, no replay.
    pub(crate) fn for_case(
        runtime: &HookRuntime,
        project: &Path,
        state: &Path,
        trust: Option<TrustMode>,
    ) -> anyhow::Result<HostSetup> {
        let opts = SetupOptions {
            no_replay: true,
            trust,
            ..SetupOptions::default()
        };
        HostSetup::build_on(runtime, project, Some(state.to_owned()), &opts)
    }

    fn build(
        project: &Path,
        state: Option<PathBuf>,
        opts: &SetupOptions,
    ) -> anyhow::Result<HostSetup> {
        let runtime = HookRuntime::new(runtime_settings()).context("cannot start hookbox")?;
        HostSetup::build_on(&runtime, project, state, opts)
    }

    fn build_on(
        runtime: &HookRuntime,
        project: &Path,
        state: Option<PathBuf>,
        opts: &SetupOptions,
    ) -> anyhow::Result<HostSetup> {
        let mut policy = HostPolicy::for_project(project);
        // The CLI's engine meters fuel, so rules may set a `fuel` budget.
        policy.wasm.allow_fuel = true;
        policy.state_dir = state;
        policy.replay = !opts.no_replay;
        policy.trust = TrustPolicy::new(
            cli_trust_mode(opts.trust)?,
            opts.trust_store.clone().or_else(default_trust_store),
        );
        policy.trust.pin_unapproved_programs = opts.pin_unapproved_programs;
        // The project's settings are policy input: read here, applied to the policy; a flag
        // wins over them.
        let mut warnings = Vec::new();
        // The user's trust limits. With `--trust`, settings that do not read leave the
        // defaults (the flag needs no setting; without it `cli_trust_mode` failed already).
        match user_settings() {
            Ok(u) => u.trust_limits.apply(&mut policy.trust),
            Err(e) => warnings.push(format!(
                "your hookbox settings are ignored, the trust limits' defaults hold: {e:#}"
            )),
        }
        match Settings::load(project) {
            Ok(s) => s.apply(&mut policy),
            Err(e) if opts.lenient_settings => warnings.push(format!(
                "the project settings are ignored, the defaults hold: {e}"
            )),
            Err(e) => return Err(e).context("cannot read the project settings"),
        }
        if let Some(cap) = opts.stop_reentry_cap {
            policy.stop_reentry_cap = cap;
        }
        // What hookbox reads settings (and approvals) from is never writable by a guest.
        policy.protected_paths.push(project.join(".hookbox"));
        let host =
            HookHost::with_runtime(runtime, policy).context("cannot set up the hook host")?;
        Ok(HostSetup { host, warnings })
    }

    /// Loads `paths` into the host; a path that does not exist is a usage error.
    pub(crate) fn load(&self, paths: &[PathBuf], opts: &LoadOptions) -> anyhow::Result<LoadReport> {
        for p in paths {
            if !p.try_exists().unwrap_or(true) {
                bail!("cannot load {}: no such file or directory", p.display());
            }
        }
        Ok(self.host.load(paths, opts))
    }
}

/// The trust mode of a command: `--trust`, else `trust` in the user's
/// `~/.config/hookbox/settings.json` (`$XDG_CONFIG_HOME/hookbox/`), else `warn`.
pub(crate) fn cli_trust_mode(flag: Option<TrustMode>) -> anyhow::Result<TrustMode> {
    if let Some(m) = flag {
        return Ok(m);
    }
    Ok(user_settings()?.trust.unwrap_or(TrustMode::Warn))
}

/// The user's `~/.config/hookbox/settings.json` (`$XDG_CONFIG_HOME/hookbox/`): defaults when
/// there is none.
pub(crate) fn user_settings() -> anyhow::Result<UserSettings> {
    match default_config_dir() {
        Some(dir) => UserSettings::load(&dir).context("cannot read your hookbox settings"),
        None => Ok(UserSettings::default()),
    }
}

/// The user's approval store: `<state root>/trust` (`$HOOKBOX_STATE_DIR/trust`, else
/// `~/.local/state/hookbox/trust`).
pub(crate) fn default_trust_store() -> Option<PathBuf> {
    default_state_root().map(|r| default_store_dir(&r))
}

/// The runtime settings of every CLI command.
pub(crate) fn runtime_settings() -> RuntimeSettings {
    RuntimeSettings {
        wasm: wasm_runtime_config(),
        // The CLI owns its process and starts children only through hookbox: it may be a child
        // subreaper, so a native hook's `setsid` daemon is killed with it even without a cgroup.
        containment: ContainmentPolicy {
            subreaper: true,
            ..ContainmentPolicy::default()
        },
        ..RuntimeSettings::default()
    }
}

/// The wasm engine configuration of every CLI command: the library defaults plus the on-disk
/// compile cache (`$HOOKBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/hookbox/wasm`, else
/// `~/.cache/hookbox/wasm`) and fuel metering (so rules may set a deterministic `fuel` budget
/// and reports say what each hook used). `compile` and `dispatch` must agree on it: cache entries
/// are keyed by the engine's configuration.
pub(crate) fn wasm_runtime_config() -> RuntimeConfig {
    RuntimeConfig::default()
        .with_default_cache_dir()
        .with_fuel(true)
}

/// A multi-threaded async runtime (for `bench`, which runs many measurements on one).
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `fut` to completion on a fresh multi-threaded runtime, then shuts the runtime down
/// without waiting more than [`SHUTDOWN_GRACE`] for blocking threads.
pub(crate) fn block_on<F: Future>(fut: F) -> anyhow::Result<F::Output> {
    let rt = runtime()?;
    let out = rt.block_on(fut);
    rt.shutdown_timeout(SHUTDOWN_GRACE);
    Ok(out)
}

/// Runs `fut` to completion as a task of a fresh multi-threaded runtime of exactly `workers`
/// worker threads (`hookbox serve`'s `worker_threads`), then shuts the runtime down as
/// [`block_on`] does. The future is spawned rather than polled on the calling thread, so
/// everything it does (the server's accept loop) runs on the workers: no third thread takes
/// turns with them and wakes one for every connection it accepts.
pub(crate) fn block_on_workers<F>(workers: usize, fut: F) -> anyhow::Result<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let out = rt.block_on(rt.spawn(fut));
    rt.shutdown_timeout(SHUTDOWN_GRACE);
    match out {
        Ok(out) => Ok(out),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(anyhow::anyhow!("the server's task was cancelled: {e}")),
    }
}
