//! `PreCompact` (observe-only) and every other event: contexts and messages; a block only where
//! the event can block.

use serde::{Deserialize, Serialize};

use super::{Outcome, contexts, messages, system_messages};
use crate::event::EventName;
use crate::report::{Attachment, HookReport};

/// `PreCompact`: observe-only. Its outcome is always `allow`, whatever the hooks say.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PreCompactResult {
    /// Contexts, in rule order (kept for the record; compaction goes ahead).
    pub additional_contexts: Vec<String>,
    /// A block a hook asked for, recorded and ignored.
    pub ignored_block: Option<String>,
    /// Messages for the user (`systemMessage`), in rule order.
    pub system_messages: Vec<String>,
    /// Every attachment, in rule order.
    pub messages: Vec<Attachment>,
}

/// Any other event: post-tool, session, notification, subagent start, Claude Code's others.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EventResult {
    /// The event.
    pub event: Option<EventName>,
    /// The first block in rule order, for events that can block (`ConfigChange`, `TaskCreated`, …).
    pub blocking_error: Option<String>,
    /// A hook stopped the agent (`continue: false`).
    pub prevent_continuation: bool,
    /// Why.
    pub stop_reason: Option<String>,
    /// Contexts, in rule order.
    pub additional_contexts: Vec<String>,
    /// Messages for the user, in rule order.
    pub system_messages: Vec<String>,
    /// Every attachment, in rule order.
    pub messages: Vec<Attachment>,
}

impl EventResult {
    /// `block` when blocked or stopped, else `allow`.
    pub fn outcome(&self) -> Outcome {
        if self.blocking_error.is_some() || self.prevent_continuation {
            Outcome::Block
        } else {
            Outcome::Allow
        }
    }
}

pub(super) fn aggregate_pre_compact(reports: &[&HookReport]) -> PreCompactResult {
    PreCompactResult {
        additional_contexts: contexts(reports),
        ignored_block: reports
            .iter()
            .find_map(|r| r.effect.block.clone().or_else(|| r.effect.stop.clone())),
        system_messages: system_messages(reports),
        messages: messages(reports),
    }
}

pub(super) fn aggregate(event: EventName, reports: &[&HookReport]) -> EventResult {
    let stop_reason = reports.iter().find_map(|r| r.effect.stop.clone());
    let mut system_messages = system_messages(reports);
    let block = reports.iter().find_map(|r| r.effect.block.clone());
    let blocking_error = if event.can_block() {
        block
    } else {
        // A block on an event that cannot block is only shown to the user.
        system_messages.extend(block);
        None
    };
    EventResult {
        event: Some(event),
        blocking_error,
        prevent_continuation: stop_reason.is_some(),
        stop_reason,
        additional_contexts: contexts(reports),
        system_messages,
        messages: messages(reports),
    }
}
