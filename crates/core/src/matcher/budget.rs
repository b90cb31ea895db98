//! The matching budget of one dispatch: backtracking work shared by every matcher tested for one
//! event, so that many hostile patterns cost no more than one bounded amount together.
//!
//! Regular patterns run on the linear-time `regex` crate and are free. A pattern that needs
//! backtracking (lookaround, backreferences) is charged, before it runs, the backtrack limit it
//! runs under — an upper bound of the steps it can take, since `fancy-regex` does not report
//! the steps it used. Each attempt first runs under a small limit ([`QUICK_BACKTRACK_LIMIT`]),
//! which real lookaround matchers never exceed, and only then under the full per-match limit
//! ([`BACKTRACK_LIMIT`]), so an honest pattern costs about a thousand steps, not the whole limit.
//! When the budget cannot pay for an attempt the matcher is not run and counts as no match.

/// Backtracking steps one dispatch may spend on all its matchers together: 1,000,000, i.e. ten
/// matches that run into [`BACKTRACK_LIMIT`], or a thousand quick ones. 100,000 steps of
/// `(.|.)*\1Z` take about 2.2 ms on the project's 2-core machine (release build), so a dispatch
/// spends at most ~22 ms matching whatever its rules are.
pub const MATCH_BUDGET_STEPS: u64 = 1_000_000;

/// Backtracking steps one match may take before it gives up and counts as "no match".
pub const BACKTRACK_LIMIT: usize = 100_000;

/// The limit of a backtracking match's first attempt. Real lookaround and backreference
/// matchers over tool names finish in a few dozen steps; only a pattern that needs more is run
/// again under [`BACKTRACK_LIMIT`].
pub const QUICK_BACKTRACK_LIMIT: usize = 1_000;

/// Backtracking steps left for one dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchBudget {
    remaining: u64,
    spent: u64,
    exhausted: bool,
}

impl Default for MatchBudget {
    /// [`MATCH_BUDGET_STEPS`].
    fn default() -> Self {
        MatchBudget::new(MATCH_BUDGET_STEPS)
    }
}

impl MatchBudget {
    /// A budget of `steps` backtracking steps.
    pub fn new(steps: u64) -> MatchBudget {
        MatchBudget {
            remaining: steps,
            spent: 0,
            exhausted: false,
        }
    }

    /// A budget that never runs out (each match is still bounded by [`BACKTRACK_LIMIT`]).
    pub fn unlimited() -> MatchBudget {
        MatchBudget::new(u64::MAX)
    }

    /// Steps charged so far (an upper bound of the steps taken).
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Steps left.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Whether an attempt was refused because the budget could not pay for it.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Pays for an attempt of at most `steps` steps; `false` (and the budget is marked
    /// exhausted) when it cannot.
    pub(crate) fn charge(&mut self, steps: usize) -> bool {
        let steps = u64::try_from(steps).unwrap_or(u64::MAX);
        if self.remaining < steps {
            self.exhausted = true;
            return false;
        }
        self.remaining -= steps;
        self.spent = self.spent.saturating_add(steps);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_until_it_cannot_pay() {
        let mut b = MatchBudget::new(2_500);
        assert!(b.charge(1_000));
        assert!(b.charge(1_000));
        assert!(!b.exhausted());
        assert!(!b.charge(1_000), "500 left cannot pay for 1,000");
        assert!(b.exhausted());
        assert_eq!((b.spent(), b.remaining()), (2_000, 500));
    }
}
