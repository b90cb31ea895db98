//! `hookbox serve` as several replicas of one service (issue 29), through the real binary on
//! loopback: replicas sharing a tenants folder and a control store (`[control] dir`) converge
//! by themselves — a changed tenant folder is seen by each replica's poll (or at once, where
//! inotify wakes it) and held on every one, an approval or rejection sent to one is acted on by
//! the others, a replica restarted with an empty state folder serves no unapproved rule, a
//! damaged control file is skipped with a logged error, control records whose times disagree
//! with their generations change nothing, and the control store is refused where a tenant
//! could write it. Replay goes to stdout as JSON lines with `[replay] sink = "stdout"`. The
//! whole service behind HAProxy is `tests/replicas/run`, run here where haproxy is installed.
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
/// the guard was edited while it was down, reads the control store first: the edit is held,
/// not served (without the store the fresh state folder made it a first load, approved as it
/// was) — and, issue 27 item 6, the approved guard denies, brought from the control store's
/// snapshots, rather than the held answer.
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
    held_on(&fresh);
    let reason = d["verdict"]["reason"].as_str().unwrap_or("");
    assert_eq!(reason, "guard: no", "{d:#}");
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

/// Issue 29 (replay that outlives a pod): with `[replay] sink = "stdout"` a dispatch's replay
/// record is a JSON line on the server's stdout — naming the tenant, redacted like a replay
/// file (the secret the payload carried, echoed by the hook, appears nowhere) — and no replay
/// file or folder is written in the state folder.
#[test]
fn replay_to_stdout_is_one_redacted_json_line_per_dispatch_and_no_file() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "allow_native_commands = true",
        &json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "cat"}]}]}}),
        &[],
    );
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let s = f.start_replica("r", "[replay]\nsink = \"stdout\"\n");
    let body = json!({"event": "PostToolUse", "payload": {"session_id": "s-stream",
        "tool_name": "Bash", "tool_input": {"command": format!("export KEY={secret}")},
        "tool_response": {"stdout": "ok"}}});
    let r = s.post("/v1/tenants/a/dispatch", Some("token-a"), &body);
    assert_eq!(r.status, 200, "{}", r.text());
    let line = eventually("the replay line on stdout", || {
        s.stdout()
            .lines()
            .find(|l| l.contains("s-stream"))
            .map(str::to_owned)
    });
    let record: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(record["host"], "a", "{record:#}");
    assert_eq!(record["session_id"], "s-stream");
    assert_eq!(record["event"], "PostToolUse");
    assert_eq!(record["hooks"][0]["hook_name"], "cat", "{record:#}");
    let preview = record["hooks"][0]["output_preview"].as_str().unwrap();
    assert!(
        preview.contains("[REDACTED:aws_access_key_id]"),
        "the hook echoed the payload: {preview}"
    );
    assert!(!s.stdout().contains(secret), "{}", s.stdout());
    let state = f.path("state-r");
    assert!(state.join("a").is_dir(), "the tenant's state folder exists");
    assert!(
        !state.join("a/replay").exists(),
        "no replay folder with the stdout sink"
    );
    let mut files = vec![state];
    while let Some(p) = files.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            assert!(
                path.extension().is_none_or(|x| x != "jsonl"),
                "{}",
                path.display()
            );
            if path.is_dir() {
                files.push(path);
            }
        }
    }
}

