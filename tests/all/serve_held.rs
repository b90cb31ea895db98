//! `hookbox serve`, a held tenant and its approved bytes (issue 27 item 6), through the real
//! binary on loopback: a tenant's commands run from the snapshot its load took (a guard that
//! finds its word list through `$0`, a node guard that `require`s its neighbour); with its
//! guard's word list edited and the load held, the guard keeps denying with the approved bytes
//! — also after the server is restarted, when it serves the approved snapshot instead of the
//! held deny; and a replica started with an empty state folder while a load is held serves the
//! approved guard, brought from the control store.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Fixture, Server, eventually};

const HOLD: &str = "[trust]\nhold_changed_reloads = true\n";

const REPLICA: &str = "[trust]\nhold_changed_reloads = true\n[control]\ndir = \"control\"\npoll_interval_secs = 0.2\n";

/// A guard that finds its word list beside it, through `$0`; without it, it fails (exit 1: a
/// non-blocking error), as a real plugin run from a per-file copy would.
const GUARD: &str = "#!/bin/sh\nwords=\"$(dirname \"$0\")/words.sh\"\nif [ ! -r \"$words\" ]; then echo \"no $words\" >&2; exit 1; fi\n. \"$words\"\nif grep -q \"$WORD\"; then echo \"guard: $WORD refused\" >&2; exit 2; fi\nexit 0\n";

fn write(f: &Fixture, rel: &str, text: &str) {
    let path = f.tenant_dir("a").join("plugins/p").join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Written beside the plugins folder and renamed in: a poll sees the old file or the new.
    let tmp = f.tenant_dir("a").join("write.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
}

/// Tenant `a`: a Bash guard run by `command`.
fn tenant(command: &str) -> Fixture {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "allow_native_commands = true",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": command}]}]}}),
        &[],
    );
    f
}

/// Tenant `a` with the shell guard denying `rm -rf`.
fn guarded() -> Fixture {
    let f = tenant("${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh");
    write(&f, "hooks/guard.sh", GUARD);
    write(&f, "hooks/words.sh", "WORD='rm -rf'\n");
    f
}

/// Tenant `a`'s answer to a Bash call running `rm -rf /`.
fn rm_rf(s: &Server) -> Value {
    s.post(
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        &json!({"event": "PreToolUse", "payload": {"session_id": "s1",
            "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}}),
    )
    .json()
}

/// Asserts `d` is the approved guard's own deny, not a held tenant's.
fn denied_by_the_guard(d: &Value, want: &str) {
    let text = d.to_string();
    assert_eq!(d["outcome"], "block", "{d:#}");
    assert!(
        text.contains(want) && !text.contains("no approved rules"),
        "{d:#}"
    );
}

fn pending(s: &Server) -> Value {
    let r = s.get("/v1/tenants/a/trust", Some(ADMIN));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["pending"]["digest"].clone()
}

#[test]
fn a_held_load_and_a_restart_keep_the_approved_guard_denying_from_its_snapshot() {
    let f = guarded();
    let s = f.start(HOLD);
    denied_by_the_guard(&rm_rf(&s), "guard: rm -rf refused");
    // Only the word list is edited: the rules are the same, the files are not — held.
    write(&f, "hooks/words.sh", "WORD='never-said'\n");
    let r = s.call("POST", "/v1/tenants/a/reload", Some(ADMIN), None);
    assert_eq!(r.status, 202, "{}", r.text());
    denied_by_the_guard(&rm_rf(&s), "guard: rm -rf refused");
    let held = pending(&s);
    assert!(held.is_string());
    drop(s);
    // Restarted with the load held: the approved guard serves, from the approved snapshot.
    let s = f.start(HOLD);
    assert_eq!(pending(&s), held);
    denied_by_the_guard(&rm_rf(&s), "guard: rm -rf refused");
    // Approved: the edited word list serves.
    let body = serde_json::to_vec(&json!({ "digest": held })).unwrap();
    let r = s.call("POST", "/v1/tenants/a/approve", Some(ADMIN), Some(&body));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(rm_rf(&s)["outcome"], "allow");
}

#[test]
fn a_node_guard_requiring_its_neighbour_denies_in_a_tenant() {
    let f = tenant("node ${CLAUDE_PLUGIN_ROOT}/hooks/guard.js");
    write(
        &f,
        "hooks/guard.js",
        "const words = require(__dirname + '/words.js');\nlet input = '';\nprocess.stdin.on('data', (d) => { input += d; });\nprocess.stdin.on('end', () => {\n  if (words.some((w) => input.includes(w))) { console.error('node guard: refused'); process.exit(2); }\n});\n",
    );
    write(&f, "hooks/words.js", "module.exports = ['rm -rf'];\n");
    let s = f.start("");
    denied_by_the_guard(&rm_rf(&s), "node guard: refused");
}

#[test]
fn a_replica_started_with_an_empty_state_folder_while_a_load_is_held_serves_the_approved_guard() {
    let f = guarded();
    let a = f.start_replica("a", REPLICA);
    denied_by_the_guard(&rm_rf(&a), "guard: rm -rf refused");
    write(&f, "hooks/words.sh", "WORD='never-said'\n");
    eventually("the edit held", || {
        Some(pending(&a)).filter(Value::is_string)
    });
    let fresh = f.start_replica("fresh", REPLICA);
    assert!(pending(&fresh).is_string());
    denied_by_the_guard(&rm_rf(&fresh), "guard: rm -rf refused");
}
