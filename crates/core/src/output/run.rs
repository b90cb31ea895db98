//! From a finished run to an effect: the one place where a rule's handler type, dialect and
//! fail mode meet what its runner returned. Hosts and the conformance suite both call it.

use serde::{Deserialize, Serialize};

use super::effect::Effect;
use super::exit_codes::Interpretation;
use super::failure::{FailureClass, HookFailure};
use super::raw::RawOutput;
use super::response::HookResponse;
use crate::event::{Event, EventName};
use crate::limits::{PROMPT_PLACEHOLDER, Scope, TextLimits, bounded_replace};
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

/// The effect of a prompt rule: its text as context, within the default [`TextLimits`] (see
/// [`prompt_effect_within`]).
pub fn prompt_effect(text: &str, event: &Event) -> Effect {
    prompt_effect_within(text, event, &TextLimits::default())
}

/// The effect of a prompt rule: its text as context. On `UserPromptSubmit` each
/// `{userMessage}` is replaced by the prompt, as Agentao's hook system does — once per
/// occurrence, so the length is computed first and a text over
/// [`TextLimits::rule_text_bytes`] is written only up to it and marked: a prompt rule can
/// never turn a prompt into an answer many times its size, nor allocate one.
pub fn prompt_effect_within(text: &str, event: &Event, limits: &TextLimits) -> Effect {
    // Elsewhere the placeholder stays as written (replaced by itself, within the same bound).
    let with = match (event.name, event.prompt()) {
        (EventName::UserPromptSubmit, Some(p)) => p,
        _ => PROMPT_PLACEHOLDER,
    };
    let (text, cut) = bounded_replace(
        text,
        PROMPT_PLACEHOLDER,
        with,
        limits.rule_text_bytes,
        Scope::Rule,
    );
    let mut effect = Effect {
        contexts: vec![text],
        ..Effect::default()
    };
    if cut > 0 {
        effect.warnings.push(format!(
            "{cut} bytes of this prompt rule's text were cut: a rule's text is capped at {} bytes (rule_text_bytes)",
            limits.rule_text_bytes
        ));
    }
    effect
}

/// The effect of `rule` for `event` given what its runner returned; `default_fail` is the host
/// policy's fail mode for rules that do not set their own.
///
/// A rule's own `on_failure` / `onFailure` always decides. Without one, a timeout on an event
/// whose timeouts block (`PreModelSwitch`, as in Claude Code) fails closed, and everything
/// else follows `default_fail`.
///
/// The effect is within the default [`TextLimits`] (see [`effect_of_within`]).
pub fn effect_of(rule: &Rule, event: &Event, out: &RunOutput, default_fail: FailMode) -> Effect {
    effect_of_within(rule, event, out, default_fail, &TextLimits::default())
}

/// [`effect_of`] within `limits`: the effect's text cut to what one rule may add, and an
/// `updatedInput` over its limit a failure of the hook (`invalid_output`) under the rule's
/// fail mode.
pub fn effect_of_within(
    rule: &Rule,
    event: &Event,
    out: &RunOutput,
    default_fail: FailMode,
    limits: &TextLimits,
) -> Effect {
    let fail_mode = rule.on_failure.unwrap_or(default_fail);
    effect_unbounded(rule, event, out, default_fail).bounded(limits, fail_mode, event.name)
}

