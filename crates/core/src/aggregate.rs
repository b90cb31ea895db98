//! Aggregation (SPEC §5): the reports of every hook that ran for one dispatch, folded into one
//! verdict **in rule declaration order**, whatever order the hooks finished in.
//!
//! One result type per kind of event: [`UserPromptSubmitResult`], [`PreToolUseResult`]
//! (also `PermissionRequest` and `PreModelSwitch`), [`StopHookResult`] (also `SubagentStop`), [`PreCompactResult`]
//! (observe-only: always `allow`) and [`EventResult`] for every other event. A re-checked
//! `PreToolUse` (the host runs the event's rules again on a rewritten input) is folded in by
//! [`merge_recheck`]. What a verdict carries is bounded ([`TextLimits`]): per rule and per
//! dispatch, cut with a visible marker.

mod bound;
mod event;
mod prompt;
mod recheck;
mod stop;
mod tool;

pub use event::{EventResult, PreCompactResult};
pub use prompt::UserPromptSubmitResult;
pub use recheck::{RECHECK_DENY_SUFFIX, merge_recheck};
pub use stop::{DEFAULT_STOP_REENTRY_CAP, StopHookResult};
pub use tool::PreToolUseResult;

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventName};
use crate::limits::TextLimits;
use crate::report::{Attachment, HookReport};

/// The outcome recorded in `HookFired` (the main source's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The agent goes on as it would have.
    Allow,
    /// A hook blocked (a prompt, a tool call, …).
    Block,
    /// Stop: a hook made the turn continue for another round.
    Continue,
    /// Stop: a hook made the turn continue although it already hit `max_iterations`.
    ContinueAtMaxIter,
    /// Stop: a hook asked to continue but the re-entry cap was reached; the turn ends.
    ReentryCapped,
}

impl Outcome {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Block => "block",
            Outcome::Continue => "continue",
            Outcome::ContinueAtMaxIter => "continue_at_max_iter",
            Outcome::ReentryCapped => "reentry_capped",
        }
    }
}

/// Loop state aggregation needs: how many times this turn's Stop hooks already re-entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopState {
    /// Re-entries so far in this turn (0 on the first Stop).
    pub reentries: u32,
    /// The most re-entries allowed (default [`DEFAULT_STOP_REENTRY_CAP`]).
    pub cap: u32,
}

impl Default for StopState {
    fn default() -> Self {
        StopState {
            reentries: 0,
            cap: DEFAULT_STOP_REENTRY_CAP,
        }
    }
}

/// The aggregated answer to one dispatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// `UserPromptSubmit`.
    UserPromptSubmit(UserPromptSubmitResult),
    /// `PreToolUse`, `PermissionRequest` and `PreModelSwitch` (permission decisions).
    PreToolUse(PreToolUseResult),
    /// `Stop` and `SubagentStop`.
    Stop(StopHookResult),
    /// `PreCompact`.
    PreCompact(PreCompactResult),
    /// Every other event.
    Event(EventResult),
}

impl Verdict {
    /// The outcome, as `HookFired` reports it.
    pub fn outcome(&self) -> Outcome {
        match self {
            Verdict::UserPromptSubmit(r) => r.outcome(),
            Verdict::PreToolUse(r) => r.outcome(),
            Verdict::Stop(r) => r.outcome,
            Verdict::PreCompact(_) => Outcome::Allow,
            Verdict::Event(r) => r.outcome(),
        }
    }

    /// The contexts to add to the conversation, in rule order.
    pub fn additional_contexts(&self) -> &[String] {
        match self {
            Verdict::UserPromptSubmit(r) => &r.additional_contexts,
            Verdict::PreToolUse(r) => &r.additional_contexts,
            Verdict::Stop(r) => &r.additional_contexts,
            Verdict::PreCompact(r) => &r.additional_contexts,
            Verdict::Event(r) => &r.additional_contexts,
        }
    }

    /// Messages for the user (`systemMessage`), in rule order (Stop's are joined in one).
    pub fn system_messages(&self) -> &[String] {
        match self {
            Verdict::UserPromptSubmit(r) => &r.system_messages,
            Verdict::PreToolUse(r) => &r.system_messages,
            Verdict::Stop(r) => r.system_message.as_slice(),
            Verdict::PreCompact(r) => &r.system_messages,
            Verdict::Event(r) => &r.system_messages,
        }
    }

