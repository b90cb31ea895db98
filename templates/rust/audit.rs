//! {{name}}: an audit of tool calls (PostToolUse, every tool): logs one line per call through the
//! host's `log` (hookbox shows it with `HOOKBOX_LOG=info`, tagged with the rule) and says nothing
//! to the agent. The sandbox grants no files: to keep a log file, mount a folder `rw` in the rule.

use hookbox_guest::{Event, Hook, Response, host};

#[derive(Default)]
struct Audit;

impl Hook for Audit {
    fn on_post_tool_use(&self, event: &Event) -> Result<Response, String> {
        let tool = event.tool_name.as_deref().unwrap_or("unknown");
        // `{:?}`: a tool name with a newline in it cannot forge a second line.
        host::info(&format!("{{name}}: {tool:?} was called"));
        Ok(Response::none())
    }
}

hookbox_guest::export_hook!(Audit);
