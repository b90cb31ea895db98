//! Dialects: the four hook systems hookbox speaks. A dialect decides the payload's wire shape,
//! the exit-code table, the environment and the default timeout of a command hook.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::event::EventName;

/// Claude Code's default timeout for `command` and `http` hooks since 2.1.3: 600 s.
pub const CLAUDE_DEFAULT_TIMEOUT_SECS: f64 = 600.0;
/// Claude Code's default on `UserPromptSubmit`, `PreModelSwitch` and `PostModelSwitch`: 30 s.
pub const CLAUDE_PROMPT_TIMEOUT_SECS: f64 = 30.0;
/// Claude Code's default on `MessageDisplay`: 10 s.
pub const CLAUDE_MESSAGE_DISPLAY_TIMEOUT_SECS: f64 = 10.0;
/// Claude Code's `SessionEnd` budget: 1.5 s (a rule's own `timeout` raises it, up to
/// [`CLAUDE_SESSION_END_MAX_SECS`]).
pub const CLAUDE_SESSION_END_TIMEOUT_SECS: f64 = 1.5;
/// The most a `SessionEnd` hook may ask for in Claude Code: 60 s.
pub const CLAUDE_SESSION_END_MAX_SECS: f64 = 60.0;
/// Codex caps `SessionEnd` and `Interrupt` hooks at 3 s.
pub const CODEX_SHORT_EVENT_MAX_SECS: f64 = 3.0;

/// Which hook system a file was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Claude Code (settings files, `hooks/hooks.json` of `.claude-plugin` plugins); also Codex.
    Claude,
    /// The main source document's system (Agentao): root `plugin.json`, object matchers,
    /// `{event, data}` envelope payloads.
    Agentao,
    /// Agent Plugins / Ghast: root `plugin.json` with `extensions["ai.trapezohe.ghast"].hooks`.
    Ghast,
    /// The minimal `.hooks.json` design: environment variables, exit 1 blocks, exit 2 injects.
    Simple,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 4] = [
        Dialect::Claude,
        Dialect::Agentao,
        Dialect::Ghast,
        Dialect::Simple,
    ];

    /// The name used in manifests, `--dialect` and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Claude => "claude",
            Dialect::Agentao => "agentao",
            Dialect::Ghast => "ghast",
            Dialect::Simple => "simple",
        }
    }

    /// A command or http hook's timeout when the rule gives none, in seconds, on most events
    /// (SPEC §4.1): Claude Code's 600 (`claude`), the main source's 60 (`agentao`), 30
    /// (`simple`), 10 (`ghast`). [`Dialect::default_timeout_secs_for`] has the per-event ones.
    pub fn default_timeout_secs(self) -> f64 {
        match self {
            Dialect::Claude => CLAUDE_DEFAULT_TIMEOUT_SECS,
            Dialect::Agentao => 60.0,
            Dialect::Simple => 30.0,
            Dialect::Ghast => 10.0,
        }
    }

    /// The default timeout on `event`, in seconds. In the `claude` dialect, Claude Code's:
    /// 30 on `UserPromptSubmit` and the model-switch events, 10 on `MessageDisplay`, 1.5 on
    /// `SessionEnd`, and Codex's 3 on `Interrupt` (a Codex-only event); otherwise
    /// [`Dialect::default_timeout_secs`].
    pub fn default_timeout_secs_for(self, event: EventName) -> f64 {
        use EventName::*;
        match (self, event) {
            (Dialect::Claude, UserPromptSubmit | PreModelSwitch | PostModelSwitch) => {
                CLAUDE_PROMPT_TIMEOUT_SECS
            }
            (Dialect::Claude, MessageDisplay) => CLAUDE_MESSAGE_DISPLAY_TIMEOUT_SECS,
            (Dialect::Claude, SessionEnd) => CLAUDE_SESSION_END_TIMEOUT_SECS,
            (Dialect::Claude, Interrupt) => CODEX_SHORT_EVENT_MAX_SECS,
            _ => self.default_timeout_secs(),
        }
    }

    /// The largest timeout the dialect allows, in seconds (`ghast`: 30).
    pub fn max_timeout_secs(self) -> Option<f64> {
        match self {
            Dialect::Ghast => Some(30.0),
            _ => None,
        }
    }

    /// Whether an invalid rule fails the whole plugin (the ghast document says registration
    /// fails) rather than only that rule.
    pub fn invalid_rule_fails_plugin(self) -> bool {
        self == Dialect::Ghast
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dialect name hookbox does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect `{0}`; expected one of claude, agentao, ghast, simple")]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}
