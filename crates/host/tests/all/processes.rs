//! What a command hook sees and what is left of it: environment and placeholders, timeouts that
//! kill the whole process group, output caps, missing scripts, policy switches.

use std::time::Duration;

use hookbox_core::Dialect;
use serde_json::json;

use crate::util::{dispatch, load_project, plugin_data, project, read_number, script, verdict};

#[tokio::test]
async fn environment_and_placeholders() {
    let cmd = r#"echo "root=${CLAUDE_PLUGIN_ROOT} data=$PLUGIN_DATA project=$CLAUDE_PROJECT_DIR pwd=$(pwd)""#;
    let hooks =
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": cmd}]}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(
        &p,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "x"}),
    )
    .await;
    let ctx = verdict(&d)["additional_contexts"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let root = p.path().join("plugin");
    assert!(ctx.contains(&format!("root={}", root.display())), "{ctx}");
    assert!(
        ctx.contains(&format!("project={}", p.path().display())),
        "{ctx}"
    );
    assert!(
        ctx.contains(&format!("pwd={}", p.path().display())),
        "cwd is the session's cwd: {ctx}"
    );
    let data = ctx
        .split("data=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert!(
        data.starts_with(&p.state.path().join("data").display().to_string()),
        "{ctx}"
    );
    assert!(
        !data.starts_with(&p.path().display().to_string()),
        "hookbox's state is never inside the project: {ctx}"
    );
    assert!(std::path::Path::new(data).is_dir(), "PLUGIN_DATA exists");
}

#[tokio::test]
async fn grandchildren_are_killed_at_the_timeout() {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
        "command": "sh -c 'echo $$ > \"$CLAUDE_PLUGIN_DATA/grandchild\"; exec sleep 1000' & sleep 1000 & wait",
        "timeout": 0.5}]}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(&p, json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})).await;
    assert!(d.warnings[0].contains("timed out"), "{:?}", d.warnings);
    assert!(verdict(&d)["decision"].is_null(), "fail-open by default");
    let data = plugin_data(&p);
    let pid = read_number(&data.join("grandchild")) as u32;
    // The kill is sent before dispatch returns; give the kernel a moment to finish the process.
    let mut alive = true;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for init (this sandbox's init does not reap): nothing runs.
        if stat.is_empty() || stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) {
            alive = false;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive, "grandchild {pid} still running");
}

#[tokio::test]
async fn timeout_fails_closed_when_the_rule_says_so() {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
        "command": "sleep 5", "timeout": 0.2, "on_failure": "block"}]}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(&p, json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})).await;
    assert_eq!(verdict(&d)["decision"], "deny");
    assert!(verdict(&d)["reason"].as_str().unwrap().contains("timeout"));
}

#[tokio::test]
async fn output_over_the_cap_is_truncated_and_reported() {
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
        "command": "head -c 3000000 /dev/zero | tr '\\0' a"}]}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(
        &p,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "x"}),
    )
    .await;
    // The runner keeps the first 1 MiB of stdout (and says so); the verdict keeps what one
    // rule may add (256 KiB, the marker and the hook's warnings included), marked as cut.
    let v = verdict(&d);
    let ctx = v["additional_contexts"][0].as_str().unwrap();
    let limit = hookbox_core::limits::DEFAULT_RULE_TEXT_BYTES;
    let cut_at = ctx
        .find(hookbox_core::limits::CUT_MARKER)
        .expect("marked as cut");
    assert!(
        cut_at > limit - 1024 && ctx.len() <= limit,
        "{cut_at}, {}",
        ctx.len()
    );
    assert!(ctx[..cut_at].bytes().all(|b| b == b'a'));
    assert_eq!(
        &ctx[cut_at..],
        format!(
            "…[cut by hookbox: {} more bytes; a rule's text is capped at {limit} bytes (rule_text_bytes)]",
            1024 * 1024 - cut_at
        )
    );
    assert!(
        d.warnings.iter().any(|w| w.contains("truncated")),
        "{:?}",
        d.warnings
    );
    assert!(
        d.warnings.iter().any(|w| w.contains("(rule_text_bytes)")),
        "{:?}",
        d.warnings
    );
}

#[tokio::test]
async fn a_missing_script_is_a_non_blocking_error() {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/missing.sh"},
        {"type": "command", "args": ["/definitely/not/here"]}
    ]}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(&p, json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})).await;
    assert!(verdict(&d)["decision"].is_null());
    // Found missing at load (a warning there, as they fail open): each fails at dispatch,
    // naming the file, instead of running into the shell's exit 127.
    assert!(
        d.warnings[0].contains("spawn_error")
            && d.warnings[0].contains("${CLAUDE_PLUGIN_ROOT}/scripts/missing.sh does not exist"),
        "{:?}",
        d.warnings
    );
    assert!(
        d.warnings[1].contains("spawn_error")
            && d.warnings[1].contains("/definitely/not/here does not exist"),
        "{:?}",
        d.warnings
    );
}

#[tokio::test]
async fn exec_form_args_and_scripts() {
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "args": ["/bin/echo", "root", "${CLAUDE_PLUGIN_ROOT}"]}]}]}}),
    );
    let d = dispatch(
        &p,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "x"}),
    )
    .await;
    assert_eq!(
        verdict(&d)["additional_contexts"][0],
        format!("root {}", p.path().join("plugin").display())
    );
    let s = script(&p, "ctx.sh", "cat >/dev/null; echo from-script");
    let p2 = project(
        Dialect::Claude,
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": s.display().to_string()}]}]}}),
    );
    let d = dispatch(
        &p2,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "x"}),
    )
    .await;
    assert_eq!(verdict(&d)["additional_contexts"], json!(["from-script"]));
}

#[tokio::test]
async fn native_commands_are_refused_at_load_when_the_policy_forbids_them() {
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch \"$CLAUDE_PROJECT_DIR/ran\""}]}]}});
    let p = load_project(Dialect::Claude, hooks, &[], |pol| {
        pol.allow_native_commands = false
    });
    // A located load error that says why; the rule is kept, failing…
    let d = &p.report.diagnostics[0];
    assert_eq!(
        d.json_path.as_deref(),
        Some("hooks.UserPromptSubmit[0].hooks[0]")
    );
    assert!(d.line.is_some());
    assert!(
        d.message.contains("allow_native_commands = false"),
        "{}",
        d.message
    );
    assert_eq!(p.report.rules.len(), 1);
    // …so it matches, fails under its fail mode, and nothing runs.
    let d = dispatch(
        &p,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "x"}),
    )
    .await;
    assert_eq!(d.matched_rule_count, 1);
    let failure = d.reports[0].effect.failure.as_ref().unwrap();
    assert!(
        failure.message.contains("allow_native_commands = false"),
        "{failure:?}"
    );
    assert!(!p.path().join("ran").exists());
}

#[tokio::test]
async fn payload_on_stdin_is_the_dialect_shape() {
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"type": "command", "command": "cat"}]}});
    let p = project(Dialect::Agentao, hooks);
    let d = dispatch(
        &p,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "hello"}),
    )
    .await;
    // Agentao's envelope is JSON; JSON stdout is parsed as an answer, so read the raw output.
    let out: serde_json::Value =
        serde_json::from_str(d.reports[0].output.as_deref().unwrap()).unwrap();
    assert_eq!(out["event"], "UserPromptSubmit");
    assert_eq!(out["data"]["userMessage"], "hello");
}
