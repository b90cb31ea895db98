//! The properties of rule matching, in one place: the `rules` fuzz target checks them on
//! generated hook files and events, and hookbox-core's `tests/fuzz_regressions.rs` on the kept
//! cases, both including this file by path. Depends on hookbox-core only.

use hookbox_core::RuleSet;
use hookbox_core::config::LoadReport;
use hookbox_core::event::Event;
use hookbox_core::matcher::{MatchBudget, ToolAliases};

/// Matches `event` against the rules of `report` and panics unless the index agrees with each
/// rule's own matcher: matching stays within its budget; a decided rule fires among the others
/// exactly as it fires indexed alone; a rule without an `if` fires exactly when its matcher
/// matches, and one with an `if` never fires when its matcher does not. Returns the indices of
/// the rules that fired, or `None` when matching ran out of budget (nothing more to compare).
/// `context` is printed with a failure.
pub(crate) fn check(report: &LoadReport, event: &Event, context: &str) -> Option<Vec<usize>> {
    let aliases = ToolAliases::default();
    let set = RuleSet::new(
        report.plugins.clone(),
        report.rules.clone(),
        aliases.clone(),
    );
    let m = set.matching(event);
    assert!(
        m.steps <= set.match_budget(),
        "{context}: {} steps of {}",
        m.steps,
        set.match_budget()
    );
    if m.budget_exhausted {
        return None;
    }
    let fired: Vec<usize> = m.rules.iter().map(|r| r.index).collect();
    for r in &report.rules {
        if m.undecided.contains(&r.index) {
            continue;
        }
        let Some(own) = r
            .matcher
            .matches_within(event, &aliases, &mut MatchBudget::unlimited())
        else {
            continue;
        };
        let mut alone = r.clone();
        alone.index = 0;
        let single = RuleSet::new(report.plugins.clone(), vec![alone], aliases.clone());
        let sm = single.matching(event);
        if !sm.undecided.is_empty() || sm.budget_exhausted {
            continue;
        }
        let here = fired.contains(&r.index);
        assert_eq!(
            here,
            !sm.rules.is_empty(),
            "{context}: rule {} fires differently among others",
            r.index
        );
        if r.if_condition.is_none() {
            assert_eq!(
                here, own,
                "{context}: rule {} ({:?}): the index says {here}, its matcher says {own}",
                r.index, r.matcher
            );
        } else if here {
            assert!(
                own,
                "{context}: rule {} fired although its matcher does not match",
                r.index
            );
        }
    }
    Some(fired)
}
