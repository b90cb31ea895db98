//! Command-line definitions (clap derive) and nothing else: `hookbox <subcommand>`. A new
//! subcommand is a variant of [`Command`] with its `…Args` struct here, and its code in
//! `cmd/<name>.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hookbox_core::Dialect;

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
    /// Exit codes: 0 everything loadable loaded (warnings allowed), 1 an error was found
    /// (invalid JSON, an unreadable file, a plugin that failed to register), 2 usage error
    /// (e.g. a PATH that does not exist).
    Validate(ValidateArgs),

    /// Run one event through the hooks of the given plugins and print the aggregated verdict.
    ///
    /// The payload is Claude Code's hook input (a flat JSON object), from --payload FILE or
    /// stdin (--payload -); --prompt, --tool and --tool-input fill the common fields without a
    /// file. Missing session_id and cwd take --session-id and --cwd. Prints each hook's
    /// attachments and timing, the verdict, the `[Blocked by hook]` / `[Hook stopped]` marker or
    /// the `<user-prompt-submit-hook>` tags for UserPromptSubmit, and the HookFired record.
    /// A replay record goes to <project>/.hookbox/replay/<session>.jsonl unless --no-replay.
    ///
    /// Exit codes: 0 dispatched (whatever the verdict), 1 a plugin had a load error (the
    /// dispatch still ran with what loaded), 2 usage error, 3 with --fail-on-block when the
    /// verdict blocks.
    Dispatch(DispatchArgs),
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

    /// Read every file in this dialect, whatever its layout or manifest says.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub(crate) dialect: Option<DialectArg>,

    /// Do not write a replay record.
    #[arg(long)]
    pub(crate) no_replay: bool,

    /// Exit with code 3 when the verdict blocks (deny, block, stop).
    #[arg(long)]
    pub(crate) fail_on_block: bool,

    /// Print the dispatch as JSON.
    #[arg(long)]
    pub(crate) json: bool,
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
    fn dialect_values_cover_every_dialect() {
        for d in Dialect::ALL {
            let arg = DialectArg::from_str(d.as_str(), false).unwrap();
            assert_eq!(Dialect::from(arg), d);
        }
    }
}
