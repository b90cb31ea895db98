//! `hookbox serve` as several replicas of one service (issue 29), through the real binary on
//! loopback: replicas sharing a tenants folder and a control store (`[control] dir`) converge
//! by themselves — a changed tenant folder is seen by each replica's poll and held on every
//! one, an approval or rejection sent to one is acted on by the others, a replica restarted
//! with an empty state folder serves no unapproved rule, a damaged control file is skipped
//! with a logged error, and the control store is refused where a tenant could write it.
//! Every wait is "eventually" (bounded only against a hang): no test measures the interval.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Fixture, Server, eventually};

/// Holding on, a control store shared by the replicas, a short poll.
const REPLICA: &str = "[trust]\nhold_changed_reloads = true\n[control]\ndir = \"control\"\npoll_interval_secs = 0.2\n";

const DENY: &str = "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"guard: no\"}}'\n";
const ALLOW: &str = "exit 0\n";
const DENY_AGAIN: &str = "echo 'no' >&2; exit 2\n";

/// Rewrites the guard's script in one step: written beside the plugins folder (outside what
/// the load reads, so a poll in between sees no half-made load) and renamed into place.
fn write_guard(f: &Fixture, script: &str) {
    let path = f.tenant_dir("a").join("plugins/p/hooks/guard.sh");
    let tmp = f.tenant_dir("a").join("guard.sh.tmp");
    std::fs::write(&tmp, script).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
}

/// Tenant `a`: a PreToolUse guard running `hooks/guard.sh` (denying).
fn guarded() -> Fixture {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "allow_native_commands = true",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}]}]}}),
        &[],
    );
    write_guard(&f, DENY);
    f
}

/// `block` or `allow` for a Bash call of tenant `a` on `s`.
fn outcome(s: &Server) -> String {
    let body = json!({"event": "PreToolUse", "payload": {"session_id": "s1",
        "tool_name": "Bash", "tool_input": {"command": "ls"}}});
    let d = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &body)
        .json();
    d["outcome"].as_str().unwrap_or("").to_owned()
}

