//! `hookbox hook --agent NAME` as each agent calls it (issue 20): every payload fixture under
//! `tests/agents/<agent>/` — one per event the agent has, written from its documentation and
//! source (each file says where from) — goes through the CLI on stdin; a probe plugin records
//! what its hooks were handed (the event in Claude Code's vocabulary) and the answer is checked
//! against what the agent must receive. The `guard-rm-rf` fixtures run the guard plugins of
//! `examples/` (native and wasm) and must deny `rm -rf /` in every agent's protocol.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::util::{Dir, Run, examples_with_components, repo_root};

/// Runs `hookbox ARGS…` with `stdin`, its state in `dir`, outside any agent's environment —
/// with trust `off` in the user's settings: these tests are about the agents' protocols, and
/// under `warn` the first event of a session also tells the user which plugins are not approved
/// (tested in `hook_hostile::an_unapproved_plugin_is_said_to_the_user_once_per_session`).
pub(crate) fn run_with_stdin(dir: &Dir, args: &[String], stdin: &[u8]) -> Run {
    let config = dir.state().join("config");
    let _ = std::fs::create_dir_all(config.join("hookbox"));
    let _ = std::fs::write(config.join("hookbox/settings.json"), r#"{"trust": "off"}"#);
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(args)
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", &config)
        .env("NO_COLOR", "1")
        .env("HOOKBOX_STATE_DIR", dir.state())
        .env("HOOKBOX_CACHE_DIR", dir.state().join("cache"))
        .env_remove("HOOKBOX_LOG")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("CURSOR_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hookbox");
    // A hook that never reads stdin may close it first.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let out = child.wait_with_output().expect("wait");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A plugin with one rule per hookbox event that writes the payload it is handed to
/// `<record>/<Event>.json` and says nothing.
fn probe(d: &Dir, record: &Path) -> PathBuf {
    let mut hooks = serde_json::Map::new();
    for e in hookbox_core::EventName::ALL {
        let cmd = format!("cat > '{}/{}.json'", record.display(), e.as_str());
        hooks.insert(
            e.as_str().into(),
            json!([{"hooks": [{"type": "command", "command": cmd, "timeout": 10}]}]),
        );
    }
    d.write("probe/.claude-plugin/plugin.json", r#"{"name": "probe"}"#);
    d.write(
        "probe/hooks/hooks.json",
        &json!({ "hooks": hooks }).to_string(),
    );
    d.path().join("probe")
}

/// `v` at the dotted `path`.
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Whether `want` is contained in `got` (objects by key, everything else equal).
fn contains(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| g.get(k).is_some_and(|gv| contains(gv, wv))),
        _ => got == want,
    }
}

/// Checks `run` against a fixture's `answer`.
fn check_answer(name: &str, run: &Run, answer: &Value) {
    let ctx = || format!("{name}: {run:?}");
    assert_eq!(
        run.code,
        answer["exit"].as_i64().map(|c| c as i32),
        "exit code, {}",
        ctx()
    );
    match &answer["stdout"] {
        Value::Null => {}
        Value::String(s) if s.is_empty() => {
            assert!(run.stdout.trim().is_empty(), "empty stdout, {}", ctx())
        }
        want => {
            let got: Value = serde_json::from_str(&run.stdout)
                .unwrap_or_else(|e| panic!("stdout not JSON ({e}), {}", ctx()));
            assert_eq!(&got, want, "stdout, {}", ctx());
        }
    }
    if let Some(has) = answer["stdout_has"].as_object() {
        let got: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("stdout not JSON ({e}), {}", ctx()));
        for (path, want) in has {
            let v = at(&got, path).unwrap_or_else(|| panic!("no `{path}` in stdout, {}", ctx()));
            assert!(
                want.is_null() || v == want,
                "`{path}` is {v}, not {want}, {}",
                ctx()
            );
        }
    }
    if let Some(says) = answer["says"].as_str() {
        assert!(
            run.stdout.contains(says) || run.stderr.contains(says),
            "`{says}` said nowhere, {}",
            ctx()
        );
    }
}

