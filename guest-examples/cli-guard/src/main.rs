//! A drop-in Claude Code command hook, as a `wasi:cli` component: reads the hook payload (JSON)
//! on stdin and answers the way a `PreToolUse` command hook does.
//!
//! - dangerous shell command: exit 2, reason on stderr (Claude Code blocks the call and shows
//!   the reason to the model);
//! - `git push --force`: exit 0 with `hookSpecificOutput.updatedInput` on stdout;
//! - anything else, or another event: exit 0, no output.
//!
//! The rules are `shell-guard`'s. Extra settings come from the environment variable
//! `SHELL_GUARD_RULES` (the rule's `env`), holding the same JSON object as shell-guard's
//! `config`, since a command hook has no typed `config`.

use std::io::Read as _;
use std::process::ExitCode;

use serde_json::{Value, json};
use shell_rules::{Rules, Verdict};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            // Exit 1 is Claude Code's non-blocking error: the call proceeds, with a warning.
            eprintln!("cli-guard: {message}");
            ExitCode::from(1)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let payload: Value =
        serde_json::from_str(&input).map_err(|e| format!("payload is not JSON: {e}"))?;
    if payload["hook_event_name"] != "PreToolUse" {
        return Ok(ExitCode::SUCCESS);
    }
    let Some(command) = payload["tool_input"]["command"].as_str() else {
        return Ok(ExitCode::SUCCESS);
    };
    let rules: Rules = match std::env::var("SHELL_GUARD_RULES") {
        Ok(json) => {
            serde_json::from_str(&json).map_err(|e| format!("invalid SHELL_GUARD_RULES: {e}"))?
        }
        Err(_) => Rules::default(),
    };
    match shell_rules::check(command, &rules) {
        Verdict::Pass => Ok(ExitCode::SUCCESS),
        Verdict::Deny(reason) => {
            eprintln!("cli-guard: the command {reason}");
            Ok(ExitCode::from(2))
        }
        Verdict::Rewrite { command, note } => {
            let mut updated = payload["tool_input"].clone();
            updated["command"] = command.into();
            let answer = json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "updatedInput": updated,
                    "additionalContext": note,
                }
            });
            println!("{answer}");
            Ok(ExitCode::SUCCESS)
        }
    }
}
