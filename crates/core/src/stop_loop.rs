//! The Stop loop of one turn: an agent calls the Stop hooks when the model would end the turn;
//! when they ask to continue, it sends the follow-up as the next user message and, when the
//! model ends again, calls them again with `stop_hook_active: true` — at most `cap` times.
//!
//! [`StopLoop`] counts the re-entries of a loop hookbox drives itself (`hookbox dispatch`, the
//! demo). When an agent drives it, each Stop is a separate `hookbox hook` process and most agents
//! say only *whether* the turn was re-entered (`stop_hook_active`, a boolean), not how often: so
//! the count is kept between processes ([`StopCount`], stored by the caller per session and turn)
//! and the cap holds whatever the agent says.

use serde::{Deserialize, Serialize};

use crate::aggregate::{DEFAULT_STOP_REENTRY_CAP, StopHookResult, StopState};
use crate::event::Event;

/// What the agent does after a Stop dispatch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", content = "follow_up", rename_all = "snake_case")]
pub enum StopStep {
    /// Send this as the next user message and run another round.
    Continue(String),
    /// End the turn.
    Finish,
}

/// Re-entry bookkeeping for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopLoop {
    cap: u32,
    reentries: u32,
}

impl Default for StopLoop {
    fn default() -> Self {
        StopLoop::new(DEFAULT_STOP_REENTRY_CAP)
    }
}

impl StopLoop {
    /// A fresh turn allowing `cap` re-entries.
    pub fn new(cap: u32) -> StopLoop {
        StopLoop { cap, reentries: 0 }
    }

    /// The state aggregation needs.
    pub fn state(&self) -> StopState {
        StopState {
            reentries: self.reentries,
            cap: self.cap,
        }
    }

    /// Re-entries so far.
    pub fn reentries(&self) -> u32 {
        self.reentries
    }

    /// Marks `event` as a re-entry when this is not the turn's first Stop.
    pub fn prepare(&self, event: &mut Event) {
        if let Some(s) = event.stop_data_mut() {
            s.stop_hook_active = s.stop_hook_active || self.reentries > 0;
        }
    }

    /// Records a Stop verdict and says what to do next.
    pub fn record(&mut self, result: &StopHookResult) -> StopStep {
        match (&result.follow_up_message, result.force_continue) {
            (Some(msg), true) => {
                self.reentries += 1;
                StopStep::Continue(msg.clone())
            }
            _ => StopStep::Finish,
        }
    }
}

/// The re-entry count of one agent turn, kept by hookbox between the `hookbox hook` processes of
/// its Stop events (the caller stores it per agent, session and turn). The agent's payload says
/// whether this Stop follows a continuation (`stop_hook_active`); the stored count says how many
/// continuations hookbox gave this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopCount {
    /// Continuations hookbox gave this turn so far.
    pub continued: u32,
}

impl StopCount {
    /// The count for a Stop event: none when the agent says the turn was not re-entered (a new
    /// turn starts at zero, whatever is stored), else the stored count — at least one, since the
    /// agent says a continuation happened (a count lost or swept restarts there, never at zero).
    pub fn at_stop(stop_hook_active: bool, stored: Option<u32>) -> StopCount {
        let continued = if stop_hook_active {
            stored.unwrap_or(1).max(1)
        } else {
            0
        };
        StopCount { continued }
    }

    /// The re-entries aggregation sees: the larger of this count and what the agent itself
    /// reports (Cursor's `loop_count` is exact).
    pub fn reentries(self, reported: u32) -> u32 {
        self.continued.max(reported)
    }

    /// What to store after the dispatch: the next count when the hooks continued the turn, else
    /// nothing (the turn ends; the record is removed).
    pub fn after(self, continues: bool) -> Option<u32> {
        continues.then(|| self.continued.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Stop hook that always continues, under a cap of 3, driven as an agent with only a
    /// boolean would drive it: the stored count makes the third re-entry the last.
    #[test]
    fn a_boolean_agent_s_loop_ends_at_the_cap() {
        let cap = 3;
        let mut stored = None;
        let mut active = false;
        let mut continuations = 0;
        for _ in 0..20 {
            let count = StopCount::at_stop(active, stored);
            let continues = count.reentries(u32::from(active)) < cap;
            stored = count.after(continues);
            if !continues {
                break;
            }
            continuations += 1;
            active = true;
        }
        assert_eq!(continuations, cap);
        assert_eq!(stored, None, "the turn's record is removed when it ends");
    }

    #[test]
    fn a_new_turn_starts_at_zero_and_a_lost_count_at_one() {
        assert_eq!(StopCount::at_stop(false, Some(2)).continued, 0);
        assert_eq!(StopCount::at_stop(true, None).continued, 1);
        assert_eq!(StopCount::at_stop(true, Some(0)).continued, 1);
        assert_eq!(StopCount::at_stop(true, Some(2)).reentries(5), 5);
        assert_eq!(
            StopCount {
                continued: u32::MAX
            }
            .after(true),
            Some(u32::MAX)
        );
    }
}
