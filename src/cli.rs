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
