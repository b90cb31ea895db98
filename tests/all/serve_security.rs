//! `hookbox serve` against hostile and careless clients: the auth matrix (no token, a wrong
//! token, another tenant's token, the admin token on tenant routes, a tenant token on admin
//! routes), another tenant's id answered exactly like an unknown one, a body over the cap,
//! malformed and wrongly typed bodies (400 naming the field, never a 500), a client that
//! trickles its request head or body, and the bound on requests in flight.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use hookbox_test_artifacts as guests;
use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Events, Fixture, PATIENCE, Server, eventually, metric, request};

fn noop_tenant(f: &Fixture, id: &str, token: &str) {
    f.tenant(
        id,
        token,
        "",
        &json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/noop.wasm", "matcher": "Bash"}]}}),
        &[("noop.wasm", guests::NOOP)],
    );
}

fn dispatch_body() -> Value {
    json!({"event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "ls"}}})
}

/// A valid body for a tenant route (`dispatch` or `claude-code`).
fn body_for(route: &str) -> Vec<u8> {
    let v = match route {
        "claude-code" => {
            json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
        }
        _ => dispatch_body(),
    };
    serde_json::to_vec(&v).expect("json")
}

/// The parts of an answer a client can see, with `id` replaced so two answers about different
/// ids compare equal when they say the same thing.
fn seen(r: &crate::serve_util::Reply, id: &str) -> (u16, String, Vec<(String, String)>) {
    let mut headers: Vec<(String, String)> = r
        .headers
        .iter()
        // The date changes, and the length follows the id's.
        .filter(|(k, _)| {
            !k.eq_ignore_ascii_case("date") && !k.eq_ignore_ascii_case("content-length")
        })
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect();
    headers.sort();
    (
        r.status,
        r.text().replace(&format!("`{id}`"), "`ID`"),
        headers,
    )
}

fn two_tenants() -> (Fixture, Server) {
    let f = Fixture::new();
    noop_tenant(&f, "a", "token-a");
    noop_tenant(&f, "b", "token-b");
    let s = f.start("");
    (f, s)
}

#[test]
fn a_token_opens_only_its_own_routes() {
    let (_f, s) = two_tenants();
    for route in ["dispatch", "claude-code"] {
        let body = body_for(route);
        let path = format!("/v1/tenants/a/{route}");
        let call = |token: Option<&str>| s.call("POST", &path, token, Some(&body));
        let none = call(None);
        assert_eq!(
            (none.status, none.error().0.as_str()),
            (401, "unauthorized"),
            "{route}"
        );
        assert_eq!(
            none.header("www-authenticate"),
            Some("Bearer realm=\"hookbox\"")
        );
        for token in ["wrong", "token-b", ADMIN] {
            let r = call(Some(token));
            assert_eq!(
                (r.status, r.error().0.as_str()),
                (404, "not_found"),
                "{route} {token}"
            );
        }
        assert_eq!(call(Some("token-a")).status, 200, "{route}");
    }
    let (status, _, _) = Events::open(s.addr, "/v1/tenants/a/fired", "token-b").unwrap();
    assert_eq!(status, 404);
    let (status, _, _) = Events::open(s.addr, "/v1/tenants/a/fired", ADMIN).unwrap();
    assert_eq!(status, 404);
    // Admin routes: the admin token only.
    for (method, path) in [
        ("GET", "/v1/tenants"),
        ("GET", "/v1/tenants/a"),
        ("PUT", "/v1/tenants/a"),
        ("POST", "/v1/tenants/a/reload"),
        ("POST", "/v1/tenants/a/disable"),
        ("POST", "/v1/tenants/a/enable"),
        ("DELETE", "/v1/tenants/b"),
    ] {
        assert_eq!(
            s.call(method, path, None, None).status,
            401,
            "{method} {path}"
        );
        for token in ["token-a", "wrong"] {
            let r = s.call(method, path, Some(token), None);
            assert_eq!(
                (r.status, r.error().0.as_str()),
                (403, "forbidden"),
                "{method} {path} {token}"
            );
        }
        assert_eq!(
            s.call(method, path, Some(ADMIN), None).status,
            200,
            "{method} {path}"
        );
    }
}

#[test]
fn another_tenants_id_is_answered_exactly_like_an_unknown_one() {
    let (_f, s) = two_tenants();
    for route in ["dispatch", "claude-code"] {
        let body = body_for(route);
        let other = s.call(
            "POST",
            &format!("/v1/tenants/b/{route}"),
            Some("token-a"),
            Some(&body),
        );
        for unknown in ["zz", "not-a-tenant", "a.b"] {
            let r = s.call(
                "POST",
                &format!("/v1/tenants/{unknown}/{route}"),
                Some("token-a"),
                Some(&body),
            );
            assert_eq!(seen(&r, unknown), seen(&other, "b"), "{route} {unknown}");
        }
        let wrong = s.call(
            "POST",
            &format!("/v1/tenants/a/{route}"),
            Some("wrong"),
            Some(&body),
        );
        assert_eq!(
            seen(&wrong, "a"),
            seen(&other, "b"),
            "{route}: a wrong token"
        );
    }
}

#[test]
fn bodies_over_the_cap_are_refused() {
    let f = Fixture::new();
    noop_tenant(&f, "a", "token-a");
    let s = f.start("[limits]\nmax_body_bytes = 1024\n");
    let big = format!(
        "{{\"event\": \"PreToolUse\", \"payload\": {{\"pad\": \"{}\"}}}}",
        "x".repeat(2000)
    );
    // Declared length over the cap: refused before a byte of it is read.
    let r = s.call(
        "POST",
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        Some(big.as_bytes()),
    );
    assert_eq!((r.status, r.error().0.as_str()), (413, "payload_too_large"));
    // Chunked, no declared length: refused once the cap is crossed.
    let mut stream = TcpStream::connect(s.addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    // One write, so the server has read all of it when it answers (no reset on close).
    let mut req = b"POST /v1/tenants/a/dispatch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for piece in big.as_bytes().chunks(500) {
        req.extend(format!("{:x}\r\n", piece.len()).as_bytes());
        req.extend(piece);
        req.extend(b"\r\n");
    }
    req.extend(b"0\r\n\r\n");
    stream.write_all(&req).unwrap();
    let r = crate::serve_util::read_reply(&mut std::io::BufReader::new(stream)).unwrap();
    assert_eq!(r.status, 413, "{}", r.text());
    // Under the cap is fine, and the server still serves.
    assert_eq!(
        s.post("/v1/tenants/a/dispatch", Some("token-a"), &dispatch_body())
            .status,
        200
    );
}

#[test]
fn malformed_and_mistyped_bodies_get_400_naming_the_field() {
    let (_f, s) = two_tenants();
    let cases: &[(&str, &[u8], &str, Option<&str>)] = &[
        ("dispatch", b"{\"event\": ", "invalid_json", None),
        ("dispatch", b"", "invalid_json", None),
        ("dispatch", b"\xff\xfe{}", "invalid_json", None),
        ("dispatch", b"[1, 2]", "invalid_request", Some("body")),
        (
            "dispatch",
            b"{\"payload\": {}}",
            "invalid_request",
            Some("event"),
        ),
        (
            "dispatch",
            b"{\"event\": 7}",
            "invalid_request",
            Some("event"),
        ),
        (
            "dispatch",
            b"{\"event\": \"PreToolUze\"}",
            "invalid_request",
            Some("event"),
        ),
        (
            "dispatch",
            b"{\"event\": \"PreToolUse\", \"payload\": []}",
            "invalid_request",
            Some("payload"),
        ),
        (
            "dispatch",
            b"{\"event\": \"PreToolUse\", \"payload\": {\"tool_name\": 1}}",
            "invalid_request",
            Some("payload.tool_name"),
        ),
        (
            "dispatch",
            b"{\"event\": \"PreToolUse\", \"payload\": {}}",
            "invalid_request",
            Some("payload.tool_name"),
        ),
        (
            "dispatch",
            b"{\"event\": \"UserPromptSubmit\", \"payload\": {\"prompt\": {}}}",
            "invalid_request",
            Some("payload.prompt"),
        ),
        (
            "dispatch",
            b"{\"event\": \"Stop\", \"stop_reentries\": \"x\"}",
            "invalid_request",
            Some("stop_reentries"),
        ),
        (
            "dispatch",
            b"{\"event\": \"Stop\", \"surprise\": 1}",
            "invalid_request",
            Some("surprise"),
        ),
        (
            "claude-code",
            b"{\"prompt\": \"hi\"}",
            "invalid_request",
            Some("hook_event_name"),
        ),
        (
            "claude-code",
            b"{\"hook_event_name\": [1]}",
            "invalid_request",
            Some("hook_event_name"),
        ),
        ("claude-code", b"\"text\"", "invalid_request", Some("body")),
        (
            "claude-code",
            b"{\"hook_event_name\": \"Stop\", \"stop_hook_active\": \"yes\"}",
            "invalid_request",
            Some("stop_hook_active"),
        ),
    ];
    for (route, body, code, field) in cases {
        let r = s.call(
            "POST",
            &format!("/v1/tenants/a/{route}"),
            Some("token-a"),
            Some(body),
        );
        let shown = String::from_utf8_lossy(body);
        assert_eq!(r.status, 400, "{route} {shown}: {}", r.text());
        assert_eq!(
            r.error(),
            ((*code).to_owned(), field.map(str::to_owned)),
            "{route} {shown}"
        );
    }
    // Deep nesting stops at the parser's recursion limit instead of the stack's.
    let deep = format!(
        "{{\"event\": \"Stop\", \"payload\": {{\"x\": {}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let r = s.call(
        "POST",
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        Some(deep.as_bytes()),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    // Unknown routes and methods answer JSON too.
    assert_eq!(s.get("/v2/nothing", None).error().0, "not_found");
    assert_eq!(s.call("DELETE", "/healthz", None, None).status, 405);
    // None of it was a 500, and the server still serves.
    let m = s.get("/metrics", Some(ADMIN)).text();
    assert!(!m.contains("code=\"500\""), "{m}");
    assert_eq!(
        s.post("/v1/tenants/a/dispatch", Some("token-a"), &dispatch_body())
            .status,
        200
    );
}

/// Whether the server closed `stream` (EOF or reset) — without waiting for it.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 512];
    let closed = match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    };
    stream.set_nonblocking(false).expect("blocking");
    closed
}

#[test]
fn a_client_that_trickles_its_request_is_cut_off_while_others_are_served() {
    let f = Fixture::new();
    noop_tenant(&f, "a", "token-a");
    let s = f.start("[limits]\nheader_read_timeout_secs = 0.5\nbody_read_timeout_secs = 0.5\n");
    // The head, one byte at a time, with a header that never ends.
    let mut slow = TcpStream::connect(s.addr).unwrap();
    let head = format!(
        "POST /v1/tenants/a/dispatch HTTP/1.1\r\nHost: x\r\nX-Pad: {}",
        "y".repeat(10_000)
    );
    let mut sent = 0;
    let cut = eventually(
        "the server closes a connection whose head never ends",
        || {
            if closed_by_server(&mut slow) || slow.write_all(&head.as_bytes()[sent..=sent]).is_err()
            {
                return Some(sent);
            }
            sent += 1;
            // Meanwhile another client is served normally.
            if sent % 10 == 0 {
                assert_eq!(
                    s.post("/v1/tenants/a/dispatch", Some("token-a"), &dispatch_body())
                        .status,
                    200
                );
            }
            std::thread::sleep(Duration::from_millis(50));
            None
        },
    );
    assert!(cut < head.len(), "the head was never completed");
    // A complete head, then a body that trickles a byte at a time: 408.
    let mut slow = TcpStream::connect(s.addr).unwrap();
    slow.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        slow,
        "POST /v1/tenants/a/dispatch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let reader = slow.try_clone().unwrap();
    let answer = std::thread::spawn(move || {
        crate::serve_util::read_reply(&mut std::io::BufReader::new(reader))
    });
    while !answer.is_finished() {
        if slow.write_all(b" ").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = answer.join().unwrap().unwrap();
    assert_eq!(
        (r.status, r.error().0.as_str()),
        (408, "timeout"),
        "{}",
        r.text()
    );
    assert_eq!(
        s.post("/v1/tenants/a/dispatch", Some("token-a"), &dispatch_body())
            .status,
        200
    );
}

#[test]
fn requests_over_the_in_flight_bound_get_503_at_once() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/chaos.wasm"}]}}),
        &[("chaos.wasm", guests::CHAOS)],
    );
    let s = f.start("[limits]\nmax_requests_in_flight = 1\nreserved_requests = 0\n");
    let addr = s.addr;
    let slow = std::thread::spawn(move || {
        let body = serde_json::to_vec(
            &json!({"event": "UserPromptSubmit", "payload": {"prompt": "sleep:1500"}}),
        )
        .unwrap();
        request(
            addr,
            "POST",
            "/v1/tenants/a/dispatch",
            &[("Authorization", "Bearer token-a")],
            Some(&body),
        )
        .unwrap()
    });
    eventually("the slow dispatch is in flight", || {
        let m = s.get("/metrics", Some(ADMIN)).text();
        (metric(&m, "hookbox_http_requests_in_flight") == Some(1.0)).then_some(())
    });
    let r = s.post(
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        &json!({"event": "UserPromptSubmit", "payload": {"prompt": "ok"}}),
    );
    assert_eq!(
        (r.status, r.error().0.as_str()),
        (503, "overloaded"),
        "{}",
        r.text()
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    // Probes and metrics stay reachable meanwhile.
    assert_eq!(s.get("/readyz", None).status, 200);
    let slow = slow.join().unwrap();
    assert_eq!(slow.status, 200);
    assert_eq!(
        slow.json()["verdict"]["additional_contexts"],
        json!(["slept"])
    );
}

hookbox_test_artifacts::polyglot_test! {
    /// A tenant's JavaScript hook built with componentize-qjs creates two memories in separate
    /// core instances, so each call crosses an adapter between them — which wasmtime 48.0.8
    /// panicked on while compiling it, with multi-memory off in the engine. The server loads it,
    /// serves it, and serves the tenant beside it.
    #[test]
    fn a_tenant_hook_crossing_two_memories_is_served_beside_another() {
        let f = Fixture::new();
        f.tenant(
            "js",
            "token-js",
            "",
            &json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/context.wasm",
                                                    "config": {"context": "Project ATLAS"}}]}}),
            &[("context.wasm", guests::CONTEXT_INJECTION_CQJS)],
        );
        noop_tenant(&f, "b", "token-b");
        let s = f.start("");
        let prompt = serde_json::to_vec(
            &json!({"event": "UserPromptSubmit", "payload": {"prompt": "Can I deploy?"}}),
        )
        .expect("json");
        for _ in 0..3 {
            let d = s.call("POST", "/v1/tenants/js/dispatch", Some("token-js"), Some(&prompt));
            assert_eq!(d.status, 200, "{}", d.text());
            let d = d.json();
            assert_eq!(d["verdict"]["additional_contexts"], json!(["Project ATLAS"]), "{d:#}");
        }
        let b = s.call("POST", "/v1/tenants/b/dispatch", Some("token-b"), Some(&body_for("dispatch")));
        assert_eq!(b.status, 200, "{}", b.text());
    }
}
