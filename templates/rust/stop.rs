//! {{name}}: a Stop hook. When the model ends its turn with an empty answer, keeps the turn going
//! once: the follow-up becomes the next user message. A turn that already continues because of a
//! Stop hook (`stop_hook_active`) or hit its iteration limit is left to end, so it cannot loop; an
//! agent that does not send the last message is left alone.

use hookbox_guest::{Event, Hook, Response};

#[derive(Default)]
struct Stop;

impl Hook for Stop {
    fn on_stop(&self, event: &Event) -> Result<Response, String> {
        let empty = event
            .last_assistant_message
            .as_deref()
            .is_some_and(|m| m.trim().is_empty());
        Ok(if empty && event.may_force_continue() {
            Response::continue_with(
                "Your last answer was empty: give your final answer now, based on what you found.",
            )
        } else {
            Response::none()
        })
    }
}

hookbox_guest::export_hook!(Stop);
