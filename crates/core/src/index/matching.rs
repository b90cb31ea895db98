//! What [`RuleSet::matching`](super::RuleSet::matching) returns: the rules that fire, and what
//! deciding it cost — so a host can say "matcher budget exhausted for rules …" instead of a
//! rule silently not running.

use crate::rule::Rule;

/// The rules that fire for one event, in declaration order, with the matching budget's account.
#[derive(Debug, Clone)]
pub struct Matching<'a> {
    /// The rules that fire.
    pub rules: Vec<&'a Rule>,
    /// Backtracking steps charged to this dispatch's budget (an upper bound of the steps taken;
    /// regular patterns cost nothing).
    pub steps: u64,
    /// Whether the budget ran out: some backtracking matchers were not run.
    pub budget_exhausted: bool,
    /// Rules (by [`Rule::index`], in declaration order) whose matcher could not decide — the
    /// budget could not pay for it, or one match gave up at
    /// [`BACKTRACK_LIMIT`](crate::matcher::BACKTRACK_LIMIT) — and were counted as not matching.
    /// A host reports them, and may apply their fail mode.
    pub undecided: Vec<usize>,
}

impl<'a> Matching<'a> {
    /// The rules that fire, in declaration order.
    pub fn iter(&self) -> std::slice::Iter<'_, &'a Rule> {
        self.rules.iter()
    }

    /// How many rules fire.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether no rule fires.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

impl<'a> IntoIterator for Matching<'a> {
    type Item = &'a Rule;
    type IntoIter = std::vec::IntoIter<&'a Rule>;
    fn into_iter(self) -> Self::IntoIter {
        self.rules.into_iter()
    }
}