fn effect_unbounded(rule: &Rule, event: &Event, out: &RunOutput, default_fail: FailMode) -> Effect {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventData;
    use crate::limits::{CUT_MARKER, DEFAULT_RULE_TEXT_BYTES};

    fn prompt_event(prompt: &str) -> Event {
        let mut e = Event::new(EventName::UserPromptSubmit, "s", "/");
        e.data = EventData::UserPromptSubmit {
            prompt: prompt.to_owned(),
        };
        e
    }

    #[test]
    fn a_prompt_rule_expands_each_placeholder_within_the_limit() {
        let e = prompt_effect(
            "asked: {userMessage} / again: {userMessage}",
            &prompt_event("hi"),
        );
        assert_eq!(e.contexts, vec!["asked: hi / again: hi"]);
        assert!(e.warnings.is_empty());
    }

    #[test]
    fn a_prompt_rule_cannot_multiply_the_prompt() {
        // Issue 16, defect 1: 400 placeholders × an 8 KiB prompt gave a 15 MiB answer.
        let template = "{userMessage}".repeat(400);
        let e = prompt_effect(&template, &prompt_event(&"p".repeat(8 * 1024)));
        let text = &e.contexts[0];
        assert!(text.contains(CUT_MARKER), "the cut is visible");
        assert!(
            e.warnings[0].ends_with(
                "bytes of this prompt rule's text were cut: a rule's text is capped at 262144 bytes (rule_text_bytes)"
            ),
            "{:?}",
            e.warnings
        );
        // Text, marker and warning together are within one rule's share.
        assert!(
            e.text_len() <= DEFAULT_RULE_TEXT_BYTES,
            "{} bytes",
            e.text_len()
        );
        assert!(text.len() > DEFAULT_RULE_TEXT_BYTES - 1024);
    }

    #[test]
    fn a_prompt_rule_never_allocates_the_multiplied_prompt() {
        // 8,000 placeholders × 512 KiB aborted the server on allocation (4 GB): the length is
        // known before anything is built, and only the limit is written.
        let template = "{userMessage}".repeat(8_000);
        let e = prompt_effect(&template, &prompt_event(&"p".repeat(512 * 1024)));
        assert!(e.text_len() <= DEFAULT_RULE_TEXT_BYTES);
        let small = TextLimits {
            rule_text_bytes: 1000,
            ..TextLimits::default()
        };
        let prompt = "0123456789".repeat(100);
        let e = prompt_effect_within("{userMessage}", &prompt_event(&prompt), &small);
        assert!(e.contexts[0].starts_with("0123456789"));
        assert!(e.text_len() <= 1000, "{}", e.text_len());
    }

    #[test]
    fn every_runners_answer_is_cut_to_one_rules_share() {
        use crate::dialect::Dialect;
        use crate::matcher::Matcher;
        use crate::output::RawOutput;
        use crate::rule::{CommandSpec, RuleSource};
        let rule = |dialect| {
            Rule::new(
                0,
                EventName::UserPromptSubmit,
                Matcher::All,
                Handler::Command(CommandSpec::shell("guard", 60.0)),
                dialect,
                0,
                RuleSource::new("p", "hooks.json"),
            )
        };
        let event = prompt_event("hi");
        // Exit 2 blocks with stderr as the reason, in every dialect that blocks on it.
        for dialect in [Dialect::Claude, Dialect::Agentao] {
            let out = RunOutput::Command(RawOutput::exited(2, "", "r".repeat(1 << 20)));
            let e = effect_of(&rule(dialect), &event, &out, FailMode::Allow);
            let block = e.block.as_deref().unwrap();
            assert!(e.text_len() <= DEFAULT_RULE_TEXT_BYTES, "{dialect}");
            assert!(block.contains(CUT_MARKER), "{dialect}");
        }
        // 200,000 one-byte contexts in a typed answer are 64 contexts.
        let response = crate::output::HookResponse {
            additional_contexts: vec!["a".to_owned(); 200_000],
            ..crate::output::HookResponse::default()
        };
        let out = RunOutput::Response(Box::new(response));
        let e = effect_of(&rule(Dialect::Claude), &event, &out, FailMode::Allow);
        assert_eq!(e.contexts.len(), crate::limits::DEFAULT_RULE_CONTEXTS);
    }

    #[test]
    fn outside_user_prompt_submit_the_placeholder_stays_and_is_bounded() {
        let e = prompt_effect("keep {userMessage}", &Event::new(EventName::Stop, "s", "/"));
        assert_eq!(e.contexts, vec!["keep {userMessage}"]);
    }
}
