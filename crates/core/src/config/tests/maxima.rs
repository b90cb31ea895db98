//! What a hooks file may ask for is bounded when the file is read: timeouts, wasm grants and
//! prompt rules over their documented maxima are refused with a located error naming the
//! field, the value, the maximum and the fix — never clamped, never left to overflow later.

use super::*;
use crate::limits::{MAX_MEMORY_MB, MAX_PROMPT_PLACEHOLDERS, MAX_PROMPT_TEXT_BYTES};

fn one_handler(event: &str, handler: &str) -> LoadReport {
    parse(&format!(
        r#"{{"hooks": {{"{event}": [{{"hooks": [{handler}]}}]}}}}"#
    ))
}

#[test]
fn a_timeout_over_a_day_is_refused_where_it_is_written() {
    // Issue 16, defect 6: a timeout near 1e19 s overflowed the host's time arithmetic later.
    for (ty, extra) in [
        ("command", r#""command": "a""#),
        ("http", r#""url": "https://example.com/hook""#),
        ("wasm", r#""component": "g.wasm""#),
    ] {
        let r = one_handler(
            "Stop",
            &format!(r#"{{"type": "{ty}", {extra}, "timeout": 1e19}}"#),
        );
        let d = only_diag(&r);
        assert_eq!(d.severity, Severity::Error, "{ty}");
        assert_eq!(
            d.message,
            "timeout 1e+19 s is over the maximum of 86400 s (24 h) any hook may ask for — skipped.",
            "{ty}"
        );
        assert_eq!(d.fix.as_deref(), Some("give at most 86400 seconds"));
        assert_eq!(
            d.json_path.as_deref(),
            Some("hooks.Stop[0].hooks[0].timeout")
        );
        assert!(d.line.is_some() && d.column.is_some());
        assert!(r.rules.is_empty(), "{ty}");
    }
    // Milliseconds written as seconds past a day: the fix says what was probably meant.
    let r = one_handler(
        "Stop",
        r#"{"type": "command", "command": "a", "timeout": 600000}"#,
    );
    assert_eq!(
        only_diag(&r).fix.as_deref(),
        Some(
            "give at most 86400 seconds; if you meant 600000 milliseconds, write \"timeout\": 600"
        )
    );
    // A day is allowed (with the milliseconds hint).
    let r = one_handler(
        "Stop",
        r#"{"type": "command", "command": "a", "timeout": 86400}"#,
    );
    assert_eq!(r.rules.len(), 1);
    assert_eq!(only_diag(&r).severity, Severity::Warning);
}

#[test]
fn wasm_grants_over_their_maxima_are_refused() {
    for (field, value, max) in [
        ("fuel", "18446744073709551615", "10000000000000"),
        ("memory_mb", "1000000", "4096"),
        ("table_elements", "100000000", "10000000"),
        ("instances", "1000000", "10000"),
        ("output_bytes", "2000000000", "1073741824"),
        ("log_calls", "10000000", "1000000"),
        ("response_bytes", "2000000000", "1073741824"),
        ("write_bytes", "18446744073709551615", "1099511627776"),
        ("write_files", "100000000", "10000000"),
    ] {
        let r = one_handler(
            "PreToolUse",
            &format!(r#"{{"type": "wasm", "component": "g.wasm", "{field}": {value}}}"#),
        );
        let d = only_diag(&r);
        assert_eq!(d.severity, Severity::Error, "{field}");
        assert!(
            d.message.starts_with(&format!(
                "'{field}' is {value}, over the maximum of {max} ("
            )),
            "{field}: {}",
            d.message
        );
        assert!(d.message.ends_with("a hooks file may ask for — skipped."));
        assert_eq!(
            d.fix.as_deref(),
            Some(format!("ask for at most {max}; the host's policy may allow less").as_str())
        );
        assert_eq!(
            d.json_path.as_deref(),
            Some(format!("hooks.PreToolUse[0].hooks[0].{field}").as_str())
        );
        assert!(r.rules.is_empty());
    }
    let r = one_handler(
        "PreToolUse",
        &format!(r#"{{"type": "wasm", "component": "g.wasm", "memory_mb": {MAX_MEMORY_MB}}}"#),
    );
    assert_eq!(r.rules.len(), 1, "{:#?}", r.diagnostics);
}

#[test]
fn a_prompt_rule_repeating_the_prompt_is_refused_at_load() {
    // Issue 16, defect 1: 400 placeholders multiplied an 8 KiB prompt into a 15 MiB answer.
    let many = "{userMessage}".repeat(400);
    let r = one_handler(
        "UserPromptSubmit",
        &format!(r#"{{"type": "prompt", "prompt": "{many}"}}"#),
    );
    let d = only_diag(&r);
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(
        d.message,
        format!(
            "the prompt holds {{userMessage}} 400 times; at most {MAX_PROMPT_PLACEHOLDERS} are allowed, as each one repeats the user's whole prompt — skipped."
        )
    );
    assert_eq!(
        d.json_path.as_deref(),
        Some("hooks.UserPromptSubmit[0].hooks[0].prompt")
    );
    assert!(r.rules.is_empty());
    // Up to the maximum loads.
    let ok = "{userMessage} ".repeat(MAX_PROMPT_PLACEHOLDERS);
    let r = one_handler(
        "UserPromptSubmit",
        &format!(r#"{{"type": "prompt", "prompt": "{ok}"}}"#),
    );
    assert_eq!(r.rules.len(), 1, "{:#?}", r.diagnostics);
    // A prompt text longer than any rule may add could only ever be cut: refused.
    let long = "x".repeat(MAX_PROMPT_TEXT_BYTES + 1);
    let r = one_handler(
        "UserPromptSubmit",
        &format!(r#"{{"type": "prompt", "prompt": "{long}"}}"#),
    );
    assert!(
        only_diag(&r).message.starts_with(&format!(
            "the prompt is {} bytes, over the",
            MAX_PROMPT_TEXT_BYTES + 1
        )),
        "{}",
        only_diag(&r).message
    );
    assert!(r.rules.is_empty());
}
