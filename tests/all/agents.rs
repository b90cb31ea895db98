//! Real plugins behave through `hookbox dispatch` as Claude Code runs them (issue 12): each test
//! is a plugin shaped like a real one — an `async` ledger writer, hookify's deny with a
//! `systemMessage`, a plugin keeping state in `CLAUDE_PLUGIN_DATA` across sessions, a bash-only
//! hook, an `asyncRewake` hook, a loop plugin that needs Claude Code's Stop cap, an `http` hook,
//! a `PreModelSwitch` guard.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::{Dir, Run, hookbox_with_state};

/// Writes a Claude Code plugin `<dir>/<name>` with `hooks` (and files) and returns its folder.
fn plugin(d: &Dir, name: &str, hooks: &Value, files: &[(&str, &str)]) -> PathBuf {
    d.write(
        &format!("{name}/.claude-plugin/plugin.json"),
        &json!({"name": name}).to_string(),
    );
    d.write(&format!("{name}/hooks/hooks.json"), &hooks.to_string());
    for (rel, text) in files {
        d.write(&format!("{name}/{rel}"), text);
    }
    d.path().join(name)
}

fn dispatch(d: &Dir, plugin: &Path, args: &[&str]) -> Run {
    let project = d.path().display().to_string();
    let plugin = plugin.display().to_string();
    let mut all = vec!["dispatch", "--project-dir", &project, "--plugin", &plugin];
    all.extend_from_slice(args);
    hookbox_with_state(all, d.state())
}

#[test]
fn async_hooks_run_to_completion_after_the_verdict() {
    // claude-mem's and superpowers' shape: a background hook that records a ledger entry, beside a
    // quick synchronous hook. Claude Code lets the background one finish.
    let d = Dir::new();
    let hooks = json!({"hooks": {"PostToolUse": [{"hooks": [
        {"type": "command", "async": true,
         "command": "sleep 0.5; echo recorded >> \"$CLAUDE_PLUGIN_DATA/ledger\""},
        {"type": "command", "command": "true"}
    ]}]}});
    let p = plugin(&d, "ledger", &hooks, &[]);
    let run = dispatch(
        &d,
        &p,
        &[
            "--event",
            "PostToolUse",
            "--tool",
            "Bash",
            "--tool-input",
            "{}",
            "--json",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let ledgers = d.state_files("ledger");
    assert_eq!(
        ledgers.len(),
        1,
        "the async hook finished before hookbox exited"
    );
    assert_eq!(std::fs::read_to_string(&ledgers[0]).unwrap(), "recorded\n");
}

#[test]
fn a_system_message_reaches_the_output_whatever_the_hook_decided() {
    // hookify: deny `rm -rf` and explain only in systemMessage.
    let d = Dir::new();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"},
                        "systemMessage": "hookify rule `no-rm-rf`: recursive deletes are blocked in this repo"});
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("echo '{answer}'")}
    ]}]}});
    let p = plugin(&d, "hookify", &hooks, &[]);
    let args = [
        "--event",
        "PreToolUse",
        "--tool",
        "Bash",
        "--tool-input",
        r#"{"command":"rm -rf build"}"#,
    ];
    let run = dispatch(&d, &p, &[&args[..], &["--json"]].concat());
    let v = run.json();
    assert_eq!(v["verdict"]["decision"], "deny");
    assert_eq!(
        v["system_messages"],
        json!(["hookify rule `no-rm-rf`: recursive deletes are blocked in this repo"])
    );
    let run = dispatch(&d, &p, &args);
    assert!(
        run.stdout
            .contains("system message: hookify rule `no-rm-rf`"),
        "{}",
        run.stdout
    );
}

