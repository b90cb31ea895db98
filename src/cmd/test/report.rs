//! Printing a run: text (a line per case, the differences under a failed one), JUnit XML (the
//! Apache Ant schema that CI systems read: `scripts/fetch-junit-schema.sh` fetches it, the
//! tests validate against it), TAP 13, or one JSON document — and the coverage of the plugins' rules.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use hookbox_core::rule::{Handler, Rule};
use owo_colors::OwoColorize;
use serde_json::{Value, json};

use super::run::{CaseResult, Suite, SuiteResult, rule_key};
use crate::cmd::term::untrusted;

/// The rules of a suite no case fired.
pub(crate) fn unfired<'a>(suite: &Suite, result: &'a SuiteResult) -> Vec<&'a Rule> {
    let fired: BTreeSet<&str> = result
        .cases
        .iter()
        .flat_map(|c| c.fired.iter().map(String::as_str))
        .collect();
    result
        .rules
        .iter()
        .filter(|r| !fired.contains(rule_key(r, &suite.plugin).as_str()))
        .collect()
}

fn rule_label(r: &Rule) -> String {
    let what = match &r.handler {
        Handler::Command(c) => c.label(),
        other => format!("{other:?}").chars().take(60).collect(),
    };
    format!("{} · {}", r.event, untrusted(&what))
}

/// Counts: (passed, failed) cases, a plugin that does not load counting as one failure.
pub(crate) fn totals(results: &[SuiteResult]) -> (usize, usize) {
    let mut passed = 0;
    let mut failed = 0;
    for s in results {
        if s.load_error.is_some() {
            failed += 1;
        }
        for c in &s.cases {
            if c.passed() {
                passed += 1;
            } else {
                failed += 1;
            }
        }
    }
    (passed, failed)
}

fn failure_lines(c: &CaseResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = &c.error {
        out.push(format!("error: {e}"));
    }
    for m in &c.mismatches {
        out.push(format!(
            "{}: expected {}, got {}",
            m.what, m.expected, m.got
        ));
        if let Some(d) = &m.diff {
            out.extend(d.lines().map(|l| format!("  {l}")));
        }
    }
    // What explains most failures: nothing matched, or a hook failed (and failed open).
    if !c.mismatches.is_empty() {
        if c.observed.matched == 0 {
            out.push("note: no rule matched this event".to_owned());
        }
        for (hook, class, message) in &c.observed.failures {
            out.push(format!("note: {hook} failed ({class}): {message}"));
        }
    }
    out
}

/// The text report.
pub(crate) fn text(suites: &[Suite], results: &[SuiteResult], coverage: bool) -> String {
    let mut s = String::new();
    for (suite, result) in suites.iter().zip(results) {
        let _ = writeln!(
            s,
            "{} at {} — {} case{}",
            plugin_name(&suite.plugin).bold(),
            suite.shown,
            suite.cases.len(),
            if suite.cases.len() == 1 { "" } else { "s" }
        );
        if let Some(e) = &result.load_error {
            let _ = writeln!(s, "  {}  the plugin does not load:", "FAIL".red().bold());
            for l in e.lines() {
                let _ = writeln!(s, "        {}", untrusted(l));
            }
            continue;
        }
        if suite.cases.is_empty() {
            let _ = writeln!(
                s,
                "  {}: no cases in tests/ — add one (hookbox test --print-schema; dispatch --save-case)",
                "warning".yellow()
            );
        }
        for (case, r) in suite.cases.iter().zip(&result.cases) {
            let desc = case
                .spec
                .description
                .as_deref()
                .map(|d| format!("  {}", d.dimmed()))
                .unwrap_or_default();
            let mark = if r.passed() {
                "ok  ".green().bold().to_string()
            } else {
                "FAIL".red().bold().to_string()
            };
            let _ = writeln!(
                s,
                "  {mark}  {}{desc}  ({:.1} ms)",
                case.name, r.observed.duration_ms
            );
            for l in failure_lines(r) {
                let _ = writeln!(s, "        {}", untrusted(&l));
            }
        }
        let untrusted_rules: BTreeSet<&String> = result
            .cases
            .iter()
            .flat_map(|c| c.untrusted.iter())
            .collect();
        if !untrusted_rules.is_empty() {
            let n = untrusted_rules.len();
            let (plural, they, them) = if n == 1 {
                (" is", "it is", "it")
            } else {
                ("s are", "they are", "them")
            };
            let _ = writeln!(
                s,
                "  {}: {n} rule{plural} not approved as {they} — `hookbox trust add {}` approves {them}",
                "trust".yellow(),
                suite.shown,
            );
        }
        if coverage {
            let never = unfired(suite, result);
            let _ = writeln!(
                s,
                "  coverage: {} of {} rules fired in some case",
                result.rules.len() - never.len(),
                result.rules.len()
            );
            for r in never {
                let _ = writeln!(
                    s,
                    "    {} {} ({})",
                    "never fired:".yellow(),
                    rule_key(r, &suite.plugin),
                    rule_label(r)
                );
            }
        }
    }
    let (passed, failed) = totals(results);
    let _ = writeln!(s, "{passed} passed, {failed} failed");
    s
}

