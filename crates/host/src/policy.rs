//! The host policy: every limit and switch of a `HookHost`, each a named field with its default.
//! The defaults suit one developer running their own plugins; a SaaS embedder tightens them.

use std::path::PathBuf;

use hookbox_command::{CommandLimits, EnvPolicy};
use hookbox_core::aggregate::DEFAULT_STOP_REENTRY_CAP;
use hookbox_core::matcher::ToolAliases;
use hookbox_core::rule::FailMode;
use hookbox_wasm::{RuntimeConfig, WasmPolicy};

/// How a host runs hooks.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// The project root: `CLAUDE_PROJECT_DIR` for hooks, where `.hookbox/` lives.
    /// Default: the process's working directory.
    pub project_dir: PathBuf,
    /// Hooks running at once across all dispatches; more wait their turn.
    /// Default: 64.
    pub max_concurrent_hooks: usize,
    /// Times a turn's Stop hooks may make it continue (the main source's cap).
    /// Default: 3 ([`DEFAULT_STOP_REENTRY_CAP`]).
    pub stop_reentry_cap: u32,
    /// What a failed hook means when its rule does not say (`on_failure`).
    /// Default: [`FailMode::Allow`] (fail open, as Claude Code).
    pub fail_mode: FailMode,
    /// Whether native command hooks run at all. A host serving untrusted tenants turns this
    /// off: native hooks are not sandboxed. When off, a command rule fails with `spawn_error`
    /// (and its rule's fail mode decides). Default: true.
    pub allow_native_commands: bool,
    /// Output caps and reaping for native commands. Default: 1 MiB stdout, 1 MiB stderr.
    pub command_limits: CommandLimits,
    /// Inherited environment variables native hooks do not see. Default: provider API keys.
    pub env_policy: EnvPolicy,
    /// Root of the per-plugin, per-session data folders (`PLUGIN_DATA`).
    /// Default: `<project_dir>/.hookbox/data`.
    pub data_root: Option<PathBuf>,
    /// Where replay JSONL files go; `None` turns replay off.
    /// Default: `<project_dir>/.hookbox/replay`.
    pub replay_dir: Option<PathBuf>,
    /// Run identical command handlers from different files of one plugin once per dispatch.
    /// Default: true (Claude Code dedups identical handlers).
    pub dedup_commands: bool,
    /// Tool-name aliases used by matchers. Default: Claude Code ↔ Agentao ↔ Gemini CLI.
    pub aliases: ToolAliases,
    /// What wasm rules may ask for (limits' defaults and maxima, fuel, `rw` mounts, env names).
    /// Default: [`WasmPolicy::default`] — 5 s, 64 MiB, read-only mounts, no fuel.
    pub wasm: WasmPolicy,
    /// The wasm engine: pooling, epoch tick, fuel metering, compile cache folder.
    /// Default: [`RuntimeConfig::default`] (compiled components kept in memory only); the CLI
    /// adds the on-disk cache (`$HOOKBOX_CACHE_DIR`, else `~/.cache/hookbox/wasm`).
    pub wasm_runtime: RuntimeConfig,
    /// Folders besides the project and the rule's own plugin folder that wasm rules may mount.
    /// Default: none — a rule cannot mount `/`, `$HOME` or another plugin's folder.
    pub extra_mount_roots: Vec<PathBuf>,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            project_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            max_concurrent_hooks: 64,
            stop_reentry_cap: DEFAULT_STOP_REENTRY_CAP,
            fail_mode: FailMode::Allow,
            allow_native_commands: true,
            command_limits: CommandLimits::default(),
            env_policy: EnvPolicy::default(),
            data_root: None,
            replay_dir: Some(PathBuf::from(".hookbox/replay")),
            dedup_commands: true,
            aliases: ToolAliases::default(),
            wasm: WasmPolicy::default(),
            wasm_runtime: RuntimeConfig::default(),
            extra_mount_roots: Vec::new(),
        }
    }
}

impl HostPolicy {
    /// A policy rooted at `project_dir`, everything else default.
    pub fn for_project(project_dir: impl Into<PathBuf>) -> HostPolicy {
        HostPolicy {
            project_dir: project_dir.into(),
            ..HostPolicy::default()
        }
    }

    /// The data root, resolved against the project.
    pub fn data_root(&self) -> PathBuf {
        self.data_root
            .clone()
            .unwrap_or_else(|| self.project_dir.join(".hookbox").join("data"))
    }

    /// The replay folder, resolved against the project (relative paths are project-relative).
    pub fn replay_dir(&self) -> Option<PathBuf> {
        self.replay_dir.as_ref().map(|d| {
            if d.is_absolute() {
                d.clone()
            } else {
                self.project_dir.join(d)
            }
        })
    }
}
