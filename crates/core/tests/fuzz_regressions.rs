//! Fuzz regressions: every input kept under `tests/fuzz-regressions/<target>/` is replayed through
//! the entry point of the `fuzz/` target of the same name, on stable, in `cargo test`. Each
//! replay checks the properties the fuzz target checks (no panic, located diagnostics, effects
//! that round-trip, bounded matching, index and matcher agreeing) and then what the case file
//! says the result is, so a case cannot pass by doing nothing.
//!
//! - `hooks_json/*`: raw bytes of a hook file. A name starting `err-` must give an error
//!   diagnostic with a line in the Claude Code dialect; `ok-` must load a rule and no error.
//! - `payload/*.json`: `{"given": name|null, "payload": …, "ok": bool}` for `Event::from_payload`.
//! - `hook_output/*.json`: `{"event", "code", "fail_mode", "stdout", "stderr", "blocks"}`;
//!   `blocks` is what the Claude Code dialect must decide.
//! - `matcher/*.json`: `{"pattern", "subject", "compiles": bool, "matches": bool|null}`; `null`
//!   when it does not compile, or when the match is undecided (over its backtracking budget).
//! - `js_regex/*.json`: `{"pattern", "subject", "js": bool}`, `js` being what JavaScript's
//!   `RegExp.prototype.test` answers; a case with an `"issue"` is a known divergence, replayed
//!   by the ignored test until it is fixed.
//! - `rules/*.json`: `{"event", "hooks", "payload", "fired": [rule indices]}`.

use std::fs;
use std::path::{Path, PathBuf};

use hookbox_core::RuleSet;
use hookbox_core::config::{parse_hooks_bytes, parse_hooks_str};
use hookbox_core::diagnostic::Severity;
use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName, wire};
use hookbox_core::matcher::{
    BACKTRACK_LIMIT, JsRegex, MatchBudget, Matcher, QUICK_BACKTRACK_LIMIT, ToolAliases,
};
use hookbox_core::rule::FailMode;
use serde_json::Value;

/// The `hook_output` fuzz target's properties, the same file it checks them with.
#[path = "../../../fuzz/props/hook_output.rs"]
mod hook_output_props;

/// The `rules` fuzz target's properties, the same file it checks them with.
#[path = "../../../fuzz/props/rules.rs"]
mod rules_props;

/// The case files of one target, sorted; fails if there are none (a moved folder must not
/// pass silently).
fn cases(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    files
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

fn json_case(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn str_field<'a>(case: &'a Value, key: &str, path: &Path) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("{}: `{key}` must be a string", path.display()))
}

fn bool_field(case: &Value, key: &str, path: &Path) -> bool {
    case[key]
        .as_bool()
        .unwrap_or_else(|| panic!("{}: `{key}` must be a boolean", path.display()))
}

fn event_name(s: &str) -> EventName {
    s.parse()
        .unwrap_or_else(|_| panic!("unknown event name {s:?}"))
}

// ---------------------------------------------------------------------------------------------
// hooks_json

const HOOK_FILES: &[&str] = &[
    "hooks.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
];

