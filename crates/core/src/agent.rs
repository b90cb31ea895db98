//! The coding agents hookbox speaks to, and their vocabulary: each agent's name, the event names
//! it fires and the hookbox (Claude Code) event each one is. One table per agent, here once — the
//! adapters (`hookbox-agents`), the installer, the configuration reader and `trust scan` all read
//! these; tool names are in the matcher's alias table (`crate::matcher::alias`), which records
//! which agent sends each name.
//!
//! The wire protocols (payloads in, answers out) and the agents' configuration files are in the
//! `hookbox-agents` crate; this module holds only names, so every crate can share them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::event::EventName;

/// A coding agent whose hook protocol hookbox speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    /// Anthropic's Claude Code: hookbox's own event model.
    Claude,
    /// OpenAI's Codex CLI: Claude Code's wire format with a strict answer schema.
    Codex,
    /// Google's Gemini CLI: its own event names, a top-level `decision`.
    Gemini,
    /// Cursor: camelCase events, `permission` and `agent_message`.
    Cursor,
    /// GitHub Copilot CLI and cloud agent: camelCase payloads without an event name.
    Copilot,
    /// VS Code agent hooks (Copilot Chat): a camelCase envelope, VS Code's tool names.
    #[serde(rename = "vscode")]
    VsCode,
    /// Windsurf Cascade: exit codes only.
    Windsurf,
    /// Moonshot's Kimi Code CLI: only a deny.
    Kimi,
    /// Alibaba's Qwen Code: Claude Code's hook system (its payloads and answers), Gemini CLI's
    /// tool names, and no rewrite.
    Qwen,
}

/// Gemini CLI's events (google-gemini/gemini-cli @ 5411f113 `docs/hooks/reference.md`).
const GEMINI: &[(&str, EventName)] = &[
    ("SessionStart", EventName::SessionStart),
    ("SessionEnd", EventName::SessionEnd),
    ("BeforeAgent", EventName::UserPromptSubmit),
    ("AfterAgent", EventName::Stop),
    ("BeforeTool", EventName::PreToolUse),
    ("AfterTool", EventName::PostToolUse),
    ("PreCompress", EventName::PreCompact),
    ("Notification", EventName::Notification),
];

/// Cursor's agent events (cursor.com/docs/hooks, late-2026 text): the general tool hooks and the
/// per-kind ones, several of them one hookbox event.
const CURSOR: &[(&str, EventName)] = &[
    ("preToolUse", EventName::PreToolUse),
    ("beforeShellExecution", EventName::PreToolUse),
    ("beforeMCPExecution", EventName::PreToolUse),
    ("beforeReadFile", EventName::PreToolUse),
    ("postToolUse", EventName::PostToolUse),
    ("afterShellExecution", EventName::PostToolUse),
    ("afterMCPExecution", EventName::PostToolUse),
    ("afterFileEdit", EventName::PostToolUse),
    ("postToolUseFailure", EventName::PostToolUseFailure),
    ("beforeSubmitPrompt", EventName::UserPromptSubmit),
    ("stop", EventName::Stop),
    ("subagentStart", EventName::SubagentStart),
    ("subagentStop", EventName::SubagentStop),
    ("sessionStart", EventName::SessionStart),
    ("sessionEnd", EventName::SessionEnd),
    ("preCompact", EventName::PreCompact),
];

/// GitHub Copilot's camelCase events (github/docs `cli-hooks-reference.md` @ 927566b0).
const COPILOT: &[(&str, EventName)] = &[
    ("sessionStart", EventName::SessionStart),
    ("sessionEnd", EventName::SessionEnd),
    ("userPromptSubmitted", EventName::UserPromptSubmit),
    ("preToolUse", EventName::PreToolUse),
    ("permissionRequest", EventName::PermissionRequest),
    ("postToolUse", EventName::PostToolUse),
    ("postToolUseFailure", EventName::PostToolUseFailure),
    ("agentStop", EventName::Stop),
    ("subagentStart", EventName::SubagentStart),
    ("subagentStop", EventName::SubagentStop),
    ("preCompact", EventName::PreCompact),
    ("errorOccurred", EventName::StopFailure),
    ("notification", EventName::Notification),
];

/// GitHub Copilot's PascalCase ("VS Code compatible") events: the same events, a snake_case
/// payload.
pub const COPILOT_PASCAL: &[(&str, EventName)] = &[
    ("SessionStart", EventName::SessionStart),
    ("SessionEnd", EventName::SessionEnd),
    ("UserPromptSubmit", EventName::UserPromptSubmit),
    ("PreToolUse", EventName::PreToolUse),
    ("PermissionRequest", EventName::PermissionRequest),
    ("PostToolUse", EventName::PostToolUse),
    ("PostToolUseFailure", EventName::PostToolUseFailure),
    ("Stop", EventName::Stop),
    ("SubagentStart", EventName::SubagentStart),
    ("SubagentStop", EventName::SubagentStop),
    ("PreCompact", EventName::PreCompact),
    ("ErrorOccurred", EventName::StopFailure),
    ("Notification", EventName::Notification),
];

