//! What a tenant answers while it has nothing approved to serve (issue 27 item 6): its first
//! load is held for approval (`hold_first_load`), or it started again with files that differ
//! from the approved ones and the approved rules are not there to serve. Running no rules would
//! answer every event with an allow — a guard's fail-open. Instead, as the operator's
//! [`HeldAnswer`] says: a deny naming the held load for the events a hook could block, and
//! "unavailable" for the others (or for all of them).

use std::sync::Arc;
use std::time::Instant;

use hookbox_core::EventName;
use hookbox_core::aggregate::{EventResult, PreToolUseResult, UserPromptSubmitResult, Verdict};
use hookbox_core::event::Event;
use hookbox_core::output::PermissionDecision;
use hookbox_trust::Digest;

use crate::dispatch::Dispatch;
use crate::tenant_id::TenantId;
use crate::tenant_trust::HeldAnswer;

/// A tenant that serves nothing approved, and the load waiting for approval, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The tenant.
    pub tenant: TenantId,
    /// The load waiting for approval (none when it was rejected and nothing else was loaded).
    pub pending: Option<Digest>,
    /// What the operator asked such a tenant to answer.
    pub answer: HeldAnswer,
    /// Why its approved snapshots are not served instead, when something was approved (a
    /// snapshot missing or corrupt, named); `None` when nothing was.
    pub why: Option<String>,
}

/// A dispatch a held tenant does not answer with a verdict (`hookbox serve`: 503
/// `unavailable`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HeldUnavailable(pub String);

impl Held {
    /// Why nothing runs, naming the held load.
    pub fn reason(&self) -> String {
        let load = match &self.pending {
            Some(d) => format!("its load {d} is held for an admin's approval"),
            None => "its last load was rejected".to_owned(),
        };
        let why = match &self.why {
            Some(why) => format!(" (its approved files cannot be served: {why})"),
            None => String::new(),
        };
        format!(
            "tenant `{}` has no approved rules to serve: {load}{why}, and nothing runs until a load is approved",
            self.tenant
        )
    }

    /// The answer to `event`: a deny (a verdict whose outcome is `block`) for an event a hook
    /// could block, when the operator asked for denies; [`HeldUnavailable`] otherwise.
    pub fn answer(&self, event: impl Into<Arc<Event>>) -> Result<Dispatch, HeldUnavailable> {
        let started = Instant::now();
        let event = event.into();
        let reason = self.reason();
        let verdict = match (self.answer, event.name) {
            (HeldAnswer::Unavailable, _) => None,
            (HeldAnswer::Deny, name) if name.takes_permission_decision() => {
                Some(Verdict::PreToolUse(PreToolUseResult {
                    decision: Some(PermissionDecision::Deny),
                    reason: Some(reason.clone()),
                    blocking_error: Some(reason.clone()),
                    ..PreToolUseResult::default()
                }))
            }
            (HeldAnswer::Deny, EventName::UserPromptSubmit) => {
                Some(Verdict::UserPromptSubmit(UserPromptSubmitResult {
                    blocking_error: Some(reason.clone()),
                    ..UserPromptSubmitResult::default()
                }))
            }
            // A Stop "block" keeps the agent going: not a fail-closed answer. Pre-compaction
            // is observe-only.
            (HeldAnswer::Deny, EventName::Stop | EventName::SubagentStop) => None,
            (HeldAnswer::Deny, name) if name.can_block() => Some(Verdict::Event(EventResult {
                event: Some(name),
                blocking_error: Some(reason.clone()),
                ..EventResult::default()
            })),
            (HeldAnswer::Deny, _) => None,
        };
        let Some(verdict) = verdict else {
            return Err(HeldUnavailable(reason));
        };
        Ok(Dispatch {
            event,
            verdict,
            fired: std::sync::OnceLock::from(None),
            reports: Vec::new(),
            rechecked: Vec::new(),
            warnings: vec![reason],
            matched_rule_count: 0,
            duration: started.elapsed(),
            trust: Vec::new(),
        })
    }
}
