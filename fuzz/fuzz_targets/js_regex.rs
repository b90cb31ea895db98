//! Differential: a matcher regex must mean what it means in JavaScript. hookbox-core accepts a
//! pattern with `regress` (an ECMAScript engine) and then runs a translation of it on the
//! `regex` or `fancy-regex` crate; here `regress` runs the original pattern on the same subject
//! and the two answers must agree (when hookbox's bounded engine decides at all). A pattern that
//! matches differently is a guard hook that fires on the wrong tools, or on none.
//!
//! Pattern and subject are kept short: `regress` has no step limit, and a catastrophic pattern
//! would stall the reference, not hookbox.
#![no_main]

use hookbox_core::matcher::{JsRegex, MatchBudget};
use libfuzzer_sys::fuzz_target;

const MAX_PATTERN_BYTES: usize = 64;
const MAX_SUBJECT_CHARS: usize = 16;

fuzz_target!(|data: (&str, &str)| {
    let (pattern, subject) = data;
    if pattern.len() > MAX_PATTERN_BYTES || subject.chars().count() > MAX_SUBJECT_CHARS {
        return;
    }
    let Ok(ours) = JsRegex::new(pattern) else {
        return;
    };
    let reference = regress::Regex::new(pattern).expect("JsRegex::new validated it with regress");
    let Some(got) = ours.is_match_within(subject, &mut MatchBudget::unlimited()) else {
        return;
    };
    let want = reference.find(subject).is_some();
    assert_eq!(
        got,
        want,
        "/{pattern}/ on {subject:?}: hookbox says {got}, JavaScript (regress) says {want}; translated: {:?}",
        ours.regular()
    );
});
