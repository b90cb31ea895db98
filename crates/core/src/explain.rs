//! Why each loaded rule did or did not fire for one event — `hookbox dispatch --explain`: for a
//! rule that did not, the part that failed (its event, its matcher against the matched field and,
//! for a tool, every alias of it, its `if` condition); for one that did, how. It decides nothing:
//! the answers are those of [`RuleSet::matching`], restated rule by rule (checked by a test).
//! What happened after a rule matched (trust, a hook that could not run) is the host's report.

use serde::Serialize;
use serde_json::Value;

use crate::event::{Event, EventName};
use crate::index::{RuleSet, if_matches};
use crate::matcher::{MatchBudget, Matcher, ValuePattern, glob_match};
use crate::rule::Rule;

/// Which part of a rule decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The rule is declared for another event.
    Event,
    /// Its matcher.
    Matcher,
    /// Its `if` condition.
    If,
}

/// One rule's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// The rule's position in the rule set.
    pub rule_index: usize,
    /// Whether it fired.
    pub matched: bool,
    /// The part that decided: the one that failed, or for a match the last one checked.
    pub part: Part,
    /// Why, in a sentence.
    pub why: String,
}

/// For each rule of `set`, in rule order, why it did or did not fire for `event`. Regexes get a
/// budget of their own per rule here (a dispatch shares one), so a rule the dispatch could not
/// decide may be decided here; the dispatch reports those as refused.
pub fn explain(set: &RuleSet, event: &Event) -> Vec<Explanation> {
    set.rules()
        .iter()
        .map(|r| explain_rule(set, r, event))
        .collect()
}

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// How a matcher reads in a sentence: `matcher "Bash|Edit"`.
fn shown(m: &Matcher) -> String {
    match m {
        Matcher::All => "no matcher".to_owned(),
        Matcher::Names(n) => format!("matcher {}", quoted(&n.join("|"))),
        Matcher::Regex(re) => format!("matcher {} (a regular expression)", quoted(re.as_str())),
        Matcher::Object(parts) => {
            let fields: Vec<String> = parts
                .iter()
                .map(|(f, p)| {
                    let v = match p {
                        ValuePattern::Glob(g) => g.as_str(),
                        ValuePattern::Regex(re) => re.as_str(),
                    };
                    format!("{f} {}", quoted(v))
                })
                .collect();
            format!("matcher {{{}}}", fields.join(", "))
        }
    }
}

fn explain_rule(set: &RuleSet, rule: &Rule, event: &Event) -> Explanation {
    let answer = |matched: bool, part: Part, why: String| Explanation {
        rule_index: rule.index,
        matched,
        part,
        why,
    };
    if rule.event != event.name {
        return answer(
            false,
            Part::Event,
            format!("declared for {}, not {}", rule.event, event.name),
        );
    }
    let (matched, why) = matcher_answer(set, rule, event);
    if !matched {
        return answer(false, Part::Matcher, why);
    }
    let Some(cond) = &rule.if_condition else {
        return answer(true, Part::Matcher, why);
    };
    if !event.name.evaluates_if() {
        return answer(
            false,
            Part::If,
            format!(
                "\"if\": {} never holds on {}: 'if' applies to tool events only (as in Claude Code)",
                quoted(&cond.raw),
                event.name
            ),
        );
    }
    let call = call_summary(event);
    if if_matches(cond, event, set.aliases()) {
        answer(
            true,
            Part::If,
            format!("{why}, and \"if\": {} holds for {call}", quoted(&cond.raw)),
        )
    } else {
        answer(
            false,
            Part::If,
            format!(
                "{why}, but \"if\": {} does not hold for {call}",
                quoted(&cond.raw)
            ),
        )
    }
}