/// A fixture with its placeholder project folder (`/work/project`) made `project`, a folder
/// that exists (command hooks run in the payload's cwd).
fn load(file: &Path, project: &Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap();
    serde_json::from_str(&text.replace("/work/project", &project.display().to_string())).unwrap()
}

/// Every fixture file of every agent.
fn fixtures() -> Vec<(String, PathBuf)> {
    let root = repo_root().join("tests/agents");
    let mut out = Vec::new();
    for agent in std::fs::read_dir(&root).unwrap().flatten() {
        if !agent.path().is_dir() {
            continue;
        }
        let name = agent.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(agent.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|x| x == "json") {
                out.push((name.clone(), f.path()));
            }
        }
    }
    out.sort();
    out
}

fn hook_args(agent: &str, fx: &Value, plugins: &[PathBuf], project: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "hook".into(),
        "--agent".into(),
        agent.into(),
        "--project-dir".into(),
        project.display().to_string(),
    ];
    if let Some(e) = fx["event"].as_str() {
        args.push("--event".into());
        args.push(e.into());
    }
    for p in plugins {
        args.push("--plugin".into());
        args.push(p.display().to_string());
    }
    args
}

#[test]
fn every_agents_events_reach_hooks_in_claude_codes_vocabulary() {
    let d = Dir::new();
    let record = d.path().join("record");
    let probe = probe(&d, &record);
    let mut seen_agents = std::collections::BTreeSet::new();
    let mut count = 0;
    for (agent, file) in fixtures() {
        let fx = load(&file, d.path());
        if fx.get("plugins").is_some() {
            continue;
        }
        let name = format!("{agent}/{}", file.file_name().unwrap().to_string_lossy());
        assert!(
            fx["source"].as_str().is_some_and(|s| !s.is_empty()),
            "{name} says where it comes from"
        );
        let _ = std::fs::remove_dir_all(&record);
        std::fs::create_dir_all(&record).unwrap();
        let args = hook_args(&agent, &fx, std::slice::from_ref(&probe), d.path());
        let run = run_with_stdin(&d, &args, fx["payload"].to_string().as_bytes());
        check_answer(&name, &run, &fx["answer"]);
        if let Some(event) = fx["hookbox_event"].as_str() {
            let seen = std::fs::read_to_string(record.join(format!("{event}.json")))
                .unwrap_or_else(|e| panic!("{name}: no {event} hook ran ({e}): {run:?}"));
            let seen: Value = serde_json::from_str(&seen).unwrap();
            assert!(
                contains(&seen, &fx["sees"]),
                "{name}: hooks saw {seen:#}\nnot {:#}",
                fx["sees"]
            );
        }
        seen_agents.insert(agent);
        count += 1;
    }
    assert_eq!(
        seen_agents.len(),
        8,
        "a fixture folder per agent: {seen_agents:?}"
    );
    assert!(count > 100, "{count} fixtures");
}

#[test]
fn the_example_guards_deny_rm_rf_in_every_agents_protocol() {
    let d = Dir::new();
    let examples = examples_with_components(&d);
    let mut agents = 0;
    for (agent, file) in fixtures() {
        let fx = load(&file, d.path());
        let Some(plugins) = fx["plugins"].as_array() else {
            continue;
        };
        for plugin in plugins {
            let dir = examples.join("plugins").join(plugin.as_str().unwrap());
            let args = hook_args(&agent, &fx, &[dir], d.path());
            let run = run_with_stdin(&d, &args, fx["payload"].to_string().as_bytes());
            check_answer(&format!("{agent} with {plugin}"), &run, &fx["answer"]);
        }
        agents += 1;
    }
    assert_eq!(agents, 8);
}

