//! The [`Hook`] trait: one method per lifecycle event, each defaulting to "no opinion".

use crate::{Event, Response};

/// A hook's decision logic.
///
/// Implement the `on_*` methods for the events the hook cares about; the rest return
/// [`Response::none`]. An `Err` is reported by the host as a failed hook (class `trap`, with the
/// message), and the rule's fail-open/fail-closed setting decides what that means — so a hook
/// that cannot decide (bad config, unreadable input) should return `Err` rather than guess.
///
/// Event names follow `hooks.json` (Claude Code's spelling). Which events a hook receives is
/// decided by the rule's event key and matcher, not by which methods it implements.
pub trait Hook {
    /// Dispatches on [`Event::name`](Event#structfield.name); override it to see every event
    /// in one place.
    fn handle(&self, event: &Event) -> Result<Response, String> {
        match event.name.as_str() {
            "SessionStart" => self.on_session_start(event),
            "SessionEnd" => self.on_session_end(event),
            "UserPromptSubmit" => self.on_user_prompt_submit(event),
            "PreToolUse" => self.on_pre_tool_use(event),
            "PermissionRequest" => self.on_permission_request(event),
            "PostToolUse" => self.on_post_tool_use(event),
            "PostToolUseFailure" => self.on_post_tool_use_failure(event),
            "Stop" => self.on_stop(event),
            "SubagentStart" => self.on_subagent_start(event),
            "SubagentStop" => self.on_subagent_stop(event),
            "PreCompact" => self.on_pre_compact(event),
            "Notification" => self.on_notification(event),
            _ => self.on_other(event),
        }
    }

    /// A session starts (`source`: `startup`, `resume`, `clear`, `compact`). Contexts are added
    /// to the session's start.
    fn on_session_start(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// A session ends (`reason`). Observe only.
    fn on_session_end(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// The user submitted `prompt`: add context ([`Response::context`]), block the turn
    /// ([`Response::block`]) or stop ([`Response::stop`]).
    fn on_user_prompt_submit(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// A tool is about to run: [`Response::deny`], [`Response::ask`], rewrite the input
    /// ([`Response::updated_input`]), or say nothing.
    fn on_pre_tool_use(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// The agent is about to ask the user for permission: decide instead of the user.
    fn on_permission_request(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// A tool ran (`tool_response`): add context.
    fn on_post_tool_use(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// A tool failed: add context.
    fn on_post_tool_use_failure(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// The turn is about to end: [`Response::continue_with`] keeps it going (check
    /// [`Event::may_force_continue`] first).
    fn on_stop(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// A subagent starts.
    fn on_subagent_start(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// A subagent is about to end; as [`Hook::on_stop`].
    fn on_subagent_stop(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// The context is about to be compacted (`trigger`, [`Event::compaction_type`]).
    /// Observe-only: whatever the hook returns, compaction goes ahead.
    fn on_pre_compact(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// The agent shows a notification.
    fn on_notification(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }

    /// Any other event name (the host dispatches every Claude Code event).
    fn on_other(&self, event: &Event) -> Result<Response, String> {
        no_opinion(event)
    }
}

// Takes the event so each default body reads the same and stays a one-liner.
fn no_opinion(_event: &Event) -> Result<Response, String> {
    Ok(Response::none())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers with the name of the method that ran, so dispatch is observable.
    struct Probe;

    impl Hook for Probe {
        fn on_pre_tool_use(&self, _: &Event) -> Result<Response, String> {
            Ok(Response::context("pre_tool_use"))
        }
        fn on_stop(&self, _: &Event) -> Result<Response, String> {
            Ok(Response::context("stop"))
        }
        fn on_other(&self, event: &Event) -> Result<Response, String> {
            Err(format!("other: {}", event.name))
        }
    }

    fn event(name: &str) -> Event {
        Event {
            name: name.into(),
            ..Event::default()
        }
    }

    #[test]
    fn dispatches_by_event_name() {
        assert_eq!(
            Probe.handle(&event("PreToolUse")),
            Ok(Response::context("pre_tool_use"))
        );
        assert_eq!(Probe.handle(&event("Stop")), Ok(Response::context("stop")));
        assert_eq!(
            Probe.handle(&event("WorktreeCreate")),
            Err("other: WorktreeCreate".into())
        );
    }

    #[test]
    fn unimplemented_events_have_no_opinion() {
        for name in [
            "SessionStart",
            "SessionEnd",
            "UserPromptSubmit",
            "PermissionRequest",
            "PostToolUse",
            "PostToolUseFailure",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "Notification",
        ] {
            assert_eq!(Probe.handle(&event(name)), Ok(Response::none()), "{name}");
        }
    }
}
