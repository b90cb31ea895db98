//! Claude Code's `asyncRewake`: a background hook that exits 2 asks to wake the agent with its
//! stderr. hookbox cannot re-enter an agent's turn itself; it hands the request to whoever
//! embeds it ([`HookHost::subscribe_wakes`](crate::HookHost::subscribe_wakes)), which decides
//! (Claude Code delivers it as a new message to the model). `hookbox dispatch` prints them.

use serde::Serialize;

/// A background hook's request to wake the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wake {
    /// The session the hook ran for.
    pub session_id: String,
    /// The plugin.
    pub plugin: String,
    /// The hook (its command).
    pub hook: String,
    /// What to tell the agent: the hook's stderr.
    pub message: String,
}