/// VS Code's events, all with Claude Code's names (microsoft/vscode-docs hooks reference @
/// 6d3b01a5).
const VSCODE: &[(&str, EventName)] = &[
    ("SessionStart", EventName::SessionStart),
    ("UserPromptSubmit", EventName::UserPromptSubmit),
    ("PreToolUse", EventName::PreToolUse),
    ("PostToolUse", EventName::PostToolUse),
    ("PreCompact", EventName::PreCompact),
    ("SubagentStart", EventName::SubagentStart),
    ("SubagentStop", EventName::SubagentStop),
    ("Stop", EventName::Stop),
];

/// Windsurf's events (docs.windsurf.com/windsurf/cascade/hooks, the twelve-event text). It has no
/// tool names: the event says the kind.
const WINDSURF: &[(&str, EventName)] = &[
    ("pre_read_code", EventName::PreToolUse),
    ("pre_write_code", EventName::PreToolUse),
    ("pre_run_command", EventName::PreToolUse),
    ("pre_mcp_tool_use", EventName::PreToolUse),
    ("post_read_code", EventName::PostToolUse),
    ("post_write_code", EventName::PostToolUse),
    ("post_run_command", EventName::PostToolUse),
    ("post_mcp_tool_use", EventName::PostToolUse),
    ("pre_user_prompt", EventName::UserPromptSubmit),
    ("post_cascade_response", EventName::Stop),
    ("post_cascade_response_with_transcript", EventName::Stop),
    ("post_setup_worktree", EventName::WorktreeCreate),
];

/// Kimi's events, with Claude Code's names (MoonshotAI/kimi-cli @ 4a550eff
/// `src/kimi_cli/hooks/events.py`).
const KIMI: &[(&str, EventName)] = &[
    ("PreToolUse", EventName::PreToolUse),
    ("PostToolUse", EventName::PostToolUse),
    ("PostToolUseFailure", EventName::PostToolUseFailure),
    ("UserPromptSubmit", EventName::UserPromptSubmit),
    ("Stop", EventName::Stop),
    ("StopFailure", EventName::StopFailure),
    ("SessionStart", EventName::SessionStart),
    ("SessionEnd", EventName::SessionEnd),
    ("SubagentStart", EventName::SubagentStart),
    ("SubagentStop", EventName::SubagentStop),
    ("PreCompact", EventName::PreCompact),
    ("PostCompact", EventName::PostCompact),
    ("Notification", EventName::Notification),
];

/// Qwen Code's events that hookbox handles, all with Claude Code's names (the 22 of
/// `@qwen-code/qwen-code` 0.24.4's `HookEventName` but its own `SessionDelete`, `TodoCreated` and
/// `TodoCompleted`).
const QWEN: &[(&str, EventName)] = &[
    ("PreToolUse", EventName::PreToolUse),
    ("PostToolUse", EventName::PostToolUse),
    ("PostToolUseFailure", EventName::PostToolUseFailure),
    ("PostToolBatch", EventName::PostToolBatch),
    ("PermissionRequest", EventName::PermissionRequest),
    ("PermissionDenied", EventName::PermissionDenied),
    ("UserPromptSubmit", EventName::UserPromptSubmit),
    ("UserPromptExpansion", EventName::UserPromptExpansion),
    ("Stop", EventName::Stop),
    ("StopFailure", EventName::StopFailure),
    ("SubagentStart", EventName::SubagentStart),
    ("SubagentStop", EventName::SubagentStop),
    ("SessionStart", EventName::SessionStart),
    ("SessionEnd", EventName::SessionEnd),
    ("PreCompact", EventName::PreCompact),
    ("PostCompact", EventName::PostCompact),
    ("Notification", EventName::Notification),
    ("InstructionsLoaded", EventName::InstructionsLoaded),
    ("MessageDisplay", EventName::MessageDisplay),
];

/// Codex's events, all with Claude Code's names (its hooks page; `SessionEnd`, `StopFailure`,
/// `Interrupt` per later releases).
pub const CODEX_EVENTS: &[EventName] = &[
    EventName::SessionStart,
    EventName::SubagentStart,
    EventName::UserPromptSubmit,
    EventName::PreToolUse,
    EventName::PermissionRequest,
    EventName::PostToolUse,
    EventName::PreCompact,
    EventName::PostCompact,
    EventName::SubagentStop,
    EventName::Stop,
    EventName::SessionEnd,
    EventName::StopFailure,
    EventName::Interrupt,
];

/// Events agents fire that no hookbox event stands for, and why: named in the error a payload
/// of one gets, and never installed.
const UNHANDLED: &[(Agent, &[&str], &str)] = &[
    (
        Agent::Gemini,
        &["BeforeModel", "AfterModel", "BeforeToolSelection"],
        "is about a model request, which no hookbox event carries; leave it out of the configuration",
    ),
    (
        Agent::Cursor,
        &["afterAgentResponse", "afterAgentThought"],
        "carries the agent's text after the fact, which no hookbox event stands for; leave it out of the configuration",
    ),
    (
        Agent::Cursor,
        &["beforeTabFileRead", "afterTabFileEdit", "workspaceOpen"],
        "is about Tab completions or the window, not the agent; leave it out of the configuration",
    ),
    (
        Agent::Qwen,
        &["SessionDelete", "TodoCreated", "TodoCompleted"],
        "is Qwen Code's own, with no hookbox equivalent; leave it out of the configuration",
    ),
    (
        Agent::Copilot,
        &["userPromptTransformed", "preMcpToolCall"],
        "is undocumented and has no hookbox equivalent (preToolUse already covers MCP calls); leave it out of the configuration",
    ),
];

