//! Any string as a matcher pattern and a subject: compiling either succeeds or fails cleanly, and
//! matching is bounded (no catastrophic backtracking), never a panic. A match spends at most one
//! quick and one full backtracking attempt from its budget, and only if the pattern backtracks;
//! a pattern the regex layer takes is a matcher too.
#![no_main]

use hookbox_core::event::EventName;
use hookbox_core::matcher::{
    BACKTRACK_LIMIT, JsRegex, MatchBudget, Matcher, QUICK_BACKTRACK_LIMIT, ToolAliases,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: (&str, &str)| {
    let (pattern, subject) = data;
    let regex = JsRegex::new(pattern);
    let matcher = Matcher::from_str_for(pattern, EventName::PreToolUse);
    if let Ok(re) = &regex {
        let mut budget = MatchBudget::default();
        let _ = re.is_match_within(subject, &mut budget);
        let most = if re.is_backtracking() {
            (QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64
        } else {
            0
        };
        assert!(
            budget.spent() <= most,
            "/{pattern}/ spent {} steps",
            budget.spent()
        );
        let _ = re.is_match(subject);
        assert!(
            matcher.is_ok(),
            "/{pattern}/ compiles but is no matcher: {matcher:?}"
        );
    }
    if let Ok(m) = &matcher {
        let mut budget = MatchBudget::new(2 * BACKTRACK_LIMIT as u64);
        let _ = m.matches_subject_within(subject, true, &ToolAliases::default(), &mut budget);
        assert!(budget.spent() <= 2 * BACKTRACK_LIMIT as u64);
    }
    let _ = Matcher::from_str_for(pattern, EventName::FileChanged);
});
