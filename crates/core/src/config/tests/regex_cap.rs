//! Unit tests of the per-file cap on regex work (issue 8 #11): matchers over the cap are not
//! compiled, and each rule they govern is skipped with a located diagnostic.

use super::{parse, parse_as};
use crate::config::*;
use crate::diagnostic::Severity;

/// A hooks file with one `PreToolUse` group per matcher.
fn file_of(matchers: &[String]) -> String {
    let groups: Vec<String> = matchers
        .iter()
        .map(|m| {
            format!(
                "{{\"matcher\": {}, \"hooks\": [{{\"type\": \"command\", \"command\": \"x\"}}]}}",
                serde_json::Value::String(m.clone())
            )
        })
        .collect();
    format!(
        "{{\"hooks\": {{\"PreToolUse\": [\n{}\n]}}}}",
        groups.join(",\n")
    )
}

#[test]
fn oversized_regexes_are_refused_then_capped_per_file() {
    let text = file_of(&vec![r"\S{2000}".to_owned(); 100]);
    let r = parse(&text);
    assert!(r.rules.is_empty());
    assert_eq!(r.diagnostics.len(), 100, "one per skipped rule");
    let (too_big, capped) = r.diagnostics.split_at(MAX_REGEX_PATTERNS_PER_FILE);
    for d in too_big {
        assert!(
            d.message.starts_with(
                r"Invalid matcher under 'PreToolUse': regex `\S{2000}` is too big: it compiles to more than 131072 bytes"
            ),
            "{d}"
        );
    }
    for (i, d) in capped.iter().enumerate() {
        assert_eq!(
            d.message,
            "Matcher under 'PreToolUse' not compiled: this file already compiled 32 regex matchers, hookbox's limit per file is 32 — skipped."
        );
        let n = MAX_REGEX_PATTERNS_PER_FILE + i;
        assert_eq!(
            d.json_path.as_deref(),
            Some(format!("hooks.PreToolUse[{n}].matcher").as_str())
        );
        // Line 1 holds `{"hooks": …`, group n is on line n + 2.
        assert_eq!(d.line, Some(u32::try_from(n + 2).unwrap()), "{d}");
        // A guard whose matcher is refused never runs: an error, as a regex that does not
        // compile is.
        assert_eq!(d.severity, Severity::Error);
    }
    assert_eq!(r.files[0].skipped, 100);
}

#[test]
fn backtracking_matchers_are_capped_per_file() {
    let text = file_of(&vec![r"(.|.)*\1Z".to_owned(); 500]);
    let r = parse(&text);
    assert_eq!(r.rules.len(), MAX_BACKTRACKING_PATTERNS_PER_FILE);
    let by_cap = |needle: &str| {
        r.diagnostics
            .iter()
            .filter(|d| d.message.contains(needle))
            .count()
    };
    assert_eq!(
        by_cap("matchers that need backtracking"),
        MAX_REGEX_PATTERNS_PER_FILE - MAX_BACKTRACKING_PATTERNS_PER_FILE
    );
    assert_eq!(
        by_cap("regex matchers, hookbox's limit per file is 32"),
        500 - MAX_REGEX_PATTERNS_PER_FILE
    );
    // In the ghast dialect a skipped rule fails the plugin, so the cap does too.
    let r = parse_as(&text, "hooks.json", Dialect::Ghast);
    assert!(r.rules.is_empty() && r.has_errors());
}

#[test]
fn regex_bytes_are_capped_per_file() {
    // Two 5 KiB patterns that compile small (a class, which holds `Bash`'s letters: these
    // matchers match a tool): the second goes over 8 KiB.
    let big = format!("^[{}]+$", "Bashe".repeat(1024));
    let r = parse(&file_of(&[big.clone(), big, "Bash|Write".to_owned()]));
    assert_eq!(
        r.rules.len(),
        2,
        "the first big one and the exact list load"
    );
    let [d] = r.diagnostics.as_slice() else {
        panic!("{:#?}", r.diagnostics)
    };
    assert!(
        d.message
            .contains("would total 10250 bytes, over hookbox's limit of 8192 per file"),
        "{d}"
    );
    // The caps are options.
    let opts = RegexLimits {
        bytes: 100_000,
        ..RegexLimits::default()
    };
    assert_eq!(
        LoadOptions::default().with_regex_limits(opts).regex_limits,
        opts
    );
}

#[test]
fn exact_names_cost_no_regex() {
    let r = parse(&file_of(&vec!["Bash|Edit".to_owned(); 200]));
    assert_eq!(r.rules.len(), 200);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
}
