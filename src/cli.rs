//! Command-line definitions (clap derive) and nothing else: `hookbox <subcommand>`. A new
//! subcommand is a variant of [`Command`] with its `…Args` struct here, and its code in
//! `cmd/<name>.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hookbox_core::Dialect;
use hookbox_core::agent::Agent;

/// A hook host for AI agent runtimes: hooks.json rules, native command hooks and sandboxed
/// WebAssembly components, one aggregated verdict.
#[derive(Debug, Parser)]
#[command(
    name = "hookbox",
    version,
    propagate_version = true,
    arg_required_else_help = true
)]
#[command(
    after_help = "Exit codes: 0 ok (warnings allowed), 1 a problem was found, 2 usage or I/O error."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Load plugins and hook files and report every problem with its location.
    ///
    /// Accepts plugin folders (Claude Code, Codex, Agent Plugins/Ghast, Agentao), plugin
    /// manifests, hooks.json / settings.json / .hooks.json files, and folders holding those
    /// (plugins are searched two levels down, e.g. examples/plugins/<name>/). Files in another
    /// agent's format (Cursor, GitHub Copilot, Windsurf, Gemini CLI) are named and not loaded.
    ///
    /// Every script and component a rule names is checked (there, a regular file, executable
    /// when run directly); a misspelt key is an error naming the key meant ("timout": did you
    /// mean timeout?), any other unknown key a warning; a matcher that does not compile is an
    /// error, one that can match no known tool a warning.
    ///
    /// Exit codes: 0 everything loadable loaded (warnings allowed), 1 an error was found
    /// (invalid JSON, an unreadable file, a misspelt key, a matcher that does not compile, a
    /// fail-closed rule whose program or component is missing, a plugin that failed to
    /// register) — or, with --strict, a warning —, 2 usage error (e.g. a PATH that does not
    /// exist).
    Validate(ValidateArgs),

    /// Run one event through the hooks of the given plugins and print the aggregated verdict.
    ///
    /// The payload is Claude Code's hook input (a flat JSON object), from --payload FILE or
    /// stdin (--payload -); --prompt, --tool and --tool-input fill the common fields without a
    /// file. Missing session_id and cwd take --session-id and --cwd. Prints each hook's
    /// attachments and timing, the verdict, the `[Blocked by hook]` / `[Hook stopped]` marker or
    /// the `<user-prompt-submit-hook>` tags for UserPromptSubmit, and the HookFired record.
    /// --explain says, for every loaded rule of the event, why it did or did not fire (said
    /// without asking when no rule matched).
    /// A replay record goes to hookbox's state folder, never the project:
    /// $HOOKBOX_STATE_DIR (else $XDG_STATE_HOME/hookbox, else ~/.local/state/hookbox)/
    /// projects/<name>-<hash>/replay/<session>.jsonl (--json says where: replay_file), unless
    /// --no-replay.
    ///
    /// Exit codes: 0 dispatched (whatever the verdict), 1 a plugin had a load error (the
    /// dispatch still ran with what loaded), 2 usage error, 3 with --fail-on-block when the
    /// verdict blocks.
    Dispatch(DispatchArgs),

    /// Show what a WebAssembly component is and whether this host would run it.
    ///
    /// Prints its kind (typed hook world or wasi:cli command), WIT version, the imports it asks
    /// for (each granted or refused: hooks get no network), its exports, size and sha256.
    ///
    /// Exit codes: 0 accepted, 1 refused, 2 usage error.
    Inspect(InspectArgs),

    /// Compile every component the plugins' wasm rules name into the on-disk cache.
    ///
    /// The cache is `$HOOKBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/hookbox/wasm`, else
    /// `~/.cache/hookbox/wasm`; entries are keyed by the component's sha256 and the engine's
    /// configuration, so later dispatches load them in well under a millisecond.
    ///
    /// Exit codes: 0 all compiled, 1 a component or plugin failed, 2 usage error.
    Compile(CompileArgs),

    /// Build a JavaScript hook into a WebAssembly component, with the QuickJS runtime this
    /// binary carries.
    ///
    /// HOOK.js is an ES module that exports `handler` with `handle(event)` and may import
    /// `config` and `log` from `hookbox:hook/host@0.1.0` (call them inside `handle`). The module
    /// is evaluated once, here, and the interpreter's state is kept in the component, so each
    /// event starts from it (~0.95 MB, ~0.1 ms per event). No node, npm or compiler needed.
    /// Its top-level code is bounded (fuel, 256 MiB of memory, a 4 MiB source). QuickJS is
    /// ES2023 without web or Node APIs. The runtime is in the binary only when it was built with
    /// the QuickJS toolchain: `--check` says.
    ///
    /// Exit codes: 0 built (or, with --check, this binary can build), 1 the module did not
    /// build (its reason printed) or this binary carries no runtime, 2 usage or I/O error.
    #[cfg(feature = "tools")]
    BuildJs(BuildJsArgs),

    /// Print the JSON Schema of hooks.json files (every shape hookbox reads), for editors.
    ///
    /// The schema is generated from the parser's own tables (events, handler types and their
    /// keys, matcher keys, wasm limits); the same text is in the repository as
    /// schema/hooks.schema.json. Point an editor at it, or add "$schema" to a hooks file.
    ///
    /// Exit codes: 0 printed, 2 usage error.
    Schema(SchemaArgs),

    /// Print a shell completion script: bash, zsh or fish.
    ///
    /// bash: `hookbox completions bash > ~/.local/share/bash-completion/completions/hookbox`;
    /// zsh: `hookbox completions zsh > ~/.zfunc/_hookbox` (with ~/.zfunc in fpath); fish:
    /// `hookbox completions fish > ~/.config/fish/completions/hookbox.fish`.
    ///
    /// Exit codes: 0 printed, 2 usage error.
    Completions(CompletionsArgs),

    /// Run a WebAssembly hook as a Claude Code command hook (payload on stdin).
    ///
    /// Use it in Claude Code's settings: {"type": "command", "command": "hookbox exec
    /// /path/guard.wasm --timeout 2"}. The component runs sandboxed: no network, no files but
    /// --mount, no environment but --env, bounded time and memory. A typed component's answer
    /// is printed as Claude Code's JSON (exit 0); a wasi:cli component's stdout, stderr and exit
    /// code pass through.
    ///
    /// Exit codes: 0 answered, 2 blocking (a wasi:cli component's own 2, or a failure with
    /// --on-failure block), 1 the hook failed (non-blocking) or its own exit 1.
    Exec(ExecArgs),

    /// Answer one event from any coding agent's hook command with the plugins' hooks.
    ///
    /// What an agent's hook configuration runs (`hookbox install` writes it): reads the
    /// agent's payload on stdin, runs the whole pipeline of `dispatch` on it — matching, native
    /// and wasm rules, aggregation, replay — and answers in that agent's protocol (stdout,
    /// stderr, exit code), so Claude Code plugins run unchanged under Codex, Gemini CLI, Cursor,
    /// GitHub Copilot, VS Code, Windsurf and Kimi. What an agent cannot express takes the safe
    /// side (an `ask` where there is none is a deny) and is said on stderr. docs/agents.md has
    /// every verdict × agent.
    ///
    /// Exit codes: the agent's own (docs/agents.md): 0 with JSON for most answers, 2 where the
    /// agent reads a block from exit 2 and stderr, 1 (or 0) for a hook that failed open. When
    /// hookbox itself cannot run the hooks (an unreadable payload, a plugin that does not load)
    /// --on-error decides, as a rule's onFailure would.
    Hook(HookArgs),

    /// Write an agent's hook configuration so that its events run the plugins' hooks.
    ///
    /// Adds to the agent's own file, in its own shape, one entry per event the plugins use,
    /// each calling `hookbox hook --agent NAME --event EVENT --plugin DIR…`, with a timeout in
    /// the agent's unit; shows the diff, keeps a backup of the file it changes, and refuses to
    /// write through a symlink. Installing again adds plugins to the same entries (idempotent);
    /// `hookbox uninstall` removes exactly what was added. Files: claude .claude/settings.json,
    /// codex .codex/hooks.json, gemini .gemini/settings.json, cursor .cursor/hooks.json,
    /// copilot and vscode .github/hooks/hookbox.json (one file serves both), windsurf
    /// .windsurf/hooks.json — or their user-level files with --user; kimi ~/.kimi/config.toml.
    ///
    /// Exit codes: 0 written (or nothing to change), 1 the plugins do not load, 2 usage or I/O
    /// error (a symlink, an unreadable or malformed file).
    Install(InstallArgs),

    /// Remove what `hookbox install` added to an agent's hook configuration.
    ///
    /// Without --plugin, every hookbox entry goes; with it, those plugins leave the entries and
    /// entries no remaining plugin needs go. Containers left empty by that are removed; a file
    /// left with nothing in it is deleted.
    ///
    /// Exit codes: 0 done (or nothing to remove), 2 usage or I/O error.
    Uninstall(UninstallArgs),

    /// Run a scripted agent session through the bundled example plugins (native and wasm).
    ///
    /// Shows, step by step, which hooks ran, how long each took and the verdict: injected
    /// context, a blocked prompt, a denied and a rewritten tool call, an audit, a Stop rescue and
    /// the re-entry cap, an observe-only PreCompact, and a hostile wasm hook contained at its
    /// timeout. Colours on a terminal, none when piped; --json for machines. The first run
    /// compiles the wasm components (a progress bar on a terminal); later runs take them from
    /// the cache.
    ///
    /// Exit codes: 0 the session ran, 1 a plugin of the scenario had a load error (the session
    /// still ran with what loaded), 2 usage error (an unreadable or invalid scenario, a
    /// --plugins-dir without the scenario's plugins).
    #[cfg(feature = "tools")]
    Demo(DemoArgs),

    /// Measure hook dispatch: native sh -c vs typed wasm vs wasi:cli wasm, side by side.
    ///
    /// The same trivial hook logic through HookHost::dispatch, in one process: p50/p99 latency,
    /// throughput with 1 and N dispatches in flight, native ÷ wasm ratios, the idle cost of
    /// 10,000 non-matching rules, cached vs uncached component loads, and resident memory per
    /// concurrently running wasm hook. Build with --release: debug numbers mean nothing.
    /// --compare FILE prints each figure against a saved --json report.
    ///
    /// Exit codes: 0 measured (and, with --compare, no figure more than 1.3× worse), 1 a figure
    /// regressed past 1.3× under --compare, 2 usage error or a measurement that could not run.
    #[cfg(feature = "tools")]
    Bench(BenchArgs),

    /// Serve hooks over HTTP: tenants from a folder, Claude Code http hooks, admin, metrics.
    ///
    /// Tenants are the folders of the tenants folder: <DIR>/<tenant-id>/tenant.toml (the hex
    /// SHA-256 of the tenant's bearer token in `token_sha256`, its policy in `[policy]`) and
    /// <DIR>/<tenant-id>/plugins/. All load at start; /readyz answers 200 once they did. API
    /// under /v1 (docs/api.md): POST /v1/tenants/{id}/dispatch, POST /v1/tenants/{id}/claude-code
    /// (a Claude Code "type": "http" hook), admin routes, GET /v1/tenants/{id}/fired (server-sent
    /// events), GET /metrics, /healthz, /readyz. The first line on stdout is the address bound.
    /// Plain HTTP on 127.0.0.1 by default: put a TLS proxy in front to expose it.
    ///
    /// SIGTERM/SIGINT: stop accepting, answer every accepted request, drain background hooks,
    /// flush replay files, exit 0. SIGHUP: reload every tenant from disk (validate-then-swap).
    ///
    /// Exit codes: 0 stopped by a signal after draining, 2 could not start (configuration,
    /// folders, port).
    Serve(ServeArgs),

    /// Approve plugins and settings files as they are — pinned to the bytes they run.
    ///
    /// An approval covers every rule of a plugin or settings file: its content and grants
    /// (mounts and their access, env, limits, http URLs and headers, allowedEnvVars) and the
    /// SHA-256 of every file it runs that hookbox can resolve (wasm components, scripts named
    /// through ${CLAUDE_PLUGIN_ROOT}, ${CLAUDE_PROJECT_DIR}, ~ or a relative path, interpreters'
    /// script arguments). What cannot be resolved (`npx foo`, a program on PATH) is shown as
    /// unpinned. One digest per rule: a changed rule does not untrust the others. Approvals live
    /// in hookbox's state folder ($HOOKBOX_STATE_DIR/trust, else ~/.local/state/hookbox/trust),
    /// never in a project. `dispatch --trust require` then runs only what was approved.
    Trust(TrustArgs),

    /// Start a plugin from a template: hooks.json, the hook's source, a README, passing tests.
    ///
    /// Writes NAME/ (or --dir): .claude-plugin/plugin.json, hooks/hooks.json (Claude Code's
    /// agent-neutral shape), the hook — a sh, python or node script, or a WebAssembly guest in
    /// Rust (cargo), JavaScript (`hookbox build-js`, else componentize-qjs) or Python
    /// (componentize-py) with its build.sh — a README with the two commands that build and test
    /// it, and tests/ cases that pass as generated (`hookbox test`). The templates are in the
    /// binary: nothing is downloaded.
    /// Refuses a folder that exists and is not empty, and never writes through a symlink.
    ///
    /// Exit codes: 0 written (or listed with --dry-run), 2 usage or I/O error (a bad name, a
    /// non-empty folder).
    New(NewArgs),

    /// Run a plugin's test cases (tests/*.json, tests/*.toml) and check what each must hold.
    ///
    /// Each case is an event (hookbox's payload, or an agent's own with `agent`), optional
    /// project files and environment, and `expect`: the outcome, the decision, a reason or
    /// context containing a text, the rewritten input, the failure class, a time budget —
    /// optionally checked on the answer each listed agent would receive (a deny must be a deny
    /// the agent honours). Cases run in parallel, each in a scratch project of its own, through
    /// the same host as `dispatch` and `hook`: trust, limits and sandbox included. The case
    /// format: `hookbox test --print-schema`, docs/authors.md.
    ///
    /// Exit codes: 0 every case passed, 1 a case failed (or a plugin does not load), 2 usage or
    /// I/O error (an unreadable or malformed case).
    Test(TestArgs),
}