/// The call an `if` is tested on: the tool and its main argument.
fn call_summary(event: &Event) -> String {
    let tool = event.tool_name().unwrap_or("(no tool)");
    let input = event.tool_input();
    let arg = ["command", "file_path", "path", "url", "pattern"]
        .iter()
        .find_map(|k| {
            input
                .and_then(|i| i.get(*k))
                .and_then(Value::as_str)
                .map(|v| (*k, v))
        });
    match arg {
        Some((k, v)) => {
            let cut: String = v.chars().take(80).collect();
            let more = if cut.len() < v.len() { "…" } else { "" };
            format!("{tool} with {k} {}{more}", quoted(&cut))
        }
        None => tool.to_owned(),
    }
}

/// Whether the rule's matcher fires for `event`, and how or why not.
fn matcher_answer(set: &RuleSet, rule: &Rule, event: &Event) -> (bool, String) {
    let m = &rule.matcher;
    let name = event.name;
    if m.is_all() {
        return (true, format!("{} matches every {name}", shown(m)));
    }
    let mut budget = MatchBudget::new(set.match_budget());
    let Some(field) = name.matcher_field() else {
        // String matchers are ignored there; an object matcher still reads its fields.
        if let Matcher::Object(_) = m {
            return object_answer(set, m, event, &mut budget);
        }
        return (
            true,
            format!(
                "{name} has no matcher field, so its {} is ignored",
                shown(m)
            ),
        );
    };
    if let Matcher::Object(_) = m {
        return object_answer(set, m, event, &mut budget);
    }
    let Some(subject) = event.field_str(field) else {
        return (
            false,
            format!(
                "{} needs `{field}`, which this {name} does not carry",
                shown(m)
            ),
        );
    };
    let is_tool = field == "tool_name";
    let names: Vec<&str> = if is_tool {
        set.aliases().names(subject).collect()
    } else {
        vec![subject]
    };
    let mut undecided = false;
    for n in &names {
        match m.matches_subject_within(n, false, set.aliases(), &mut budget) {
            Some(true) if *n == subject => {
                return (true, format!("{} matches {field} {}", shown(m), quoted(n)));
            }
            Some(true) => {
                return (
                    true,
                    format!(
                        "{} matches {field} {} as {}, its alias",
                        shown(m),
                        quoted(subject),
                        quoted(n)
                    ),
                );
            }
            Some(false) => {}
            None => undecided = true,
        }
    }
    if undecided {
        return (
            false,
            format!(
                "{} could not be decided within the matching budget ({} steps) for {field} {}",
                shown(m),
                set.match_budget(),
                quoted(subject)
            ),
        );
    }
    let aliases = if names.len() > 1 {
        let others: Vec<String> = names[1..].iter().map(|n| quoted(n)).collect();
        format!(" nor its aliases {}", others.join(", "))
    } else if is_tool {
        " (it has no aliases)".to_owned()
    } else {
        String::new()
    };
    let exact = if let Matcher::Names(_) = m {
        " (exact names, case-sensitive)"
    } else {
        ""
    };
    (
        false,
        format!(
            "{}{exact} does not match {field} {}{aliases}",
            shown(m),
            quoted(subject)
        ),
    )
}

