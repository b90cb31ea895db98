//! `UserPromptSubmit`: any block blocks the turn; contexts concatenate in rule order.

use serde::{Deserialize, Serialize};

use super::{Outcome, contexts, messages, system_messages};
use crate::report::{Attachment, HookReport};

/// The aggregated answer for a submitted prompt (the main source's `UserPromptSubmitResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UserPromptSubmitResult {
    /// The first blocking error in rule order: the turn is blocked (`[Blocked by hook] …`).
    pub blocking_error: Option<String>,
    /// A hook said "do not continue" (`[Hook stopped] …`).
    pub prevent_continuation: bool,
    /// Why, from the first hook that stopped.
    pub stop_reason: Option<String>,
    /// Contexts to inject before the user's message, in rule order.
    pub additional_contexts: Vec<String>,
    /// Messages for the user (`systemMessage`), in rule order, from every hook whatever else it
    /// decided.
    pub system_messages: Vec<String>,
    /// Every attachment, in rule order.
    pub messages: Vec<Attachment>,
}

impl UserPromptSubmitResult {
    /// `block` when blocked or stopped, else `allow`.
    pub fn outcome(&self) -> Outcome {
        if self.blocking_error.is_some() || self.prevent_continuation {
            Outcome::Block
        } else {
            Outcome::Allow
        }
    }
}

pub(super) fn aggregate(reports: &[&HookReport]) -> UserPromptSubmitResult {
    let stop_reason = reports.iter().find_map(|r| r.effect.stop.clone());
    UserPromptSubmitResult {
        blocking_error: reports.iter().find_map(|r| r.effect.block.clone()),
        prevent_continuation: stop_reason.is_some(),
        stop_reason,
        additional_contexts: contexts(reports),
        system_messages: system_messages(reports),
        messages: messages(reports),
    }
}