/// A plugin whose one PreToolUse rule never answers in time, failing open or closed.
fn slow_plugin(d: &Dir, name: &str, on_failure: &str) -> PathBuf {
    d.write(
        &format!("{name}/hooks/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "sleep 30", "timeout": 1, "onFailure": on_failure}
        ]}]}})
        .to_string(),
    );
    d.path().join(name)
}

#[test]
fn a_hook_that_times_out_blocks_when_its_rule_fails_closed_and_proceeds_otherwise() {
    let d = Dir::new();
    let closed = slow_plugin(&d, "closed", "block");
    let open = slow_plugin(&d, "open", "allow");
    // Each agent's shell call, from its guard fixture (with a harmless command).
    for (agent, file) in fixtures() {
        if !file.ends_with("guard-rm-rf.json") {
            continue;
        }
        let mut fx = load(&file, d.path());
        let payload = fx["payload"].to_string().replace("rm -rf /", "ls");
        fx["payload"] = serde_json::from_str(&payload).unwrap();
        let run = run_with_stdin(
            &d,
            &hook_args(&agent, &fx, std::slice::from_ref(&closed), d.path()),
            payload.as_bytes(),
        );
        let mut denied = fx["answer"].clone();
        denied["says"] = json!("timeout");
        if agent == "claude" {
            // A rule that failed closed also exits 2, which any Claude Code reads as a block.
            denied["exit"] = json!(2);
        }
        check_answer(&format!("{agent} fail-closed"), &run, &denied);
        let run = run_with_stdin(
            &d,
            &hook_args(&agent, &fx, std::slice::from_ref(&open), d.path()),
            payload.as_bytes(),
        );
        let proceeds = match agent.as_str() {
            // The agent's non-blocking error: the call goes on, the user sees it failed.
            "claude" | "codex" | "kimi" => run.code == Some(1) && run.stdout.trim().is_empty(),
            "gemini" | "vscode" => {
                run.code == Some(0)
                    && run.json()["systemMessage"]
                        .as_str()
                        .is_some_and(|m| m.contains("timeout"))
            }
            "cursor" | "copilot" => run.code == Some(0) && run.json() == json!({}),
            "windsurf" => run.code == Some(0) && run.stdout.is_empty(),
            other => panic!("{other}"),
        };
        assert!(proceeds, "{agent} fail-open: {run:?}");
        assert!(
            run.stderr.contains("timeout") || run.stdout.contains("timeout"),
            "{agent}: {run:?}"
        );
    }
}

#[test]
fn hookbox_errors_answer_in_the_agents_protocol_as_on_error_says() {
    let d = Dir::new();
    let missing = d.path().join("no-such-plugin");
    let payload = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}});
    let base = |extra: &[&str]| {
        let mut a: Vec<String> = ["hook", "--agent", "gemini", "--plugin"]
            .map(String::from)
            .to_vec();
        a.push(missing.display().to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // A plugin that is not there: fail-open by default (Gemini shows it and proceeds) …
    let run = run_with_stdin(&d, &base(&[]), payload.to_string().as_bytes());
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.json()["systemMessage"]
            .as_str()
            .unwrap()
            .contains("no-such-plugin"),
        "{run:?}"
    );
    assert!(run.json().get("decision").is_none());
    // … and Gemini's deny with --on-error block.
    let run = run_with_stdin(
        &d,
        &base(&["--on-error", "block"]),
        payload.to_string().as_bytes(),
    );
    assert_eq!(run.json()["decision"], "deny", "{run:?}");
    // A payload that is not JSON, under Windsurf with --on-error block: exit 2, the reason on stderr.
    let guard = d.path().join("g");
    d.write("g/hooks/hooks.json", r#"{"hooks": {}}"#);
    let args: Vec<String> = vec![
        "hook".into(),
        "--agent".into(),
        "windsurf".into(),
        "--plugin".into(),
        guard.display().to_string(),
        "--on-error".into(),
        "block".into(),
    ];
    let run = run_with_stdin(&d, &args, b"not json");
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("not JSON"), "{run:?}");
    // A payload over the size limit is refused unread, in the agent's protocol.
    let big = vec![b' '; hookbox_agents::limits::MAX_PAYLOAD_BYTES + 10];
    let args: Vec<String> = vec![
        "hook".into(),
        "--agent".into(),
        "claude".into(),
        "--plugin".into(),
        guard.display().to_string(),
    ];
    let run = run_with_stdin(&d, &args, &big);
    assert_eq!(
        run.code,
        Some(1),
        "Claude Code's non-blocking error: {run:?}"
    );
    assert!(run.stderr.contains("over 16777216 bytes"), "{run:?}");
}