/// `hookbox new --kind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum KindArg {
    /// PreToolUse on Bash: deny commands that match a list.
    Guard,
    /// UserPromptSubmit: add context to every prompt.
    Context,
    /// Stop: one more round when the last answer is empty.
    Stop,
    /// PostToolUse on every tool: record the call.
    Audit,
}

/// `hookbox new --lang` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LangArg {
    /// A POSIX sh script (native).
    Sh,
    /// A python3 script (native).
    Python,
    /// A node script (native).
    Node,
    /// A WebAssembly component in Rust (cargo, the guest SDK).
    Rust,
    /// A WebAssembly component in JavaScript: QuickJS, pre-initialised (`hookbox build-js`, else
    /// componentize-qjs from npm).
    Js,
    /// A WebAssembly component in Python (componentize-py).
    PythonWasm,
}

/// `hookbox new`.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The plugin's name: lowercase letters, digits and `-`, starting with a letter.
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    /// What the plugin does.
    #[arg(long, value_enum)]
    pub(crate) kind: KindArg,

    /// The hook's language.
    #[arg(long, value_enum)]
    pub(crate) lang: LangArg,

    /// The folder to create (default: ./NAME); it must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,

    /// List the files without writing them.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox test --format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TestFormatArg {
    /// A line per case, the differences under a failed one.
    Text,
    /// JUnit XML (Apache Ant's schema), for CI.
    Junit,
    /// TAP version 13.
    Tap,
    /// One JSON document.
    Json,
}

