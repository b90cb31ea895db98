//! What a dispatch showed ([`Observed`]) and the checks of a case's `expect` against it: each
//! difference a [`Mismatch`] saying what was expected and what came, with a line diff for a
//! rewritten input.

use hookbox_core::Outcome;
use hookbox_core::agent::Agent;
use hookbox_core::aggregate::Verdict;
use hookbox_core::output::{FailureClass, PermissionDecision};
use hookbox_core::report::HookReport;
use serde::Serialize;
use serde_json::Value;

use super::agents::{Kind, Reading};
use super::case::{Case, Decision};

/// What one dispatch of a case showed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Observed {
    /// The verdict's outcome.
    pub(crate) outcome: Option<Outcome>,
    /// The permission decision.
    pub(crate) decision: Option<PermissionDecision>,
    /// Every reason-like text: a deny's or block's reason, a stop reason, a follow-up.
    pub(crate) reasons: Vec<String>,
    /// The contexts added.
    pub(crate) contexts: Vec<String>,
    /// The hooks' system messages.
    pub(crate) system_messages: Vec<String>,
    /// The rewritten input.
    pub(crate) updated_input: Option<Value>,
    /// (hook, class, message) of each failed hook.
    pub(crate) failures: Vec<(String, FailureClass, String)>,
    /// Wall time of the dispatch.
    pub(crate) duration_ms: f64,
    /// Rules the event matched.
    pub(crate) matched: usize,
    /// Each listed agent's reading of its answer, or why it has none.
    pub(crate) agents: Vec<(Agent, Result<Reading, String>)>,
}

impl Observed {
    /// The facts of `verdict` and `reports`.
    pub(crate) fn of(verdict: &Verdict, reports: &[HookReport], duration_ms: f64) -> Observed {
        let mut o = Observed {
            outcome: Some(verdict.outcome()),
            contexts: verdict.additional_contexts().to_vec(),
            system_messages: verdict
                .system_messages()
                .iter()
                .map(|m| m.to_string())
                .collect(),
            duration_ms,
            ..Observed::default()
        };
        let mut texts: Vec<Option<String>> = Vec::new();
        match verdict {
            Verdict::PreToolUse(r) => {
                o.decision = r.decision;
                o.updated_input = r.updated_input.clone();
                texts.extend([
                    r.reason.clone(),
                    r.blocking_error.clone(),
                    r.stop_reason.clone(),
                ]);
            }
            Verdict::UserPromptSubmit(r) => {
                texts.extend([r.blocking_error.clone(), r.stop_reason.clone()]);
            }
            Verdict::Stop(r) => {
                texts.extend([
                    r.follow_up_message.clone(),
                    r.blocking_error.clone(),
                    r.stop_reason.clone(),
                ]);
            }
            Verdict::PreCompact(r) => texts.push(r.ignored_block.clone()),
            Verdict::Event(r) => {
                texts.extend([r.blocking_error.clone(), r.stop_reason.clone()]);
            }
        }
        o.reasons = texts.into_iter().flatten().collect();
        for r in reports {
            if let Some(f) = &r.effect.failure {
                o.failures
                    .push((r.hook.hook_name.to_string(), f.class, f.message.clone()));
            }
        }
        o
    }
}

/// One expectation that did not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Mismatch {
    /// Which expectation (`decision`, `agent cursor`, …).
    pub(crate) what: String,
    /// What the case expected.
    pub(crate) expected: String,
    /// What came.
    pub(crate) got: String,
    /// A line diff, where one helps (a rewritten input).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) diff: Option<String>,
}

fn mismatch(what: &str, expected: impl Into<String>, got: impl Into<String>) -> Mismatch {
    Mismatch {
        what: what.to_owned(),
        expected: expected.into(),
        got: got.into(),
        diff: None,
    }
}

