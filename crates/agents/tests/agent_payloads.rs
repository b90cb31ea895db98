//! The `agent_payload` fuzz target's properties (`fuzz/props/agent.rs`, included by path) on
//! every payload fixture under `tests/agents/` — each agent's real shapes — and on copies of
//! each cut short, with a byte flipped, and with its fields' types changed: a bad payload is an
//! error with a message, never a panic, and every answer is one an agent can read.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::path::PathBuf;

use hookbox_core::agent::Agent;
use serde_json::Value;

#[path = "../../../fuzz/props/agent.rs"]
mod agent_props;

fn fixtures() -> Vec<(Agent, Option<String>, Value)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agents");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap().flatten() {
        let Ok(agent) = dir.file_name().to_string_lossy().parse::<Agent>() else {
            continue;
        };
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|x| x == "json") {
                let fx: Value =
                    serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap();
                out.push((
                    agent,
                    fx["event"].as_str().map(str::to_owned),
                    fx["payload"].clone(),
                ));
            }
        }
    }
    assert!(out.len() > 100, "{} fixtures", out.len());
    out
}

/// `v` with every scalar field in turn replaced by a value of another type.
fn retyped(v: &Value) -> Vec<Value> {
    let Value::Object(m) = v else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for k in m.keys() {
        for other in [
            Value::Null,
            Value::from(7),
            Value::from("s"),
            Value::Array(vec![]),
            serde_json::json!({"x": [1]}),
        ] {
            let mut c = m.clone();
            c.insert(k.clone(), other);
            out.push(Value::Object(c));
        }
    }
    out
}

#[test]
fn every_fixture_and_its_mutations_hold_the_properties() {
    for (agent, event, payload) in fixtures() {
        let text = payload.to_string();
        agent_props::check(agent, event.as_deref(), text.as_bytes());
        // Every other agent reads it too (a hook installed for one agent, run by another).
        for other in Agent::ALL {
            agent_props::check(other, None, text.as_bytes());
        }
        for cut in (0..text.len()).step_by(7) {
            agent_props::check(agent, event.as_deref(), &text.as_bytes()[..cut]);
        }
        let mut flipped = text.clone().into_bytes();
        for i in (0..flipped.len()).step_by(11) {
            flipped[i] ^= 0x20;
            agent_props::check(agent, event.as_deref(), &flipped);
            flipped[i] ^= 0x20;
        }
        for v in retyped(&payload) {
            agent_props::check(agent, event.as_deref(), v.to_string().as_bytes());
        }
    }
}