/// `hookbox test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Plugin folders whose tests/ to run (default: the current folder).
    #[arg(value_name = "PLUGIN")]
    pub(crate) plugins: Vec<PathBuf>,

    /// Run only the cases whose name contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,

    /// How to print the results.
    #[arg(long, value_enum, default_value_t = TestFormatArg::Text)]
    pub(crate) format: TestFormatArg,

    /// Also list the rules that no case fired (a rule never exercised is a rule never checked).
    #[arg(long)]
    pub(crate) coverage: bool,

    /// Cases run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub(crate) jobs: Option<usize>,

    /// Rewrite the `expect` of each failing case with today's answer (then review the diff);
    /// passing cases keep theirs.
    #[arg(long)]
    pub(crate) record: bool,

    /// Turn the dispatches of a replay file (<state>/replay/<session>.jsonl) into cases in the
    /// first PLUGIN's tests/ (redacted; to be completed by hand: replay keeps no payload).
    #[arg(long, value_name = "FILE")]
    pub(crate) from_replay: Option<PathBuf>,

    /// Whether rules must be approved (`hookbox trust add`), as for `dispatch`: off, warn
    /// (default: unapproved rules run, with a warning) or require (they fail `untrusted`).
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) trust: Option<TrustArg>,

    /// Print the JSON Schema of a case and exit.
    #[arg(long)]
    pub(crate) print_schema: bool,
}

