//! The Stop loop of one turn: an agent calls the Stop hooks when the model would end the turn;
//! when they ask to continue, it sends the follow-up as the next user message and, when the
//! model ends again, calls them again with `stop_hook_active: true` — at most `cap` times.

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
