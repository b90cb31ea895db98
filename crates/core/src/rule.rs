//! Validated rules: what the rest of hookbox sees after `config` parsed and checked a hook file.
//! Raw JSON shapes never leave `config`; these types are the contract.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dialect::Dialect;
use crate::event::{EventName, HandlerType};
use crate::matcher::Matcher;

/// What a failed hook (timeout, crash, sandbox limit) means for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailMode {
    /// Fail open: the failure is a warning and the action proceeds (Claude Code's behaviour).
    #[default]
    Allow,
    /// Fail closed: the failure blocks, for security hooks whose silence must not mean "yes".
    Block,
}

/// Where a rule came from, for every message about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSource {
    /// The plugin's name (manifest `name`, else its folder name; the file name for a bare file).
    pub plugin: String,
    /// The hook file, as given or relative to the plugin root.
    pub file: PathBuf,
    /// JSON path of the rule inside the file, e.g. `hooks.Stop[0].hooks[1]`.
    pub json_path: String,
    /// 1-based line of the rule's handler object, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
}

/// A native command hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// What runs: a text under a shell, or an argv without one.
    pub command: CommandLine,
    /// Timeout in seconds, after dialect default and maximum are applied.
    pub timeout_secs: f64,
    /// Claude Code's `async`: run in the background; decision fields are ignored.
    pub run_async: bool,
    /// Claude Code's `asyncRewake`: run in the background, and an exit 2 wakes the agent with
    /// stderr. Implies `run_async`.
    pub async_rewake: bool,
}

/// What a command hook is: the two forms `hooks.json` can write, and nothing else (there is no
/// command without one of them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum CommandLine {
    /// Shell form (`command` alone): `text` run by `shell` (`/bin/sh -c TEXT` by default).
    /// `${VAR}` placeholders are substituted before running.
    Shell {
        /// The command text.
        text: String,
        /// The shell it runs under (`shell`).
        shell: Shell,
    },
    /// Exec form (`args`): spawned without a shell, placeholders substituted per element.
    /// `argv` is the whole argv, program first (Claude Code's `command` followed by its
    /// `args`); the loader never builds an empty one.
    Exec {
        /// Program, then its arguments.
        argv: Vec<String>,
    },
}

/// The shell a shell-form command runs under (Claude Code's `shell`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Shell {
    /// `/bin/sh -c` (the default, as Claude Code on macOS and Linux).
    #[default]
    Sh,
    /// `bash -c`.
    Bash,
    /// `pwsh -NoProfile -Command` (or `powershell` where only that is installed).
    Powershell,
}

impl Shell {
    /// The name as written in `hooks.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Sh => "sh",
            Shell::Bash => "bash",
            Shell::Powershell => "powershell",
        }
    }
}

/// Claude Code's `http` hook (SPEC §4.2a): the payload JSON POSTed to `url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpSpec {
    /// Where the payload is POSTed.
    pub url: String,
    /// Extra request headers. `$VAR` / `${VAR}` in values expand only for names listed in
    /// `allowed_env_vars`; any other reference expands to the empty string.
    pub headers: BTreeMap<String, String>,
    /// Environment variables header values may reference (`allowedEnvVars`).
    pub allowed_env_vars: Vec<String>,
    /// Timeout in seconds, after the dialect's default and maximum are applied.
    pub timeout_secs: f64,
}

impl RuleSource {
    /// The source of a rule built in code (`HookHost::install`) rather than read from a file:
    /// no JSON path, no position.
    pub fn new(plugin: impl Into<String>, file: impl Into<PathBuf>) -> RuleSource {
        RuleSource {
            plugin: plugin.into(),
            file: file.into(),
            json_path: String::new(),
            line: None,
            column: None,
        }
    }
}

impl CommandSpec {
    /// A shell-form command (`sh -c`), in the foreground, with `timeout_secs`.
    pub fn shell(command: impl Into<String>, timeout_secs: f64) -> CommandSpec {
        CommandSpec::of(
            CommandLine::Shell {
                text: command.into(),
                shell: Shell::Sh,
            },
            timeout_secs,
        )
    }

    /// An exec-form command (`argv`, no shell), in the foreground, with `timeout_secs`.
    pub fn exec(argv: Vec<String>, timeout_secs: f64) -> CommandSpec {
        CommandSpec::of(CommandLine::Exec { argv }, timeout_secs)
    }