    /// Every attachment, in rule order.
    pub fn messages(&self) -> &[Attachment] {
        match self {
            Verdict::UserPromptSubmit(r) => &r.messages,
            Verdict::PreToolUse(r) => &r.messages,
            Verdict::Stop(r) => &r.messages,
            Verdict::PreCompact(r) => &r.messages,
            Verdict::Event(r) => &r.messages,
        }
    }
}

/// Folds `reports` (any order) into the verdict for `event`. `stop` matters only for Stop.
/// The verdict carries at most the default [`TextLimits`] of text (see [`aggregate_within`]).
pub fn aggregate(event: &Event, reports: &[HookReport], stop: StopState) -> Verdict {
    aggregate_within(event, reports, stop, &TextLimits::default())
}

/// [`aggregate`] within `limits`: each rule adds at most `rule_text_bytes` (and
/// `rule_contexts` contexts), and all rules together at most `dispatch_text_bytes`, in rule
/// order — the first rules keep their text, a later one is cut (with a marker and a warning).
/// Reports within the limits (nearly all) are folded as they are, without a copy.
pub fn aggregate_within(
    event: &Event,
    reports: &[HookReport],
    stop: StopState,
    limits: &TextLimits,
) -> Verdict {
    // One report (most dispatches) is in order already: no vector to order it in.
    let one;
    let sorted: Vec<&HookReport>;
    let mut ordered: &[&HookReport] = match reports {
        [only] => {
            one = [only];
            &one
        }
        _ => {
            let mut all: Vec<&HookReport> = reports.iter().collect();
            all.sort_by_key(|r| r.hook.rule_index);
            sorted = all;
            &sorted
        }
    };
    // Nearly every dispatch fits: then the reports are folded as they are, with no copy.
    let bounded;
    let rebound: Vec<&HookReport>;
    if !bound::fits(ordered, limits) {
        bounded = bound::within_dispatch(ordered, limits);
        rebound = bounded.iter().map(|r| r.as_ref()).collect();
        ordered = &rebound;
    }
    match event.name {
        EventName::UserPromptSubmit => Verdict::UserPromptSubmit(prompt::aggregate(ordered)),
        EventName::PreToolUse | EventName::PermissionRequest | EventName::PreModelSwitch => {
            Verdict::PreToolUse(tool::aggregate(ordered))
        }
        EventName::Stop | EventName::SubagentStop => {
            Verdict::Stop(stop::aggregate(event, ordered, stop))
        }
        EventName::PreCompact => Verdict::PreCompact(event::aggregate_pre_compact(ordered)),
        name => Verdict::Event(event::aggregate(name, ordered)),
    }
}

/// Every warning of every hook, in rule order, prefixed with the hook's label — at most
/// [`DEFAULT_DISPATCH_TEXT_BYTES`](crate::limits::DEFAULT_DISPATCH_TEXT_BYTES) of them together
/// (the last one kept says how much more there was).
pub fn warnings(reports: &[HookReport]) -> Vec<String> {
    // Nearly every dispatch warns of nothing: then nothing is ordered or allocated.
    if reports.iter().all(|r| r.effect.warnings.is_empty()) {
        return Vec::new();
    }
    let mut ordered: Vec<&HookReport> = reports.iter().collect();
    ordered.sort_by_key(|r| r.hook.rule_index);
    let mut all: Vec<String> = ordered
        .iter()
        .flat_map(|r| {
            r.effect
                .warnings
                .iter()
                .map(move |w| format!("{}: {w}", r.hook.hook_name))
        })
        .collect();
    bound::warnings_within(&mut all, crate::limits::DEFAULT_DISPATCH_TEXT_BYTES);
    all
}

/// Attachments of `reports` in order (they are already ordered by the callers).
fn messages(reports: &[&HookReport]) -> Vec<Attachment> {
    // One vector for all: most reports yield exactly one attachment.
    let mut all = Vec::with_capacity(reports.len());
    for r in reports {
        r.attachments_into(&mut all);
    }
    all
}

/// Every hook's `systemMessage`, in rule order, whatever else the hook decided.
fn system_messages(reports: &[&HookReport]) -> Vec<String> {
    reports
        .iter()
        .filter_map(|r| r.effect.system_message.clone())
        .collect()
}

/// Contexts of `reports` in order.
fn contexts(reports: &[&HookReport]) -> Vec<String> {
    reports
        .iter()
        .flat_map(|r| r.effect.contexts.iter().cloned())
        .collect()
}
