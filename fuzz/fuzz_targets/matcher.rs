//! Any string as a matcher pattern and a subject: compiling either succeeds or fails cleanly, and
//! matching is bounded (no catastrophic backtracking), never a panic.
#![no_main]

use hookbox_core::event::EventName;
use hookbox_core::matcher::{JsRegex, Matcher};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: (&str, &str)| {
    let (pattern, subject) = data;
    if let Ok(re) = JsRegex::new(pattern) {
        let _ = re.is_match(subject);
    }
    let _ = Matcher::from_str_for(pattern, EventName::PreToolUse);
});
