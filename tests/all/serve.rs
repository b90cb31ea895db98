//! `hookbox serve` end to end: the real binary on 127.0.0.1:0, real wasm guests, a real HTTP
//! client. Every endpoint: dispatch, Claude Code's http hook (what Claude Code sends, what it
//! acts on), the admin routes, the HookFired event stream, `/metrics`, `/healthz`, `/readyz`;
//! two tenants with conflicting rules; a tenant that fails to load at start.

use hookbox_test_artifacts as guests;
use serde_json::{Value, json};

use crate::serve_util::{ADMIN, Events, Fixture, eventually, metric, request};
use crate::util::hookbox;

/// PreToolUse: the shell guard, denying `extra_deny` besides its built-in rules.
fn guard(extra_deny: &[&str]) -> Value {
    json!({"type": "wasm", "component": "hooks/shell_guard.wasm", "matcher": "Bash", "config": {"deny": extra_deny}})
}

/// UserPromptSubmit: context injection with `context`.
fn context(text: &str) -> Value {
    json!({"type": "wasm", "component": "hooks/context_injection.wasm", "config": {"context": text}})
}

fn guard_and_context(extra_deny: &[&str], text: &str) -> Value {
    json!({"hooks": {"PreToolUse": [guard(extra_deny)], "UserPromptSubmit": [context(text)]}})
}

const GUARD_AND_CONTEXT: &[(&str, &str)] = &[
    ("shell_guard.wasm", guests::SHELL_GUARD),
    ("context_injection.wasm", guests::CONTEXT_INJECTION),
];

fn bash(command: &str) -> Value {
    json!({"event": "PreToolUse", "payload": {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": command}}})
}

fn prompt(text: &str) -> Value {
    json!({"event": "UserPromptSubmit", "payload": {"session_id": "s1", "prompt": text}})
}

#[test]
fn two_tenants_with_conflicting_rules_each_get_their_own_verdict() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&["git status"], "A's context"),
        GUARD_AND_CONTEXT,
    );
    f.tenant(
        "b",
        "token-b",
        "",
        &guard_and_context(&[], "B's context"),
        GUARD_AND_CONTEXT,
    );
    let s = f.start("");
    let a = s.post(
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        &bash("git status"),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    let a = a.json();
    assert_eq!(a["outcome"], "block", "{a:#}");
    assert_eq!(a["verdict"]["decision"], "deny");
    assert_eq!(a["matched_rule_count"], 1);
    let b = s
        .post(
            "/v1/tenants/b/dispatch",
            Some("token-b"),
            &bash("git status"),
        )
        .json();
    assert_eq!(b["outcome"], "allow", "{b:#}");
    assert!(b["verdict"]["decision"].is_null());
    for (tenant, token, want) in [
        ("a", "token-a", "A's context"),
        ("b", "token-b", "B's context"),
    ] {
        let d = s
            .post(
                &format!("/v1/tenants/{tenant}/dispatch"),
                Some(token),
                &prompt("hi"),
            )
            .json();
        assert_eq!(d["verdict"]["additional_contexts"], json!([want]), "{d:#}");
        let rendered = d["rendered"].to_string();
        assert!(
            rendered.contains(want) && rendered.contains("user-prompt-submit-hook"),
            "{rendered}"
        );
    }
}

#[test]
fn dispatch_with_report_full_answers_what_hookbox_dispatch_json_prints() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&[], "ctx"),
        GUARD_AND_CONTEXT,
    );
    let s = f.start("");
    let served = s
        .post(
            "/v1/tenants/a/dispatch?report=full",
            Some("token-a"),
            &bash("rm -rf /"),
        )
        .json();
    let cli = hookbox([
        "dispatch",
        "--event",
        "PreToolUse",
        "--json",
        "--no-replay",
        "--session-id",
        "s1",
        "--tool",
        "Bash",
        "--tool-input",
        r#"{"command":"rm -rf /"}"#,
        "--plugin",
        f.tenant_dir("a").join("plugins/p").to_str().unwrap(),
    ]);
    assert_eq!(cli.code, Some(0), "{}", cli.stderr);
    let cli = cli.json();
    // Same keys; same verdict and HookFired (timings and paths aside).
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let mut served_keys = keys(&served);
    // The CLI's own: its load diagnostics, and its trust mode with the rules it found unapproved
    // (`hookbox serve` does not enforce trust yet: tenants' approvals are issue 19 §5).
    served_keys.extend(["diagnostics".to_owned(), "trust".to_owned()]);
    served_keys.sort();
    let mut cli_keys = keys(&cli);
    cli_keys.sort();
    assert_eq!(served_keys, cli_keys);
    // Each hook's message carries its own run time: compare everything else.
    fn without_timings(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "duration_ms")
                    .map(|(k, v)| (k.clone(), without_timings(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(without_timings).collect()),
            other => other.clone(),
        }
    }
    let (served, cli) = (without_timings(&served), without_timings(&cli));
    for k in [
        "verdict",
        "outcome",
        "hook_fired",
        "event",
        "session_id",
        "matched_rule_count",
    ] {
        assert_eq!(served[k], cli[k], "{k}");
    }
    assert_eq!(served["verdict"]["decision"], "deny");
}

