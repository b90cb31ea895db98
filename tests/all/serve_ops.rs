//! `hookbox serve` operations under traffic: tenants reloaded (admin reload, `PUT`, SIGHUP)
//! while clients dispatch — every answer is one rule set's verdict or the other's, none fails —
//! and SIGTERM while requests are in flight: every accepted request is answered, then the
//! process exits 0 and the port is closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hookbox_test_artifacts as guests;
use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Fixture, eventually, metric, request};

/// The shell guard on PreToolUse, denying `deny` (none: `git status` passes).
fn rules(deny: &[&str]) -> Value {
    json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/shell_guard.wasm", "matcher": "Bash", "config": {"deny": deny}}]}})
}

#[test]
fn reloads_during_traffic_answer_every_dispatch_with_one_rule_set_or_the_other() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &rules(&[]),
        &[("shell_guard.wasm", guests::SHELL_GUARD)],
    );
    let s = f.start("");
    let stop = Arc::new(AtomicBool::new(false));
    let (allowed, denied) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (addr, stop) = (s.addr, stop.clone());
            let (allowed, denied) = (allowed.clone(), denied.clone());
            std::thread::spawn(move || {
                let body = serde_json::to_vec(&json!({"event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "git status"}}})).unwrap();
                let mut answers = 0;
                while !stop.load(Ordering::Relaxed) || answers == 0 {
                    let r = request(addr, "POST", "/v1/tenants/a/dispatch?report=full", &[("Authorization", "Bearer token-a")], Some(&body))
                        .expect("every request is answered");
                    assert_eq!(r.status, 200, "{}", r.text());
                    let d = r.json();
                    assert!(d["hooks"][0]["effect"]["failure"].is_null(), "no hook failed: {d}");
                    match d["verdict"]["decision"].as_str() {
                        None => allowed.fetch_add(1, Ordering::Relaxed),
                        Some("deny") => denied.fetch_add(1, Ordering::Relaxed),
                        other => panic!("neither rule set's verdict: {other:?} {d}"),
                    };
                    answers += 1;
                }
            })
        })
        .collect();
    for i in 0..30 {
        let deny: &[&str] = if i % 2 == 0 { &["git status"] } else { &[] };
        f.plugin("a", &rules(deny), &[]);
        match i % 3 {
            0 => assert_eq!(
                s.call("POST", "/v1/tenants/a/reload", Some(ADMIN), None)
                    .status,
                200
            ),
            1 => assert_eq!(
                s.call("PUT", "/v1/tenants/a", Some(ADMIN), None).status,
                200
            ),
            _ => {
                s.signal("HUP");
                // SIGHUP's reload is asynchronous: wait for it to be the one serving.
                let want = if deny.is_empty() { None } else { Some("deny") };
                eventually("the SIGHUP reload serves the new rules", || {
                    let d = s.post("/v1/tenants/a/dispatch", Some("token-a"), &json!({"event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "git status"}}})).json();
                    (d["verdict"]["decision"].as_str() == want).then_some(())
                });
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let (allowed, denied) = (
        allowed.load(Ordering::Relaxed),
        denied.load(Ordering::Relaxed),
    );
    assert!(allowed + denied >= 4, "{allowed} + {denied}");
    let m = s.get("/metrics", Some(ADMIN)).text();
    // `/readyz` answers 503 while the server starts (the fixture polls it); no other route may.
    let failed: Vec<&str> = m
        .lines()
        .filter(|l| l.contains("code=\"5") && !l.contains("route=\"/readyz\""))
        .collect();
    assert!(failed.is_empty(), "no request failed: {failed:?}");
}

#[test]
fn sigterm_answers_every_accepted_request_then_exits_0() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/chaos.wasm"}]}}),
        &[("chaos.wasm", guests::CHAOS)],
    );
    let mut s = f.start("");
    let addr = s.addr;
    const IN_FLIGHT: usize = 6;
    let clients: Vec<_> = (0..IN_FLIGHT)
        .map(|_| {
            std::thread::spawn(move || {
                let body = serde_json::to_vec(
                    &json!({"event": "UserPromptSubmit", "payload": {"prompt": "sleep:1000"}}),
                )
                .unwrap();
                request(
                    addr,
                    "POST",
                    "/v1/tenants/a/dispatch",
                    &[("Authorization", "Bearer token-a")],
                    Some(&body),
                )
            })
        })
        .collect();
    eventually("every request is in flight", || {
        let m = s.get("/metrics", Some(ADMIN)).text();
        (metric(&m, "hookbox_http_requests_in_flight") == Some(IN_FLIGHT as f64)).then_some(())
    });
    s.signal("TERM");
    for c in clients {
        let r = c.join().unwrap().expect("an accepted request is answered");
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["verdict"]["additional_contexts"], json!(["slept"]));
    }
    assert_eq!(s.wait_exit(), Some(0), "{}", s.logs());
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "the port is closed"
    );
    let logs = s.logs();
    assert!(
        logs.contains("SIGTERM") && logs.contains("stopped"),
        "{logs}"
    );
}