#[test]
fn hooks_json_cases_load_with_located_diagnostics() {
    for path in cases("hooks_json") {
        let name = name_of(&path);
        let data = fs::read(&path).expect("readable");
        let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
        for file in HOOK_FILES {
            for dialect in Dialect::ALL {
                let report = parse_hooks_bytes(&data, Path::new(file), dialect);
                for d in &report.diagnostics {
                    assert!(!d.file.as_os_str().is_empty(), "{name}: {d:?}");
                    if let Some(line) = d.line {
                        assert!(line >= 1 && line as usize <= lines, "{name}: {d:?}");
                    }
                    if let Some(column) = d.column {
                        assert!(column >= 1, "{name}: {d:?}");
                    }
                }
                for r in &report.rules {
                    assert!(r.plugin < report.plugins.len(), "{name}: {r:?}");
                }
                let events: Vec<_> = report.rules.iter().map(|r| r.event).collect();
                let set = RuleSet::new(report.plugins, report.rules, ToolAliases::default());
                for event in events {
                    let m = set.matching(&Event::new(event, "s", "/"));
                    assert!(m.steps <= set.match_budget(), "{name}");
                }
            }
        }
        let claude = parse_hooks_bytes(&data, Path::new("hooks.json"), Dialect::Claude);
        let errors: Vec<_> = claude
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        if name.starts_with("err-") {
            assert!(
                errors.iter().any(|d| d.line.is_some()),
                "{name}: no located error: {:?}",
                claude.diagnostics
            );
        } else if name.starts_with("ok-") {
            assert!(errors.is_empty(), "{name}: {errors:?}");
            assert!(!claude.rules.is_empty(), "{name}: no rule loaded");
        } else {
            panic!("{name}: a hooks_json case is named err-* or ok-*");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// payload

#[test]
fn payload_cases_read_back_as_sent() {
    for path in cases("payload") {
        let name = name_of(&path);
        let case = json_case(&path);
        let given = case["given"].as_str().map(event_name);
        let ok = bool_field(&case, "ok", &path);
        let result = Event::from_payload(given, case["payload"].clone(), "default-session", "/d");
        assert_eq!(result.is_ok(), ok, "{name}: {result:?}");
        match result {
            Ok(ev) => {
                if let Some(given) = given {
                    assert_eq!(ev.name, given, "{name}");
                }
                let sent = Value::Object(wire::flat(&ev));
                // What reads as an envelope is read as one (the fuzz target skips it too).
                if sent.get("event").is_some() && sent.get("data").is_some() {
                    continue;
                }
                let back = Event::from_payload(Some(ev.name), sent.clone(), "d", "/")
                    .unwrap_or_else(|e| panic!("{name}: {sent} does not read back: {e}"));
                assert_eq!(back, ev, "{name}: {sent}");
                for dialect in Dialect::ALL {
                    let _ = wire::payload(&ev, dialect);
                }
                let _ = wire::envelope(&ev);
                let _ = wire::simple_env(&ev);
                let _ = ev.matcher_subject();
            }
            Err(e) => assert!(!e.to_string().is_empty(), "{name}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// hook_output

#[test]
fn hook_output_cases_give_the_expected_effect() {
    for path in cases("hook_output") {
        let name = name_of(&path);
        let case = json_case(&path);
        let event_name = event_name(str_field(&case, "event", &path));
        let code = case["code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or_else(|| panic!("{name}: `code` must be an i32"));
        let fail_mode = match str_field(&case, "fail_mode", &path) {
            "block" => FailMode::Block,
            "allow" => FailMode::Allow,
            other => panic!("{name}: fail_mode {other:?}"),
        };
        let stdout = str_field(&case, "stdout", &path);
        let stderr = str_field(&case, "stderr", &path);
        let checked = hook_output_props::check(event_name, code, fail_mode, stdout, stderr);
        let (_, claude) = checked
            .effects
            .iter()
            .find(|(d, _)| *d == Dialect::Claude)
            .expect("Claude Code is a dialect");
        assert_eq!(
            hook_output_props::blocks(claude),
            bool_field(&case, "blocks", &path),
            "{name}: {claude:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// matcher

#[test]
fn matcher_cases_compile_and_match_within_budget() {
    for path in cases("matcher") {
        let name = name_of(&path);
        let case = json_case(&path);
        let pattern = str_field(&case, "pattern", &path);
        let subject = str_field(&case, "subject", &path);
        let matcher = Matcher::from_str_for(pattern, EventName::PreToolUse);
        if let Ok(re) = JsRegex::new(pattern) {
            let mut budget = MatchBudget::default();
            let _ = re.is_match_within(subject, &mut budget);
            let most = if re.is_backtracking() {
                (QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64
            } else {
                0
            };
            assert!(budget.spent() <= most, "{name}: spent {}", budget.spent());
            assert!(matcher.is_ok(), "{name}: {matcher:?}");
        }
        let _ = Matcher::from_str_for(pattern, EventName::FileChanged);
        assert_eq!(
            matcher.is_ok(),
            bool_field(&case, "compiles", &path),
            "{name}: {matcher:?}"
        );
        if let Ok(m) = &matcher {
            let limit = 2 * BACKTRACK_LIMIT as u64;
            let mut budget = MatchBudget::new(limit);
            let got = m.matches_subject_within(subject, true, &ToolAliases::default(), &mut budget);
            assert!(budget.spent() <= limit, "{name}: spent {}", budget.spent());
            assert_eq!(got, case["matches"].as_bool(), "{name}: {m:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// js_regex

/// hookbox's answer and JavaScript's for one case, when both engines take the pattern.
fn js_regex_replay(path: &Path) -> Result<(), String> {
    let case = json_case(path);
    let pattern = str_field(&case, "pattern", path);
    let subject = str_field(&case, "subject", path);
    let js = bool_field(&case, "js", path);
    let reference = regress::Regex::new(pattern).map_err(|e| format!("regress refuses: {e}"))?;
    assert_eq!(
        reference.find(subject).is_some(),
        js,
        "{}: the case's `js` disagrees with regress",
        path.display()
    );
    let ours = JsRegex::new(pattern).map_err(|e| format!("hookbox refuses: {e}"))?;
    let got = ours.is_match_within(subject, &mut MatchBudget::unlimited());
    if got == Some(js) {
        Ok(())
    } else {
        Err(format!(
            "/{pattern}/ on {subject:?}: hookbox says {got:?}, JavaScript says {js} (translated: {:?})",
            ours.regular()
        ))
    }
}

fn js_regex_cases(known_issue: bool) -> Vec<PathBuf> {
    cases("js_regex")
        .into_iter()
        .filter(|p| json_case(p).get("issue").is_some() == known_issue)
        .collect()
}

#[test]
fn js_regex_cases_match_as_in_javascript() {
    let cases = js_regex_cases(false);
    assert!(!cases.is_empty());
    for path in cases {
        if let Err(e) = js_regex_replay(&path) {
            panic!("{}: {e}", name_of(&path));
        }
    }
}

#[test]
fn js_regex_known_divergences_match_as_in_javascript() {
    let mut failures = Vec::new();
    for path in js_regex_cases(true) {
        if let Err(e) = js_regex_replay(&path) {
            failures.push(format!("{}: {e}", name_of(&path)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// rules

#[test]
fn rules_cases_fire_as_their_matchers_say() {
    for path in cases("rules") {
        let name = name_of(&path);
        let case = json_case(&path);
        let event_name = event_name(str_field(&case, "event", &path));
        let doc = serde_json::json!({ "hooks": case["hooks"] }).to_string();
        let report = parse_hooks_str(&doc, Path::new("hooks.json"), Dialect::Claude);
        assert!(!report.rules.is_empty(), "{name}: {:?}", report.diagnostics);
        let event = Event::from_payload(Some(event_name), case["payload"].clone(), "s", "/")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let fired = rules_props::check(&report, &event, &name)
            .unwrap_or_else(|| panic!("{name}: matching ran out of budget"));
        let want: Vec<usize> = case["fired"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: `fired` must be an array"))
            .iter()
            .map(|v| v.as_u64().expect("a rule index") as usize)
            .collect();
        assert_eq!(fired, want, "{name}");
    }
}
