//! Building a `HookHost` for one CLI invocation: the project folder (`CLAUDE_PROJECT_DIR`,
//! `.hookbox/`), replay on or off, and loading the plugins named on the command line.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_host::{HookHost, HostPolicy};
use hookbox_wasm::RuntimeConfig;

/// A host for one command.
pub(crate) struct HostSetup {
    pub(crate) host: HookHost,
}

impl HostSetup {
    /// A host rooted at `project`; `no_replay` turns replay files off.
    pub(crate) fn new(project: &Path, no_replay: bool) -> anyhow::Result<HostSetup> {
        let mut policy = HostPolicy::for_project(project);
        policy.wasm_runtime = wasm_runtime_config();
        if no_replay {
            policy.replay_dir = None;
        }
        let host = HookHost::new(policy).context("cannot set up the hook host")?;
        Ok(HostSetup { host })
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

/// The async runtime CLI commands run on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The wasm engine configuration of every CLI command: the library defaults plus the on-disk
/// compile cache (`$HOOKBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/hookbox/wasm`, else
/// `~/.cache/hookbox/wasm`). `compile` and `dispatch` must agree on it: cache entries are keyed
/// by the engine's configuration.
pub(crate) fn wasm_runtime_config() -> RuntimeConfig {
    RuntimeConfig::default().with_default_cache_dir()
}
