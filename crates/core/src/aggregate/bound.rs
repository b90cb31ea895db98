//! The dispatch's share of [`TextLimits`]: rules are folded in rule order, each within the
//! per-rule limits, and the text of all of them within `dispatch_text_bytes` — so 8 rules
//! blocking with 1,000 KiB reasons make an answer of about a MiB, not of 39.

use std::borrow::Cow;

use crate::limits::{Budget, Scope, TextLimits};
use crate::report::HookReport;

/// Whether `reports` are within `limits` as they are (each rule's share, and the dispatch's).
pub(super) fn fits(reports: &[&HookReport], limits: &TextLimits) -> bool {
    let mut total = 0usize;
    reports.iter().all(|r| {
        total = total.saturating_add(r.effect.text_len());
        r.effect.within(limits) && total <= limits.dispatch_text_bytes
    })
}

/// `reports` (in rule order) within `limits`: borrowed as they are when they fit (the common
/// case: no copy), else a copy whose effect is cut — the first rules keep their text, the
/// rest get what is left. A copy carries no `output` (the verdict does not read it).
pub(super) fn within_dispatch<'r>(
    reports: &[&'r HookReport],
    limits: &TextLimits,
) -> Vec<Cow<'r, HookReport>> {
    let mut remaining = limits.dispatch_text_bytes;
    reports
        .iter()
        .map(|&r| {
            let len = r.effect.text_len();
            if len <= remaining && r.effect.within(limits) {
                remaining -= len;
                return Cow::Borrowed(r);
            }
            let (budget, scope) = if remaining < limits.rule_text_bytes {
                (remaining, Scope::Dispatch)
            } else {
                (limits.rule_text_bytes, Scope::Rule)
            };
            let limit = match scope {
                Scope::Dispatch => limits.dispatch_text_bytes,
                Scope::Rule => limits.rule_text_bytes,
            };
            let mut effect = r.effect.clone();
            effect.bound_text(Budget::with_remaining(budget, limit, scope), limits);
            remaining = remaining.saturating_sub(effect.text_len());
            Cow::Owned(HookReport {
                hook: r.hook.clone(),
                effect,
                duration_ms: r.duration_ms,
                exit_code: r.exit_code,
                output: None,
                fuel_consumed: r.fuel_consumed,
            })
        })
        .collect()
}

