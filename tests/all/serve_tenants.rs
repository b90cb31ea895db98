//! `hookbox serve` with a hostile tenant beside a quiet one (issue 16): a tenant that takes
//! every request place with partial bodies, or fills the shared places with slow dispatches,
//! cannot turn the quiet tenant's deny into a 503 (which Claude Code reads as "proceed"); a
//! disable racing a `PUT` is never lost; tenants load independently at start-up; a `tenant.toml`
//! over the operator's maxima or with a huge duration is refused, located, instead of answering
//! 500 at every dispatch; a dispatch answer and a `/fired` record stay small whatever the hooks
//! print; a tenant's folder cannot loosen its policy or get a writable mount over its own files.

use std::io::Write;
use std::net::TcpStream;

use hookbox_test_artifacts as guests;
use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Events, Fixture, PATIENCE, eventually, request};

/// The quiet tenant's guard: denies `rm -rf /` (shell-guard's built-in rule).
fn guard() -> Value {
    json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/shell_guard.wasm", "matcher": "Bash"}]}})
}

fn rm_rf() -> Value {
    json!({"event": "PreToolUse", "payload": {"session_id": "q", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}})
}

/// The noisy tenant: a chaos hook on UserPromptSubmit whose prompt is its behaviour.
fn chaos() -> Value {
    json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/chaos.wasm"}]}})
}

/// Opens a dispatch of `tenant` whose head promises 1000 bytes of body and sends one.
fn partial_dispatch(addr: std::net::SocketAddr, tenant: &str, token: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "POST /v1/tenants/{tenant}/dispatch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    )
    .expect("write");
    s
}

/// What the server sent on `conn` so far, if anything: its first line, or "closed".
fn first_line_if_answered(conn: &TcpStream) -> Option<String> {
    conn.set_nonblocking(true).ok()?;
    let mut buf = [0u8; 256];
    match std::io::Read::read(&mut &*conn, &mut buf) {
        Ok(0) => Some("closed".to_owned()),
        Ok(n) => Some(
            String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_owned(),
        ),
        Err(_) => None,
    }
}

#[test]
fn partial_bodies_of_one_tenant_never_turn_anothers_deny_into_a_503() {
    // Issue 16 defect 2: 260 dispatches sending one byte of body each held every shared place;
    // the quiet tenant's deny guard answered 503 ten times out of ten. Scaled down: 20 places.
    let f = Fixture::new();
    f.tenant(
        "noisy",
        "noisy-token",
        "max_dispatches_in_flight = 8",
        &chaos(),
        &[("chaos.wasm", guests::CHAOS)],
    );
    f.tenant(
        "quiet",
        "quiet-token",
        "",
        &guard(),
        &[("shell_guard.wasm", guests::SHELL_GUARD)],
    );
    let s = f.start(
        "[limits]\nmax_requests_in_flight = 20\nreserved_requests = 2\nbody_read_timeout_secs = 60\n",
    );
    let open_partials = || -> Vec<TcpStream> {
        (0..40)
            .map(|_| partial_dispatch(s.addr, "noisy", "noisy-token"))
            .collect()
    };
    let mut open = open_partials();
    // Its own places are taken: one more is refused at once, 429, by its own quota. The server
    // admits the partial requests as it reads their headers, which on a loaded machine may come
    // after this request's (then this one is admitted, answered and gives its place back): ask
    // until the partial ones hold every place — for as long as a loaded machine needs (a cold
    // CI run, compiling beside the suite, took more than 200 tries 25 ms apart), within PATIENCE.
    // On a loaded machine the partial requests were twice seen to hold nothing for the whole
    // wait: every 5 s without a refusal, what the server said on each is kept for the failure
    // message and a fresh set is opened in their place.
    let mut answers = Vec::new();
    let mut partials_answered = Vec::new();
    let started = std::time::Instant::now();
    let mut opened = started;
    let refused = std::iter::from_fn(|| (started.elapsed() < PATIENCE).then_some(())).any(|()| {
        let r = s.post(
            "/v1/tenants/noisy/dispatch",
            Some("noisy-token"),
            &json!({"event": "UserPromptSubmit", "payload": {"prompt": "ok"}}),
        );
        if (r.status, r.error().0.as_str()) == (429, "too_many_requests") {
            return true;
        }
        assert_eq!(r.status, 200, "{}", r.text());
        answers.push(r.status);
        if opened.elapsed() > std::time::Duration::from_secs(5) {
            partials_answered.extend(open.drain(..).filter_map(|c| first_line_if_answered(&c)));
            open = open_partials();
            opened = std::time::Instant::now();
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
        false
    });
    assert!(
        refused,
        "the noisy tenant was never held to its own quota ({} answered; of the partial requests the server had answered: {:?})",
        answers.len(),
        &partials_answered[..partials_answered.len().min(40)]
    );
    for _ in 0..10 {
        let r = s.post("/v1/tenants/quiet/dispatch", Some("quiet-token"), &rm_rf());
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["verdict"]["decision"], "deny");
    }
    drop(open);
}