/// `--trust` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TrustArg {
    /// Approvals are not looked at.
    Off,
    /// Unapproved or changed rules run, with a warning on stderr (and in --json).
    Warn,
    /// Unapproved or changed rules do not run (they fail `untrusted`; fail-closed ones block).
    Require,
}

impl From<TrustArg> for hookbox_host::TrustMode {
    fn from(t: TrustArg) -> Self {
        match t {
            TrustArg::Off => hookbox_host::TrustMode::Off,
            TrustArg::Warn => hookbox_host::TrustMode::Warn,
            TrustArg::Require => hookbox_host::TrustMode::Require,
        }
    }
}

/// `hookbox trust`.
#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    #[command(subcommand)]
    pub(crate) command: TrustCommand,
}

/// `hookbox trust` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum TrustCommand {
    /// Show what will be approved (rules, files with sizes and digests, grants), ask, record.
    ///
    /// Exit codes: 0 approved (or already approved as it is), 1 declined, or a load error
    /// (nothing is approved until `hookbox validate` is clean), 2 usage error (e.g. asked to
    /// confirm with stdin not a terminal: pass --yes).
    Add(TrustAddArgs),
    /// List the approvals in the store.
    ///
    /// Exit codes: 0 listed, 1 a record could not be read (listed as an error), 2 usage error.
    List(TrustListArgs),
    /// Show a plugin's rules, what each runs and grants, and whether each is approved.
    ///
    /// Exit codes: 0 shown, 2 usage error.
    Show(TrustPathArgs),
    /// What changed since approval, rule by rule, file by file and grant by grant.
    ///
    /// Exit codes: 0 everything approved as it is, 1 something changed or is not approved,
    /// 2 usage error.
    Diff(TrustPathArgs),
    /// Remove the approvals of PATH, and of every plugin or file beneath it.
    ///
    /// Exit codes: 0 removed, 1 nothing was approved there, 2 usage error.
    Remove(TrustRemoveArgs),
    /// List the hooks in your agents' configuration files with their approval state.
    ///
    /// Claude Code (~/.claude/settings.json, <project>/.claude/settings.json and
    /// settings.local.json, installed plugins), Codex (~/.codex/hooks.json, <project>/.codex/
    /// hooks.json) and Gemini CLI (~/.gemini/settings.json, <project>/.gemini/settings.json),
    /// so a hook someone else added stands out.
    ///
    /// Exit codes: 0 every hook found is approved, 1 some are not (or a file could not be
    /// read), 2 usage error.
    Scan(TrustScanArgs),
}

/// `hookbox trust add`.
#[derive(Debug, Args)]
pub(crate) struct TrustAddArgs {
    /// Plugin folders, hooks or settings files, or folders holding them.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    /// Approve without asking (for scripts). Without it hookbox asks, and refuses to ask when
    /// stdin is not a terminal.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,

    #[command(flatten)]
    pub(crate) common: TrustCommon,
}

/// Options of the `trust` subcommands that load hooks.
#[derive(Debug, Args)]
pub(crate) struct TrustCommon {
    /// The project: where ${CLAUDE_PROJECT_DIR} and relative script paths point (default:
    /// the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project_dir: Option<PathBuf>,

    /// Read every file in this dialect, whatever its layout or manifest says.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub(crate) dialect: Option<DialectArg>,

    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox trust show` and `diff`.
#[derive(Debug, Args)]
pub(crate) struct TrustPathArgs {
    /// Plugin folders, hooks or settings files, or folders holding them.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) common: TrustCommon,
}

/// `hookbox trust remove`.
#[derive(Debug, Args)]
pub(crate) struct TrustRemoveArgs {
    /// Plugin folders or files whose approvals to remove (they need not exist any more).
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox trust list`.
#[derive(Debug, Args)]
pub(crate) struct TrustListArgs {
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox trust scan`.
#[derive(Debug, Args)]
pub(crate) struct TrustScanArgs {
    /// The project whose .claude/, .codex/ and .gemini/ files to scan (default: the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project_dir: Option<PathBuf>,

    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The server configuration (TOML); every key is optional (see --print-default-config).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Address to listen on, IP:PORT (overrides `listen`); port 0 picks a free port.
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,

    /// The tenants folder (overrides `tenants_dir`).
    #[arg(long, value_name = "DIR")]
    pub(crate) tenants: Option<PathBuf>,

    /// Print the default configuration, every key with its default and meaning, and exit.
    #[arg(long)]
    pub(crate) print_default_config: bool,

    /// Log format on stderr (overrides `log_format`).
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "json"])]
    pub(crate) log_format: Option<String>,
}

/// `hookbox bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Measured dispatches per wasm hook kind.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub(crate) wasm_runs: usize,

