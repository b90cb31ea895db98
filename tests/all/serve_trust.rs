//! `hookbox serve` and trust (issue 19 §5), through the real binary on loopback: every load
//! records each tenant rule's digest (`GET /v1/tenants/{id}/trust`); with `[trust]
//! hold_changed_reloads` a reload, `PUT` or SIGHUP that changes a tenant's rules answers 202 and
//! waits for `POST …/approve` (naming the digest the admin reviewed) or `…/reject` while the old
//! rules keep serving; a tenant's token reaches none of it.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use hookbox_test_artifacts as guests;
use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Fixture, Server, eventually};

const HOLD: &str = "[trust]\nhold_changed_reloads = true\n";

fn bash(command: &str) -> Value {
    json!({"event": "PreToolUse", "payload": {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": command}}})
}

/// A PreToolUse guard: a command running `hooks/guard.sh` from the plugin.
fn script_guard() -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
        "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}]}]}})
}

const DENY: &str = "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"guard: no\"}}'\n";
const ALLOW: &str = "exit 0\n";

fn write_guard(f: &Fixture, script: &str) {
    let path = f.tenant_dir("a").join("plugins/p/hooks/guard.sh");
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, script).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
}

/// Tenant `a` with the script guard (denying).
fn script_tenant() -> Fixture {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "allow_native_commands = true",
        &script_guard(),
        &[],
    );
    write_guard(&f, DENY);
    f
}

/// Tenant `a` with the wasm shell guard denying `deny` besides its own rules.
fn wasm_tenant(deny: &[&str]) -> Fixture {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &wasm_guard(deny),
        &[("shell_guard.wasm", guests::SHELL_GUARD)],
    );
    f
}

fn wasm_guard(deny: &[&str]) -> Value {
    json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/shell_guard.wasm",
        "matcher": "Bash", "config": {"deny": deny}}]}})
}

/// The outcome of `command` for tenant `a`: `block` (denied) or `allow`.
fn outcome(s: &Server, command: &str) -> String {
    let d = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &bash(command))
        .json();
    d["outcome"].as_str().unwrap_or("").to_owned()
}