    /// `command`, in the foreground, with `timeout_secs`.
    pub fn of(command: CommandLine, timeout_secs: f64) -> CommandSpec {
        CommandSpec {
            command,
            timeout_secs,
            run_async: false,
            async_rewake: false,
        }
    }

    /// A short label for messages and dedup: the command text or the joined args.
    pub fn label(&self) -> String {
        match &self.command {
            CommandLine::Shell { text, .. } => text.clone(),
            CommandLine::Exec { argv } => argv.join(" "),
        }
    }
}

/// Access a mount grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read only (the default).
    #[default]
    Ro,
    /// Read and write.
    Rw,
}

/// A host folder made visible to a wasm guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountSpec {
    /// Host path as written (placeholders such as `${CLAUDE_PROJECT_DIR}` resolved by the host).
    pub host: String,
    /// Absolute path the guest sees.
    pub guest: String,
    /// `ro` (default) or `rw`.
    pub access: Access,
    /// Whether the guest may create symbolic links in this (`rw`) mount (`"symlinks": true`).
    /// Default false: a link the guest plants (`notes -> ../../.ssh`) is not followed by hookbox
    /// but would be by the user's shell or editor.
    #[serde(default)]
    pub symlinks: bool,
}

/// A WebAssembly component hook (SPEC §4.3). `None` limits take the host policy's defaults; a
/// value above the policy's maximum is refused when the host loads the rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WasmSpec {
    /// The component, relative to the plugin root (must stay inside it).
    pub component: String,
    /// Wall-clock seconds (epoch deadline).
    pub timeout_secs: Option<f64>,
    /// Deterministic instruction budget.
    pub fuel: Option<u64>,
    /// Linear-memory cap in MiB.
    pub memory_mb: Option<u64>,
    /// Cap on table elements.
    pub table_elements: Option<u64>,
    /// Cap on instances a component may create.
    pub instances: Option<u64>,
    /// Cap on captured stdout and stderr, each, in bytes.
    pub output_bytes: Option<u64>,
    /// Cap on `log` calls per event.
    pub log_calls: Option<u64>,
    /// Cap on the bytes of a typed hook's response (all its strings together).
    #[serde(default)]
    pub response_bytes: Option<u64>,
    /// Cap on bytes written to `rw` mounts during one event.
    #[serde(default)]
    pub write_bytes: Option<u64>,
    /// Cap on files, folders and links created in `rw` mounts during one event.
    #[serde(default)]
    pub write_files: Option<u64>,
    /// Folders the guest may see.
    pub mounts: Vec<MountSpec>,
    /// The only environment variables the guest gets.
    pub env: BTreeMap<String, String>,
    /// Static JSON handed to the guest through the `config` import.
    pub config: Value,
}

/// What a rule runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "one handler per rule, built once at load: boxing the wasm spec would buy nothing"
)]
pub enum Handler {
    /// A native process.
    Command(CommandSpec),
    /// Literal text attached as context.
    Prompt {
        /// The text.
        prompt: String,
    },
    /// A sandboxed WebAssembly component.
    Wasm(WasmSpec),
    /// An HTTP endpoint (Claude Code's `http` hook).
    Http(HttpSpec),
}

impl Handler {
    /// The handler's type.
    pub fn handler_type(&self) -> HandlerType {
        match self {
            Handler::Command(_) => HandlerType::Command,
            Handler::Prompt { .. } => HandlerType::Prompt,
            Handler::Wasm(_) => HandlerType::Wasm,
            Handler::Http(_) => HandlerType::Http,
        }
    }

    /// A short human label (command text, first words of the prompt, component path).
    pub fn label(&self) -> String {
        match self {
            Handler::Command(c) => c.label(),
            Handler::Prompt { prompt } => {
                let first: String = prompt.chars().take(40).collect();
                if prompt.chars().count() > 40 {
                    format!("prompt: {first}…")
                } else {
                    format!("prompt: {first}")
                }
            }
            Handler::Wasm(w) => w.component.clone(),
            Handler::Http(h) => h.url.clone(),
        }
    }
}