#[test]
fn the_last_shared_places_are_kept_for_a_tenant_with_none() {
    // The noisy tenant fills what it may of the shared places with slow dispatches (bodies
    // complete): the reserve stays for the quiet tenant.
    let f = Fixture::new();
    f.tenant(
        "noisy",
        "noisy-token",
        "max_dispatches_in_flight = 64\ndefault_timeout_secs = 8\nmax_timeout_secs = 8",
        &chaos(),
        &[("chaos.wasm", guests::CHAOS)],
    );
    f.tenant(
        "quiet",
        "quiet-token",
        "",
        &guard(),
        &[("shell_guard.wasm", guests::SHELL_GUARD)],
    );
    let s = f.start("[limits]\nmax_requests_in_flight = 6\nreserved_requests = 2\n");
    let addr = s.addr;
    let sleepers: Vec<_> = (0..10)
        .map(|i| {
            std::thread::spawn(move || {
                let body = serde_json::to_vec(&json!({"event": "UserPromptSubmit",
                    "payload": {"session_id": format!("n{i}"), "prompt": "sleep:4000"}}))
                .unwrap();
                request(
                    addr,
                    "POST",
                    "/v1/tenants/noisy/dispatch",
                    &[("Authorization", "Bearer noisy-token")],
                    Some(&body),
                )
                .unwrap()
                .status
            })
        })
        .collect();
    // Wait until the noisy tenant holds all it may (4 of 6) and was refused the rest.
    eventually("the noisy tenant holds the unreserved places", || {
        let m = s.get("/metrics", Some(ADMIN)).text();
        (crate::serve_util::metric(&m, "hookbox_http_requests_in_flight") == Some(4.0))
            .then_some(())
    });
    let r = s.post("/v1/tenants/quiet/dispatch", Some("quiet-token"), &rm_rf());
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["verdict"]["decision"], "deny");
    let statuses: Vec<u16> = sleepers.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        4,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "{statuses:?}"
    );
}

#[test]
fn a_disable_racing_a_put_is_never_lost() {
    let f = Fixture::new();
    f.tenant(
        "t",
        "token-t",
        "",
        &guard(),
        &[("shell_guard.wasm", guests::SHELL_GUARD)],
    );
    let s = f.start("");
    let addr = s.addr;
    for round in 0..10 {
        assert_eq!(
            s.call("POST", "/v1/tenants/t/enable", Some(ADMIN), None)
                .status,
            200
        );
        let put = std::thread::spawn(move || {
            request(
                addr,
                "PUT",
                "/v1/tenants/t",
                &[("Authorization", &format!("Bearer {ADMIN}"))],
                None,
            )
            .unwrap()
            .status
        });
        let disable = s.call("POST", "/v1/tenants/t/disable", Some(ADMIN), None);
        assert_eq!(disable.status, 200, "{}", disable.text());
        assert_eq!(put.join().unwrap(), 200);
        let state = s.get("/v1/tenants/t", Some(ADMIN)).json()["state"].clone();
        assert_eq!(state, "disabled", "round {round}: the disable was lost");
        // Disabled, the guard runs nothing: the call is allowed, not denied.
        let d = s
            .post("/v1/tenants/t/dispatch", Some("token-t"), &rm_rf())
            .json();
        assert_eq!(d["matched_rule_count"], 0, "{d}");
    }
}

