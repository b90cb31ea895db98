//! Empty-answer rescue (recipe 3): when a turn ends with an empty assistant message, keep the
//! turn going once with a follow-up asking for the final answer.
//!
//! The re-entry guard is the point of the recipe: a turn that is already continuing because of
//! a Stop hook (`stop_hook_active`), or that hit the iteration limit (`at_max_iter`), is left to
//! end, so a model that keeps answering nothing cannot loop.

use hookbox_guest::{Event, Hook, Response, host};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// The message sent as the next user turn.
    follow_up: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            follow_up: "Your last reply was empty. Please give your final answer based on the \
                        context so far."
                .to_owned(),
        }
    }
}

#[derive(Default)]
struct EmptyAnswerRescue;

impl Hook for EmptyAnswerRescue {
    fn on_stop(&self, event: &Event) -> Result<Response, String> {
        if !needs_rescue(event) {
            return Ok(Response::none());
        }
        let Config { follow_up } = host::config()?;
        host::info("empty final answer: asking for another round");
        Ok(Response::continue_with(follow_up))
    }
}

/// An empty (or whitespace) last message, and another round is safe. An absent message means
/// the agent does not report it: no rescue on a guess.
fn needs_rescue(event: &Event) -> bool {
    event.may_force_continue()
        && event
            .last_assistant_message
            .as_deref()
            .is_some_and(|message| message.trim().is_empty())
}

hookbox_guest::export_hook!(EmptyAnswerRescue);

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(message: Option<&str>) -> Event {
        Event {
            name: "Stop".into(),
            last_assistant_message: message.map(Into::into),
            turn_end_reason: Some("final_response".into()),
            ..Event::default()
        }
    }

    #[test]
    fn empty_or_blank_answers_are_rescued() {
        assert!(needs_rescue(&stop(Some(""))));
        assert!(needs_rescue(&stop(Some(" \n\t"))));
    }

    #[test]
    fn real_or_unknown_answers_are_left_alone() {
        assert!(!needs_rescue(&stop(Some("Done."))));
        assert!(!needs_rescue(&stop(None)));
    }

    #[test]
    fn reentry_guards_win() {
        let mut event = stop(Some(""));
        event.stop_hook_active = true;
        assert!(!needs_rescue(&event));

        let mut event = stop(Some(""));
        event.turn_end_reason = Some("max_iterations".into());
        assert!(!needs_rescue(&event));
    }
}
