//! What every renderer starts from: the aggregated verdict flattened into what it asks the
//! agent to do ([`Plan`]), the hooks that failed inside hookbox ([`Failures`]), and the answer a
//! renderer produces ([`Answer`]). The safe-side texts every agent shares live here too, so the
//! same verdict is explained the same way in every agent.

use serde_json::Value;

use hookbox_core::aggregate::Verdict;
use hookbox_core::output::{DEFAULT_STOP_REASON, PermissionDecision};
use hookbox_core::report::HookReport;
use hookbox_core::rule::FailMode;

use super::Agent;

/// What an agent is asked to do, from an aggregated verdict.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Plan {
    /// A permission decision (tool events, `PermissionRequest`, `PreModelSwitch`).
    pub(crate) permission: Option<PermissionDecision>,
    /// Why (for a deny: the reason the model is shown).
    pub(crate) reason: Option<String>,
    /// A replacement tool input, in Claude Code's keys.
    pub(crate) updated_input: Option<Value>,
    /// Block the prompt or the event (`UserPromptSubmit`, events that can block; `Stop`: a
    /// blocking error without a continuation).
    pub(crate) block: Option<String>,
    /// Stop the agent (`continue: false`).
    pub(crate) stops: bool,
    /// Why it stops, when a hook said.
    pub(crate) stop_reason: Option<String>,
    /// `Stop`: keep the turn going with this as the next user message.
    pub(crate) follow_up: Option<String>,
    /// Contexts for the model, in rule order (dropped when the prompt is blocked).
    pub(crate) contexts: Vec<String>,
    /// Messages for the user, joined.
    pub(crate) system_message: Option<String>,
    /// `suppressOutput`.
    pub(crate) suppress_output: bool,
}

fn joined(messages: &[String]) -> Option<String> {
    (!messages.is_empty()).then(|| messages.join("\n"))
}

impl Plan {
    /// The plan of `verdict`.
    pub(crate) fn of(verdict: &Verdict) -> Plan {
        match verdict {
            Verdict::UserPromptSubmit(v) => {
                let blocked = v.blocking_error.is_some() || v.prevent_continuation;
                Plan {
                    block: v.blocking_error.clone(),
                    stops: v.prevent_continuation,
                    stop_reason: v.stop_reason.clone(),
                    // A blocked prompt is erased: contexts for it would reach nobody.
                    contexts: if blocked {
                        Vec::new()
                    } else {
                        v.additional_contexts.clone()
                    },
                    system_message: joined(&v.system_messages),
                    ..Plan::default()
                }
            }
            Verdict::PreToolUse(v) => Plan {
                permission: v.decision,
                reason: match v.decision {
                    Some(PermissionDecision::Deny) => v.reason.clone().or(v.blocking_error.clone()),
                    _ => v.reason.clone(),
                },
                updated_input: v.updated_input.clone(),
                stops: v.prevent_continuation,
                stop_reason: v.stop_reason.clone(),
                contexts: v.additional_contexts.clone(),
                system_message: joined(&v.system_messages),
                ..Plan::default()
            },
            Verdict::Stop(v) => Plan {
                follow_up: if v.force_continue {
                    v.follow_up_message.clone()
                } else {
                    None
                },
                block: if v.force_continue {
                    None
                } else {
                    v.blocking_error.clone()
                },
                stops: v.stop_reason.is_some(),
                stop_reason: v.stop_reason.clone(),
                contexts: v.additional_contexts.clone(),
                system_message: v.system_message.clone(),
                suppress_output: v.suppress_output,
                ..Plan::default()
            },
            // Observe-only (SPEC §5): compaction goes ahead whatever the hooks said.
            Verdict::PreCompact(_) => Plan::default(),
            Verdict::Event(v) => Plan {
                block: v.blocking_error.clone(),
                stops: v.prevent_continuation,
                stop_reason: v.stop_reason.clone(),
                contexts: v.additional_contexts.clone(),
                system_message: joined(&v.system_messages),
                ..Plan::default()
            },
        }
    }

    /// The permission decision is a deny.
    pub(crate) fn denies(&self) -> bool {
        self.permission == Some(PermissionDecision::Deny)
    }

    /// The deny's reason, never empty (Codex and Copilot need one).
    pub(crate) fn deny_reason(&self) -> String {
        self.reason
            .clone()
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| "Blocked by hook".to_owned())
    }

    /// The stop's reason, or the default one.
    pub(crate) fn stop_text(&self) -> String {
        self.stop_reason
            .clone()
            .unwrap_or_else(|| DEFAULT_STOP_REASON.to_owned())
    }

    /// The contexts as one text (Claude Code joins them the same way).
    pub(crate) fn context_text(&self) -> Option<String> {
        (!self.contexts.is_empty()).then(|| self.contexts.join("\n\n"))
    }
}

/// The deny an `ask` becomes where `agent` cannot ask (Codex, Windsurf, Kimi, Cursor's
/// `preToolUse`): the reason, and why it is a deny.
pub(crate) fn ask_as_deny(agent: Agent, reason: Option<&str>) -> String {
    let why = reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or("a hook asks for confirmation");
    format!(
        "{why} (hookbox: a hook asked to confirm this call; {} cannot ask, so it is denied — run it yourself if you approve)",
        agent.display_name()
    )
}

/// What Copilot's model receives instead of a prompt a hook blocked (`modifiedPrompt`): Copilot
/// CLI takes no block on a prompt, but replaces it — so the user's text never reaches the model,
/// and the model is told why, to say so.
pub(crate) fn withheld_prompt(reason: &str) -> String {
    format!(
        "(hookbox: a hook blocked the user's prompt, so it is withheld: {reason}. Tell the user their prompt was blocked and why; do not act on it.)"
    )
}