fn trust(s: &Server) -> Value {
    let r = s.get("/v1/tenants/a/trust", Some(ADMIN));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// The digest of tenant `a`'s load held on `s`, once there is one.
fn held_on(s: &Server) -> Value {
    eventually("the changed files held", || {
        Some(trust(s)["pending"]["digest"].clone()).filter(Value::is_string)
    })
}

/// The digest of the load both replicas hold, once they hold the same one.
fn held_on_both(a: &Server, b: &Server) -> Value {
    eventually("the same load held on both replicas", || {
        let (da, db) = (
            trust(a)["pending"]["digest"].clone(),
            trust(b)["pending"]["digest"].clone(),
        );
        (da.is_string() && da == db).then_some(da)
    })
}

fn generation(s: &Server) -> Value {
    let r = s.get("/v1/status", Some(ADMIN));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["generations"]["a"].clone()
}

fn post(s: &Server, what: &str, digest: &Value) -> crate::serve_util::Reply {
    let body = serde_json::to_vec(&json!({ "digest": digest })).unwrap();
    s.call(
        "POST",
        &format!("/v1/tenants/a/{what}"),
        Some(ADMIN),
        Some(&body),
    )
}

/// Issue 29: two replicas, one tenants folder, one control store. A guard rewritten to allow
/// is seen by both polls and held on both (the old guard keeps denying on both); approved
/// through one replica, the other serves it by itself; both then show the same generation.
/// A later edit held on both and rejected through the second is dropped on the first.
#[test]
fn an_approval_on_one_replica_is_served_by_the_other_and_a_rejection_dropped_by_both() {
    let f = guarded();
    let a = f.start_replica("a", REPLICA);
    let b = f.start_replica("b", REPLICA);
    assert_eq!((outcome(&a), outcome(&b)), ("block".into(), "block".into()));

    write_guard(&f, ALLOW);
    let digest = held_on_both(&a, &b);
    assert_eq!((outcome(&a), outcome(&b)), ("block".into(), "block".into()));
    let r = post(&a, "approve", &digest);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(outcome(&a), "allow");
    eventually("the other replica serves the approval", || {
        (outcome(&b) == "allow").then_some(())
    });
    eventually("both replicas at the same generation", || {
        let (ga, gb) = (generation(&a), generation(&b));
        (ga == gb && ga.as_u64().is_some_and(|g| g > 0)).then_some(())
    });

    write_guard(&f, DENY_AGAIN);
    let digest = held_on_both(&a, &b);
    let r = post(&b, "reject", &digest);
    assert_eq!(r.status, 200, "{}", r.text());
    eventually("the rejection dropped on the other replica", || {
        trust(&a)["pending"].is_null().then_some(())
    });
    assert_eq!((outcome(&a), outcome(&b)), ("allow".into(), "allow".into()));
}

/// Issue 29: a replica killed (SIGKILL) and started again with an empty state folder, after
/// the guard was edited while it was down, reads the control store first: the edit is held
/// and the guard's tool call is denied naming the held load — not served (without the store
/// the fresh state folder made it a first load, approved as it was).
#[test]
fn a_replica_restarted_with_an_empty_state_folder_does_not_serve_an_unapproved_edit() {
    let f = guarded();
    let a = f.start_replica("a", REPLICA);
    assert_eq!(outcome(&a), "block");
    drop(a);
    write_guard(&f, ALLOW);
    let fresh = f.start_replica("fresh", REPLICA);
    let d = fresh
        .post(
            "/v1/tenants/a/dispatch",
            Some("token-a"),
            &json!({"event": "PreToolUse", "payload": {"session_id": "s1",
                "tool_name": "Bash", "tool_input": {"command": "ls"}}}),
        )
        .json();
    assert_eq!(d["outcome"], "block", "{d:#}");
    let held = held_on(&fresh);
    let reason = d["verdict"]["reason"].as_str().unwrap_or("");
    assert!(reason.contains(held.as_str().unwrap()), "{d:#}");
}

/// Issue 29: a half-written record planted as the newest generation is skipped with a logged
/// error naming the file; the replica keeps serving, and the next write supersedes it.
#[test]
fn a_half_written_control_file_is_skipped_with_a_logged_error() {
    let f = guarded();
    let a = f.start_replica("a", REPLICA);
    write_guard(&f, ALLOW);
    held_on(&a);
    let dir = f.path("control/a");
    let bad = dir.join("g00000000000000009999.json");
    std::fs::write(&bad, "{\"version\": 1, \"tenant\": \"a\", \"gener").unwrap();
    std::fs::set_permissions(&bad, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    eventually("the damaged record logged", || {
        let logs = a.logs();
        (logs.contains("control record unreadable") && logs.contains("g00000000000000009999"))
            .then_some(())
    });
    assert_eq!(outcome(&a), "block");
    let digest = trust(&a)["pending"]["digest"].clone();
    let r = post(&a, "approve", &digest);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(outcome(&a), "allow");
    assert_eq!(
        generation(&a),
        json!(10_000),
        "written above the damaged one"
    );
}

/// Issue 29: the control store is refused inside the tenants folder, where a tenant upload
/// could write it (and inside the state folder, where hooks keep their data).
#[test]
fn a_control_store_a_tenant_could_write_is_refused_at_start() {
    let f = guarded();
    for dir in ["tenants/control", "state-x/control"] {
        let config = f.path("bad.toml");
        std::fs::write(
            &config,
            format!(
                "tenants_dir = \"tenants\"\nstate_dir = \"state-x\"\n[control]\ndir = \"{dir}\"\n"
            ),
        )
        .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hookbox"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .env("HOOKBOX_CACHE_DIR", f.path("cache"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{dir}: {stderr}");
        assert!(
            stderr.contains("control.dir") && stderr.contains("overlaps"),
            "{dir}: {stderr}"
        );
    }
}
