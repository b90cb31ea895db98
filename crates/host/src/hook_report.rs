//! What running one hook gave ([`Ran`]) and the rule's report made of it ([`report`],
//! [`finish`]): the effect under the rule's fail mode, credentials redacted from what the hook
//! printed, the plugin named, the hook's metrics recorded once. The dispatch, the runners and
//! the trust gate all end a rule here.

use std::time::Instant;

use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, HookFailure, RunOutput, effect_of};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::Rule;

use crate::inner::{Inner, Loaded};
use crate::secrets::redact;

/// What running one hook gave, before it becomes a report.
pub(crate) struct Ran {
    pub(crate) out: RunOutput,
    /// Its output (stdout, stderr, logs) and the runner's notes, for the report and replay.
    pub(crate) text: Option<String>,
    /// Wasm fuel it consumed, when the engine meters fuel.
    pub(crate) fuel: Option<u64>,
}

impl Ran {
    /// A run that failed with `class` before giving any output.
    pub(crate) fn failed(class: FailureClass, message: impl Into<String>) -> Ran {
        Ran::failure(HookFailure::new(class, message))
    }

    /// A run that failed with `failure` before giving any output.
    pub(crate) fn failure(failure: HookFailure) -> Ran {
        Ran {
            out: RunOutput::Failed(failure),
            text: None,
            fuel: None,
        }
    }
}

/// The report of a rule that ran (or failed to).
pub(crate) fn report(
    inner: &Inner,
    loaded: &Loaded,
    pos: usize,
    event: &Event,
    ran: Ran,
    started: Instant,
) -> HookReport {
    let rule = &loaded.set.rules()[pos];
    if let Some(fuel) = ran.fuel {
        inner.live.metrics.fuel(fuel);
    }
    let exit = match &ran.out {
        RunOutput::Command(raw) => raw.exit_code,
        _ => None,
    };
    let mut effect = effect_of(rule, event, &ran.out, inner.policy.fail_mode);
    // Failure messages and warnings can quote what a hook printed: redact credentials.
    if let Some(f) = &mut effect.failure {
        f.message = redact(&f.message).into_owned();
    }
    for w in &mut effect.warnings {
        *w = redact(w).into_owned();
    }
    finish(
        inner,
        loaded,
        rule,
        event,
        effect,
        (exit, ran.text, ran.fuel),
        started,
    )
}

/// The report of `rule` for an effect reached without running anything (a prompt rule's
/// answer, a trust refusal): no exit code, output or fuel.
pub(crate) fn settled(
    inner: &Inner,
    loaded: &Loaded,
    rule: &Rule,
    event: &Event,
    effect: hookbox_core::output::Effect,
    started: Instant,
) -> HookReport {
    finish(
        inner,
        loaded,
        rule,
        event,
        effect,
        (None, None, None),
        started,
    )
}

/// The report of `rule`: its effect, and `(exit code, output text, fuel consumed)`.
pub(crate) fn finish(
    inner: &Inner,
    loaded: &Loaded,
    rule: &Rule,
    event: &Event,
    effect: hookbox_core::output::Effect,
    (exit_code, output, fuel_consumed): (Option<i32>, Option<String>, Option<u64>),
    started: Instant,
) -> HookReport {
    let names = loaded.names(rule);
    let failure = effect.failure.as_ref().map(|f| f.class);
    let warned = !effect.warnings.is_empty();
    inner
        .live
        .metrics
        .hook(rule.handler.handler_type(), failure, warned);
    HookReport {
        hook: HookRef {
            rule_index: rule.index,
            plugin: names.plugin,
            hook_name: names.label,
            handler_type: rule.handler.handler_type(),
            hook_event: event.name,
        },
        effect,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        exit_code,
        output,
        fuel_consumed,
    }
}

/// stdout, then stderr under a separator, for reports and replay.
pub(crate) fn combined_output(stdout: &str, stderr: &str) -> Option<String> {
    match (stdout.is_empty(), stderr.is_empty()) {
        (true, true) => None,
        (false, true) => Some(stdout.to_owned()),
        (true, false) => Some(format!("[stderr]\n{stderr}")),
        (false, false) => Some(format!("{stdout}\n[stderr]\n{stderr}")),
    }
}

/// `text` followed by the runner's notes, one `[hookbox] …` line each.
pub(crate) fn with_notes(text: Option<String>, notes: &[String]) -> Option<String> {
    if notes.is_empty() {
        return text;
    }
    let mut s = text.unwrap_or_default();
    for n in notes {
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
        s.push_str("[hookbox] ");
        s.push_str(n);
    }
    Some(s)
}