impl Agent {
    /// Every agent, in the order of the docs' tables.
    pub const ALL: [Agent; 9] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Copilot,
        Agent::VsCode,
        Agent::Windsurf,
        Agent::Kimi,
        Agent::Qwen,
    ];

    /// The name on the command line (`--agent NAME`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::VsCode => "vscode",
            Agent::Windsurf => "windsurf",
            Agent::Kimi => "kimi",
            Agent::Qwen => "qwen",
        }
    }

    /// The agent's name as people write it, for messages.
    pub fn display_name(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
            Agent::Cursor => "Cursor",
            Agent::Copilot => "GitHub Copilot",
            Agent::VsCode => "VS Code",
            Agent::Windsurf => "Windsurf",
            Agent::Kimi => "Kimi Code CLI",
            Agent::Qwen => "Qwen Code",
        }
    }

    /// The agent's own event names and the hookbox event each one is (several native events
    /// may be one hookbox event: Cursor's `beforeShellExecution` and `preToolUse` are both
    /// `PreToolUse`). Empty for the agents that use Claude Code's names for all of Claude
    /// Code's events (Claude Code itself; Codex, whose subset is [`CODEX_EVENTS`]). Copilot's
    /// are its camelCase names; its PascalCase ones are [`COPILOT_PASCAL`].
    pub fn events(self) -> &'static [(&'static str, EventName)] {
        match self {
            Agent::Claude | Agent::Codex => &[],
            Agent::Gemini => GEMINI,
            Agent::Cursor => CURSOR,
            Agent::Copilot => COPILOT,
            Agent::VsCode => VSCODE,
            Agent::Windsurf => WINDSURF,
            Agent::Kimi => KIMI,
            Agent::Qwen => QWEN,
        }
    }

    /// The hookbox event a native event name stands for.
    pub fn event_of(self, native: &str) -> Option<EventName> {
        match self {
            Agent::Claude | Agent::Codex => native.parse().ok(),
            // Copilot's PascalCase names select its "VS Code compatible" payload; VS Code reads
            // Copilot's hook files, converting their camelCase names.
            Agent::Copilot | Agent::VsCode => COPILOT
                .iter()
                .chain(COPILOT_PASCAL)
                .find(|(n, _)| *n == native)
                .map(|(_, e)| *e),
            _ => self
                .events()
                .iter()
                .find(|(n, _)| *n == native)
                .map(|(_, e)| *e),
        }
    }

    /// Why an event the agent fires is not one hookbox handles (so its hooks are not installed
    /// there), or `None` when it is not such an event.
    pub fn unhandled_why(self, native: &str) -> Option<&'static str> {
        UNHANDLED
            .iter()
            .find(|(a, names, _)| *a == self && names.contains(&native))
            .map(|(_, _, why)| *why)
    }

    /// The event names only this agent fires (none of Claude Code's), handled or not: a payload
    /// naming one is this agent's.
    pub fn own_event_names(self) -> impl Iterator<Item = &'static str> {
        let unhandled = UNHANDLED
            .iter()
            .filter(move |(a, _, _)| *a == self)
            .flat_map(|(_, names, _)| names.iter().copied());
        self.events()
            .iter()
            .map(|(n, _)| *n)
            .chain(unhandled)
            .filter(|n| n.parse::<EventName>().is_err())
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An agent name that is not one of [`Agent::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown agent `{0}`; one of claude, codex, gemini, cursor, copilot, vscode, windsurf, kimi, qwen"
)]
pub struct UnknownAgent(pub String);

impl FromStr for Agent {
    type Err = UnknownAgent;
    fn from_str(s: &str) -> Result<Agent, UnknownAgent> {
        Agent::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| UnknownAgent(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Agent::ALL {
            assert_eq!(a.as_str().parse::<Agent>(), Ok(a));
        }
        assert!("claud".parse::<Agent>().is_err());
    }

    #[test]
    fn gemini_s_own_names_are_its_event_table_and_its_model_events() {
        let own: Vec<&str> = Agent::Gemini.own_event_names().collect();
        for n in ["BeforeTool", "AfterAgent", "PreCompress", "BeforeModel"] {
            assert!(own.contains(&n), "{n}");
        }
        // Shared with Claude Code: not proof of a Gemini payload.
        assert!(!own.contains(&"SessionStart"));
        assert_eq!(
            Agent::Gemini.event_of("BeforeTool"),
            Some(EventName::PreToolUse)
        );
        assert!(Agent::Gemini.unhandled_why("BeforeModel").is_some());
        assert!(Agent::Gemini.unhandled_why("BeforeTool").is_none());
    }
}
