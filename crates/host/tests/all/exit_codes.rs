//! Every exit-code path of every dialect, through real `sh -c` processes.

use hookbox_core::Dialect;
use serde_json::json;

use crate::util::{dispatch, project, verdict};

fn pre_tool(command: &str) -> serde_json::Value {
    json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}})
}

fn prompt(text: &str) -> serde_json::Value {
    json!({"hook_event_name": "UserPromptSubmit", "prompt": text})
}

fn one(event: &str, matcher: Option<&str>, command: &str) -> serde_json::Value {
    let mut group = json!({"hooks": [{"type": "command", "command": command, "timeout": 10}]});
    if let Some(m) = matcher {
        group["matcher"] = json!(m);
    }
    json!({"hooks": {event: [group]}})
}

#[tokio::test]
async fn claude_and_agentao_exit_codes() {
    for dialect in [Dialect::Claude, Dialect::Agentao] {
        // 0 + plain text on a prompt: context.
        let p = project(
            dialect,
            one("UserPromptSubmit", None, "echo 'Use staging.'"),
        );
        let d = dispatch(&p, prompt("deploy")).await;
        assert_eq!(
            verdict(&d)["additional_contexts"],
            json!(["Use staging."]),
            "{dialect}"
        );
        // 0 + JSON: structured.
        let p = project(
            dialect,
            one(
                "PreToolUse",
                Some("Bash"),
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}'"#,
            ),
        );
        let d = dispatch(&p, pre_tool("ls")).await;
        assert_eq!(verdict(&d)["decision"], "ask", "{dialect}");
        // 2: blocking error with stderr.
        let p = project(
            dialect,
            one("PreToolUse", Some("Bash"), "echo 'no rm' >&2; exit 2"),
        );
        let d = dispatch(&p, pre_tool("rm -rf /")).await;
        assert_eq!(verdict(&d)["decision"], "deny", "{dialect}");
        assert_eq!(verdict(&d)["reason"], "no rm");
        // 1: non-blocking; the tool proceeds with a warning.
        let p = project(
            dialect,
            one("PreToolUse", Some("Bash"), "echo oops >&2; exit 1"),
        );
        let d = dispatch(&p, pre_tool("ls")).await;
        assert!(verdict(&d)["decision"].is_null());
        assert!(
            d.warnings[0].contains("non-blocking status code 1: oops"),
            "{:?}",
            d.warnings
        );
        // 1 with a JSON object: the JSON decides.
        let p = project(
            dialect,
            one(
                "PreToolUse",
                Some("Bash"),
                r#"echo '{"hookSpecificOutput":{"permissionDecision":"deny"}}'; exit 1"#,
            ),
        );
        assert_eq!(
            verdict(&dispatch(&p, pre_tool("ls")).await)["decision"],
            "deny"
        );
    }
}

#[tokio::test]
async fn simple_exit_codes() {
    let p = project(
        Dialect::Simple,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "command": "echo dangerous >&2; exit 1"}]}}),
    );
    let d = dispatch(&p, pre_tool("rm -rf /")).await;
    assert_eq!(verdict(&d)["decision"], "deny");
    assert_eq!(verdict(&d)["reason"], "dangerous");
    let p = project(
        Dialect::Simple,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "command": "echo 'audited' >&2; exit 2"}]}}),
    );
    let d = dispatch(&p, pre_tool("ls")).await;
    assert_eq!(verdict(&d)["additional_contexts"], json!(["audited"]));
    // The simple dialect hands the tool input in HOOK_TOOL_INPUT and reads JSON on exit 0.
    let p = project(
        Dialect::Simple,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "command":
            r#"case "$HOOK_TOOL_INPUT" in *'"ls"'*) echo '{"updatedInput":{"command":"ls -la"},"permissionDecision":"allow","additionalContext":["sandboxed"]}';; esac"#}]}}),
    );
    let d = dispatch(&p, pre_tool("ls")).await;
    assert_eq!(verdict(&d)["updated_input"], json!({"command": "ls -la"}));
    assert_eq!(verdict(&d)["additional_contexts"], json!(["sandboxed"]));
    let p = project(
        Dialect::Simple,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "command": "exit 7"}]}}),
    );
    assert!(dispatch(&p, pre_tool("ls")).await.warnings[0].contains("exit code 7"));
}

#[tokio::test]
async fn ghast_exit_codes() {
    let p = project(
        Dialect::Ghast,
        one("UserPromptSubmit", None, "echo \"ghast=$GHAST_HOOK\""),
    );
    let d = dispatch(&p, prompt("x")).await;
    assert_eq!(verdict(&d)["additional_contexts"], json!(["ghast=true"]));
    let p = project(
        Dialect::Ghast,
        one(
            "UserPromptSubmit",
            None,
            r#"echo '{"decision":"block","reason":"unread"}'; exit 2"#,
        ),
    );
    let d = dispatch(&p, prompt("x")).await;
    assert_eq!(verdict(&d)["blocking_error"], "hook exited with code 2");
    let p = project(
        Dialect::Ghast,
        one("UserPromptSubmit", None, "echo '{broken'; exit 1"),
    );
    let d = dispatch(&p, prompt("x")).await;
    assert!(verdict(&d)["blocking_error"].is_null() && d.warnings.len() == 1);
    let p = project(
        Dialect::Ghast,
        one("UserPromptSubmit", None, "echo '{broken'"),
    );
    let d = dispatch(&p, prompt("x")).await;
    assert!(
        verdict(&d)["blocking_error"]
            .as_str()
            .unwrap()
            .starts_with("lifecycle failure")
    );
    let p = project(
        Dialect::Ghast,
        one(
            "UserPromptSubmit",
            None,
            r#"echo '{"continue":false,"stopReason":"pick an env"}'"#,
        ),
    );
    let d = dispatch(&p, prompt("x")).await;
    assert_eq!(d.user_turn().unwrap().text(), "[Hook stopped] pick an env");
}

#[tokio::test]
async fn plain_text_versus_json_and_updated_input() {
    let p = project(
        Dialect::Claude,
        one("PreToolUse", Some("Bash"), "echo 'just a log line'"),
    );
    let d = dispatch(&p, pre_tool("ls")).await;
    assert!(
        verdict(&d)["additional_contexts"]
            .as_array()
            .unwrap()
            .is_empty(),
        "plain text is not context on PreToolUse"
    );
    assert_eq!(d.reports[0].output.as_deref(), Some("just a log line\n"));
    let p = project(
        Dialect::Claude,
        one(
            "PreToolUse",
            Some("Bash"),
            r#"python3 -c 'import json,sys; e=json.load(sys.stdin); print(json.dumps({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":e["tool_input"]["command"]+" --dry-run"}}}))'"#,
        ),
    );
    let d = dispatch(&p, pre_tool("make deploy")).await;
    assert_eq!(
        verdict(&d)["updated_input"],
        json!({"command": "make deploy --dry-run"})
    );
}