/// `warnings` cut to `max` bytes together: the ones that fit are kept, the one that does not is
/// cut and says how many more followed.
pub(super) fn warnings_within(warnings: &mut Vec<String>, max: usize) {
    let total: usize = warnings.iter().map(String::len).sum();
    if total <= max {
        return;
    }
    let mut budget = Budget::new(max, Scope::Dispatch);
    let mut kept = 0;
    for w in warnings.iter_mut() {
        kept += 1;
        budget.take(w);
        if budget.cut > 0 {
            break;
        }
    }
    let dropped = warnings.len() - kept;
    warnings.truncate(kept);
    if dropped > 0
        && let Some(last) = warnings.last_mut()
    {
        last.push_str(&format!(" (and {dropped} more warnings)"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::{StopState, Verdict, aggregate, warnings};
    use crate::event::{Event, EventName, HandlerType};
    use crate::limits::{CUT_MARKER, DEFAULT_DISPATCH_TEXT_BYTES, DEFAULT_RULE_TEXT_BYTES};
    use crate::output::Effect;
    use crate::report::HookRef;

    fn report(rule_index: usize, effect: Effect) -> HookReport {
        HookReport {
            hook: HookRef {
                rule_index,
                plugin: "p".into(),
                hook_name: format!("h{rule_index}").into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::UserPromptSubmit,
            },
            effect,
            duration_ms: 1.0,
            exit_code: Some(2),
            output: Some("kept in the report".into()),
            fuel_consumed: None,
        }
    }

    fn blocking(rule_index: usize, bytes: usize) -> HookReport {
        report(
            rule_index,
            Effect {
                block: Some(format!("{rule_index}").repeat(bytes)),
                ..Effect::default()
            },
        )
    }

    #[test]
    fn eight_huge_block_reasons_make_an_answer_of_about_the_dispatch_limit() {
        // Issue 16: 8 rules × 1,000 KiB block reasons were a 39 MiB answer.
        let reports: Vec<HookReport> = (0..8).map(|i| blocking(i, 1000 * 1024)).collect();
        let ev = Event::new(EventName::UserPromptSubmit, "s", "/");
        let verdict = aggregate(&ev, &reports, StopState::default());
        let json = serde_json::to_string(&verdict).unwrap();
        // The verdict holds the blocking error and each rule's attachment: at most the
        // dispatch limit of text, plus the first block again and the markers.
        assert!(
            json.len() < DEFAULT_DISPATCH_TEXT_BYTES + DEFAULT_RULE_TEXT_BYTES + 64 * 1024,
            "{} bytes",
            json.len()
        );
        let Verdict::UserPromptSubmit(r) = &verdict else {
            panic!()
        };
        // The first rule still blocks, with its reason cut to one rule's share.
        let block = r.blocking_error.as_deref().unwrap();
        assert!(block.starts_with("0000"));
        assert!(block.contains(CUT_MARKER), "the cut is visible");
        assert!(block.contains("(rule_text_bytes)"));
        // Rules past the dispatch's limit keep only their marker.
        let last = r.messages.last().unwrap().content.as_deref().unwrap();
        assert!(
            last.starts_with(CUT_MARKER),
            "{}",
            &last[..60.min(last.len())]
        );
        assert!(last.contains("(dispatch_text_bytes)"), "{last}");
        // Each cut hook is told so, in the order of rules.
        assert_eq!(r.messages.len(), 8);
    }

    #[test]
    fn reports_within_the_limits_are_folded_without_a_copy() {
        let reports: Vec<HookReport> = (0..3).map(|i| blocking(i, 100)).collect();
        let refs: Vec<&HookReport> = reports.iter().collect();
        let bounded = within_dispatch(&refs, &TextLimits::default());
        assert!(bounded.iter().all(|r| matches!(r, Cow::Borrowed(_))));
        // Over the limits: a copy, cut, without the (unread) output.
        let big = [blocking(0, 2 * DEFAULT_RULE_TEXT_BYTES)];
        let refs: Vec<&HookReport> = big.iter().collect();
        let bounded = within_dispatch(&refs, &TextLimits::default());
        let Cow::Owned(r) = &bounded[0] else {
            panic!("expected a copy")
        };
        assert_eq!(r.output, None);
        assert!(r.effect.block.as_ref().unwrap().len() < DEFAULT_RULE_TEXT_BYTES + 200);
        assert_eq!(r.effect.warnings.len(), 1);
    }

    #[test]
    fn a_small_dispatch_limit_cuts_later_rules_first() {
        let limits = TextLimits {
            dispatch_text_bytes: 2800,
            ..TextLimits::default()
        };
        let reports: Vec<HookReport> = (0..4).map(|i| blocking(i, 1000)).collect();
        let refs: Vec<&HookReport> = reports.iter().collect();
        let bounded = within_dispatch(&refs, &limits);
        let block = |i: usize| bounded[i].effect.block.as_deref().unwrap();
        assert_eq!(block(0).len(), 1000);
        assert_eq!(block(1).len(), 1000);
        assert!(block(2).starts_with(&"2".repeat(100)), "{}", block(2));
        assert!(block(2).contains("(dispatch_text_bytes)]"), "{}", block(2));
        assert!(block(3).starts_with(CUT_MARKER), "{}", block(3));
        let total: usize = bounded.iter().map(|r| r.effect.text_len()).sum();
        // Within the dispatch's limit, but for the last rule's marker and warning.
        assert!(total <= 2800 + 400, "{total}");
    }

    #[test]
    fn what_effect_of_bounded_is_not_cut_again() {
        let limits = TextLimits::default();
        let once = blocking(0, 3 << 20).effect.bounded(
            &limits,
            crate::rule::FailMode::Allow,
            EventName::UserPromptSubmit,
        );
        let r = report(0, once);
        let bounded = within_dispatch(&[&r], &limits);
        assert!(matches!(bounded[0], Cow::Borrowed(_)));
        assert!(fits(&[&r], &limits));
    }

    #[test]
    fn warnings_of_a_dispatch_are_bounded_too() {
        let reports: Vec<HookReport> = (0..8)
            .map(|i| {
                report(
                    i,
                    Effect {
                        warnings: vec!["w".repeat(200 * 1024)],
                        ..Effect::default()
                    },
                )
            })
            .collect();
        let all = warnings(&reports);
        let total: usize = all.iter().map(String::len).sum();
        assert!(total < DEFAULT_DISPATCH_TEXT_BYTES + 1024, "{total}");
        assert!(
            all.last().unwrap().contains("more warnings"),
            "{:?}",
            all.len()
        );
    }
}