#[test]
fn plugin_data_persists_across_sessions_in_claude_and_is_per_session_in_ghast() {
    let d = Dir::new();
    let count = r#"n=$(cat "$CLAUDE_PLUGIN_DATA/count" 2>/dev/null || echo 0); echo $((n+1)) > "$CLAUDE_PLUGIN_DATA/count"; echo "{\"additionalContext\":\"count $((n+1))\"}""#;
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": count}]}]}});
    let p = plugin(&d, "counter", &hooks, &[]);
    let context = |session: &str, p: &Path| {
        let run = dispatch(
            &d,
            p,
            &[
                "--event",
                "UserPromptSubmit",
                "--prompt",
                "hi",
                "--session-id",
                session,
                "--json",
            ],
        );
        run.json()["verdict"]["additional_contexts"][0]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(context("s1", &p), "count 1");
    assert_eq!(
        context("s2", &p),
        "count 2",
        "Claude Code: one folder per plugin"
    );
    // The Ghast dialect's document makes PLUGIN_DATA per plugin and per session.
    let ghast = d.path().join("ghast-counter");
    d.write(
        "ghast-counter/plugin.json",
        &json!({"name": "ghast-counter", "extensions": {"ai.trapezohe.ghast": {"hooks": "hooks.json"}}}).to_string(),
    );
    d.write(
        "ghast-counter/hooks.json",
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": count.replace("CLAUDE_PLUGIN_DATA", "PLUGIN_DATA")}]}]}}).to_string(),
    );
    assert_eq!(context("s1", &ghast), "count 1");
    assert_eq!(context("s2", &ghast), "count 1");
}

#[test]
fn shell_bash_is_honoured() {
    let d = Dir::new();
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "shell": "bash",
        "command": r#"if [[ "$BASH_VERSION" == [0-9]* ]]; then echo '{"additionalContext":"ran under bash"}'; fi"#}]}]}});
    let p = plugin(&d, "bashy", &hooks, &[]);
    let run = dispatch(
        &d,
        &p,
        &["--event", "UserPromptSubmit", "--prompt", "hi", "--json"],
    );
    assert_eq!(
        run.json()["verdict"]["additional_contexts"],
        json!(["ran under bash"]),
        "{run:?}"
    );
}

#[test]
fn async_rewake_is_warned_at_load_and_its_wake_request_is_printed() {
    // security-guidance's shape: a background check that exits 2 to wake the agent.
    let d = Dir::new();
    let hooks = json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "asyncRewake": true,
        "command": "echo 'secrets found in the last commit' >&2; exit 2"}]}]}});
    let p = plugin(&d, "security-guidance", &hooks, &[]);
    let run = dispatch(
        &d,
        &p,
        &[
            "--event",
            "PostToolUse",
            "--tool",
            "Bash",
            "--tool-input",
            "{}",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("asyncRewake"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("asks to wake the agent: secrets found in the last commit"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_stop_reentry_cap_follows_the_cli_then_the_settings_then_the_default() {
    // ralph-loop's shape: a Stop hook that always asks for another round.
    let d = Dir::new();
    let hooks = json!({"hooks": {"Stop": [{"hooks": [{"type": "command",
        "command": r#"echo '{"decision":"block","reason":"keep going"}'"#}]}]}});
    let p = plugin(&d, "loop", &hooks, &[]);
    let outcome = |extra: &[&str]| {
        let mut args = vec!["--event", "Stop", "--reentries", "5", "--json"];
        args.extend_from_slice(extra);
        dispatch(&d, &p, &args).json()["outcome"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(outcome(&[]), "reentry_capped", "the main source's cap of 3");
    assert_eq!(
        outcome(&["--stop-reentry-cap", "8"]),
        "continue",
        "Claude Code's 8, on the CLI"
    );
    d.write(".hookbox/settings.json", r#"{"stop": {"reentry_cap": 8}}"#);
    assert_eq!(outcome(&[]), "continue", "from the project settings");
    assert_eq!(
        outcome(&["--stop-reentry-cap", "3"]),
        "reentry_capped",
        "the CLI wins"
    );
}

/// A one-request HTTP server on loopback answering `body` with `status`; returns its URL and
/// a handle yielding the request it received.
fn serve_once(status: &str, body: &str) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut req = Vec::new();
        let mut buf = [0; 4096];
        // Read the head, then the body by its length.
        loop {
            let n = s.read(&mut buf).unwrap();
            req.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&req).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if req.len() >= end + 4 + len {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        s.write_all(response.as_bytes()).unwrap();
        String::from_utf8_lossy(&req).into_owned()
    });
    (url, handle)
}

#[test]
fn http_hooks_post_the_payload_and_their_answer_decides() {
    let d = Dir::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                      "permissionDecisionReason": "blocked by the policy service"}});
    let (url, server) = serve_once("200 OK", &deny.to_string());
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": url,
        "headers": {"Authorization": "Bearer $HOOK_TOKEN"}, "allowedEnvVars": ["HOOK_TOKEN"]}]}]}});
    let p = plugin(&d, "policy-service", &hooks, &[]);
    let run = dispatch(
        &d,
        &p,
        &[
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"ls"}"#,
            "--json",
        ],
    );
    let v = run.json();
    assert_eq!(v["verdict"]["decision"], "deny", "{v}");
    assert_eq!(v["verdict"]["reason"], "blocked by the policy service");
    let request = server.join().unwrap();
    assert!(request.starts_with("POST /hook HTTP/1.1"), "{request}");
    assert!(
        request.contains(r#""tool_name":"Bash""#),
        "the payload is the body: {request}"
    );
    // Nothing listening, `onFailure: "block"`: the action is blocked, as in Claude Code.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", dead.local_addr().unwrap());
    drop(dead);
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": url, "onFailure": "block"}]}]}});
    let p = plugin(&d, "fail-closed", &hooks, &[]);
    let run = dispatch(
        &d,
        &p,
        &[
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"ls"}"#,
            "--json",
        ],
    );
    let v = run.json();
    assert_eq!(v["outcome"], "block", "{v}");
    assert_eq!(v["hooks"][0]["effect"]["failure"]["class"], "http_error");
}

#[test]
fn pre_model_switch_hooks_can_refuse_a_switch() {
    let d = Dir::new();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "deny",
                        "permissionDecisionReason": "a warm cache would be lost"}});
    let hooks = json!({"hooks": {"PreModelSwitch": [{"hooks": [{"type": "command", "command": format!("echo '{answer}'")}]}]}});
    let p = plugin(&d, "cache-keeper", &hooks, &[]);
    let payload = d.write(
        "switch.json",
        &json!({"from_model": "claude-opus-4-5", "to_model": "claude-haiku-4-5"}).to_string(),
    );
    let payload = payload.display().to_string();
    let run = dispatch(
        &d,
        &p,
        &["--event", "PreModelSwitch", "--payload", &payload, "--json"],
    );
    let v = run.json();
    assert_eq!(v["outcome"], "block", "{v}");
    assert_eq!(v["verdict"]["decision"], "deny");
}