#[test]
fn tenants_load_independently_and_serve_as_soon_as_their_own_rules_are_in() {
    // Issue 16: one tenant's slow components kept every other tenant at 404 while they
    // compiled. `a-slow` comes first by name and compiles a large component into a fresh cache;
    // `b-quiet` has a prompt rule and must be served while `a-slow` is still loading.
    let big = guests::ALL
        .iter()
        .max_by_key(|g| std::fs::metadata(g.path).map_or(0, |m| m.len()))
        .expect("a guest");
    let f = Fixture::with_private_cache();
    f.tenant(
        "a-slow",
        "token-a",
        "max_component_bytes = 67108864\ncompile_budget_secs = 300",
        &json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/big.wasm", "matcher": "Bash"}]}}),
        &[("big.wasm", big.path)],
    );
    f.tenant(
        "b-quiet",
        "token-b",
        "",
        &json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "quiet"}]}}),
        &[],
    );
    let s = f.spawn("");
    let prompt = json!({"event": "UserPromptSubmit", "payload": {"prompt": "hi"}});
    let served = |tenant: &str, token: &str| -> Option<u16> {
        let body = serde_json::to_vec(&prompt).unwrap();
        request(
            s.addr,
            "POST",
            &format!("/v1/tenants/{tenant}/dispatch"),
            &[("Authorization", &format!("Bearer {token}"))],
            Some(&body),
        )
        .ok()
        .map(|r| r.status)
    };
    eventually("b-quiet is served", || {
        (served("b-quiet", "token-b") == Some(200)).then_some(())
    });
    assert_eq!(
        served("a-slow", "token-a"),
        Some(404),
        "b-quiet was served only once a-slow had loaded ({} bytes): loads are not independent\n{}",
        std::fs::metadata(big.path).map_or(0, |m| m.len()),
        s.logs()
    );
    eventually("a-slow is served too", || {
        (served("a-slow", "token-a") == Some(200)).then_some(())
    });
}

#[test]
fn a_tenant_file_over_the_operators_maxima_or_with_a_huge_duration_is_refused_located() {
    let f = Fixture::new();
    for (id, policy) in [
        ("greedy", "max_hooks_in_flight = 1000000000"),
        ("forever", "dispatch_deadline_secs = 1e19"),
        ("fine", ""),
    ] {
        f.tenant(
            id,
            &format!("token-{id}"),
            policy,
            &guard(),
            &[("shell_guard.wasm", guests::SHELL_GUARD)],
        );
    }
    f.tenant(
        "capped",
        "token-capped",
        "max_timeout_secs = 60",
        &guard(),
        &[("shell_guard.wasm", guests::SHELL_GUARD)],
    );
    let s = f.start("[tenant_maxima]\nmax_timeout_secs = 30\n");
    for (id, needles) in [
        (
            "greedy",
            &["tenant.toml:3", "max_hooks_in_flight", "1000000000", "256"][..],
        ),
        (
            "forever",
            &["tenant.toml", "dispatch_deadline_secs", "86400"][..],
        ),
        (
            "capped",
            &["tenant.toml:3", "max_timeout_secs", "60", "30"][..],
        ),
    ] {
        let v = s.get(&format!("/v1/tenants/{id}"), Some(ADMIN)).json();
        assert_eq!(v["state"], "failed", "{id}: {v}");
        let error = v["error"].as_str().unwrap();
        for n in needles {
            assert!(error.contains(n), "{id}: `{n}` not in {error}");
        }
        // Its token holder is told it is unavailable: never a 500 at every dispatch.
        let r = s.post(
            &format!("/v1/tenants/{id}/dispatch"),
            Some(&format!("token-{id}")),
            &rm_rf(),
        );
        assert_eq!(
            (r.status, r.error().0.as_str()),
            (503, "unavailable"),
            "{id}"
        );
    }
    let r = s.post("/v1/tenants/fine/dispatch", Some("token-fine"), &rm_rf());
    assert_eq!(r.json()["verdict"]["decision"], "deny");
}

