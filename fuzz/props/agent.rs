//! The properties of reading an agent's payload and answering it, in one place: the
//! `agent_payload` fuzz target checks them on generated input, and hookbox-agents'
//! `tests/agent_payloads.rs` on every fixture under `tests/agents/` and on cut and corrupted
//! copies of each — each including this file by path. Depends on hookbox-core, hookbox-agents and
//! serde_json.

use hookbox_agents::{self as agent, Agent, Answer, Failures, ParseOptions};
use hookbox_core::aggregate::{StopState, aggregate};
use hookbox_core::event::{Event, HandlerType, wire};
use hookbox_core::output::{Effect, PermissionDecision};
use hookbox_core::report::{HookRef, HookReport};

/// Every effect a hook can ask for, one at a time: what the answers are rendered for.
fn effects(event: &Event) -> Vec<Effect> {
    let mut out = vec![Effect::default()];
    for d in [
        PermissionDecision::Allow,
        PermissionDecision::Ask,
        PermissionDecision::Defer,
        PermissionDecision::Deny,
    ] {
        out.push(Effect {
            permission: Some(d),
            permission_reason: Some("why".into()),
            ..Effect::default()
        });
    }
    let input = event
        .tool_input()
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"command": "ls"}));
    out.push(Effect {
        updated_input: Some(input.clone()),
        ..Effect::default()
    });
    out.push(Effect {
        permission: Some(PermissionDecision::Allow),
        updated_input: Some(serde_json::json!({"command": "ls"})),
        ..Effect::default()
    });
    out.push(Effect {
        block: Some("blocked".into()),
        contexts: vec!["ctx".into()],
        system_message: Some("msg".into()),
        ..Effect::default()
    });
    out.push(Effect {
        stop: Some("stop".into()),
        ..Effect::default()
    });
    out.push(Effect {
        follow_up: Some("go on".into()),
        contexts: vec!["ctx".into()],
        ..Effect::default()
    });
    out
}

/// Panics unless `a` is an answer an agent can read: stdout empty or one JSON object, an exit
/// code of 0, 1 or 2, and stderr as the reason only with exit 2 and a reason.
fn check_answer(agent: Agent, a: &Answer) {
    if !a.stdout.is_empty() {
        let v: serde_json::Value = serde_json::from_str(&a.stdout)
            .unwrap_or_else(|e| panic!("{agent}: stdout is not JSON ({e}): {}", a.stdout));
        assert!(v.is_object(), "{agent}: stdout is not an object: {v}");
    }
    assert!(a.exit_code <= 2, "{agent}: exit {}", a.exit_code);
    if a.stderr_is_reason {
        assert_eq!(
            a.exit_code, 2,
            "{agent}: a reason on stderr goes with exit 2"
        );
        assert!(!a.stderr.trim().is_empty(), "{agent}: an empty reason");
    }
    let _ = a.stderr_text(&["extra".into()]);
}

/// Parses `bytes` as `agent`'s payload (with `event` on the command line) and panics unless:
/// a refusal has a message; an event read back from what hooks are sent (`wire::flat`) is the
/// same event; every effect, aggregated and rendered, is a readable answer, and so is every
/// error answer; `parse_any` and detection never panic.
pub(crate) fn check(agent: Agent, event: Option<&str>, bytes: &[u8]) {
    let opts = ParseOptions {
        event: event.map(str::to_owned),
        default_session: "default-session".into(),
        default_cwd: "/default".into(),
        // Both answers to "can anyone confirm", and MCP names to map (Copilot's `srv-tool`).
        headless: bytes.len() % 2 == 1,
        mcp_servers: vec!["srv".into(), "my-db".into()],
    };
    // What an unreadable payload still says of itself: never a panic, whatever the bytes.
    let _ = agent::peek(agent, bytes, event);
    let _ = agent::parse_any(Some(agent), bytes, &opts);
    let _ = agent::parse_any(None, bytes, &opts);
    let inc = match agent::parse(agent, bytes, &opts) {
        Ok(inc) => inc,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let ev = &inc.event;
    let sent = serde_json::Value::Object(wire::flat(ev));
    let back = Event::from_payload(Some(ev.name), sent.clone(), "d", "/")
        .unwrap_or_else(|e| panic!("{agent}: {sent} does not read back: {e}"));
    assert_eq!(&back, ev, "{agent}: {sent} reads back as another event");
    for effect in effects(ev) {
        let report = HookReport {
            hook: HookRef {
                rule_index: 0,
                plugin: "p".into(),
                hook_name: "h".into(),
                handler_type: HandlerType::Command,
                hook_event: ev.name,
            },
            effect,
            duration_ms: 0.0,
            exit_code: None,
            output: None,
            fuel_consumed: None,
        };
        let reports = [report];
        let verdict = aggregate(
            ev,
            &reports,
            inc.native.stop_state(StopState::default().cap),
        );
        let a = agent::render(&inc.native, ev, &verdict, &Failures::from_reports(&reports));
        check_answer(agent, &a);
    }
    for mode in [
        hookbox_core::rule::FailMode::Allow,
        hookbox_core::rule::FailMode::Block,
    ] {
        check_answer(
            agent,
            &agent::render_error(&inc.native, Some(ev.name), "boom", mode),
        );
        check_answer(agent, &agent::render_error(&inc.native, None, "boom", mode));
    }
}