    /// Measured dispatches of the native hook (each forks a shell).
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub(crate) native_runs: usize,

    /// Dispatches in flight for the N-concurrency throughput.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub(crate) concurrency: usize,

    /// How long each throughput measurement runs, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub(crate) throughput_ms: u64,

    /// Wasm hooks running at once for the memory measurement (0 skips it).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) memory_hooks: usize,

    /// A tenth of the runs: a smoke test, not a measurement.
    #[arg(long)]
    pub(crate) quick: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    /// Measure `hookbox serve` instead: the trivial wasm hook dispatched over HTTP on loopback
    /// at 1, 8 and 64 connections, beside in-process dispatch.
    #[arg(long)]
    pub(crate) serve: bool,

    /// Only these sections (comma-separated; all when not given).
    #[arg(long, value_name = "SECTION", value_delimiter = ',')]
    pub(crate) only: Vec<BenchSection>,

    /// Compare every figure with a saved `--json` report (e.g. docs/bench-baseline.json): each
    /// figure's ratio, and every figure more than 1.3× worse named (exit code 1 if any).
    #[arg(long, value_name = "FILE")]
    pub(crate) compare: Option<PathBuf>,

    /// With `--compare`: compare this saved report instead of measuring.
    #[arg(long, value_name = "FILE", requires = "compare")]
    pub(crate) from: Option<PathBuf>,

    /// Run only this path `--wasm-runs` times, for an outside instruction counter
    /// (`perf stat`); prints nothing but its time on stderr (docs/performance.md).
    #[arg(long, value_name = "KIND", hide = true)]
    pub(crate) count: Option<CountKind>,

    /// With `--count`: runs in flight at once.
    #[arg(long, value_name = "N", default_value_t = 1, hide = true)]
    pub(crate) count_in_flight: usize,

    /// With `--count guest-floor`: the example guest to run at the floor (`shell_guard`, …).
    #[arg(long, value_name = "NAME", default_value = "noop", hide = true)]
    pub(crate) count_guest: String,

    /// With `--count`: after each run, write over this many KiB (one byte per 64-byte line), so
    /// that under `valgrind --tool=cachegrind --cache-sim=yes` with a last-level cache smaller
    /// than it the next run finds its code and data out of the simulated caches, as an event an
    /// agent sends after a pause does: the cache misses per run are the path's cold footprint
    /// (docs/performance.md). 0 (the default) writes nothing; at most 1 GiB.
    #[arg(long, value_name = "KIB", default_value_t = 0, hide = true,
          value_parser = clap::value_parser!(u32).range(0..=1 << 20))]
    pub(crate) count_evict_kib: u32,
}

/// What `hookbox bench --count` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CountKind {
    /// The typed no-op through a plain host (replay off).
    Typed,
    /// The typed no-op at the floor.
    TypedFloor,
    /// The `wasi:cli` no-op through a plain host.
    Cli,
    /// The `wasi:cli` no-op at the floor.
    CliFloor,
    /// The typed no-op on `UserPromptSubmit` through a plain host (the tenant figures' event).
    Prompt,
    /// As `prompt`, with replay on.
    Replay,
    /// As `prompt`, through a tenant with the tenant defaults.
    Tenant,
    /// The `bench --serve` request to `hookbox serve` over loopback (the typed no-op tenant).
    Serve,
    /// The same request to bare axum, answered as many bytes.
    ServeBare,
    /// An example guest (`--count-guest`) at the floor, given an event it acts on.
    GuestFloor,
    /// The native `sh -c` hook through a plain host.
    Native,
    /// The native hook's command spawned bare (no hookbox), as the bench's bare row.
    Bare,
}

/// A section of `hookbox bench`, for `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BenchSection {
    /// Native, typed wasm and wasi:cli hooks through a host: latency and throughput.
    Hosts,
    /// The cost of a dispatch that matches nothing.
    Idle,
    /// Component load times, cached and not.
    Loads,
    /// Resident memory per concurrently running wasm hook.
    Memory,
    /// Engine settings side by side (fuel, pagemap_scan).
    Engine,
    /// Tenants: isolation under floods, memory per tenant, reload.
    Tenants,
    /// JavaScript and Python guests beside native node and python3 hooks.
    Polyglot,
}

/// `hookbox demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// A scenario file instead of the built-in examples/demo/scenario.json.
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: Option<PathBuf>,

    /// The folder the scenario's plugins are read from (default: the example plugins this
    /// binary carries, the files of examples/plugins).
    #[arg(long, value_name = "DIR")]
    pub(crate) plugins_dir: Option<PathBuf>,

    /// Keep the scratch folder (plugins, replay files) and print where it is.
    #[arg(long)]
    pub(crate) keep: bool,

    /// Trust mode (default: `trust` in ~/.config/hookbox/settings.json, else warn). The bundled
    /// plugins are approved in the demo's own store; plugins from --plugins-dir are not.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) trust: Option<TrustArg>,

    /// Print the transcript as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The component file.
    #[arg(value_name = "COMPONENT.wasm")]
    pub(crate) component: PathBuf,

    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox compile`.
#[derive(Debug, Args)]
pub(crate) struct CompileArgs {
    /// Plugin folders or hooks files whose wasm rules to compile.
    #[arg(required = true, value_name = "PLUGIN")]
    pub(crate) plugins: Vec<PathBuf>,

    /// Read every file in this dialect, whatever its layout or manifest says.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub(crate) dialect: Option<DialectArg>,

    /// Print the result as JSON: each component with its outcome, and the cache folder.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox build-js`.