/// Claude Code's handler-level `if` (e.g. `Bash(git *)`): a tool name and an optional glob over
/// the call's main argument. On events other than tool events a hook with `if` never runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfCondition {
    /// The rule as written.
    pub raw: String,
    /// The tool it names.
    pub tool: String,
    /// Glob over the main argument (`command` for Bash, `file_path` for file tools), if any.
    pub pattern: Option<String>,
}

impl IfCondition {
    /// Parses Claude Code's `if` as written (`Tool` or `Tool(pattern)`); `None` when it is not
    /// of that shape. For a recorded rule read back (an approved guard no live rule carries).
    pub fn parse(raw: &str) -> Option<IfCondition> {
        crate::config::parse_if(raw)
    }

    /// Whether it holds for `event`, exactly as a loaded rule's `if` is tested.
    pub fn holds(
        &self,
        event: &crate::event::Event,
        aliases: &crate::matcher::ToolAliases,
    ) -> bool {
        crate::index::if_matches(self, event, aliases)
    }
}

/// One loaded rule: an event, a matcher and a handler, with its provenance.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Position in load order across all plugins: aggregation follows it.
    pub index: usize,
    /// The event it fires on.
    pub event: EventName,
    /// Which occurrences it fires on.
    pub matcher: Matcher,
    /// Claude Code's `if` condition, when given.
    pub if_condition: Option<IfCondition>,
    /// What it runs.
    pub handler: Handler,
    /// The dialect of its file: payload shape, exit codes, environment.
    pub dialect: Dialect,
    /// What its failure means; `None` takes the host policy's default.
    pub on_failure: Option<FailMode>,
    /// Claude Code's `statusMessage`, shown while it runs.
    pub status_message: Option<String>,
    /// Where it came from.
    pub source: RuleSource,
    /// Index of its plugin in the rule set's plugin list.
    pub plugin: usize,
}

impl Rule {
    /// A rule built in code: no `if`, no `statusMessage`, the policy's failure mode. `plugin` is
    /// the index of its plugin in the rule set's list; `source.plugin` names it.
    pub fn new(
        index: usize,
        event: EventName,
        matcher: Matcher,
        handler: Handler,
        dialect: Dialect,
        plugin: usize,
        source: RuleSource,
    ) -> Rule {
        Rule {
            index,
            event,
            matcher,
            if_condition: None,
            handler,
            dialect,
            on_failure: None,
            status_message: None,
            source,
            plugin,
        }
    }
}

/// A loaded plugin (or bare hook file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// Its name.
    pub name: String,
    /// Its root folder (for a bare file, the file's folder).
    pub root: PathBuf,
    /// Its dialect.
    pub dialect: Dialect,
    /// The hook files loaded from it, relative to `root`.
    pub files: Vec<PathBuf>,
    /// What was parsed of each of `files`: the digest and size of the very bytes the loader
    /// read and parsed, so a trust report hashes what was parsed without reading the file a
    /// second time (which could find other bytes). Empty for a plugin built in code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parsed: Vec<ParsedFile>,
}

impl PluginInfo {
    /// Records `path` (relative to `root`) as a hook file of this plugin, parsed from `text`.
    pub fn add_parsed(&mut self, path: PathBuf, text: &str) {
        if !self.files.contains(&path) {
            self.parsed
                .push(ParsedFile::of(path.clone(), text.as_bytes()));
            self.files.push(path);
        }
    }

    /// What was parsed of the hook file `path`, if the loader kept it.
    pub fn parsed(&self, path: &Path) -> Option<&ParsedFile> {
        self.parsed.iter().find(|p| p.path == path)
    }
}

/// One hook file as the loader read it: the SHA-256 (lowercase hex) and size of the bytes parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedFile {
    /// Relative to the plugin's root.
    pub path: PathBuf,
    /// SHA-256 of the bytes parsed, lowercase hex.
    pub sha256: String,
    /// How many bytes.
    pub size: u64,
}

impl ParsedFile {
    /// The record of `bytes` read from `path`.
    pub fn of(path: PathBuf, bytes: &[u8]) -> ParsedFile {
        use sha2::{Digest, Sha256};
        use std::fmt::Write as _;
        let digest = Sha256::digest(bytes);
        let mut sha256 = String::with_capacity(64);
        for b in digest {
            let _ = write!(sha256, "{b:02x}");
        }
        ParsedFile {
            path,
            sha256,
            size: bytes.len() as u64,
        }
    }
}
