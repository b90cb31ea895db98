//! Rules from a hostile hook file against a hostile event: matchers (exact lists, JavaScript
//! regexes, the main source's object matchers with globs) and Claude Code's `if` conditions
//! (`Bash(git commit:*)`, `Edit(*.ts)`) over the tool call's command and paths.
//!
//! Differential: `RuleSet::matching` (exact-name index, one `RegexSet` per event, `if` filter)
//! must fire exactly the rules that each rule's own matcher fires for the event — a rule the
//! index misses is a guard hook that never runs — and the same rules whether a rule is indexed
//! alone or among the others. Matching stays within its budget, never panics, never hangs.
#![no_main]

use std::path::Path;

use hookbox_core::config::parse_hooks_str;
use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

/// The properties, shared with hookbox-core's regression replay.
#[path = "../props/rules.rs"]
mod props;

#[derive(Debug, Arbitrary)]
enum MatcherIn<'a> {
    Absent,
    Text(&'a str),
    Object(Vec<(u8, &'a str)>),
}

#[derive(Debug, Arbitrary)]
struct RuleIn<'a> {
    matcher: MatcherIn<'a>,
    if_: Option<&'a str>,
}

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    event: u8,
    dialect: u8,
    rules: Vec<RuleIn<'a>>,
    tool_name: &'a str,
    command: Option<&'a str>,
    file_path: Option<&'a str>,
    subject: &'a str,
}

/// Events with a matcher field (tool events first: they evaluate `if`).
const EVENTS: &[EventName] = &[
    EventName::PreToolUse,
    EventName::PostToolUse,
    EventName::PermissionRequest,
    EventName::PostToolUseFailure,
    EventName::SessionStart,
    EventName::PreCompact,
    EventName::Notification,
    EventName::SubagentStart,
    EventName::FileChanged,
    EventName::UserPromptSubmit,
];

const OBJECT_KEYS: &[&str] = &[
    "tool_name",
    "toolName",
    "trigger",
    "source",
    "reason",
    "agent_type",
    "notification_type",
];

const MAX_RULES: usize = 12;

fuzz_target!(|input: Input<'_>| {
    let name = EVENTS[input.event as usize % EVENTS.len()];
    let dialect = Dialect::ALL[input.dialect as usize % Dialect::ALL.len()];
    let mut groups = Vec::new();
    for r in input.rules.iter().take(MAX_RULES) {
        let mut hook = Map::new();
        hook.insert("type".into(), json!("command"));
        hook.insert("command".into(), json!("true"));
        if let Some(cond) = r.if_ {
            hook.insert("if".into(), json!(cond));
        }
        let mut group = Map::new();
        match &r.matcher {
            MatcherIn::Absent => {}
            MatcherIn::Text(s) => {
                group.insert("matcher".into(), json!(s));
            }
            MatcherIn::Object(parts) => {
                let obj: Map<String, Value> = parts
                    .iter()
                    .map(|(k, v)| {
                        (
                            OBJECT_KEYS[*k as usize % OBJECT_KEYS.len()].to_owned(),
                            json!(v),
                        )
                    })
                    .collect();
                group.insert("matcher".into(), Value::Object(obj));
            }
        }
        group.insert("hooks".into(), json!([hook]));
        groups.push(Value::Object(group));
    }
    let doc = json!({ "hooks": { name.as_str(): groups } }).to_string();
    let report = parse_hooks_str(&doc, Path::new("hooks.json"), dialect);
    if report.rules.is_empty() {
        return;
    }

    let mut tool_input = Map::new();
    if let Some(c) = input.command {
        tool_input.insert("command".into(), json!(c));
    }
    if let Some(p) = input.file_path {
        tool_input.insert("file_path".into(), json!(p));
    }
    let payload = json!({
        "hook_event_name": name.as_str(),
        "session_id": "s",
        "cwd": "/",
        "tool_name": input.tool_name,
        "tool_input": tool_input,
        "source": input.subject,
        "trigger": input.subject,
        "reason": input.subject,
        "agent_type": input.subject,
        "notification_type": input.subject,
        "file_path": input.subject,
        "prompt": input.subject,
    });
    let Ok(event) = Event::from_payload(None, payload, "s", "/") else {
        return;
    };

    props::check(&report, &event, &format!("{doc}\n{event:?}"));
});