fn quoted(texts: &[String]) -> String {
    if texts.is_empty() {
        "none".to_owned()
    } else {
        texts
            .iter()
            .map(|t| format!("{t:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn decision_name(d: Option<PermissionDecision>) -> &'static str {
    d.map_or("none", PermissionDecision::as_str)
}

/// Every expectation of `case` that `o` does not meet, in the order of the format.
pub(crate) fn check(case: &Case, o: &Observed, kind: Kind) -> Vec<Mismatch> {
    let e = &case.spec.expect;
    let mut out = Vec::new();
    if let Some(want) = e.outcome
        && o.outcome != Some(want)
    {
        out.push(mismatch(
            "outcome",
            want.as_str(),
            o.outcome.map_or("none", Outcome::as_str),
        ));
    }
    if let Some(want) = e.decision {
        let got = o.decision;
        let holds = match want {
            Decision::None => got.is_none(),
            Decision::Allow => got == Some(PermissionDecision::Allow),
            Decision::Ask => got == Some(PermissionDecision::Ask),
            Decision::Defer => got == Some(PermissionDecision::Defer),
            Decision::Deny => got == Some(PermissionDecision::Deny),
        };
        if !holds {
            let want = serde_json::to_value(want).unwrap_or_default();
            out.push(mismatch(
                "decision",
                want.as_str().unwrap_or_default(),
                decision_name(got),
            ));
        }
    }
    if let Some(text) = &e.reason
        && !o.reasons.iter().any(|r| r.contains(text.as_str()))
    {
        out.push(mismatch(
            "reason",
            format!("a reason containing {text:?}"),
            quoted(&o.reasons),
        ));
    }
    if let Some(text) = &e.context
        && !o.contexts.iter().any(|c| c.contains(text.as_str()))
    {
        out.push(mismatch(
            "context",
            format!("a context containing {text:?}"),
            quoted(&o.contexts),
        ));
    }
    if let Some(text) = &e.system_message
        && !o.system_messages.iter().any(|m| m.contains(text.as_str()))
    {
        out.push(mismatch(
            "system_message",
            format!("a system message containing {text:?}"),
            quoted(&o.system_messages),
        ));
    }
    if let Some(want) = &e.updated_input {
        let got = o.updated_input.clone().unwrap_or(Value::Null);
        if &got != want {
            let mut m = mismatch("updated_input", short(want), short(&got));
            m.diff = Some(json_diff(want, &got));
            out.push(m);
        }
    }
    if let Some(want) = case.failure {
        let classes: Vec<FailureClass> = o.failures.iter().map(|f| f.1).collect();
        let got = || {
            if o.failures.is_empty() {
                "none".to_owned()
            } else {
                o.failures
                    .iter()
                    .map(|(hook, class, msg)| format!("{class} in {hook}: {msg}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        };
        match want {
            None if !classes.is_empty() => out.push(mismatch("failure", "none", got())),
            Some(c) if !classes.contains(&c) => out.push(mismatch("failure", c.as_str(), got())),
            _ => {}
        }
    }
    if let Some(max) = e.max_ms
        && o.duration_ms > max
    {
        out.push(mismatch(
            "max_ms",
            format!("at most {max} ms"),
            format!("{:.1} ms", o.duration_ms),
        ));
    }
    for (agent, reading) in &o.agents {
        match reading {
            Err(why) => out.push(mismatch(
                &format!("agent {agent}"),
                "an answer the agent acts on",
                why.clone(),
            )),
            Ok(r) => {
                if let Some(why) = agent_check(case, o, kind, *agent, r) {
                    out.push(mismatch(&format!("agent {agent}"), why, r.describe()));
                }
            }
        }
    }
    out
}

/// What `agent` should have done but does not, per the case's expectations; `None` when it
/// does all of it.
fn agent_check(case: &Case, o: &Observed, kind: Kind, agent: Agent, r: &Reading) -> Option<String> {
    let e = &case.spec.expect;
    let name = agent.display_name();
    let reason_ok = |got: &str| e.reason.as_deref().is_none_or(|t| got.contains(t));
    let denies = match e.decision {
        Some(Decision::Deny) => true,
        _ => e.outcome == Some(Outcome::Block) && matches!(kind, Kind::Tool | Kind::Prompt),
    };
    if denies {
        match &r.deny {
            Some(got) if reason_ok(got) || got.is_empty() => {}
            Some(_) => {
                return Some(format!(
                    "a refusal {name} shows with a reason containing {:?}",
                    e.reason.as_deref().unwrap_or_default()
                ));
            }
            None => return Some(format!("a refusal {name} honours")),
        }
    }
    match e.decision {
        Some(Decision::Ask) if !r.ask => return Some(format!("{name} asks the user")),
        Some(Decision::Allow) if !r.allow => {
            return Some(format!("{name} runs the call without asking"));
        }
        Some(Decision::None) if r.deny.is_some() || r.ask || r.allow => {
            return Some(format!(
                "no decision: {name} goes on with its own permission flow"
            ));
        }
        _ => {}
    }
    if e.outcome == Some(Outcome::Allow) && (r.deny.is_some() || r.stop) {
        return Some(format!("{name} goes on"));
    }
    if matches!(
        e.outcome,
        Some(Outcome::Continue | Outcome::ContinueAtMaxIter)
    ) {
        match &r.continue_with {
            Some(f) if reason_ok(f) => {}
            _ => {
                return Some(format!(
                    "{name} continues the turn{}",
                    e.reason
                        .as_deref()
                        .map(|t| format!(" with a message containing {t:?}"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    if let Some(text) = &e.context
        && !r.contexts.iter().any(|c| c.contains(text.as_str()))
    {
        return Some(format!(
            "{name} gives the model a context containing {text:?}"
        ));
    }
    if let Some(want) = &e.updated_input
        && !want.is_null()
        && r.rewrite.as_ref() != Some(want)
        && o.updated_input.as_ref() == Some(want)
    {
        return Some(format!("{name} runs the call with {}", short(want)));
    }
    None
}

/// `v` as compact JSON, cut to a line's worth.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// A unified line diff of two JSON values, pretty-printed (`-` expected, `+` got).
pub(crate) fn json_diff(want: &Value, got: &Value) -> String {
    let a = serde_json::to_string_pretty(want).unwrap_or_default();
    let b = serde_json::to_string_pretty(got).unwrap_or_default();
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .header("expected", "got")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::test::case::parse_case;
    use std::path::Path;

    fn case(expect: &str) -> Case {
        parse_case(
            Path::new("t.json"),
            Path::new("tests/t.json"),
            &format!(r#"{{"event": "PreToolUse", "expect": {expect}}}"#),
        )
        .unwrap()
    }

    #[test]
    fn every_expectation_is_checked() {
        let o = Observed {
            outcome: Some(Outcome::Allow),
            updated_input: Some(serde_json::json!({"command": "ls -la"})),
            reasons: vec!["because".into()],
            duration_ms: 12.0,
            ..Observed::default()
        };
        let c = case(
            r#"{"outcome": "block", "decision": "deny", "reason": "rm", "context": "c", "system_message": "m",
                "updated_input": {"command": "ls"}, "failure": "timeout", "max_ms": 5}"#,
        );
        let m = check(&c, &o, Kind::Tool);
        let what: Vec<&str> = m.iter().map(|m| m.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "outcome",
                "decision",
                "reason",
                "context",
                "system_message",
                "updated_input",
                "failure",
                "max_ms"
            ]
        );
        let diff = m[5].diff.as_deref().unwrap();
        assert!(
            diff.contains("-  \"command\": \"ls\"") && diff.contains("+  \"command\": \"ls -la\""),
            "{diff}"
        );
        assert!(check(&case(r#"{"outcome": "allow", "decision": "none", "reason": "caus", "failure": "none"}"#), &o, Kind::Tool).is_empty());
    }

    #[test]
    fn a_deny_an_agent_would_not_honour_fails_for_that_agent() {
        let o = Observed {
            outcome: Some(Outcome::Block),
            decision: Some(PermissionDecision::Deny),
            agents: vec![
                (
                    Agent::Claude,
                    Ok(Reading {
                        deny: Some("no".into()),
                        ..Reading::default()
                    }),
                ),
                (Agent::Copilot, Ok(Reading::default())),
            ],
            ..Observed::default()
        };
        let m = check(&case(r#"{"decision": "deny"}"#), &o, Kind::Tool);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].what, "agent copilot");
        assert!(
            m[0].expected.contains("a refusal GitHub Copilot honours"),
            "{m:?}"
        );
        assert_eq!(m[0].got, "goes on as if no hook had answered");
    }
}