/// The JSON report.
pub(crate) fn json(suites: &[Suite], results: &[SuiteResult]) -> Value {
    let (passed, failed) = totals(results);
    let suites: Vec<Value> = suites
        .iter()
        .zip(results)
        .map(|(suite, result)| {
            let cases: Vec<Value> = suite
                .cases
                .iter()
                .zip(&result.cases)
                .map(|(case, r)| {
                    json!({
                        "name": case.name,
                        "file": case.file,
                        "description": case.spec.description,
                        "passed": r.passed(),
                        "error": r.error,
                        "mismatches": r.mismatches,
                        "observed": {
                            "outcome": r.observed.outcome,
                            "decision": r.observed.decision,
                            "reasons": r.observed.reasons,
                            "contexts": r.observed.contexts,
                            "system_messages": r.observed.system_messages,
                            "updated_input": r.observed.updated_input,
                            "failures": r.observed.failures.iter().map(|(hook, class, message)| json!({"hook": hook, "class": class, "message": message})).collect::<Vec<_>>(),
                            "agents": r.observed.agents.iter().map(|(a, reading)| json!({
                                "agent": a,
                                "does": match reading { Ok(r) => r.describe(), Err(e) => e.clone() },
                            })).collect::<Vec<_>>(),
                        },
                        "duration_ms": r.observed.duration_ms,
                        "wall_ms": r.wall_ms,
                        "fired": r.fired,
                        "untrusted": r.untrusted,
                    })
                })
                .collect();
            json!({
                "plugin": suite.shown,
                "load_error": result.load_error,
                "cases": cases,
                "coverage": {
                    "rules": result.rules.iter().map(|r| rule_key(r, &suite.plugin)).collect::<Vec<_>>(),
                    "never_fired": unfired(suite, result).into_iter().map(|r| rule_key(r, &suite.plugin)).collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    json!({ "suites": suites, "passed": passed, "failed": failed })
}

/// TAP version 13.
pub(crate) fn tap(suites: &[Suite], results: &[SuiteResult]) -> String {
    let mut lines = Vec::new();
    for (suite, result) in suites.iter().zip(results) {
        if let Some(e) = &result.load_error {
            lines.push((
                false,
                format!("{}: the plugin loads", suite.shown),
                vec![e.clone()],
            ));
            continue;
        }
        for (case, r) in suite.cases.iter().zip(&result.cases) {
            lines.push((
                r.passed(),
                format!("{}: {}", suite.shown, case.name),
                failure_lines(r),
            ));
        }
    }
    let mut s = format!("TAP version 13\n1..{}\n", lines.len());
    for (i, (ok, name, details)) in lines.iter().enumerate() {
        let name = untrusted(name).replace('#', "\\#").replace('\n', " ");
        let _ = writeln!(s, "{}ok {} - {name}", if *ok { "" } else { "not " }, i + 1);
        if !details.is_empty() {
            s.push_str("  ---\n  failures:\n");
            for d in details {
                let _ = writeln!(s, "    - {}", Value::String(untrusted(d).into_owned()));
            }
            s.push_str("  ...\n");
        }
    }
    s
}

/// JUnit XML in the Apache Ant schema: a `testsuite` per plugin, a `testcase` per case, a
/// mismatch as `failure`, a case that could not run (or a plugin that does not load) as `error`.
pub(crate) fn junit(suites: &[Suite], results: &[SuiteResult], timestamp: &str) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (id, (suite, result)) in suites.iter().zip(results).enumerate() {
        let name = plugin_name(&suite.plugin);
        let mut cases = String::new();
        let (mut failures, mut errors, mut time) = (0, 0, 0.0);
        if let Some(e) = &result.load_error {
            errors += 1;
            let _ = writeln!(
                cases,
                "    <testcase name=\"load\" classname=\"{}\" time=\"0\">\n      <error message=\"the plugin does not load\" type=\"load\">{}</error>\n    </testcase>",
                xml(&name),
                xml(e)
            );
        }
        for (case, r) in suite.cases.iter().zip(&result.cases) {
            let secs = r.wall_ms / 1000.0;
            time += secs;
            let _ = write!(
                cases,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{secs:.3}\"",
                xml(&case.name),
                xml(&name)
            );
            if r.passed() {
                cases.push_str("/>\n");
                continue;
            }
            let lines = failure_lines(r).join("\n");
            let (tag, kind, message) = match &r.error {
                Some(e) => {
                    errors += 1;
                    (
                        "error",
                        "error",
                        e.lines().next().unwrap_or_default().to_owned(),
                    )
                }
                None => {
                    failures += 1;
                    let m = &r.mismatches[0];
                    (
                        "failure",
                        "mismatch",
                        format!("{}: expected {}, got {}", m.what, m.expected, m.got),
                    )
                }
            };
            let _ = writeln!(
                cases,
                ">\n      <{tag} message=\"{}\" type=\"{kind}\">{}</{tag}>\n    </testcase>",
                xml(&message),
                xml(&lines)
            );
        }
        let never: Vec<String> = unfired(suite, result)
            .into_iter()
            .map(|r| rule_key(r, &suite.plugin))
            .collect();
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" package=\"{}\" id=\"{id}\" hostname=\"localhost\" timestamp=\"{timestamp}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{time:.3}\">",
            xml(&name),
            xml(&suite.shown),
            suite.cases.len() + usize::from(result.load_error.is_some()),
        );
        let _ = writeln!(
            s,
            "    <properties>\n      <property name=\"rules\" value=\"{}\"/>\n      <property name=\"rules.never_fired\" value=\"{}\"/>\n    </properties>",
            result.rules.len(),
            xml(&never.join(", "))
        );
        s.push_str(&cases);
        s.push_str("    <system-out/>\n    <system-err/>\n  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

/// The suite's name: the plugin folder's last name (a token, never empty).
fn plugin_name(plugin: &std::path::Path) -> String {
    plugin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "plugin".to_owned())
}

/// `text` escaped for an XML attribute or element, without the characters XML 1.0 cannot hold
/// at all (controls other than tab and newline; a hook chose some of this text).
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped_and_controls_dropped() {
        assert_eq!(
            xml("a<b>&\"'\u{1b}[2J\u{0}"),
            "a&lt;b&gt;&amp;&quot;&apos;\u{FFFD}[2J\u{FFFD}"
        );
    }
}
