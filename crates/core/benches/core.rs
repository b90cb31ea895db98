//! Criterion micro-benchmarks of the core's hot path: matching an event against a large rule
//! set, aggregating reports, and serialising a payload. `cargo bench -p hookbox-core`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hookbox_core::aggregate::{StopState, aggregate};
use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName, HandlerType, wire};
use hookbox_core::index::RuleSet;
use hookbox_core::matcher::{Matcher, ToolAliases};
use hookbox_core::output::{Effect, PermissionDecision};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::{CommandSpec, Handler, PluginInfo, Rule, RuleSource};
use serde_json::json;

/// `n` rules over `plugins` plugins: exact tool names, lists, regexes and object matchers on
/// PreToolUse, none of which is `Bash`; plus some rules on other events.
fn rule_set(n: usize, plugins: usize, with_bash: bool) -> RuleSet {
    let events = [
        EventName::PreToolUse,
        EventName::PostToolUse,
        EventName::UserPromptSubmit,
        EventName::Stop,
    ];
    let rules = (0..n)
        .map(|i| {
            let event = events[i % events.len()];
            let matcher = match i % 5 {
                0 => Matcher::from_str_for(&format!("mcp__tenant{}__tool", i % plugins), event),
                1 => Matcher::from_str_for(&format!("Tool{i}|Other{i}"), event),
                2 => Matcher::from_str_for(&format!("^mcp__srv{i}__.*$"), event),
                3 => {
                    Matcher::from_json(Some(&json!({"tool_name": format!("custom_{i}_*")})), event)
                }
                _ => Matcher::from_str_for(&format!("Edit{i}"), event),
            }
            .expect("valid matcher");
            rule(i, event, matcher, i % plugins)
        })
        .chain(with_bash.then(|| {
            rule(
                n,
                EventName::PreToolUse,
                Matcher::Names(vec!["Bash".into()]),
                0,
            )
        }))
        .collect();
    let plugins = (0..plugins)
        .map(|p| PluginInfo {
            name: format!("p{p}"),
            root: format!("/plugins/p{p}").into(),
            dialect: Dialect::Claude,
            files: vec![],
            parsed: vec![],
        })
        .collect();
    RuleSet::new(plugins, rules, ToolAliases::default())
}

fn rule(index: usize, event: EventName, matcher: Matcher, plugin: usize) -> Rule {
    Rule::new(
        index,
        event,
        matcher,
        Handler::Command(CommandSpec::shell("true", 60.0)),
        Dialect::Claude,
        plugin,
        RuleSource::new(format!("p{plugin}"), "hooks.json"),
    )
}

fn bash_event() -> Event {
    Event::from_payload(
        Some(EventName::PreToolUse),
        json!({"tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_use_id": "t1"}),
        "s",
        "/project",
    )
    .expect("valid event")
}

fn matching(c: &mut Criterion) {
    let ev = bash_event();
    let none = rule_set(10_000, 1_000, false);
    c.bench_function("match/10k-rules-none-match", |b| {
        b.iter(|| black_box(none.matching(black_box(&ev))).len())
    });
    let one = rule_set(10_000, 1_000, true);
    c.bench_function("match/10k-rules-one-exact", |b| {
        b.iter(|| black_box(one.matching(black_box(&ev))).len())
    });
    let stop = Event::new(EventName::SessionEnd, "s", "/");
    c.bench_function("match/event-without-rules", |b| {
        b.iter(|| black_box(one.matching(black_box(&stop))).len())
    });
}

fn aggregation(c: &mut Criterion) {
    let ev = bash_event();
    let reports: Vec<HookReport> = (0..10)
        .map(|i| HookReport {
            hook: HookRef {
                rule_index: 9 - i,
                plugin: "p".into(),
                hook_name: format!("h{i}").into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::PreToolUse,
            },
            effect: Effect {
                contexts: vec![format!("context {i}")],
                permission: Some(if i == 3 {
                    PermissionDecision::Deny
                } else {
                    PermissionDecision::Allow
                }),
                permission_reason: Some(format!("reason {i}")),
                ..Effect::default()
            },
            duration_ms: 1.0,
            exit_code: Some(0),
            output: None,
            fuel_consumed: None,
        })
        .collect();
    c.bench_function("aggregate/pre-tool-use-10-reports", |b| {
        b.iter(|| aggregate(black_box(&ev), black_box(&reports), StopState::default()))
    });
}

fn payloads(c: &mut Criterion) {
    let ev = bash_event();
    c.bench_function("payload/claude-flat-json", |b| {
        b.iter(|| serde_json::to_vec(&wire::payload(black_box(&ev), Dialect::Claude)))
    });
    c.bench_function("payload/agentao-envelope-json", |b| {
        b.iter(|| serde_json::to_vec(&wire::payload(black_box(&ev), Dialect::Agentao)))
    });
}

criterion_group!(benches, matching, aggregation, payloads);
criterion_main!(benches);