/// Gives every control record of tenant `a` a modification time that disagrees wildly with
/// its generation — as replicas whose clocks are decades apart would leave them: odd
/// generations in the 1970s, even ones in the next century, and within each the newer
/// generation the older file.
fn skew_control_times(f: &Fixture) {
    let day = std::time::Duration::from_secs(86_400);
    for e in std::fs::read_dir(f.path("control/a")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(g) = name
            .strip_prefix('g')
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let at = if g % 2 == 1 {
            std::time::UNIX_EPOCH + day * (1000 - g)
        } else {
            std::time::SystemTime::now() + day * 365 * (100 - g)
        };
        // The records are 0600 and ours: opened for reading only, their times can be set.
        std::fs::File::open(&path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }
}

/// Issue 29 (clock skew): the design needs no clock. With every control record's modification
/// time set against its generation (decades apart, newest oldest), two replicas still hold the
/// same load, act on an approval and a rejection made on the other, agree on the generation,
/// and a third started afresh reads the newest record and agrees with them — the generation in
/// the name orders the records, never a time.
#[test]
fn control_records_with_wildly_skewed_times_still_order_by_generation_and_converge() {
    let f = guarded();
    let a = f.start_replica("a", REPLICA);
    let b = f.start_replica("b", REPLICA);
    skew_control_times(&f);

    write_guard(&f, ALLOW);
    let digest = held_on_both(&a, &b);
    skew_control_times(&f);
    let r = post(&a, "approve", &digest);
    assert_eq!(r.status, 200, "{}", r.text());
    skew_control_times(&f);
    eventually("the other replica serves the approval", || {
        (outcome(&b) == "allow").then_some(())
    });

    write_guard(&f, DENY_AGAIN);
    let digest = held_on_both(&a, &b);
    skew_control_times(&f);
    let r = post(&b, "reject", &digest);
    assert_eq!(r.status, 200, "{}", r.text());
    skew_control_times(&f);
    eventually("the rejection dropped on the other replica", || {
        trust(&a)["pending"].is_null().then_some(())
    });
    assert_eq!((outcome(&a), outcome(&b)), ("allow".into(), "allow".into()));
    let newest = eventually("both replicas at the same generation", || {
        let (ga, gb) = (generation(&a), generation(&b));
        (ga == gb && ga.as_u64().is_some_and(|g| g >= 4)).then_some(ga)
    });
    let c = f.start_replica("c", REPLICA);
    let first = generation(&c).as_u64().unwrap();
    assert!(
        first >= newest.as_u64().unwrap(),
        "a fresh replica reads the newest generation ({first}, newest {newest})"
    );
    eventually("three replicas at one generation", || {
        let g = [generation(&a), generation(&b), generation(&c)];
        (g[0] == g[1] && g[1] == g[2]).then_some(())
    });
}

/// Whether `program` is on PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Issue 29, as deployed: `tests/replicas/run` — three replicas sharing a tenants folder and a
/// control store behind Debian's HAProxy (round robin, `/readyz` checks, a refused connection
/// retried elsewhere). Every replica serves each of 20 changes, a changed guard is held on all
/// three and approved or rejected through the balancer on all three, a replica SIGKILLed and
/// restarted with an empty state folder keeps denying, and 30 s of dispatches through HAProxy
/// during rolling restarts are all answered, none with an allow. The harness measures the
/// convergence times (docs/deploy.md); this test asserts only the behaviour. Skipped, loudly,
/// where haproxy or python3 is not installed.
#[test]
fn three_replicas_behind_haproxy_converge_hold_and_never_answer_allow_for_a_deny() {
    use std::io::Write;
    let missing: Vec<&str> = ["haproxy", "python3"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if !missing.is_empty() {
        // Written past the test harness's capture, so the skip is seen in every run.
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED three_replicas_behind_haproxy_…: {} not installed \
             (apt-get install -y haproxy); tests/replicas/README.md ***\n",
            missing.join(", ")
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let numbers = tmp.path().join("numbers.json");
    let out =
        std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/replicas/run"))
            .arg("--hookbox")
            .arg(env!("CARGO_BIN_EXE_hookbox"))
            .arg("--json")
            .arg(&numbers)
            .output()
            .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let n: Value = serde_json::from_slice(&std::fs::read(&numbers).unwrap()).unwrap();
    assert_eq!(n["ok"], true, "{n:#}");
    assert_eq!(n["convergence"]["changes"], 20, "{n:#}");
    let rolling = &n["rolling"];
    assert!(rolling["sent"].as_u64().unwrap() > 0, "{n:#}");
    assert_eq!(rolling["answered"], rolling["sent"], "{n:#}");
    assert_eq!(rolling["allow"], 0, "{n:#}");
    assert_eq!(rolling["block"], rolling["sent"], "{n:#}");
    assert!(rolling["restarts"].as_u64().unwrap() >= 3, "{n:#}");
}

/// Issue 29 (inotify): with an hour between polls, two replicas still act at once — the
/// changed tenant folder is held on both and an approval made on one is served by the other —
/// because inotify (this machine's local file system has it) wakes each replica's poll for a
/// change under the tenants folder or the control store.
#[test]
fn with_an_hour_between_polls_inotify_wakes_replicas_for_a_change_and_an_approval() {
    const SLOW: &str = "[trust]\nhold_changed_reloads = true\n[control]\ndir = \"control\"\npoll_interval_secs = 3600\n";
    let f = guarded();
    let a = f.start_replica("a", SLOW);
    let b = f.start_replica("b", SLOW);
    assert_eq!((outcome(&a), outcome(&b)), ("block".into(), "block".into()));
    write_guard(&f, ALLOW);
    let digest = held_on_both(&a, &b);
    let r = post(&a, "approve", &digest);
    assert_eq!(r.status, 200, "{}", r.text());
    eventually("the other replica serves the approval", || {
        (outcome(&b) == "allow").then_some(())
    });
}
