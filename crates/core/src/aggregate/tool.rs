//! `PreToolUse` (and `PermissionRequest`): precedence deny > defer > ask > allow across hooks;
//! the reason and the replacement input come from the first hook, in rule order, that decided.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Outcome, contexts, messages, system_messages};
use crate::output::PermissionDecision;
use crate::report::{Attachment, HookReport};

/// The aggregated answer for a tool call about to run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PreToolUseResult {
    /// The winning decision; `None` when no hook decided (the agent's own permission flow applies).
    pub decision: Option<PermissionDecision>,
    /// Why: the first reason, in rule order, among hooks that gave the winning decision.
    pub reason: Option<String>,
    /// Replacement tool input (first in rule order); never set when the call is denied.
    pub updated_input: Option<Value>,
    /// Contexts for the model, in rule order.
    pub additional_contexts: Vec<String>,
    /// Set when denied: the reason, shown to the model (`[Blocked by hook]` in the UI).
    pub blocking_error: Option<String>,
    /// A hook stopped the agent altogether (`continue: false`).
    pub prevent_continuation: bool,
    /// Why it stopped.
    pub stop_reason: Option<String>,
    /// Messages for the user (`systemMessage`), in rule order, from every hook whatever else it
    /// decided — hookify, for one, explains a deny only there.
    pub system_messages: Vec<String>,
    /// Every attachment, in rule order.
    pub messages: Vec<Attachment>,
}

impl PreToolUseResult {
    /// `block` when denied or stopped, else `allow`.
    pub fn outcome(&self) -> Outcome {
        if self.decision == Some(PermissionDecision::Deny) || self.prevent_continuation {
            Outcome::Block
        } else {
            Outcome::Allow
        }
    }
}

pub(super) fn aggregate(reports: &[&HookReport]) -> PreToolUseResult {
    let decision = reports
        .iter()
        .filter_map(|r| r.effect.permission)
        .max_by_key(|d| d.rank());
    let reason = decision.and_then(|d| {
        reports
            .iter()
            .filter(|r| r.effect.permission == Some(d))
            .find_map(|r| r.effect.permission_reason.clone())
    });
    let denied = decision == Some(PermissionDecision::Deny);
    let stop_reason = reports.iter().find_map(|r| r.effect.stop.clone());
    PreToolUseResult {
        decision,
        blocking_error: denied.then(|| reason.clone().unwrap_or_else(|| "Blocked by hook".into())),
        reason,
        updated_input: if denied {
            None
        } else {
            reports.iter().find_map(|r| r.effect.updated_input.clone())
        },
        additional_contexts: contexts(reports),
        prevent_continuation: stop_reason.is_some(),
        stop_reason,
        system_messages: system_messages(reports),
        messages: messages(reports),
    }
}
