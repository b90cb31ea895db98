//! The exit-code tables of the four dialects (SPEC §4.1): how a command hook's exit code, stdout
//! and stderr become an [`Effect`]. Pure: the conformance suite drives it with scripted outputs.

use serde_json::Value;

use super::effect::{DEFAULT_STOP_FOLLOW_UP, Effect};
use super::failure::{FailureClass, HookFailure};
use super::raw::RawOutput;
use super::response::HookResponse;
use crate::dialect::Dialect;
use crate::event::{Event, EventName, json_type};
use crate::rule::FailMode;

/// Ghast: stdout longer than this many UTF-16 code units (after trimming) fails the lifecycle.
pub const GHAST_MAX_OUTPUT_UTF16: usize = 64_000;

/// What interpretation needs besides the output itself.
#[derive(Debug, Clone, Copy)]
pub struct Interpretation<'a> {
    /// The rule's dialect.
    pub dialect: Dialect,
    /// The event the hook ran for.
    pub event: &'a Event,
    /// What a failure means.
    pub fail_mode: FailMode,
    /// The timeout the hook ran under, for the timeout message.
    pub timeout_secs: f64,
}

impl Interpretation<'_> {
    /// Turns a command's output into an effect.
    pub fn interpret(&self, raw: &RawOutput) -> Effect {
        let mut effect = match self.dialect {
            Dialect::Claude | Dialect::Agentao => self.claude(raw),
            Dialect::Simple => self.simple(raw),
            Dialect::Ghast => self.ghast(raw),
        };
        if raw.stdout_truncated {
            effect
                .warnings
                .push("stdout exceeded the output cap and was truncated".into());
        }
        if raw.stderr_truncated {
            effect
                .warnings
                .push("stderr exceeded the output cap and was truncated".into());
        }
        effect
    }

    fn name(&self) -> EventName {
        self.event.name
    }

    fn fail(&self, class: FailureClass, message: String) -> Effect {
        Effect::from_failure(
            HookFailure::new(class, message),
            self.fail_mode,
            self.name(),
        )
    }

    /// An exit the dialect gives no meaning to: a warning, or under fail-closed (`onFailure:
    /// "block"`, as in Claude Code ≥ 2.1.295) a failure that blocks. 126 and 127 are the shell
    /// saying it could not run the program.
    fn unexpected_exit(&self, code: Option<i32>, warning: String, stderr_line: &str) -> Effect {
        if self.fail_mode == FailMode::Allow {
            let mut e = Effect::default();
            e.warnings.push(warning);
            return e;
        }
        let (class, what) = match code {
            Some(126) => (
                FailureClass::SpawnError,
                "the program could not be executed (exit 126)".to_owned(),
            ),
            Some(127) => (
                FailureClass::SpawnError,
                "the program was not found (exit 127)".to_owned(),
            ),
            Some(c) => (
                FailureClass::InvalidOutput,
                format!("exited with code {c}, which is neither an answer nor a block"),
            ),
            None => (
                FailureClass::InvalidOutput,
                "was killed by a signal".to_owned(),
            ),
        };
        let message = if stderr_line.is_empty() {
            what
        } else {
            format!("{what}: {stderr_line}")
        };
        self.fail(class, message)
    }

    fn timeout(&self) -> Effect {
        self.fail(
            FailureClass::Timeout,
            format!("hook timed out after {}s and was killed", self.timeout_secs),
        )
    }

    /// Parses stdout as a JSON object when it starts with `{`: `None` when it is not JSON at all,
    /// `Some(Err)` when it is JSON of the wrong shape.
    fn json(stdout: &str) -> Option<Result<(Value, HookResponse), String>> {
        let t = stdout.trim();
        if !t.starts_with('{') {
            return None;
        }
        let v: Value = serde_json::from_str(t).ok()?;
        Some(
            HookResponse::from_json(&v)
                .map(|r| (v, r))
                .map_err(|e| e.to_string()),
        )
    }

    fn structured(&self, parsed: Result<(Value, HookResponse), String>) -> Effect {
        match parsed {
            Ok((_, r)) => {
                let mut e = Effect::from_response(self.event, r.clone());
                if let Some(n) = r.hook_event_name.filter(|n| n != self.name().as_str()) {
                    e.warnings.push(format!(
                        "hookSpecificOutput.hookEventName is `{n}` but the event is `{}`",
                        self.name()
                    ));
                }
                e
            }
            Err(msg) => self.fail(FailureClass::InvalidOutput, msg),
        }
    }

    /// Claude Code (and the main source): 0 → JSON or text; 2 → block with stderr; other →
    /// non-blocking error unless stdout is a JSON object, which then decides.
    fn claude(&self, raw: &RawOutput) -> Effect {
        if raw.timed_out {
            return self.timeout();
        }
        match raw.exit_code {
            Some(0) => match Self::json(&raw.stdout) {
                Some(parsed) => self.structured(parsed),
                None => self.plain_text(raw.stdout.trim()),
            },
            Some(2) => {
                let mut e = match Self::json(&raw.stdout) {
                    Some(Ok((_, r))) => Effect::from_response(self.event, r),
                    _ => Effect::default(),
                };
                self.exit_two(&mut e, raw.stderr.trim());
                e
            }
            code => match Self::json(&raw.stdout) {
                Some(Ok((_, r))) => Effect::from_response(self.event, r),
                _ => self.unexpected_exit(
                    code,
                    match code {
                        Some(c) => format!(
                            "Failed with non-blocking status code {c}: {}",
                            raw.first_stderr_line()
                        ),
                        None => format!("hook was killed by a signal: {}", raw.first_stderr_line()),
                    },
                    raw.first_stderr_line(),
                ),
            },
        }
    }

    /// Plain-text stdout on exit 0: context where the event takes it, else only kept in logs.
    fn plain_text(&self, text: &str) -> Effect {
        let mut e = Effect::default();
        if text.is_empty() {
            return e;
        }
        let agentao_stop = self.dialect == Dialect::Agentao && self.name() == EventName::Stop;
        if self.name().plain_stdout_is_context() || agentao_stop {
            e.contexts.push(text.to_owned());
        }
        e
    }

    /// Exit 2 in Claude Code: a blocking error where the event can block, stderr as the reason
    /// (a JSON reason, if stdout carried one, wins).
    fn exit_two(&self, e: &mut Effect, stderr: &str) {
        let name = self.name();
        let reason = e
            .block
            .clone()
            .or_else(|| e.permission_reason.clone())
            .or_else(|| (!stderr.is_empty()).then(|| stderr.to_owned()));
        match name {
            EventName::Stop | EventName::SubagentStop => {
                if e.follow_up.is_none() {
                    e.follow_up = Some(reason.unwrap_or_else(|| DEFAULT_STOP_FOLLOW_UP.into()));
                }
            }
            EventName::PostToolUse | EventName::PostToolUseFailure => {
                if !stderr.is_empty() {
                    e.contexts.push(stderr.to_owned());
                }
            }
            EventName::PermissionRequest => {
                e.warnings.push(
                    "exit code 2 is not honoured on PermissionRequest; use the JSON decision"
                        .into(),
                );
            }
            n if n.can_block() || n == EventName::PreToolUse || n == EventName::PreCompact => {
                e.set_block(
                    n,
                    reason.unwrap_or_else(|| "hook exited with code 2".into()),
                );
            }
            EventName::Notification
            | EventName::PermissionDenied
            | EventName::InstructionsLoaded => {}
            _ => {
                if !stderr.is_empty() {
                    e.system_message = Some(stderr.to_owned());
                }
            }
        }
    }

    /// The simple `.hooks.json` dialect: 0 → JSON; 1 → block (stderr); 2 → inject stderr.
    fn simple(&self, raw: &RawOutput) -> Effect {
        if raw.timed_out {
            return self.timeout();
        }
        let stderr = raw.stderr.trim();
        match raw.exit_code {
            Some(0) => match Self::json(&raw.stdout) {
                Some(parsed) => self.structured(parsed),
                None => Effect::default(),
            },
            Some(1) => {
                let mut e = Effect::default();
                let reason = if stderr.is_empty() {
                    "blocked by hook (exit 1)".to_owned()
                } else {
                    stderr.to_owned()
                };
                let name = self.name();
                if name.can_block() || name == EventName::PreToolUse {
                    e.set_block(name, reason);
                } else {
                    e.system_message = Some(reason);
                    e.warnings.push(format!(
                        "exit 1 (block) has no effect on {name}: it cannot block"
                    ));
                }
                e
            }
            Some(2) => {
                let mut e = Effect::default();
                if !stderr.is_empty() {
                    e.contexts.push(stderr.to_owned());
                }
                e
            }
            code => self.unexpected_exit(
                code,
                match code {
                    Some(c) => format!(
                        "hook failed with exit code {c}: {}",
                        raw.first_stderr_line()
                    ),
                    None => format!("hook was killed by a signal: {}", raw.first_stderr_line()),
                },
                raw.first_stderr_line(),
            ),
        }
    }

    /// Ghast's table: timeout and non-zero (but 2) are warnings; 2 is a generic block that does
    /// not read stdout; on 0, malformed output fails the lifecycle.
    fn ghast(&self, raw: &RawOutput) -> Effect {
        if raw.timed_out {
            return self.timeout();
        }
        match raw.exit_code {
            Some(0) => self.ghast_success(raw.stdout.trim()),
            Some(2) => {
                let mut e = Effect::default();
                e.set_block(self.name(), "hook exited with code 2".into());
                e
            }
            code => self.unexpected_exit(
                code,
                match code {
                    Some(c) => format!("hook exited with code {c}; its output is ignored"),
                    None => "hook was killed by a signal; its output is ignored".into(),
                },
                raw.first_stderr_line(),
            ),
        }
    }

    fn lifecycle_failure(&self, message: String) -> Effect {
        // The ghast document: the lifecycle flow fails, whatever the rule's fail mode.
        let mut e = Effect::from_failure(
            HookFailure::new(FailureClass::InvalidOutput, message),
            FailMode::Block,
            self.name(),
        );
        if let Some(b) = e.block.take() {
            e.block = Some(format!("lifecycle failure: {b}"));
        }
        e
    }

    fn ghast_success(&self, out: &str) -> Effect {
        if out.is_empty() {
            return Effect::default();
        }
        let units = out.encode_utf16().count();
        if units > GHAST_MAX_OUTPUT_UTF16 {
            return self.lifecycle_failure(format!(
                "output is {units} UTF-16 code units; the limit is {GHAST_MAX_OUTPUT_UTF16}"
            ));
        }
        if !out.starts_with('{') {
            let mut e = Effect::default();
            e.contexts.push(out.to_owned());
            return e;
        }
        let v: Value = match serde_json::from_str(out) {
            Ok(v) => v,
            Err(err) => {
                return self.lifecycle_failure(format!(
                    "output starts with `{{` but is not valid JSON: {err}"
                ));
            }
        };
        // Ghast requires text contexts; our shared parser would also accept a list.
        for ctx in [
            v.get("additionalContext"),
            v.pointer("/hookSpecificOutput/additionalContext"),
        ]
        .into_iter()
        .flatten()
        {
            if !ctx.is_string() && !ctx.is_null() {
                return self.lifecycle_failure(format!(
                    "additionalContext must be a string, found {}",
                    json_type(ctx)
                ));
            }
        }
        let r = match HookResponse::from_json(&v) {
            Ok(r) => r,
            Err(err) => return self.lifecycle_failure(err.to_string()),
        };
        if let Some(n) = r
            .hook_event_name
            .as_deref()
            .filter(|n| *n != self.name().as_str())
        {
            return self.lifecycle_failure(format!(
                "hookSpecificOutput.hookEventName is `{n}` but the event is `{}`",
                self.name()
            ));
        }
        Effect::from_response(self.event, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::PermissionDecision;

    fn run(dialect: Dialect, event: EventName, raw: RawOutput) -> Effect {
        let ev = Event::new(event, "s", "/");
        Interpretation {
            dialect,
            event: &ev,
            fail_mode: FailMode::Allow,
            timeout_secs: 5.0,
        }
        .interpret(&raw)
    }

    #[test]
    fn claude_exit_zero_text_is_context_only_where_the_event_takes_it() {
        let e = run(
            Dialect::Claude,
            EventName::UserPromptSubmit,
            RawOutput::exited(0, "hello\n", ""),
        );
        assert_eq!(e.contexts, vec!["hello"]);
        let e = run(
            Dialect::Claude,
            EventName::PreToolUse,
            RawOutput::exited(0, "hello", ""),
        );
        assert!(e.is_empty());
        let e = run(
            Dialect::Claude,
            EventName::UserPromptSubmit,
            RawOutput::exited(0, "{not json", ""),
        );
        assert_eq!(e.contexts, vec!["{not json"], "invalid JSON is plain text");
    }

    #[test]
    fn claude_exit_two_blocks_with_stderr() {
        let e = run(
            Dialect::Claude,
            EventName::PreToolUse,
            RawOutput::exited(2, "", "dangerous\n"),
        );
        assert_eq!(e.permission, Some(PermissionDecision::Deny));
        assert_eq!(e.permission_reason.as_deref(), Some("dangerous"));
        let e = run(
            Dialect::Claude,
            EventName::Stop,
            RawOutput::exited(2, "", ""),
        );
        assert_eq!(e.follow_up.as_deref(), Some(DEFAULT_STOP_FOLLOW_UP));
        let e = run(
            Dialect::Claude,
            EventName::PostToolUse,
            RawOutput::exited(2, "", "lint failed"),
        );
        assert_eq!(e.contexts, vec!["lint failed"]);
    }

    #[test]
    fn claude_other_exit_is_non_blocking_unless_json_decides() {
        let e = run(
            Dialect::Claude,
            EventName::PreToolUse,
            RawOutput::exited(1, "", "boom\nmore"),
        );
        assert_eq!(
            e.warnings,
            vec!["Failed with non-blocking status code 1: boom"]
        );
        assert!(e.permission.is_none());
        let e = run(
            Dialect::Claude,
            EventName::PreToolUse,
            RawOutput::exited(
                1,
                r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
                "",
            ),
        );
        assert_eq!(e.permission, Some(PermissionDecision::Deny));
    }

    #[test]
    fn simple_exit_codes() {
        let e = run(
            Dialect::Simple,
            EventName::PreToolUse,
            RawOutput::exited(1, "", "no way"),
        );
        assert_eq!(e.permission, Some(PermissionDecision::Deny));
        let e = run(
            Dialect::Simple,
            EventName::PostToolUse,
            RawOutput::exited(2, "", "note this"),
        );
        assert_eq!(e.contexts, vec!["note this"]);
        let e = run(
            Dialect::Simple,
            EventName::PreToolUse,
            RawOutput::exited(
                0,
                r#"{"updatedInput":{"command":"ls -la"},"additionalContext":["a"],"permissionDecision":"allow"}"#,
                "",
            ),
        );
        assert_eq!(e.permission, Some(PermissionDecision::Allow));
        assert_eq!(e.contexts, vec!["a"]);
        assert!(e.updated_input.is_some());
    }

    #[test]
    fn ghast_table() {
        let e = run(
            Dialect::Ghast,
            EventName::UserPromptSubmit,
            RawOutput::exited(2, "{\"x\":1}", "why"),
        );
        assert_eq!(e.block.as_deref(), Some("hook exited with code 2"));
        let e = run(
            Dialect::Ghast,
            EventName::UserPromptSubmit,
            RawOutput::exited(1, "{bad", ""),
        );
        assert!(
            e.block.is_none() && e.warnings.len() == 1,
            "exit 1 with invalid JSON is only a warning"
        );
        let e = run(
            Dialect::Ghast,
            EventName::UserPromptSubmit,
            RawOutput::exited(0, "{bad", ""),
        );
        assert!(e.block.unwrap().starts_with("lifecycle failure"));
        let e = run(
            Dialect::Ghast,
            EventName::UserPromptSubmit,
            RawOutput::exited(
                0,
                r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x"}}"#,
                "",
            ),
        );
        assert_eq!(e.failure.unwrap().class, FailureClass::InvalidOutput);
        let e = run(
            Dialect::Ghast,
            EventName::UserPromptSubmit,
            RawOutput::exited(0, "é".repeat(64_001), ""),
        );
        assert!(e.block.is_some());
        let e = run(
            Dialect::Ghast,
            EventName::UserPromptSubmit,
            RawOutput::timed_out("", ""),
        );
        assert_eq!(e.failure.unwrap().class, FailureClass::Timeout);
    }
}
