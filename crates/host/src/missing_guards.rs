//! Approved guards out of force (issue 27 item 4): an approved rule that no live rule carries
//! as approved — deleted, its matcher narrowed, its event or command changed — still answers
//! for the events its *approved* event, matcher and `if` match, so a guard cannot be removed
//! quietly. The dispatch asks on the event as it came and, when a hook rewrote the tool input
//! and the live rules are checked again on it (`recheck_updated_input`), on the rewritten one.

use hookbox_core::event::{Event, HandlerType};
use hookbox_core::output::{Effect, FailureClass, HookFailure};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::IfCondition;
use hookbox_trust::{RuleRecord, RuleTrust, TrustMode, escape_shown};

use crate::inner::{Inner, Loaded};
use crate::trust::TrustFinding;

/// The approved rules out of force (deleted, or changed so that they no longer carry their
/// approval) whose *approved* event and matcher match `event`: a guard cannot be removed
/// quietly. Under `require` each answers with a report failing `untrusted` with its approved
/// fail mode (a fail-closed guard blocks; a fail-open one is reported); under `warn` each is
/// named in a finding. One whose changed rule still sits at its place and matched (`matched`)
/// is left to that rule's own refusal or warning. The approved `if` is applied as the rule's
/// own was ([`approved_if_holds`]). Reports take positions after the rule set's,
/// in the order of the approval.
pub(crate) fn missing_guards(
    inner: &Inner,
    loaded: &Loaded,
    event: &Event,
    matched: &[usize],
) -> (Vec<HookReport>, Vec<TrustFinding>) {
    let t = &loaded.trust;
    let mut reports = Vec::new();
    let mut findings = Vec::new();
    if !t.mode.is_on() {
        return (reports, findings);
    }
    let base = loaded.set.rules().len();
    for (k, m) in t.missing.iter().enumerate() {
        if m.event != event.name
            || m.live.is_some_and(|pos| matched.contains(&pos))
            || !m.matcher.matches(event, loaded.set.aliases())
            || !approved_if_holds(&m.record, event, loaded)
        {
            continue;
        }
        let plugin = loaded
            .set
            .plugins()
            .get(m.plugin)
            .map(|p| p.name.clone())
            .unwrap_or_default();
        let subject = t
            .subjects
            .get(m.plugin)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        let approved_on_failure = m.record.on_failure();
        let trust = match m.live.and_then(|pos| t.rule(pos)) {
            Some(check) => check.trust.clone(),
            None => RuleTrust::Missing {
                approved_on_failure,
            },
        };
        let rule_index = base + k;
        if t.mode == TrustMode::Require {
            let now = match &trust {
                RuleTrust::Changed { .. } => format!("now: {trust}"),
                _ => format!("it is no longer in {}", m.record.location.file),
            };
            let msg = format!(
                "refused (trust = require): the approved rule {} of {plugin} ({}) answers for {} here and is changed since approval — run `hookbox trust diff {subject}` ({now}); approve the plugin as it is with `hookbox trust add {subject}`",
                m.record.location,
                m.record.label,
                m.event.as_str(),
            );
            // It names what the plugin wrote: shown with controls and bidi escaped.
            let msg = escape_shown(&msg).into_owned();
            let mode = approved_on_failure.unwrap_or(inner.policy.fail_mode);
            let effect = Effect::from_failure(
                HookFailure::new(FailureClass::Untrusted, msg),
                mode,
                event.name,
            );
            let handler_type = m
                .record
                .content
                .get("handler")
                .and_then(|h| h.get("type"))
                .and_then(|v| serde_json::from_value::<HandlerType>(v.clone()).ok())
                .unwrap_or(HandlerType::Command);
            inner
                .live
                .metrics
                .hook(handler_type, Some(FailureClass::Untrusted), false);
            reports.push(HookReport {
                hook: HookRef {
                    rule_index,
                    plugin: plugin.as_str().into(),
                    hook_name: m.record.label.as_str().into(),
                    handler_type,
                    hook_event: event.name,
                },
                effect,
                duration_ms: 0.0,
                exit_code: None,
                output: None,
                fuel_consumed: None,
            });
        }
        findings.push(TrustFinding {
            rule_index,
            plugin,
            subject,
            location: m.record.location.clone(),
            label: m.record.label.clone(),
            trust,
            unpinnable: None,
            approval_error: None,
            missing: true,
            snapshot_ran: false,
            ran: t.mode != TrustMode::Require,
        });
    }
    (reports, findings)
}

/// Whether the approved rule's `if` (Claude Code's `Bash(rm *)`) holds for `event`, tested as
/// a loaded rule's `if` is: a guard approved for `rm` answers for `rm` only, not for every Bash
/// call. A record without an `if`, or with one that no longer parses, answers as if it had
/// none — for at least what it guarded, never for less.
fn approved_if_holds(record: &RuleRecord, event: &Event, loaded: &Loaded) -> bool {
    match record
        .content
        .get("if")
        .and_then(serde_json::Value::as_str)
        .and_then(IfCondition::parse)
    {
        Some(cond) => cond.holds(event, loaded.set.aliases()),
        None => true,
    }
}