#[cfg(feature = "tools")]
#[derive(Debug, Args)]
pub(crate) struct BuildJsArgs {
    /// The hook's source: an ES module exporting `handler`.
    #[arg(value_name = "HOOK.js", required_unless_present = "check")]
    pub(crate) source: Option<PathBuf>,

    /// Where to write the component (default: HOOK.js with the extension .wasm).
    #[arg(short, long, value_name = "OUT.wasm")]
    pub(crate) output: Option<PathBuf>,

    /// Only say whether this binary carries the QuickJS runtime (exit 0) or not (exit 1).
    #[arg(long)]
    pub(crate) check: bool,
}

/// `hookbox schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {}

/// `hookbox completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum, value_name = "SHELL")]
    pub(crate) shell: ShellArg,
}

/// Shells `hookbox completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ShellArg {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
}

/// What a failed hook means for `exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailureArg {
    /// Exit 1: Claude Code treats it as a non-blocking error and proceeds.
    Allow,
    /// Exit 2: Claude Code blocks (for security hooks whose failure must not mean yes).
    Block,
}

/// `hookbox exec`.
#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// The component to run.
    #[arg(value_name = "COMPONENT.wasm")]
    pub(crate) component: PathBuf,

    /// Make a host folder visible to the guest: HOST:GUEST[:ro|rw] (read-only by default).
    #[arg(long, value_name = "HOST:GUEST[:ro|rw]")]
    pub(crate) mount: Vec<String>,

    /// An environment variable for the guest, NAME=VALUE (the guest sees nothing else).
    #[arg(long, value_name = "NAME=VALUE")]
    pub(crate) env: Vec<String>,

    /// Static JSON handed to the guest through its `config` import.
    #[arg(long, value_name = "JSON")]
    pub(crate) config: Option<String>,

    /// Wall-clock limit in seconds (default 5).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) timeout: Option<f64>,

    /// Linear-memory cap in MiB (default 64).
    #[arg(long, value_name = "N")]
    pub(crate) memory_mb: Option<u64>,

    /// Deterministic instruction budget (fuel); off by default.
    #[arg(long, value_name = "N")]
    pub(crate) fuel: Option<u64>,

    /// What a failed hook means: allow (the agent's non-blocking error; Claude Code: exit 1)
    /// or block (the agent's deny; Claude Code: exit 2).
    #[arg(long, value_enum, default_value_t = FailureArg::Allow)]
    pub(crate) on_failure: FailureArg,

    /// Whose hook protocol to read and answer (default: detected from the payload where one
    /// field settles it, else Claude Code).
    #[arg(long, value_enum, value_name = "NAME")]
    pub(crate) agent: Option<AgentArg>,

    /// The event as the agent names it, for payloads that do not say (Copilot's camelCase).
    #[arg(long, value_name = "EVENT")]
    pub(crate) event: Option<String>,

    /// Run the component only if the sha256 of its bytes is DIGEST (64 hex digits): checked on
    /// the bytes read once and then compiled, before compiling. A mismatch is a failed hook
    /// (--on-failure decides).
    #[arg(long, value_name = "DIGEST")]
    pub(crate) sha256: Option<String>,

    /// The payload shape a wasi:cli component gets on stdin.
    #[arg(long, value_enum, default_value_t = DialectArg::Claude)]
    pub(crate) dialect: DialectArg,

    /// Core instances the component may create (default 64; componentize-py guests need 38).
    #[arg(long, value_name = "N")]
    pub(crate) instances: Option<u64>,

    /// Elements each table may hold (default 10000).
    #[arg(long, value_name = "N")]
    pub(crate) table_elements: Option<u64>,

    /// Bytes of stdout and of stderr kept, each (default 1 MiB); the rest is dropped.
    #[arg(long, value_name = "BYTES")]
    pub(crate) output_bytes: Option<u64>,

    /// Bytes a typed hook's answer may carry, all its strings together (default 1 MiB).
    #[arg(long, value_name = "BYTES")]
    pub(crate) response_bytes: Option<u64>,

    /// `log` calls the guest may make (default 100); later ones are counted and dropped.
    #[arg(long, value_name = "N")]
    pub(crate) log_calls: Option<u64>,

    /// Bytes the guest may write to `rw` mounts (default 16 MiB); then writes fail with ENOSPC.
    #[arg(long, value_name = "BYTES")]
    pub(crate) write_bytes: Option<u64>,

    /// Files, folders and links the guest may create in `rw` mounts (default 1000).
    #[arg(long, value_name = "N")]
    pub(crate) write_files: Option<u64>,

    /// Largest component file read, in bytes (default 64 MiB).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_component_bytes: Option<u64>,

    /// Which of the guest's `log` lines reach stderr (default warn: Claude Code shows a hook's
    /// stderr to the user on some exit codes, so debug chatter stays out unless asked). A typed
    /// hook's own stderr is shown at debug and below, or when the hook failed.
    #[arg(long, value_enum, default_value_t = LogLevelArg::Warn)]
    pub(crate) log_level: LogLevelArg,
}