/// The keys of a lean answer (issue 18 §4): what the shipped clients read (`event`, `outcome`,
/// `verdict`, `rendered`) and what an agent shows or logs; no per-hook report, no HookFired.
const LEAN_KEYS: &[&str] = &[
    "duration_ms",
    "event",
    "matched_rule_count",
    "outcome",
    "session_id",
    "system_messages",
    "verdict",
    "warnings",
];

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn the_default_dispatch_answer_is_lean_and_carries_what_the_clients_read() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&[], "Project ATLAS."),
        GUARD_AND_CONTEXT,
    );
    let s = f.start("");
    for (body, rendered) in [
        (bash("rm -rf /"), false),
        (bash("git status"), false),
        (prompt("What is left?"), true),
    ] {
        let lean = s.post("/v1/tenants/a/dispatch", Some("token-a"), &body);
        assert_eq!(lean.status, 200, "{}", lean.text());
        let asked = s.post("/v1/tenants/a/dispatch?report=lean", Some("token-a"), &body);
        let full = s.post("/v1/tenants/a/dispatch?report=full", Some("token-a"), &body);
        assert!(
            lean.body.len() < full.body.len(),
            "lean {} bytes, full {} bytes",
            lean.body.len(),
            full.body.len()
        );
        let (lean, asked, full) = (lean.json(), asked.json(), full.json());
        let mut want: Vec<String> = LEAN_KEYS.iter().map(|k| (*k).to_owned()).collect();
        if rendered {
            want.push("rendered".to_owned());
            want.sort();
        }
        assert_eq!(keys(&lean), want, "{lean:#}");
        assert_eq!(keys(&asked), want, "report=lean is the default: {asked:#}");
        // The same verdict and outcome as the full report (each attachment's run time aside).
        for k in [
            "event",
            "session_id",
            "matched_rule_count",
            "outcome",
            "rendered",
        ] {
            // `rendered` is absent from a lean answer where the full report has it null.
            assert_eq!(lean.get(k).unwrap_or(&Value::Null), &full[k], "{k}");
        }
        let decided = |v: &Value| {
            let mut v = v["verdict"].clone();
            v.as_object_mut().unwrap().remove("messages");
            v
        };
        assert_eq!(decided(&lean), decided(&full));
        assert_eq!(
            lean["verdict"]["messages"].as_array().map(Vec::len),
            full["verdict"]["messages"].as_array().map(Vec::len)
        );
        assert!(
            full["hooks"].is_array() && full["hook_fired"].is_object(),
            "{full:#}"
        );
    }
    // What the clients read, through the lean answer.
    let deny = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &bash("rm -rf /"))
        .json();
    assert_eq!(
        (&deny["outcome"], &deny["verdict"]["decision"]),
        (&json!("block"), &json!("deny"))
    );
    assert!(
        deny["verdict"]["reason"]
            .as_str()
            .unwrap()
            .contains("shell-guard"),
        "{deny:#}"
    );
    let turn = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &prompt("hi"))
        .json();
    assert_eq!(
        turn["verdict"]["additional_contexts"],
        json!(["Project ATLAS."])
    );
    assert_eq!(turn["rendered"]["kind"], "proceed");
}

