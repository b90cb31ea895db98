//! From a finished run to an effect: the one place where a rule's handler type, dialect and
//! fail mode meet what its runner returned. Hosts and the conformance suite both call it.

use serde::{Deserialize, Serialize};

use super::effect::Effect;
use super::exit_codes::Interpretation;
use super::failure::{FailureClass, HookFailure};
use super::raw::RawOutput;
use super::response::HookResponse;
use crate::event::{Event, EventName};
use crate::rule::{FailMode, Handler, Rule};

/// What a runner returned for one hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutput {
    /// A command-style run (native process or `wasi:cli` component): read by the dialect's table.
    Command(RawOutput),
    /// A typed answer (a `hook`-world component); boxed, it is much larger than the others.
    Response(Box<HookResponse>),
    /// The hook failed (timeout, trap, spawn error, …).
    Failed(HookFailure),
}

/// The effect of a prompt rule: its text as context. The main source substitutes a literal
/// `{userMessage}` with the prompt; so do we.
pub fn prompt_effect(text: &str, event: &Event) -> Effect {
    let text = match (event.name, event.prompt()) {
        (EventName::UserPromptSubmit, Some(p)) => text.replace("{userMessage}", p),
        _ => text.to_owned(),
    };
    Effect {
        contexts: vec![text],
        ..Effect::default()
    }
}

/// The effect of `rule` for `event` given what its runner returned; `default_fail` is the host
/// policy's fail mode for rules that do not set their own.
///
/// A rule's own `on_failure` / `onFailure` always decides. Without one, a timeout on an event
/// whose timeouts block (`PreModelSwitch`, as in Claude Code) fails closed, and everything
/// else follows `default_fail`.
pub fn effect_of(rule: &Rule, event: &Event, out: &RunOutput, default_fail: FailMode) -> Effect {
    let fail_mode = rule.on_failure.unwrap_or(default_fail);
    let timeout_mode = rule.on_failure.unwrap_or(if event.name.timeout_blocks() {
        FailMode::Block
    } else {
        default_fail
    });
    match out {
        RunOutput::Failed(f) if f.class == FailureClass::Timeout => {
            Effect::from_failure(f.clone(), timeout_mode, event.name)
        }
        RunOutput::Failed(f) => Effect::from_failure(f.clone(), fail_mode, event.name),
        RunOutput::Response(r) => {
            let mut e = Effect::from_response(event, (**r).clone());
            if let Some(n) = r
                .hook_event_name
                .as_deref()
                .filter(|n| *n != event.name.as_str())
            {
                e.warnings.push(format!(
                    "answer names event `{n}` but the event is `{}`",
                    event.name
                ));
            }
            e
        }
        RunOutput::Command(raw) => {
            let timeout_secs = match &rule.handler {
                Handler::Command(c) => c.timeout_secs,
                Handler::Wasm(w) => w.timeout_secs.unwrap_or(0.0),
                Handler::Http(h) => h.timeout_secs,
                Handler::Prompt { .. } => 0.0,
            };
            if let Handler::Http(_) = &rule.handler
                && let Some(e) = http_body_failure(raw, fail_mode, event)
            {
                return e;
            }
            Interpretation {
                dialect: rule.dialect,
                event,
                // A timed-out run's interpretation is only its timeout.
                fail_mode: if raw.timed_out {
                    timeout_mode
                } else {
                    fail_mode
                },
                timeout_secs,
            }
            .interpret(raw)
        }
    }
}

/// Claude Code (≥ 2.1.295): under `onFailure: "block"`, an http hook's 2xx answer whose body is
/// neither empty nor a JSON object blocks. Fail-open, such a body is read like a command's
/// plain stdout.
fn http_body_failure(raw: &RawOutput, fail_mode: FailMode, event: &Event) -> Option<Effect> {
    let body = raw.stdout.trim();
    let is_object = body.starts_with('{')
        && serde_json::from_str::<serde_json::Value>(body).is_ok_and(|v| v.is_object());
    if fail_mode != FailMode::Block || raw.exit_code != Some(0) || body.is_empty() || is_object {
        return None;
    }
    Some(Effect::from_failure(
        HookFailure::new(
            FailureClass::InvalidOutput,
            "the http hook answered 2xx with a body that is neither empty nor a JSON object",
        ),
        FailMode::Block,
        event.name,
    ))
}