/// `--agent` values: the coding agents whose hook protocol hookbox speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AgentArg {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// Cursor.
    Cursor,
    /// GitHub Copilot CLI and cloud agent.
    Copilot,
    /// VS Code agent hooks (Copilot Chat).
    Vscode,
    /// Windsurf Cascade.
    Windsurf,
    /// Kimi Code CLI.
    Kimi,
    /// Qwen Code.
    Qwen,
}

impl From<AgentArg> for Agent {
    fn from(a: AgentArg) -> Agent {
        match a {
            AgentArg::Claude => Agent::Claude,
            AgentArg::Codex => Agent::Codex,
            AgentArg::Gemini => Agent::Gemini,
            AgentArg::Cursor => Agent::Cursor,
            AgentArg::Copilot => Agent::Copilot,
            AgentArg::Vscode => Agent::VsCode,
            AgentArg::Windsurf => Agent::Windsurf,
            AgentArg::Kimi => Agent::Kimi,
            AgentArg::Qwen => Agent::Qwen,
        }
    }
}

/// `hookbox hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// Whose hook protocol to read and answer (default: detected from the payload where one
    /// field settles it, else Claude Code). VS Code's and Cursor's payloads are answered in
    /// their own protocol even under --agent claude or copilot: they run those agents' files.
    #[arg(long, value_enum, value_name = "NAME")]
    pub(crate) agent: Option<AgentArg>,

    /// The event as the agent names it (e.g. preToolUse). Copilot's camelCase payloads carry
    /// no event name, so its hooks need it; elsewhere it must agree with the payload.
    #[arg(long, value_name = "EVENT")]
    pub(crate) event: Option<String>,

    /// A plugin folder or hooks file to load (repeatable; loaded in order; a relative path is
    /// taken inside the project folder, see --project-dir).
    #[arg(long, value_name = "DIR", required = true)]
    pub(crate) plugin: Vec<PathBuf>,

    /// The project folder: CLAUDE_PROJECT_DIR for hooks, where .hookbox/settings.json is read,
    /// and what a relative --plugin is inside (default: the agent's project variable —
    /// CLAUDE_PROJECT_DIR, CURSOR_PROJECT_DIR, GEMINI_PROJECT_DIR, QWEN_PROJECT_DIR, the agent's
    /// own first — else the payload's cwd, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project_dir: Option<PathBuf>,

    /// What hookbox failing to run the hooks means (a bad payload, a plugin that does not
    /// load): allow (the agent's non-blocking error) or block (its deny). `hookbox install`
    /// writes block when a rule fails closed.
    #[arg(long, value_enum, default_value_t = FailureArg::Allow)]
    pub(crate) on_error: FailureArg,

    /// Read every file in this dialect, whatever its layout or manifest says.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub(crate) dialect: Option<DialectArg>,

    /// The Stop re-entry cap (default: `stop.reentry_cap` in .hookbox/settings.json, else 3).
    /// The agent says how many times the turn already continued (`stop_hook_active`, Cursor's
    /// `loop_count`).
    #[arg(long, value_name = "N")]
    pub(crate) stop_reentry_cap: Option<u32>,

    /// Do not write a replay record.
    #[arg(long)]
    pub(crate) no_replay: bool,
}

/// Where `install` writes.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub(crate) struct ScopeArgs {
    /// The user's own configuration (e.g. ~/.cursor/hooks.json).
    #[arg(long)]
    pub(crate) user: bool,

    /// The project's configuration (e.g. .cursor/hooks.json in --project-dir); the default,
    /// except for Kimi, which has only a user file.
    #[arg(long)]
    pub(crate) project: bool,

    /// This file instead of the agent's usual one (same shape).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
}

/// `hookbox install`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The agent whose configuration to write.
    #[arg(long, value_enum, value_name = "NAME")]
    pub(crate) agent: AgentArg,

    /// A plugin folder or hooks file whose hooks the agent should run (repeatable).
    #[arg(long, value_name = "DIR", required = true)]
    pub(crate) plugin: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) scope: ScopeArgs,

    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project_dir: Option<PathBuf>,

    /// Show the change without writing it.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// The hookbox the entries run (default: `hookbox` when the first `hookbox` on PATH is this
    /// executable, else this executable by its absolute path).
    #[arg(long, value_name = "PATH")]
    pub(crate) bin: Option<PathBuf>,

    /// Write absolute paths: this hookbox by its full path even when it is on PATH, and
    /// `--project-dir` with every plugin by its full path even when the plugin lives in the
    /// project (by default a project file names those relative to the project, for agents that
    /// tell hooks their project folder, so the file can be committed).
    #[arg(long)]
    pub(crate) absolute: bool,

    /// Codex only: record Codex's trust in the entries written (their hashes, in
    /// $CODEX_HOME/config.toml, as Codex's /hooks screen would), shown before writing. Without
    /// it, Codex skips the entries until someone trusts them in /hooks.
    #[arg(long)]
    pub(crate) trust_codex: bool,

    /// Say what was done as one JSON object on stdout (the file, the plugins, the entries, the
    /// outcome, the diff, the backup, notes and warnings) instead of text.
    #[arg(long)]
    pub(crate) json: bool,

    /// Approve the plugins first, showing the approval screen of `hookbox trust add` (and
    /// asking, on a terminal); nothing is installed unless they are approved.
    #[arg(long, conflicts_with = "json")]
    pub(crate) approve: bool,

    /// With --approve: approve without asking (for scripts).
    #[arg(long, short = 'y', requires = "approve")]
    pub(crate) yes: bool,
}