#[test]
fn a_report_parameter_other_than_full_or_lean_is_a_400_naming_it() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&[], "ctx"),
        GUARD_AND_CONTEXT,
    );
    let s = f.start("");
    for (query, field, names) in [
        ("report=verbose", "query.report", "report=verbose"),
        ("report=", "query.report", "report="),
        ("report=FULL", "query.report", "report=FULL"),
        ("reprot=full", "query.reprot", "reprot"),
        ("report=full&x=1", "query.x", "`x`"),
    ] {
        let r = s.post(
            &format!("/v1/tenants/a/dispatch?{query}"),
            Some("token-a"),
            &bash("ls"),
        );
        assert_eq!(r.status, 400, "{query}: {}", r.text());
        assert_eq!(
            r.error(),
            ("invalid_request".to_owned(), Some(field.to_owned())),
            "{query}"
        );
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(names), "{query}: {message}");
    }
    // The parameter is checked after the token: without one it is still a 401.
    let r = s.post("/v1/tenants/a/dispatch?report=verbose", None, &bash("ls"));
    assert_eq!(r.status, 401);
}

#[test]
fn worker_threads_sets_the_servers_workers_and_zero_is_refused_naming_the_key() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&[], "ctx"),
        GUARD_AND_CONTEXT,
    );
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let s = f.start("");
    let status = s.get("/v1/status", Some(ADMIN)).json();
    assert_eq!(status["worker_threads"], cores, "{status:#}");
    drop(s);
    let s = f.start("worker_threads = 3\n");
    let status = s.get("/v1/status", Some(ADMIN)).json();
    assert_eq!(status["worker_threads"], 3, "{status:#}");
    let d = s.post("/v1/tenants/a/dispatch", Some("token-a"), &bash("rm -rf /"));
    assert_eq!(d.json()["outcome"], "block");
    drop(s);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(&config, "tenants_dir = \".\"\nworker_threads = 0\n").unwrap();
    let run = hookbox([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_ne!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("`worker_threads`") && run.stderr.contains("from 1 to 1024"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_claude_code_endpoint_answers_what_claude_code_acts_on() {
    let f = Fixture::new();
    // Claude Code's own layout: matcher groups holding handlers.
    let hooks = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "component": "hooks/shell_guard.wasm"}
        ]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "wasm", "component": "hooks/chaos.wasm", "on_failure": "block"},
            {"type": "wasm", "component": "hooks/context_injection.wasm", "config": {"context": "Project ATLAS."}}
        ]}],
        "Stop": [{"hooks": [{"type": "wasm", "component": "hooks/empty_answer_rescue.wasm"}]}],
    }});
    f.tenant(
        "acme",
        "acme-token",
        "",
        &hooks,
        &[
            ("shell_guard.wasm", guests::SHELL_GUARD),
            ("chaos.wasm", guests::CHAOS),
            ("context_injection.wasm", guests::CONTEXT_INJECTION),
            ("empty_answer_rescue.wasm", guests::EMPTY_ANSWER_RESCUE),
        ],
    );
    let s = f.start("");
    // What Claude Code sends for a `"type": "http"` hook: a POST of the hook input (the same JSON
    // a command hook reads on stdin) with `Content-Type: application/json` and the handler's
    // `headers`, `$HOOKBOX_TOKEN` expanded because it is in `allowedEnvVars`.
    let claude = |payload: Value| {
        let body = serde_json::to_vec(&payload).unwrap();
        let r = request(
            s.addr,
            "POST",
            "/v1/tenants/acme/claude-code",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/plain, */*"),
                ("User-Agent", "claude-cli/2.1.300 (external, cli)"),
                ("Authorization", "Bearer acme-token"),
            ],
            Some(&body),
        )
        .unwrap();
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        r.json()
    };
    let common = json!({
        "session_id": "3f1c2a9e-7b1d-4c55-9a0e-5d2f8c1b7e44",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-app/3f1c2a9e.jsonl",
        "cwd": "/home/dev/app",
        "permission_mode": "default",
    });
    let with = |extra: Value| {
        let mut v = common.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    // Deny: Claude Code refuses the tool call and shows the reason to the model.
    let deny = claude(with(json!({
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /", "description": "Clean up"},
        "tool_use_id": "toolu_01ABC"
    })));
    assert_eq!(deny["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(deny["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        deny["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("shell-guard"),
        "{deny}"
    );
    // Nothing to say: an empty object, and Claude Code proceeds.
    let nothing = claude(with(json!({
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "toolu_01ABD"
    })));
    assert_eq!(nothing, json!({}));
    // Additional context: delivered next to the prompt, in rule order.
    let ctx = claude(with(
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "ok"}),
    ));
    assert_eq!(
        ctx,
        json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ok\n\nProject ATLAS."}})
    );
    // Block: a fail-closed hook failed, so Claude Code erases the prompt.
    let block = claude(with(
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "err:leaked key"}),
    ));
    assert_eq!(block["decision"], "block", "{block}");
    assert!(
        block["reason"].as_str().unwrap().contains("leaked key"),
        "{block}"
    );
    assert!(
        block.get("hookSpecificOutput").is_none(),
        "a blocked prompt gets no context: {block}"
    );
    // Stop with an empty answer: `decision: block` makes Claude Code continue with the reason.
    let stop = claude(with(json!({
        "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": ""
    })));
    assert_eq!(stop["decision"], "block", "{stop}");
    assert!(
        stop["reason"].as_str().unwrap().contains("final answer"),
        "{stop}"
    );
    // Already continuing because of a Stop hook: the rescue stays quiet.
    let again = claude(with(json!({
        "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": ""
    })));
    assert_eq!(again, json!({}));
    // A non-2xx answer is a non-blocking error for Claude Code: the body still says why.
    let bad = request(
        s.addr,
        "POST",
        "/v1/tenants/acme/claude-code",
        &[("Authorization", "Bearer acme-token")],
        Some(br#"{"hook_event_name": "PreToolUze"}"#),
    )
    .unwrap();
    assert_eq!(
        (bad.status, bad.error().1.as_deref()),
        (400, Some("hook_event_name"))
    );
}

#[test]
fn the_admin_routes_list_show_load_reload_disable_enable_and_remove() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "max_rules = 10",
        &guard_and_context(&[], "v1"),
        GUARD_AND_CONTEXT,
    );
    let s = f.start("");
    let admin = Some(ADMIN);
    let list = s.get("/v1/tenants", admin).json();
    assert_eq!(list["tenants"][0]["id"], "a", "{list}");
    assert_eq!(list["tenants"][0]["state"], "enabled");
    assert_eq!(list["tenants"][0]["rules"]["wasm"], 2);
    let one = s.get("/v1/tenants/a", admin).json();
    assert_eq!(one["rules_loaded"].as_array().unwrap().len(), 2, "{one:#}");
    assert_eq!(one["rules_loaded"][0]["type"], "wasm");
    assert!(one["diagnostics"].is_array() && one["metrics"]["dispatches"].is_u64());
    // Reload picks up the plugin's new rules.
    f.plugin("a", &guard_and_context(&["ls"], "v2"), &[]);
    let r = s.call("POST", "/v1/tenants/a/reload", admin, None);
    assert_eq!(r.status, 200, "{}", r.text());
    let d = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &bash("ls"))
        .json();
    assert_eq!(d["verdict"]["decision"], "deny");
    // A broken reload answers 422 with located diagnostics, and the old rules keep serving.
    std::fs::write(
        f.tenant_dir("a").join("plugins/p/hooks/hooks.json"),
        "{\"hooks\": [",
    )
    .unwrap();
    let r = s.call("POST", "/v1/tenants/a/reload", admin, None);
    assert_eq!(r.status, 422, "{}", r.text());
    let e = r.json();
    assert_eq!(e["error"]["code"], "load_failed");
    assert!(
        e["error"]["diagnostics"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("hooks.json"),
        "{e}"
    );
    let d = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &bash("ls"))
        .json();
    assert_eq!(
        d["verdict"]["decision"], "deny",
        "the old rules still serve"
    );
    // Disable: the tenant answers as one with no rules; enable brings them back.
    f.plugin("a", &guard_and_context(&["ls"], "v2"), &[]);
    assert_eq!(
        s.call("POST", "/v1/tenants/a/disable", admin, None).json()["state"],
        "disabled"
    );
    let d = s
        .post("/v1/tenants/a/dispatch", Some("token-a"), &bash("ls"))
        .json();
    assert_eq!(
        (d["matched_rule_count"].as_u64(), d["outcome"].as_str()),
        (Some(0), Some("allow"))
    );
    assert_eq!(
        s.call("POST", "/v1/tenants/a/enable", admin, None).json()["state"],
        "enabled"
    );
    // PUT reads tenant.toml again: a new token replaces the old one.
    std::fs::write(
        f.tenant_dir("a").join("tenant.toml"),
        format!(
            "token_sha256 = \"{}\"\n",
            crate::serve_util::digest("token-a2")
        ),
    )
    .unwrap();
    let r = s.call("PUT", "/v1/tenants/a", admin, None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        s.post("/v1/tenants/a/dispatch", Some("token-a"), &bash("ls"))
            .status,
        404
    );
    assert_eq!(
        s.post("/v1/tenants/a/dispatch", Some("token-a2"), &bash("ls"))
            .status,
        200
    );
    // PUT of a new folder adds a tenant; of a folder that does not load, answers 422.
    f.tenant(
        "b",
        "token-b",
        "",
        &guard_and_context(&[], "b"),
        GUARD_AND_CONTEXT,
    );
    assert_eq!(s.call("PUT", "/v1/tenants/b", admin, None).status, 200);
    assert_eq!(
        s.post("/v1/tenants/b/dispatch", Some("token-b"), &prompt("x"))
            .status,
        200
    );
    f.tenant(
        "c",
        "token-c",
        "max_rulez = 1",
        &guard_and_context(&[], "c"),
        GUARD_AND_CONTEXT,
    );
    let r = s.call("PUT", "/v1/tenants/c", admin, None);
    assert_eq!(r.status, 422, "{}", r.text());
    assert!(r.text().contains("max_rulez"), "{}", r.text());
    assert_eq!(s.get("/v1/tenants/c", admin).json()["state"], "failed");
    assert_eq!(s.call("PUT", "/v1/tenants/nope", admin, None).status, 404);
    assert_eq!(
        s.call("PUT", "/v1/tenants/a.b", admin, None)
            .error()
            .1
            .as_deref(),
        Some("id")
    );
    // DELETE: its token opens nothing any more.
    assert_eq!(s.call("DELETE", "/v1/tenants/b", admin, None).status, 200);
    assert_eq!(
        s.post("/v1/tenants/b/dispatch", Some("token-b"), &prompt("x"))
            .status,
        404
    );
    assert_eq!(s.call("DELETE", "/v1/tenants/b", admin, None).status, 404);
    let ids: Vec<String> = s.get("/v1/tenants", admin).json()["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["a", "c"]);
}

#[test]
fn fired_streams_a_tenants_hook_fired_records_and_nothing_of_others() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&[], "a"),
        GUARD_AND_CONTEXT,
    );
    f.tenant(
        "b",
        "token-b",
        "",
        &guard_and_context(&[], "b"),
        GUARD_AND_CONTEXT,
    );
    let s = f.start("[limits]\nmax_sse_subscribers_per_tenant = 1\nsse_keepalive_secs = 0.2\n");
    let (status, headers, mut events) =
        Events::open(s.addr, "/v1/tenants/a/fired", "token-a").unwrap();
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream")
    );
    // One stream per tenant here: a second one is refused.
    let (second, _, _) = Events::open(s.addr, "/v1/tenants/a/fired", "token-a").unwrap();
    assert_eq!(second, 429);
    // B's dispatch comes first, but A's stream only ever shows A's.
    s.post("/v1/tenants/b/dispatch", Some("token-b"), &bash("rm -rf /"));
    s.post("/v1/tenants/a/dispatch", Some("token-a"), &bash("rm -rf ~"));
    let e = events.next().expect("an event");
    assert_eq!(e.name, "hook_fired");
    let fired: Value = serde_json::from_str(&e.data).unwrap();
    assert_eq!(fired["outcome"], "block", "{fired}");
    // A dispatch no rule matched fires nothing; the next record is the prompt's.
    s.post(
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        &json!({"event": "Notification"}),
    );
    s.post("/v1/tenants/a/dispatch", Some("token-a"), &prompt("hi"));
    let e = events.next().expect("an event");
    let fired: Value = serde_json::from_str(&e.data).unwrap();
    assert_eq!(fired["added_context_count"], 1, "{fired}");
    // The stream follows the tenant to its new host when it is loaded again from its folder.
    assert_eq!(
        s.call("PUT", "/v1/tenants/a", Some(ADMIN), None).status,
        200
    );
    // The new host feeds the tenant's same stream: the first dispatch after the swap is seen,
    // and so is every one after it, in order.
    for n in 1..=3 {
        s.post("/v1/tenants/a/dispatch", Some("token-a"), &prompt("again"));
        let e = events
            .next()
            .expect("the record of the dispatch after the swap");
        assert_eq!(e.name, "hook_fired", "dispatch {n} after the swap");
        assert_eq!(e.id.as_deref(), Some((2 + n).to_string().as_str()), "{e:?}");
    }
    // Removing the tenant ends the stream with `closed`.
    assert_eq!(
        s.call("DELETE", "/v1/tenants/a", Some(ADMIN), None).status,
        200
    );
    let last = eventually("a closed event", || {
        let e = events.next()?;
        (e.name == "closed").then_some(e)
    });
    assert!(last.data.contains("removed"), "{}", last.data);
    assert!(events.next().is_none(), "the stream ends after `closed`");
}

#[test]
fn metrics_health_and_readiness() {
    let f = Fixture::new();
    f.tenant(
        "a",
        "token-a",
        "",
        &guard_and_context(&["git push"], "a"),
        GUARD_AND_CONTEXT,
    );
    // A tenant whose policy is inconsistent: reported, not served, and the server still ready.
    f.tenant(
        "broken",
        "token-broken",
        "default_timeout_secs = 20.0",
        &guard_and_context(&[], "x"),
        GUARD_AND_CONTEXT,
    );
    let s = f.start(
        "metrics_token_sha256 = \"{}\""
            .replace("{}", &crate::serve_util::digest("scraper"))
            .as_str(),
    );
    assert_eq!(s.get("/healthz", None).json()["status"], "ok");
    let ready = s.get("/readyz", None);
    assert_eq!(ready.status, 200);
    // Issue 16: anyone may ask `/readyz`, so it tells nothing of the tenants; the counts are
    // the admin's, on `/v1/status`.
    assert_eq!(ready.json(), json!({"status": "ready"}));
    assert_eq!(
        s.get("/readyz", Some("token-a")).json(),
        json!({"status": "ready"})
    );
    assert_eq!(s.get("/v1/status", None).status, 401);
    assert_eq!(s.get("/v1/status", Some("token-a")).status, 403);
    assert_eq!(s.get("/v1/status", Some("scraper")).status, 403);
    let status = s.get("/v1/status", Some(ADMIN));
    assert_eq!(status.status, 200);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    assert_eq!(
        status.json(),
        json!({"status": "ready", "tenants": {"serving": 1, "failed": 1}, "worker_threads": cores})
    );
    let broken = s.get("/v1/tenants/broken", Some(ADMIN)).json();
    assert_eq!(broken["state"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("default_timeout_secs"),
        "{broken}"
    );
    let r = s.post(
        "/v1/tenants/broken/dispatch",
        Some("token-broken"),
        &prompt("x"),
    );
    assert_eq!((r.status, r.error().0.as_str()), (503, "unavailable"));
    s.post("/v1/tenants/a/dispatch", Some("token-a"), &bash("git push"));
    s.post("/v1/tenants/a/dispatch", Some("token-a"), &prompt("x"));
    assert_eq!(s.get("/metrics", None).status, 401);
    assert_eq!(s.get("/metrics", Some("token-a")).status, 403);
    let admin_view = s.get("/metrics", Some(ADMIN));
    assert_eq!(admin_view.status, 200);
    let m = s.get("/metrics", Some("scraper"));
    assert_eq!(m.status, 200);
    assert!(
        m.header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = m.text();
    assert_eq!(
        metric(&text, "hookbox_dispatches_total{tenant=\"a\"}"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        metric(&text, "hookbox_hooks_run_total{tenant=\"a\",type=\"wasm\"}"),
        Some(2.0)
    );
    assert_eq!(
        metric(
            &text,
            "hookbox_hook_failures_total{tenant=\"a\",class=\"timeout\"}"
        ),
        Some(0.0)
    );
    assert_eq!(
        metric(
            &text,
            "hookbox_dispatch_duration_seconds_bucket{tenant=\"a\",le=\"+Inf\"}"
        ),
        Some(2.0)
    );
    assert_eq!(
        metric(
            &text,
            "hookbox_dispatch_duration_seconds_count{tenant=\"a\"}"
        ),
        Some(2.0)
    );
    assert!(
        metric(&text, "hookbox_fuel_consumed_total{tenant=\"a\"}").unwrap() > 0.0,
        "fuel is metered"
    );
    assert_eq!(
        metric(&text, "hookbox_pool_slots_in_use{tenant=\"a\"}"),
        Some(0.0)
    );
    assert_eq!(
        metric(&text, "hookbox_tenants{state=\"failed\"}"),
        Some(1.0)
    );
    assert!(
        metric(
            &text,
            "hookbox_http_requests_total{route=\"/v1/tenants/{id}/dispatch\",code=\"200\"}"
        )
        .unwrap()
            >= 2.0
    );
    assert!(
        !text.contains("tenant=\"broken\""),
        "a tenant that is not served has no series"
    );
}

#[test]
fn print_default_config_prints_every_documented_default() {
    let r = hookbox(["serve", "--print-default-config"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, hookbox_server::DEFAULT_CONFIG);
    for key in [
        "listen",
        "tenants_dir",
        "admin_token_sha256",
        "max_body_bytes",
        "header_read_timeout_secs",
        "max_requests_in_flight",
    ] {
        assert!(r.stdout.contains(key), "{key}");
    }
    let bad = hookbox([
        "serve",
        "--tenants",
        "/no/such/folder",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("tenants_dir") && bad.stderr.contains("/no/such/folder"),
        "{}",
        bad.stderr
    );
}