fn trust(s: &Server) -> Value {
    let r = s.get("/v1/tenants/a/trust", Some(ADMIN));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

fn approve(s: &Server, digest: &Value) -> crate::serve_util::Reply {
    let body = serde_json::to_vec(&json!({ "digest": digest })).unwrap();
    s.call("POST", "/v1/tenants/a/approve", Some(ADMIN), Some(&body))
}

#[test]
fn a_held_reload_keeps_the_old_guard_denying_until_an_admin_approves_the_digest_they_saw() {
    let f = script_tenant();
    let s = f.start(HOLD);
    assert_eq!(outcome(&s, "ls"), "block");
    // The first load is recorded: the rule, the script's digest, when it was seen.
    let t = trust(&s);
    assert_eq!(t["settings"]["hold_changed_reloads"], true, "{t:#}");
    assert_eq!(t["approved"]["by"], "first_load", "{t:#}");
    let approved = t["approved"]["digest"].clone();
    let rule = &t["rules"][0];
    assert_eq!(rule["subject"], "plugins/p");
    assert_eq!(rule["files"][0]["path"], "hooks/guard.sh", "{rule:#}");
    assert!(rule["files"][0]["sha256"].is_string(), "{rule:#}");
    assert!(rule["changed_ms"].is_u64() && rule["first_seen_ms"].is_u64());
    assert!(t["pending"].is_null());

    // The tenant's guard is rewritten to allow everything, and the tenant reloaded: 202, held.
    write_guard(&f, ALLOW);
    let r = s.call("POST", "/v1/tenants/a/reload", Some(ADMIN), None);
    assert_eq!(r.status, 202, "{}", r.text());
    let info = r.json();
    assert_eq!(info["held"], true);
    let pending = info["pending_approval"].clone();
    assert!(pending.is_string(), "{info}");
    // The old rules — the bytes approved — keep denying.
    assert_eq!(outcome(&s, "ls"), "block");
    let t = trust(&s);
    assert_eq!(t["approved"]["digest"], approved);
    assert_eq!(t["pending"]["digest"], pending);
    assert_eq!(t["pending"]["cause"], "reload");
    let change = &t["pending"]["changes"][0];
    assert_eq!(change["status"], "changed", "{t:#}");
    let diff = change["diff"].to_string();
    assert!(diff.contains("guard.sh"), "{diff}");
    // The tenant's view of itself says it too (GET /v1/tenants/a).
    let one = s.get("/v1/tenants/a", Some(ADMIN)).json();
    assert_eq!(one["pending_approval"], pending, "{one:#}");
    assert_eq!(one["trust"]["pending"]["digest"], pending);

    // A tenant's token can neither see nor approve it; nor can no token.
    for (method, path) in [
        ("GET", "/v1/tenants/a/trust"),
        ("POST", "/v1/tenants/a/approve"),
        ("POST", "/v1/tenants/a/reject"),
    ] {
        let body = serde_json::to_vec(&json!({ "digest": pending })).unwrap();
        let r = s.call(method, path, Some("token-a"), Some(&body));
        assert_eq!(r.status, 403, "{method} {path}: {}", r.text());
        assert_eq!(s.call(method, path, None, Some(&body)).status, 401);
    }
    assert_eq!(outcome(&s, "ls"), "block");
    // An approval must name the load; one naming another load (here the approved one) is 409.
    let r = s.post("/v1/tenants/a/approve", Some(ADMIN), &json!({}));
    assert_eq!(r.status, 400, "{}", r.text());
    let r = s.post(
        "/v1/tenants/a/approve",
        Some(ADMIN),
        &json!({"digest": "12"}),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let r = approve(&s, &approved);
    assert_eq!((r.status, r.error().0.as_str()), (409, "conflict"));
    assert_eq!(outcome(&s, "ls"), "block");

    // The admin approves what they saw: the new rules serve, recorded as approved by an admin.
    let r = approve(&s, &pending);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json().get("pending_approval").is_none());
    assert_eq!(outcome(&s, "ls"), "allow");
    let t = trust(&s);
    assert_eq!(t["approved"]["by"], "admin");
    assert_eq!(t["approved"]["digest"], pending);
    assert!(t["pending"].is_null());
    assert!(t["rules"][0]["changed_ms"].as_u64() >= rule["changed_ms"].as_u64());
    // Nothing waits any more.
    assert_eq!(approve(&s, &pending).status, 409);
}

#[test]
fn a_rejected_load_never_serves_and_an_approval_of_a_load_replaced_since_is_refused() {
    let f = wasm_tenant(&["ls"]);
    let s = f.start(HOLD);
    assert_eq!(outcome(&s, "ls"), "block");
    // The guard's config loosened (a grant-like change in hooks.json): held.
    f.plugin("a", &wasm_guard(&[]), &[]);
    let r = s.call("POST", "/v1/tenants/a/reload", Some(ADMIN), None);
    assert_eq!(r.status, 202, "{}", r.text());
    let seen = r.json()["pending_approval"].clone();
    let t = trust(&s);
    let diff = t["pending"]["changes"][0]["diff"].to_string();
    assert!(diff.contains("config"), "{diff}");
    // Another load comes in before the admin answers (a PUT; then SIGHUP): the admin's
    // approval names the load they saw, which is no longer the one waiting.
    f.plugin("a", &wasm_guard(&["pwd"]), &[]);
    let r = s.call("PUT", "/v1/tenants/a", Some(ADMIN), None);
    assert_eq!(r.status, 202, "{}", r.text());
    let newer = r.json()["pending_approval"].clone();
    assert_ne!(seen, newer);
    let r = approve(&s, &seen);
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("review it again"), "{}", r.text());
    assert_eq!(outcome(&s, "ls"), "block");
    assert_eq!(outcome(&s, "pwd"), "allow");
    f.plugin("a", &wasm_guard(&["whoami"]), &[]);
    s.signal("HUP");
    let sighup = eventually("the SIGHUP load waits", || {
        let p = trust(&s)["pending"]["digest"].clone();
        (p.is_string() && p != newer).then_some(p)
    });
    assert_eq!(trust(&s)["pending"]["cause"], "put");
    // Reject naming a stale load: 409; naming the one waiting (or none): dropped.
    let stale = serde_json::to_vec(&json!({ "digest": newer })).unwrap();
    let r = s.call("POST", "/v1/tenants/a/reject", Some(ADMIN), Some(&stale));
    assert_eq!(r.status, 409, "{}", r.text());
    let body = serde_json::to_vec(&json!({ "digest": sighup })).unwrap();
    let r = s.call("POST", "/v1/tenants/a/reject", Some(ADMIN), Some(&body));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(trust(&s)["pending"].is_null());
    // The approved rules still serve; none of the rejected ones ever did.
    assert_eq!(outcome(&s, "ls"), "block");
    assert_eq!(outcome(&s, "whoami"), "allow");
    assert_eq!(
        s.call("POST", "/v1/tenants/a/reject", Some(ADMIN), None)
            .status,
        409
    );
    // A reload of the approved files again needs no approval.
    f.plugin("a", &wasm_guard(&["ls"]), &[]);
    let r = s.call("POST", "/v1/tenants/a/reload", Some(ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn with_holding_off_a_reload_swaps_and_the_admin_view_shows_the_new_digest_and_when_it_changed() {
    let f = script_tenant();
    let s = f.start("");
    assert_eq!(outcome(&s, "ls"), "block");
    let before = trust(&s);
    assert_eq!(before["settings"]["hold_changed_reloads"], false);
    let rule = before["rules"][0].clone();
    std::thread::sleep(std::time::Duration::from_millis(5));
    write_guard(&f, ALLOW);
    let r = s.call("POST", "/v1/tenants/a/reload", Some(ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json().get("held").is_none());
    assert_eq!(outcome(&s, "ls"), "allow");
    let after = trust(&s);
    assert_eq!(after["approved"]["by"], "load");
    assert_ne!(after["approved"]["digest"], before["approved"]["digest"]);
    let now = &after["rules"][0];
    assert_ne!(now["digest"], rule["digest"]);
    assert_ne!(now["files"][0]["sha256"], rule["files"][0]["sha256"]);
    assert_eq!(now["first_seen_ms"], rule["first_seen_ms"]);
    assert!(
        now["changed_ms"].as_u64().unwrap() > rule["changed_ms"].as_u64().unwrap(),
        "{now} vs {rule}"
    );
    assert!(after["pending"].is_null());
    // The record is in the server's state folder, private — never in the tenant's folder.
    assert!(!f.tenant_dir("a").join("trust").exists());
}

#[test]
fn trust_routes_take_only_tenant_ids_so_no_record_path_comes_from_a_request() {
    let f = script_tenant();
    let s = f.start(HOLD);
    let body = serde_json::to_vec(&json!({"digest": "0".repeat(64)})).unwrap();
    for (method, path) in [
        ("GET", "/v1/tenants/..%2F..%2Fetc/trust"),
        ("POST", "/v1/tenants/a%2F..%2F..%2Fx/approve"),
        ("POST", "/v1/tenants/..%2Fa/reject"),
        ("GET", "/v1/tenants/%2Ftmp/trust"),
    ] {
        let r = s.call(method, path, Some(ADMIN), Some(&body));
        assert_eq!(
            (r.status, r.error().1.as_deref()),
            (400, Some("id")),
            "{method} {path}: {}",
            r.text()
        );
    }
    let r = s.get("/v1/tenants/nobody/trust", Some(ADMIN));
    assert_eq!(r.status, 404, "{}", r.text());
    let r = s.call(
        "POST",
        "/v1/tenants/nobody/approve",
        Some(ADMIN),
        Some(&body),
    );
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(outcome(&s, "ls"), "block");
}

/// Issue 27 item 6, through the real server: a `tenant.toml` whose only change is a wider
/// policy is held like a changed rule (202, the key named in the held load) while the old
/// policy serves; and a tenant held with nothing approved (its first load, under
/// `hold_first_load`) denies a tool call naming the held load — through the dispatch route and
/// Claude Code's — and answers 503 `unavailable` for an event no hook could block. Never an
/// allow.
#[test]
fn a_policy_change_alone_is_held_and_a_tenant_with_nothing_approved_never_allows() {
    let f = script_tenant();
    let s = f.start("[trust]\nhold_changed_reloads = true\nhold_first_load = true\n");
    // Nothing approved yet: a deny naming the held load, never the allow of "no rules".
    let held = trust(&s)["pending"]["digest"].clone();
    assert!(held.is_string());
    let r = s.post("/v1/tenants/a/dispatch", Some("token-a"), &bash("ls"));
    assert_eq!(r.status, 200, "{}", r.text());
    let d = r.json();
    assert_eq!(d["outcome"], "block", "{d:#}");
    assert_eq!(d["verdict"]["decision"], "deny");
    assert!(
        d["verdict"]["reason"]
            .as_str()
            .unwrap()
            .contains(held.as_str().unwrap()),
        "{d:#}"
    );
    let cc = json!({"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash",
        "tool_input": {"command": "ls"}});
    let r = s.post("/v1/tenants/a/claude-code", Some("token-a"), &cc);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{}",
        r.text()
    );
    let start = json!({"event": "SessionStart", "payload": {"source": "startup"}});
    let r = s.post("/v1/tenants/a/dispatch", Some("token-a"), &start);
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.error().0, "unavailable");
    assert_eq!(approve(&s, &held).status, 200);
    assert_eq!(outcome(&s, "ls"), "block", "the guard itself denies");

    // The same rules under a wider policy: held, naming the key; the old policy serves.
    let toml = f.tenant_dir("a").join("tenant.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("[policy]\n", "[policy]\nmax_rules = 65\n"),
    )
    .unwrap();
    let r = s.call("PUT", "/v1/tenants/a", Some(ADMIN), None);
    assert_eq!(r.status, 202, "{}", r.text());
    let t = trust(&s);
    let changes = &t["pending"]["term_changes"];
    assert_eq!(changes[0]["key"], "max_rules", "{t:#}");
    assert_eq!(
        (changes[0]["before"].clone(), changes[0]["after"].clone()),
        (json!(64), json!(65))
    );
    assert_eq!(t["terms"]["max_rules"], 64, "{t:#}");
    assert!(t["terms"]["token_sha256"].is_string(), "{t:#}");
    assert_eq!(approve(&s, &t["pending"]["digest"]).status, 200);
    assert_eq!(trust(&s)["terms"]["max_rules"], 65);
}