/// `hookbox uninstall`.
#[derive(Debug, Args)]
pub(crate) struct UninstallArgs {
    /// The agent whose configuration to change.
    #[arg(long, value_enum, value_name = "NAME")]
    pub(crate) agent: AgentArg,

    /// Remove only these plugins (default: every hookbox entry).
    #[arg(long, value_name = "DIR")]
    pub(crate) plugin: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) scope: ScopeArgs,

    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project_dir: Option<PathBuf>,

    /// Show the change without writing it.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Say what was done as one JSON object on stdout instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `hookbox exec --log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub(crate) enum LogLevelArg {
    /// Every line.
    Trace,
    /// Debug and above.
    Debug,
    /// Info and above.
    Info,
    /// Warnings and errors.
    Warn,
    /// Errors only.
    Error,
    /// Nothing.
    Off,
}

/// `hookbox dispatch`.
#[derive(Debug, Args)]
pub(crate) struct DispatchArgs {
    /// The event: PreToolUse, UserPromptSubmit, Stop, PreCompact, SessionStart, … (case-sensitive).
    #[arg(long, value_name = "NAME")]
    pub(crate) event: String,

    /// A plugin folder or hooks file to load (repeatable; loaded in order).
    #[arg(long, value_name = "DIR")]
    pub(crate) plugin: Vec<PathBuf>,

    /// The event payload as a JSON object; `-` reads stdin.
    #[arg(long, value_name = "FILE|-")]
    pub(crate) payload: Option<PathBuf>,

    /// Sets `prompt` (UserPromptSubmit).
    #[arg(long, value_name = "TEXT")]
    pub(crate) prompt: Option<String>,

    /// Sets `tool_name` (tool events).
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,

    /// Sets `tool_input`, as JSON (tool events), e.g. '{"command":"ls"}'.
    #[arg(long, value_name = "JSON")]
    pub(crate) tool_input: Option<String>,

    /// The session id when the payload has none.
    #[arg(long, value_name = "ID", default_value = "cli-session")]
    pub(crate) session_id: String,

    /// The session's working directory when the payload has none (default: the project).
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,

    /// The project folder: CLAUDE_PROJECT_DIR for hooks, and where .hookbox/ lives
    /// (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) project_dir: Option<PathBuf>,

    /// Stop only: how many times this turn's Stop hooks already re-entered (the cap applies).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) reentries: u32,

    /// The Stop re-entry cap (default: `stop.reentry_cap` in .hookbox/settings.json, else 3, the
    /// main source's; Claude Code's is 8).
    #[arg(long, value_name = "N")]
    pub(crate) stop_reentry_cap: Option<u32>,

    /// Read every file in this dialect, whatever its layout or manifest says.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub(crate) dialect: Option<DialectArg>,

    /// Do not write a replay record.
    #[arg(long)]
    pub(crate) no_replay: bool,

    /// Exit with code 3 when the verdict blocks (deny, block, stop).
    #[arg(long)]
    pub(crate) fail_on_block: bool,

    /// For every loaded rule of the event, say why it did or did not fire: the event, the
    /// matcher against the tool name and each of its aliases, the `if` condition, and what
    /// became of it when it ran (trust, a hook that could not run). One line each.
    #[arg(long)]
    pub(crate) explain: bool,

    /// Whether rules must be approved (`hookbox trust add`): off, warn (unapproved or changed
    /// rules run, with a warning on stderr) or require (they do not run). Default: `trust` in
    /// ~/.config/hookbox/settings.json, else warn; the project's .hookbox/settings.json may
    /// make it stricter, never looser.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) trust: Option<TrustArg>,

    /// Print the dispatch as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    /// Also write the event and today's answer as a `hookbox test` case to FILE (refused if it
    /// exists), to be edited into an expectation.
    #[arg(long, value_name = "FILE")]
    pub(crate) save_case: Option<PathBuf>,
}

/// `hookbox validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Plugin folders, manifests, hooks or settings files, or folders holding them.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    /// Read every file in this dialect, whatever its layout or manifest says.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub(crate) dialect: Option<DialectArg>,

    /// Print a machine-readable JSON report (plugins, files, rules, diagnostics, foreign files).
    #[arg(long)]
    pub(crate) json: bool,

    /// Treat every warning as an error (exit 1): an unknown key near no known one, a matcher
    /// that matches no known tool, a fail-open rule whose script is missing. For CI.
    #[arg(long)]
    pub(crate) strict: bool,
}

/// `--dialect` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DialectArg {
    /// Claude Code (and Codex): nested matcher groups, flat JSON payloads.
    Claude,
    /// The Agentao plugin system: flat handlers, object matchers, `{event, data}` payloads.
    Agentao,
    /// Agent Plugins / Ghast: Claude's format; invalid config fails the whole plugin.
    Ghast,
    /// The minimal `.hooks.json`: environment variables, exit 1 blocks, exit 2 injects.
    Simple,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Claude => Dialect::Claude,
            DialectArg::Agentao => Dialect::Agentao,
            DialectArg::Ghast => Dialect::Ghast,
            DialectArg::Simple => Dialect::Simple,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn agent_values_cover_every_agent() {
        for a in Agent::ALL {
            let arg = AgentArg::from_str(a.as_str(), false).unwrap();
            assert_eq!(Agent::from(arg), a);
        }
    }

    #[test]
    fn dialect_values_cover_every_dialect() {
        for d in Dialect::ALL {
            let arg = DialectArg::from_str(d.as_str(), false).unwrap();
            assert_eq!(Dialect::from(arg), d);
        }
    }
}