#[test]
fn a_huge_duration_in_serve_toml_is_refused_naming_the_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tenants")).unwrap();
    let config = dir.path().join("serve.toml");
    for (text, key) in [
        (
            "[limits]\nsse_keepalive_secs = 1e19\n",
            "sse_keepalive_secs",
        ),
        (
            "[tenant_maxima]\ndispatch_deadline_secs = -5\n",
            "dispatch_deadline_secs",
        ),
        (
            "[limits]\nmax_body_bytes = 1000000000000\n",
            "limits.max_body_bytes",
        ),
    ] {
        std::fs::write(&config, format!("tenants_dir = \"tenants\"\n{text}")).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hookbox"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text}");
        assert!(
            stderr.contains("serve.toml") && stderr.contains(key),
            "{text}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A command rule on UserPromptSubmit printing `n` characters (plain stdout: context).
fn loud(n: usize) -> Value {
    json!({"type": "command", "command": format!("head -c {n} /dev/zero | tr '\\0' x")})
}

#[test]
fn a_dispatch_answer_has_a_byte_cap_and_fired_records_are_previews() {
    // Issue 16: 8 rules × 1,000 KiB gave a 39 MiB answer; a `/fired` record kept whole block
    // reasons of 1,000 KiB.
    let f = Fixture::new();
    f.tenant(
        "loud",
        "token-l",
        "allow_native_commands = true",
        &json!({"hooks": {"UserPromptSubmit": (0..8).map(|i| loud(1_000_000 + i)).collect::<Vec<_>>()}}),
        &[],
    );
    let block = json!({"type": "command", "command":
        "printf '{\"decision\":\"block\",\"reason\":\"'; head -c 1000000 /dev/zero | tr '\\0' y; printf '\"}'"});
    f.tenant(
        "blocker",
        "token-b",
        "allow_native_commands = true",
        &json!({"hooks": {"UserPromptSubmit": [block]}}),
        &[],
    );
    let s = f.start("[limits]\nmax_answer_bytes = 1048576\n");
    let prompt = json!({"event": "UserPromptSubmit", "payload": {"prompt": "hi"}});
    let r = s.post(
        "/v1/tenants/loud/dispatch?report=full",
        Some("token-l"),
        &prompt,
    );
    assert_eq!(r.status, 200);
    assert!(r.body.len() <= 1 << 20, "{} bytes", r.body.len());
    let v = r.json();
    assert_eq!(v["outcome"], "allow");
    assert_eq!(v["answer_truncated"], true);
    assert_eq!(v["hooks"].as_array().map(Vec::len), Some(8));
    // The lean answer (the default) is held to the same cap: its verdict's megabyte of context
    // (and the rendered turn repeating it) is cut, marked, and the outcome kept.
    let r = s.post("/v1/tenants/loud/dispatch", Some("token-l"), &prompt);
    assert_eq!(r.status, 200);
    assert!(r.body.len() <= 1 << 20, "{} bytes", r.body.len());
    let v = r.json();
    assert_eq!(v["outcome"], "allow");
    assert_eq!(v["answer_truncated"], true);
    assert!(v.get("hooks").is_none(), "a lean answer has no reports");
    // A HookFired record on the stream: the block reason is a preview.
    let (status, _, mut events) =
        Events::open(s.addr, "/v1/tenants/blocker/fired", "token-b").unwrap();
    assert_eq!(status, 200);
    let d = s.post("/v1/tenants/blocker/dispatch", Some("token-b"), &prompt);
    assert_eq!(d.json()["outcome"], "block");
    let e = events.next().expect("a record");
    assert_eq!(e.name, "hook_fired");
    assert!(e.data.len() < 4096, "{} bytes", e.data.len());
    let record: Value = serde_json::from_str(&e.data).unwrap();
    let reason = record["blocking_error"].as_str().unwrap();
    // Core's preview: the first TEXT_PREVIEW_CHARS (500) characters, cut with a `…`.
    assert!(
        reason.ends_with('…') && reason.chars().count() == 501,
        "{}",
        &reason[reason.len().saturating_sub(80)..]
    );
}

#[test]
fn a_tenants_folder_cannot_loosen_its_policy_or_get_a_writable_mount_over_its_files() {
    let f = Fixture::new();
    // Its own settings ask for a Stop re-entry cap of 100: the operator's 1 stands.
    // ralph-loop's shape: a Stop hook that always asks for another round.
    f.tenant(
        "settings",
        "token-s",
        "stop_reentry_cap = 1\nallow_native_commands = true",
        &json!({"hooks": {"Stop": [{"type": "command",
            "command": r#"echo '{"decision":"block","reason":"keep going"}'"#}]}}),
        &[],
    );
    let dir = f.tenant_dir("settings").join(".hookbox");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        r#"{"stop": {"reentry_cap": 100}}"#,
    )
    .unwrap();
    // A guest asking for its tenant folder read-write (it would rewrite tenant.toml).
    f.tenant(
        "rw",
        "token-rw",
        "allow_rw_mounts = true",
        &json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/chaos.wasm",
            "mounts": [{"host": "${CLAUDE_PROJECT_DIR}", "guest": "/t", "access": "rw"}]}]}}),
        &[("chaos.wasm", guests::CHAOS)],
    );
    let s = f.start("");
    let v = s.get("/v1/tenants/rw", Some(ADMIN)).json();
    assert_eq!(v["state"], "failed", "{v}");
    let diag = v["diagnostics"].to_string();
    assert!(
        diag.contains("read-write mount") && diag.contains("tenant.toml"),
        "{diag}"
    );
    // Stop with two re-entries already made: over the cap of 1, the turn ends.
    let d = s
        .post(
            "/v1/tenants/settings/dispatch",
            Some("token-s"),
            &json!({"event": "Stop", "stop_reentries": 2, "payload": {"stop_hook_active": true}}),
        )
        .json();
    assert_eq!(d["outcome"], "reentry_capped", "{d}");
}