/// The deny a rewrite becomes where `agent` cannot apply it: names what the input would have been.
pub(crate) fn rewrite_as_deny(agent: Agent, updated: &Value, why: &str) -> String {
    let mut text = updated.to_string();
    const SHOWN: usize = 2_000;
    if let Some((i, _)) = text.char_indices().nth(SHOWN) {
        text.truncate(i);
        text.push('…');
    }
    format!(
        "hookbox: a hook rewrote this call's input to {text}; {} {why}, so the original call is denied — make the call with that input instead",
        agent.display_name()
    )
}

/// The hooks that failed inside hookbox (timeout, trap, sandbox refusal, spawn error), split by
/// what their rule's fail mode made of them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Failures {
    /// Failures that let the action proceed (fail-open): a warning each.
    pub open: Vec<String>,
    /// Failures that blocked (fail-closed): already a deny or block in the verdict.
    pub closed: Vec<String>,
}

impl Failures {
    /// The failures among `reports`.
    pub fn from_reports(reports: &[HookReport]) -> Failures {
        let mut f = Failures::default();
        for r in reports {
            let Some(failure) = &r.effect.failure else {
                continue;
            };
            // The same text as the hook's warning (`aggregate::warnings`), so it is said once.
            let text = format!(
                "{}: hook failed ({}): {}",
                r.hook.hook_name, failure.class, failure.message
            );
            let blocked =
                r.effect.block.is_some() || r.effect.permission == Some(PermissionDecision::Deny);
            if blocked {
                f.closed.push(text);
            } else {
                f.open.push(text);
            }
        }
        f
    }

    /// Whether no hook failed.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty() && self.closed.is_empty()
    }
}

/// What hookbox answers the agent: its stdout, stderr and exit code.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// Printed on stdout (JSON, or nothing).
    pub stdout: String,
    /// Printed on stderr first.
    pub stderr: String,
    /// The process's exit code.
    pub exit_code: u8,
    /// The agent reads stderr as the answer's reason (exit 2 on Codex, Windsurf, Kimi …):
    /// nothing but [`Answer::stderr`] may be written there.
    pub stderr_is_reason: bool,
    /// What the agent could not be told, and what was done instead (a deny for an `ask`, a
    /// dropped context): for stderr where the agent does not read it as the reason.
    pub notes: Vec<String>,
}

impl Answer {
    /// Exit `code` with `stdout`.
    pub(crate) fn out(stdout: impl Into<String>, code: u8) -> Answer {
        Answer {
            stdout: stdout.into(),
            exit_code: code,
            ..Answer::default()
        }
    }

    /// A block read from stderr: exit 2 with `reason`, nothing on stdout.
    pub(crate) fn block_on_stderr(reason: impl Into<String>) -> Answer {
        Answer {
            stderr: reason.into(),
            exit_code: 2,
            stderr_is_reason: true,
            ..Answer::default()
        }
    }

    /// A JSON answer (`{}` or empty stdout when there is nothing to say is the renderer's
    /// choice), exit `code`.
    pub(crate) fn json(v: &Value, code: u8) -> Answer {
        Answer::out(v.to_string(), code)
    }

    /// Adds notes.
    pub(crate) fn with_notes(mut self, notes: Vec<String>) -> Answer {
        self.notes.extend(notes);
        self
    }

    /// Everything for stderr: the answer's own text, then — unless stderr is the reason —
    /// `extra` lines (warnings, diagnostics) and the notes.
    pub fn stderr_text(&self, extra: &[String]) -> String {
        let mut out = self.stderr.clone();
        if !self.stderr_is_reason {
            for line in extra.iter().chain(self.notes.iter()) {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(line);
            }
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out
    }
}

/// The code and text each agent reads as "a hook failed, go on" (fail-open) when hookbox has
/// nothing else to say. Where a non-zero exit could be read as a block (Copilot's `preToolUse`
/// by one reading; Cursor with `failClosed`), or stderr could be parsed as the answer (Gemini
/// reads stderr when stdout is empty), it is exit 0 with an empty answer instead.
pub(crate) fn proceed_after_failure(agent: Agent, failures: &[String]) -> Answer {
    let text = failures.join("\n");
    match agent {
        // Non-blocking error: the action proceeds and the user sees the hook error.
        Agent::Claude | Agent::Codex | Agent::Kimi | Agent::Qwen => Answer {
            stderr: format!("hookbox: {text}"),
            exit_code: 1,
            ..Answer::default()
        },
        // Shown as a system message; exit 0 keeps any reading of the exit code out of it.
        Agent::Gemini | Agent::VsCode => Answer::json(
            &serde_json::json!({ "systemMessage": format!("hookbox: {text}") }),
            0,
        ),
        Agent::Cursor | Agent::Copilot => Answer {
            stdout: "{}".into(),
            stderr: format!("hookbox: {text}"),
            exit_code: 0,
            ..Answer::default()
        },
        Agent::Windsurf => Answer {
            stderr: format!("hookbox: {text}"),
            exit_code: 0,
            ..Answer::default()
        },
    }
}

/// [`super::render_error`] when not even the event's kind is known.
pub(crate) fn unknown_event_error(agent: Agent, message: &str, mode: FailMode) -> Answer {
    let text = format!("cannot run the hooks: {message}");
    match mode {
        FailMode::Block => Answer::block_on_stderr(format!("hookbox: {text}")),
        FailMode::Allow => proceed_after_failure(agent, &[text]),
    }
}