#[test]
fn vs_code_running_copilots_file_is_answered_as_vs_code() {
    // VS Code runs .github/hooks/*.json entries written for Copilot: its payload names the event
    // (its own spelling) and is answered in VS Code's shape.
    let d = Dir::new();
    let examples = examples_with_components(&d);
    let payload = json!({"hookEventName": "PreToolUse", "sessionId": "s", "tool_name": "run_in_terminal", "tool_input": {"command": "rm -rf /"}});
    let args: Vec<String> = [
        "hook",
        "--agent",
        "copilot",
        "--event",
        "preToolUse",
        "--plugin",
    ]
    .map(String::from)
    .into_iter()
    .chain([examples.join("plugins/shell-guard").display().to_string()])
    .collect();
    let run = run_with_stdin(&d, &args, payload.to_string().as_bytes());
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{run:?}"
    );
}

#[test]
fn a_rewrite_reaches_each_agent_in_its_own_keys() {
    // A plugin that rewrites every file read to another path.
    let d = Dir::new();
    d.write(
        "rw/hooks/hooks.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command",
            "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"updatedInput\":{\"file_path\":\"/safe.txt\"}}}'"}]}]}})
        .to_string(),
    );
    let plugin = d.path().join("rw");
    let cases = [
        (
            "copilot",
            Some("preToolUse"),
            json!({"sessionId": "s", "toolName": "view", "toolArgs": {"path": "/etc/shadow"}}),
            "modifiedArgs",
            json!({"path": "/safe.txt"}),
        ),
        (
            "vscode",
            None,
            json!({"hookEventName": "PreToolUse", "tool_name": "read_file", "tool_input": {"filePath": "/etc/shadow"}}),
            "hookSpecificOutput.updatedInput",
            json!({"filePath": "/safe.txt"}),
        ),
        (
            "cursor",
            None,
            json!({"hook_event_name": "preToolUse", "conversation_id": "c", "tool_name": "Read", "tool_input": {"file_path": "/etc/shadow"}}),
            "updated_input",
            json!({"file_path": "/safe.txt"}),
        ),
    ];
    for (agent, event, payload, path, want) in cases {
        let mut args: Vec<String> = vec![
            "hook".into(),
            "--agent".into(),
            agent.into(),
            "--plugin".into(),
            plugin.display().to_string(),
        ];
        if let Some(e) = event {
            args.extend(["--event".to_string(), e.to_string()]);
        }
        let run = run_with_stdin(&d, &args, payload.to_string().as_bytes());
        assert_eq!(at(&run.json(), path), Some(&want), "{agent}: {run:?}");
    }
    // Windsurf cannot rewrite: a deny naming the rewrite.
    let args: Vec<String> = vec![
        "hook".into(),
        "--agent".into(),
        "windsurf".into(),
        "--plugin".into(),
        plugin.display().to_string(),
    ];
    let payload = json!({"agent_action_name": "pre_read_code", "trajectory_id": "t", "tool_info": {"file_path": "/etc/shadow"}});
    let run = run_with_stdin(&d, &args, payload.to_string().as_bytes());
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("/safe.txt") && run.stderr.contains("cannot rewrite"),
        "{run:?}"
    );
}