/// An object matcher: the first field that does not match.
fn object_answer(
    set: &RuleSet,
    m: &Matcher,
    event: &Event,
    budget: &mut MatchBudget,
) -> (bool, String) {
    let Matcher::Object(parts) = m else {
        return (false, String::new());
    };
    for (field, pat) in parts {
        let Some(subject) = event.field_str(field) else {
            return (
                false,
                format!(
                    "{} needs `{field}`, which this {} does not carry",
                    shown(m),
                    event.name
                ),
            );
        };
        let names: Vec<&str> = if field == "tool_name" {
            set.aliases().names(subject).collect()
        } else {
            vec![subject]
        };
        let hit = names.iter().any(|n| match pat {
            ValuePattern::Glob(g) => g == "*" || glob_match(g, n),
            ValuePattern::Regex(re) => re.is_match_within(n, budget) == Some(true),
        });
        if !hit {
            return (
                false,
                format!(
                    "{}: {field} {} does not match{}",
                    shown(m),
                    quoted(subject),
                    if names.len() > 1 {
                        ", nor do its aliases"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    (true, format!("{} matches every field", shown(m)))
}

/// The events the rules of `set` are declared for, with how many each, in first-seen order
/// (to say where the rules are when none is for the dispatched event).
pub fn events_with_rules(set: &RuleSet) -> Vec<(EventName, usize)> {
    let mut out: Vec<(EventName, usize)> = Vec::new();
    for r in set.rules() {
        match out.iter_mut().find(|(e, _)| *e == r.event) {
            Some((_, n)) => *n += 1,
            None => out.push((r.event, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_hooks_str;
    use crate::dialect::Dialect;
    use crate::matcher::ToolAliases;
    use serde_json::json;
    use std::path::Path;

    fn set(text: &str) -> RuleSet {
        let r = parse_hooks_str(text, Path::new("hooks.json"), Dialect::Claude);
        RuleSet::new(r.plugins, r.rules, ToolAliases::default())
    }

    fn pre(tool: &str, input: Value) -> Event {
        Event::from_payload(
            Some(EventName::PreToolUse),
            json!({"tool_name": tool, "tool_input": input}),
            "s",
            "/",
        )
        .unwrap()
    }

    const RULES: &str = r#"{"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "c", "if": "Bash(git push:*)"}]},
            {"matcher": "^Ba", "hooks": [{"type": "command", "command": "d"}]},
            {"type": "command", "command": "e", "matcher": {"tool_name": "Read"}}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "f"}]}]
    }}"#;

    #[test]
    fn each_rule_says_which_part_decided() {
        let s = set(RULES);
        let e = pre("run_shell_command", json!({"command": "ls -la"}));
        let got = explain(&s, &e);
        assert_eq!(got.len(), 6);
        assert!(got[0].matched, "{got:?}");
        assert_eq!(
            got[0].why,
            "matcher \"Bash\" matches tool_name \"run_shell_command\" as \"Bash\", its alias"
        );
        assert!(!got[1].matched);
        assert_eq!(got[1].part, Part::Matcher);
        assert!(
            got[1].why.starts_with("matcher \"Edit|Write\" (exact names, case-sensitive) does not match tool_name \"run_shell_command\" nor its aliases \"Bash\""),
            "{}",
            got[1].why
        );
        assert!(!got[2].matched);
        assert_eq!(got[2].part, Part::If);
        assert!(
            got[2]
                .why
                .ends_with("but \"if\": \"Bash(git push:*)\" does not hold for run_shell_command with command \"ls -la\""),
            "{}",
            got[2].why
        );
        assert!(got[3].matched, "{got:?}");
        assert!(!got[4].matched);
        assert!(
            got[4]
                .why
                .contains("tool_name \"run_shell_command\" does not match, nor do its aliases"),
            "{}",
            got[4].why
        );
        assert_eq!(got[5].part, Part::Event);
        assert_eq!(got[5].why, "declared for Stop, not PreToolUse");
    }

    #[test]
    fn the_explanation_agrees_with_matching() {
        let s = set(RULES);
        for (tool, cmd) in [
            ("Bash", "git push --force"),
            ("Bash", "ls"),
            ("Edit", ""),
            ("Read", ""),
            ("mcp__x__y", ""),
        ] {
            let e = pre(tool, json!({"command": cmd}));
            let fired: Vec<usize> = s.matching(&e).iter().map(|r| r.index).collect();
            let explained: Vec<usize> = explain(&s, &e)
                .iter()
                .filter(|x| x.matched)
                .map(|x| x.rule_index)
                .collect();
            assert_eq!(fired, explained, "{tool} {cmd}");
        }
    }

    #[test]
    fn rules_elsewhere_are_counted_by_event() {
        let s = set(RULES);
        assert_eq!(
            events_with_rules(&s),
            vec![(EventName::PreToolUse, 5), (EventName::Stop, 1)]
        );
    }
}
