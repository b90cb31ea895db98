//! The agents' own hook configuration files, as `hookbox install` and `hookbox uninstall` edit
//! them: which native events an install registers for a hookbox event ([`events`]), the command
//! line an entry runs ([`command`]), the tools an entry starts for ([`matcher`]), each agent's
//! entry shape in its JSON file ([`shape`], over the comment-keeping JSONC editor [`jsonc`]),
//! Kimi's TOML block ([`kimi_toml`]) and Codex's trust records ([`codex_trust`]), both kept in one
//! marked block of the user's TOML file (`toml_block`).
//!
//! Pure text in, text out: reading and replacing the file on disk (symlinks refused, atomic
//! rename, backups) is the binary's. Every edit leaves each byte outside hookbox's own entries as
//! it was.

pub mod codex_trust;
pub mod command;
pub mod jsonc;
pub mod kimi_toml;
pub mod matcher;
pub mod shape;
mod toml_block;

use hookbox_core::agent::{Agent, CODEX_EVENTS};
use hookbox_core::event::EventName;

pub use shape::{Applied, Entry};

/// The variable `agent` sets to the project folder when it runs a hook, if it sets one: an
/// entry of a project file can then name the plugins inside the project by relative path
/// (`hookbox hook` resolves them against it), so the file can be committed and still work in
/// another clone. Codex, Copilot, VS Code, Windsurf and Kimi set none (docs/agents.md).
pub fn project_variable(agent: Agent) -> Option<&'static str> {
    match agent {
        Agent::Claude => Some("CLAUDE_PROJECT_DIR"),
        Agent::Gemini => Some("GEMINI_PROJECT_DIR"),
        Agent::Cursor => Some("CURSOR_PROJECT_DIR"),
        Agent::Qwen => Some("QWEN_PROJECT_DIR"),
        Agent::Codex | Agent::Copilot | Agent::VsCode | Agent::Windsurf | Agent::Kimi => None,
    }
}

/// What hookbox created in an agent's configuration file, so that uninstalling removes that and
/// nothing the user had: the file itself, the `hooks` object, event lists. The binary keeps it
/// between runs; a file with no record owns nothing, and only hookbox's entries are removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owned {
    /// hookbox created the file.
    pub file: bool,
    /// hookbox added the `hooks` object.
    pub hooks: bool,
    /// hookbox added these events' lists.
    pub lists: Vec<String>,
}

/// Why a configuration file cannot be edited.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The file is not JSON (with comments, where the agent allows them).
    #[error("{file} is not valid JSON: {source}")]
    Syntax {
        /// The file, as named in messages.
        file: String,
        /// Where and what.
        source: jsonc::SyntaxError,
    },
    /// The file is JSON, but not of the shape the agent reads (hookbox does not guess).
    #[error("{message}")]
    Shape {
        /// What is wrong, naming the file and the fix.
        message: String,
    },
    /// Kimi's TOML file, or hookbox's block in it, does not parse.
    #[error("{message}")]
    Toml {
        /// What is wrong, naming the file.
        message: String,
    },
}

/// The native events `hookbox install` registers so that `event` reaches hookbox: one per
/// hookbox event where the agent has one that covers every tool (Cursor's `preToolUse`, not
/// also `beforeShellExecution`, which would run hookbox twice for one call), all four of
/// Windsurf's pre-hooks for `PreToolUse`. Empty: the agent has no such event.
pub fn events(agent: Agent, event: EventName) -> Vec<&'static str> {
    let of_table = |event: EventName| -> Vec<&'static str> {
        agent
            .events()
            .iter()
            .filter(|(_, e)| *e == event)
            .map(|(n, _)| *n)
            .collect()
    };
    match agent {
        // Every event but Codex's own `Interrupt`.
        Agent::Claude if event == EventName::Interrupt => Vec::new(),
        Agent::Claude => vec![event.as_str()],
        Agent::Codex => CODEX_EVENTS
            .iter()
            .filter(|e| **e == event)
            .map(|e| e.as_str())
            .collect(),
        // AfterTool carries failures too.
        Agent::Gemini if event == EventName::PostToolUseFailure => of_table(EventName::PostToolUse),
        // The general hooks only: `preToolUse` already sees shell, MCP and read calls, and
        // registering `beforeShellExecution` too would run hookbox twice for one command.
        Agent::Cursor => of_table(event)
            .into_iter()
            .filter(|n| {
                !matches!(
                    *n,
                    "beforeShellExecution"
                        | "beforeMCPExecution"
                        | "beforeReadFile"
                        | "afterShellExecution"
                        | "afterMCPExecution"
                        | "afterFileEdit"
                )
            })
            .collect(),
        // One `.github/hooks/` file serves Copilot and VS Code, which converts camelCase names
        // to PascalCase — `userPromptSubmitted` and `agentStop` would become names VS Code does
        // not fire, so those two are registered in PascalCase (a Copilot dialect of its own,
        // same events).
        Agent::Copilot | Agent::VsCode => match event {
            EventName::UserPromptSubmit => vec!["UserPromptSubmit"],
            EventName::Stop => vec!["Stop"],
            e => Agent::Copilot
                .events()
                .iter()
                .filter(|(_, x)| *x == e)
                .map(|(n, _)| *n)
                .collect(),
        },
        // One of the two Stop-like events: the plain one (the other adds the transcript).
        Agent::Windsurf if event == EventName::Stop => vec!["post_cascade_response"],
        Agent::Gemini | Agent::Windsurf | Agent::Kimi | Agent::Qwen => of_table(event),
    }
}
