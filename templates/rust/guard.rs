//! {{name}}: a guard on shell commands (PreToolUse, matcher Bash). When the command contains one
//! of the patterns of `DENY`, answers a deny with its reason (the agent shows the model the
//! reason); otherwise no decision, so the agent's own permission flow applies.

use hookbox_guest::{Event, Hook, Response};

/// The commands {{name}} refuses: patterns matched as plain text inside the command. Edit the
/// list, rebuild (`../build.sh`), then run `hookbox test` (and add a case to tests/ for each).
const DENY: &[&str] = &["rm -rf /", "git push --force", "mkfs"];

#[derive(Default)]
struct Guard;

impl Hook for Guard {
    fn on_pre_tool_use(&self, event: &Event) -> Result<Response, String> {
        let Some(command) = event.command() else {
            return Ok(Response::none());
        };
        Ok(match denied(&command) {
            Some(pattern) => Response::deny(format!("{{name}}: `{pattern}` is not allowed here")),
            None => Response::none(),
        })
    }
}

/// The first pattern `command` contains.
fn denied(command: &str) -> Option<&'static str> {
    DENY.iter().copied().find(|p| command.contains(p))
}

hookbox_guest::export_hook!(Guard);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_pattern_inside_a_command() {
        assert_eq!(denied("cd / && rm -rf / --no-preserve-root"), Some("rm -rf /"));
        assert_eq!(denied("git push origin main"), None);
    }
}
