//! `Stop` (and `SubagentStop`): a hook can make the loop run another round (`force_continue` with
//! a follow-up message). Re-entry is capped so a hook cannot keep a turn alive forever; the
//! outcome says which exit point accepted the continuation, or that the cap refused it.

use serde::{Deserialize, Serialize};

use super::{Outcome, StopState, contexts, messages};
use crate::event::Event;
use crate::report::{Attachment, HookReport};

/// How many times Stop hooks may re-enter one turn by default (the main source's cap; Claude
/// Code's is 8).
pub const DEFAULT_STOP_REENTRY_CAP: u32 = 3;

/// The aggregated answer at the end of a turn (the main source's `StopHookResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopHookResult {
    /// A hook's blocking error. Never rendered as a marker: Stop speaks through the fields below.
    pub blocking_error: Option<String>,
    /// The loop must send `follow_up_message` as the next user message and run another round.
    pub force_continue: bool,
    /// The next user message when continuing (follow-ups of several hooks, in rule order).
    pub follow_up_message: Option<String>,
    /// Contexts, in rule order (echoed into the answer unless `suppress_output`).
    pub additional_contexts: Vec<String>,
    /// Why a hook stopped the agent (`continue: false`), which also cancels any continuation.
    pub stop_reason: Option<String>,
    /// Do not echo `additional_contexts` into the final answer.
    pub suppress_output: bool,
    /// Messages for the user, in rule order.
    pub system_message: Option<String>,
    /// Every attachment, in rule order.
    pub messages: Vec<Attachment>,
    /// How many rules were dispatched (not how many succeeded).
    pub matched_rule_count: usize,
    /// `allow`, `block`, `continue`, `continue_at_max_iter` or `reentry_capped`.
    pub outcome: Outcome,
}

fn join(parts: impl Iterator<Item = String>, sep: &str) -> Option<String> {
    let v: Vec<String> = parts.collect();
    (!v.is_empty()).then(|| v.join(sep))
}

pub(super) fn aggregate(
    event: &Event,
    reports: &[&HookReport],
    state: StopState,
) -> StopHookResult {
    let stop_reason = reports.iter().find_map(|r| r.effect.stop.clone());
    // `continue: false` takes precedence over any request to continue (Claude Code).
    let follow_up = if stop_reason.is_some() {
        None
    } else {
        join(
            reports.iter().filter_map(|r| r.effect.follow_up.clone()),
            "\n\n",
        )
    };
    let blocking_error = reports.iter().find_map(|r| r.effect.block.clone());
    let at_max_iter = event.stop_data().is_some_and(|s| s.at_max_iter());
    let (force_continue, outcome) = match (&follow_up, &blocking_error) {
        (Some(_), _) if state.reentries >= state.cap => (false, Outcome::ReentryCapped),
        (Some(_), _) if at_max_iter => (true, Outcome::ContinueAtMaxIter),
        (Some(_), _) => (true, Outcome::Continue),
        (None, Some(_)) => (false, Outcome::Block),
        (None, None) => (false, Outcome::Allow),
    };
    StopHookResult {
        blocking_error,
        force_continue,
        follow_up_message: follow_up,
        additional_contexts: contexts(reports),
        stop_reason,
        suppress_output: reports.iter().any(|r| r.effect.suppress_output),
        system_message: join(
            reports
                .iter()
                .filter_map(|r| r.effect.system_message.clone()),
            "\n",
        ),
        messages: messages(reports),
        matched_rule_count: reports.len(),
        outcome,
    }
}
