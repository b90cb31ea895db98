//! A drop-in Claude Code command hook, as a `wasi:cli` component: reads the hook payload (JSON)
//! on stdin and answers the way a `PreToolUse` command hook does, always through JSON on stdout
//! with exit 0:
//!
//! - dangerous shell command: `hookSpecificOutput.permissionDecision: "deny"` with the reason in
//!   `permissionDecisionReason` (Claude Code blocks the call and shows the reason to the model),
//!   plus a diagnostic line on stderr;
//! - `git push --force`: `hookSpecificOutput.updatedInput`, no `permissionDecision` (the input
//!   changes, nothing is approved);
//! - anything else, or another event: no output.
//!
//! Why JSON rather than the classic "exit 2 blocks": a Rust `wasm32-wasip2` program can only
//! report exit 0 or 1 to its host (std imports `wasi:cli/exit@0.2.0`, which has no
//! `exit-with-code`; `ExitCode::from(2)` arrives as `wasi:cli/run` returning `err`, i.e. 1), and
//! exit 1 is a non-blocking warning in Claude Code's dialect: the call would proceed. The JSON
//! answer is Claude Code's recommended form anyway, and it means the same under hookbox.
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
            let reason = format!("cli-guard: the command {reason}");
            // stderr is for whoever reads the hook's log; the decision is the JSON on stdout.
            eprintln!("{reason}");
            let answer = json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            });
            println!("{answer}");
            Ok(ExitCode::SUCCESS)
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
