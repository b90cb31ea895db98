//! `hookbox hook` against what the real agents and a hostile checkout showed (issue 28): a
//! payload hookbox cannot read still meets the fail modes of the rules it would have matched; a
//! broken `.hookbox/settings.json`, a missing current folder and a command line this hookbox does
//! not understand are answered in the agent's protocol; a lone surrogate escape is read; the Stop
//! re-entry cap holds for agents whose payload says only whether the turn was re-entered.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::hook::run_with_stdin;
use crate::util::{Dir, Run};

/// A guard on `Bash` that denies `rm -rf`, failing closed or open as `on_failure` says.
fn guard(d: &Dir, name: &str, on_failure: &str) -> PathBuf {
    d.write(
        &format!("{name}/hooks/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command",
            "command": "grep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; } || exit 0",
            "timeout": 10, "onFailure": on_failure
        }]}]}})
        .to_string(),
    );
    d.path().join(name)
}

fn args(agent: &str, plugin: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "hook".into(),
        "--agent".into(),
        agent.into(),
        "--plugin".into(),
        plugin.display().to_string(),
    ];
    a.extend(extra.iter().map(|s| (*s).to_owned()));
    a
}

/// A Claude Code `PreToolUse` payload of `Bash` in `cwd` whose input nests `levels` deep.
fn deep_payload(cwd: &std::path::Path, levels: usize) -> String {
    format!(
        r#"{{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": {}, "tool_name": "Bash", "tool_input": {{"command": "rm -rf /", "x": {}1{}}}}}"#,
        json!(cwd),
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

fn denied(run: &Run) -> bool {
    serde_json::from_str::<Value>(run.stdout.trim())
        .is_ok_and(|v| v["hookSpecificOutput"]["permissionDecision"] == "deny")
}

#[test]
fn a_payload_too_deep_or_too_large_meets_each_matching_rules_fail_mode() {
    let d = Dir::new();
    let closed = guard(&d, "closed", "block");
    let open = guard(&d, "open", "allow");
    // 70 levels: refused before any rule runs — and a fail-closed Bash guard then blocks.
    let run = run_with_stdin(
        &d,
        &args("claude", &closed, &[]),
        deep_payload(d.path(), 70).as_bytes(),
    );
    assert!(denied(&run), "{run:?}");
    assert!(run.stdout.contains("fails closed"), "{run:?}");
    // A fail-open guard: the call proceeds, the failure is said (Claude's non-blocking error).
    let run = run_with_stdin(
        &d,
        &args("claude", &open, &[]),
        deep_payload(d.path(), 70).as_bytes(),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("could not run"), "{run:?}");
    // Over 16 MiB, in Gemini's protocol: the fail-closed guard of `Bash` blocks
    // `run_shell_command`.
    let mut big = String::from(
        r#"{"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /", "pad": ""#,
    );
    big.push_str(&"x".repeat(17 << 20));
    big.push_str(r#""}}"#);
    let run = run_with_stdin(&d, &args("gemini", &closed, &[]), big.as_bytes());
    assert!(
        run.stdout.contains(r#""decision":"deny""#),
        "{}",
        &run.stderr
    );
    // A guard of another tool does not make a Bash call fail: no rule would have run.
    d.write(
        "read-guard/hooks/hooks.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "true", "onFailure": "block"}]}]}}).to_string(),
    );
    let run = run_with_stdin(
        &d,
        &args("claude", &d.path().join("read-guard"), &[]),
        deep_payload(d.path(), 70).as_bytes(),
    );
    assert!(!denied(&run), "{run:?}");
    assert!(run.stderr.contains("no rule would have run"), "{run:?}");
}

#[test]
fn a_lone_surrogate_in_the_input_still_reaches_the_guard() {
    let d = Dir::new();
    let g = guard(&d, "g", "allow");
    // What JSON.stringify writes for a string cut inside an emoji.
    let payload = format!(
        r#"{{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": {}, "tool_name": "Bash", "tool_input": {{"command": "rm -rf / #\ud83d"}}}}"#,
        json!(d.path())
    );
    let run = run_with_stdin(&d, &args("claude", &g, &[]), payload.as_bytes());
    assert!(denied(&run), "{run:?}");
}

#[test]
fn a_broken_project_settings_file_is_ignored_with_a_warning() {
    for settings in ["{", r#"{"trust": "OFF"}"#, r#"{"trust": 3}"#] {
        let d = Dir::new();
        let g = guard(&d, "g", "allow");
        d.write(".hookbox/settings.json", settings);
        let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": d.path(), "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
        let run = run_with_stdin(
            &d,
            &args(
                "claude",
                &g,
                &["--project-dir", &d.path().display().to_string()],
            ),
            payload.to_string().as_bytes(),
        );
        assert!(denied(&run), "{settings}: the guard still runs: {run:?}");
        assert!(
            run.stderr.contains("project settings are ignored"),
            "{run:?}"
        );
    }
}

#[test]
fn a_missing_current_folder_is_no_reason_not_to_guard() {
    let d = Dir::new();
    let g = guard(&d, "g", "allow");
    let gone = d.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": d.path(), "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    // The agent's folder removed under the hook (a worktree deleted mid-session).
    let script = format!(
        "cd '{}' && rmdir '{}' && exec '{}' hook --agent claude --plugin '{}'",
        gone.display(),
        gone.display(),
        env!("CARGO_BIN_EXE_hookbox"),
        g.display()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .env("HOOKBOX_STATE_DIR", d.state())
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_command_line_this_hookbox_does_not_understand_is_answered_in_the_agents_protocol() {
    let d = Dir::new();
    let g = guard(&d, "g", "allow");
    let payload = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}});
    // Fail-open: Gemini's "a hook failed, go on", never clap's exit 2 (which Gemini would read
    // as a deny of every call).
    let run = run_with_stdin(
        &d,
        &args(
            "gemini",
            &g,
            &["--event", "BeforeTool", "--from-a-newer-hookbox"],
        ),
        payload.to_string().as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.json()["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("does not understand")),
        "{run:?}"
    );
    // Fail-closed entries stay closed.
    let run = run_with_stdin(
        &d,
        &args(
            "gemini",
            &g,
            &["--event", "BeforeTool", "--on-error", "block", "--bogus"],
        ),
        payload.to_string().as_bytes(),
    );
    assert_eq!(run.json()["decision"], "deny", "{run:?}");
}

/// A Stop hook that always asks to go on, driven the way Codex drives it: `stop_hook_active` is
/// only a flag, so the count is hookbox's. The loop ends after the cap (3) continuations.
#[test]
fn the_stop_cap_holds_when_the_agent_says_only_whether_the_turn_was_reentered() {
    let d = Dir::new();
    d.write(
        "loop/hooks/hooks.json",
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": "echo '{\"decision\": \"block\", \"reason\": \"keep going\"}'"}]}]}})
        .to_string(),
    );
    let plugin = d.path().join("loop");
    for (agent, turn) in [("codex", "t1"), ("claude", "")] {
        let mut continued = 0;
        let mut active = false;
        for _ in 0..10 {
            let mut payload = json!({"hook_event_name": "Stop", "session_id": format!("s-{agent}"),
                "cwd": d.path(), "stop_hook_active": active, "last_assistant_message": "done"});
            if !turn.is_empty() {
                payload["turn_id"] = json!(turn);
            }
            let run = run_with_stdin(
                &d,
                &args(agent, &plugin, &[]),
                payload.to_string().as_bytes(),
            );
            if !run.stdout.contains("keep going") {
                break;
            }
            continued += 1;
            active = true;
        }
        assert_eq!(continued, 3, "{agent}");
        // A new turn (the agent says it was not re-entered) starts again.
        let payload = json!({"hook_event_name": "Stop", "session_id": format!("s-{agent}"),
            "cwd": d.path(), "stop_hook_active": false, "turn_id": "t2"});
        let run = run_with_stdin(
            &d,
            &args(agent, &plugin, &[]),
            payload.to_string().as_bytes(),
        );
        assert!(run.stdout.contains("keep going"), "{agent}: {run:?}");
    }
}

/// An installed entry whose plugin folder was moved: the failure names the plugin and the fix
/// (issue 33 item 5), in the agent's protocol, as the entry's `--on-error` says.
#[test]
fn a_moved_plugin_is_named_with_the_way_out() {
    let d = Dir::new();
    let gone = d.path().join("moved-plugin");
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": d.path(),
        "tool_name": "Read", "tool_input": {"file_path": "a.txt"}});
    for (mode, deny) in [("block", true), ("allow", false)] {
        let run = run_with_stdin(
            &d,
            &args("claude", &gone, &["--on-error", mode]),
            payload.to_string().as_bytes(),
        );
        assert_eq!(denied(&run), deny, "{mode}: {run:?}");
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(said.contains("is not there any more"), "{mode}: {run:?}");
        assert!(said.contains("moved-plugin"), "{mode}: {run:?}");
        assert!(
            said.contains("hookbox uninstall --agent claude --plugin"),
            "{mode}: {run:?}"
        );
    }
}

/// Under trust `warn` a plugin that is not approved runs, and the agent's user hears of it where
/// the agent shows hook output — Claude Code's `systemMessage` — once per session, not on every
/// event (issue 33 item 3).
#[test]
fn an_unapproved_plugin_is_said_to_the_user_once_per_session() {
    let d = Dir::new();
    let g = guard(&d, "g", "allow");
    let run = |session: &str| -> Value {
        let payload = json!({"hook_event_name": "PreToolUse", "session_id": session,
            "cwd": d.path(), "tool_name": "Bash", "tool_input": {"command": "ls"}});
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookbox"))
            .args(args("claude", &g, &[]))
            .current_dir(d.path())
            .env("HOOKBOX_STATE_DIR", d.state())
            // No user settings: trust is `warn`, and nothing is approved in the fresh store.
            .env("XDG_CONFIG_HOME", d.path().join("config"))
            .env_remove("HOOKBOX_LOG")
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
    };
    let first = run("s1");
    let said = first["systemMessage"].as_str().unwrap_or_default();
    assert!(said.contains("hookbox: trust:"), "{first}");
    assert!(said.contains("hookbox trust add"), "{first}");
    assert_eq!(run("s1").get("systemMessage"), None, "once per session");
    assert!(
        run("s2")["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("hookbox: trust:")),
        "a new session hears it again"
    );
}
