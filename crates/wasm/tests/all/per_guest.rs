//! One test per guest component of `hookbox_test_artifacts`, named after it, each running the
//! guest through the runtime on a real event and asserting its answer.
//! `foreach_guest!(assert_test_exists)` makes a guest without such a test a compile error (the
//! style of wasmtime's test-programs); the JavaScript/Python guests' tests live in
//! `polyglot.rs` and are brought in by the glob import below.

use std::fs;

use hookbox_core::Dialect;
use hookbox_core::output::{FailureClass, Interpretation, PermissionDecision, RawOutput};
use hookbox_core::rule::{Access, FailMode};
use hookbox_test_artifacts::{
    CHAOS, CLI_GUARD, COMPACTION_AUDIT, CONTEXT_INJECTION, EMPTY_ANSWER_RESCUE, NET, NOOP,
    NOOP_CLI, RUNAWAY, SHELL_GUARD, foreach_guest,
};
use hookbox_wasm::{MountDir, ResolvedMount, WasmOutput, WasmRun};
use serde_json::{Value, json};

use crate::common::{event_from, run_file, runtime, tmp_dir, typed};
// Brings the polyglot guests' tests into scope for `assert_test_exists`.
use crate::polyglot::*;

/// Compiles only if a test function named after the guest is in scope here.
macro_rules! assert_test_exists {
    ($name:ident) => {
        #[expect(unused_imports, reason = "only checks that the test function exists")]
        use self::$name as _;
    };
}
foreach_guest!(assert_test_exists);

/// A `PreToolUse` event for `Bash` running `command`.
fn bash(command: &str) -> hookbox_core::Event {
    event_from(json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": command, "timeout": 5}}))
}

fn prompt(text: &str) -> hookbox_core::Event {
    event_from(json!({"hook_event_name": "UserPromptSubmit", "prompt": text}))
}

/// A command guest's exit code and output.
fn command(run: WasmRun) -> RawOutput {
    match run.output {
        WasmOutput::Command(out) => out,
        other @ WasmOutput::Typed(_) => panic!("expected a command's output, got {other:?}"),
    }
}

#[tokio::test]
async fn noop() {
    let r = typed(run_file(NOOP, &bash("ls"), "null", &[]).await);
    assert_eq!(r, Default::default());
}

#[tokio::test]
async fn noop_cli() {
    let out = command(run_file(NOOP_CLI, &bash("ls"), "null", &[]).await.unwrap());
    assert_eq!((out.exit_code, out.stdout.as_str()), (Some(0), ""));
}

#[tokio::test]
async fn context_injection() {
    let config = r#"{"context":"Project ATLAS. Prefer docs/atlas/."}"#;
    let r = typed(run_file(CONTEXT_INJECTION, &prompt("hi"), config, &[]).await);
    assert_eq!(
        r.additional_contexts,
        ["Project ATLAS. Prefer docs/atlas/."]
    );
    assert_eq!((r.permission_decision, r.updated_input), (None, None));
    // A rule that would inject nothing is a failed hook, not a silent pass.
    let f = run_file(CONTEXT_INJECTION, &prompt("hi"), r#"{"context":" "}"#, &[])
        .await
        .unwrap_err();
    assert_eq!(f.class(), FailureClass::Trap);
    assert!(
        f.failure.message.contains("config.context is empty"),
        "{}",
        f.failure.message
    );
}

#[tokio::test]
async fn shell_guard() {
    let r = typed(run_file(SHELL_GUARD, &bash("rm -rf /"), "null", &[]).await);
    assert_eq!(r.permission_decision, Some(PermissionDecision::Deny));
    assert_eq!(
        r.permission_decision_reason.as_deref(),
        Some("shell-guard: the command recursively deletes `/`")
    );
    let config = r#"{"deny":["terraform destroy"]}"#;
    let r = typed(
        run_file(
            SHELL_GUARD,
            &bash("terraform destroy -auto-approve"),
            config,
            &[],
        )
        .await,
    );
    assert_eq!(r.permission_decision, Some(PermissionDecision::Deny));
    // A rewrite changes the input and approves nothing; the rest of the input stays.
    let r = typed(run_file(SHELL_GUARD, &bash("git push -f origin main"), "null", &[]).await);
    assert_eq!(r.permission_decision, None);
    assert_eq!(
        r.updated_input,
        Some(json!({"command": "git push --force-with-lease origin main", "timeout": 5}))
    );
    assert_eq!(r.additional_contexts.len(), 1, "{r:?}");
    // No opinion at all on a harmless command.
    let r = typed(run_file(SHELL_GUARD, &bash("ls -la"), "null", &[]).await);
    assert_eq!(r, Default::default());
}

#[tokio::test]
async fn empty_answer_rescue() {
    let stop = |message: &str, active: bool| {
        event_from(
            json!({"hook_event_name": "Stop", "last_assistant_message": message,
                          "stop_hook_active": active}),
        )
    };
    let r = typed(run_file(EMPTY_ANSWER_RESCUE, &stop(" \n", false), "null", &[]).await);
    assert!(
        r.follow_up
            .as_deref()
            .is_some_and(|f| f.starts_with("Your last reply was empty.")),
        "{r:?}"
    );
    // The re-entry guard: a turn already continued by a Stop hook is left to end.
    let r = typed(run_file(EMPTY_ANSWER_RESCUE, &stop("", true), "null", &[]).await);
    assert_eq!(r, Default::default());
    let r = typed(run_file(EMPTY_ANSWER_RESCUE, &stop("Done.", false), "null", &[]).await);
    assert_eq!(r, Default::default());
}

#[tokio::test]
async fn compaction_audit() {
    let dir = tmp_dir("compaction-audit");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mounts = [ResolvedMount {
        host: MountDir::open(&dir).unwrap(),
        guest: "/audit".into(),
        access: Access::Rw,
        symlinks: false,
    }];
    let event = event_from(
        json!({"hook_event_name": "PreCompact", "session_id": "s-audit",
                                  "trigger": "manual", "compaction_type": "full"}),
    );
    let run = run_file(COMPACTION_AUDIT, &event, "null", &mounts)
        .await
        .unwrap();
    assert!(
        run.report
            .logs
            .iter()
            .any(|l| l.message.contains("compaction session=s-audit")),
        "{:?}",
        run.report.logs
    );
    let WasmOutput::Typed(r) = run.output else {
        panic!("{:?}", run.output)
    };
    assert_eq!(r, Default::default(), "PreCompact is observe-only");
    let line = fs::read_to_string(dir.join("compaction.jsonl")).unwrap();
    let record: Value = serde_json::from_str(line.trim_end()).unwrap();
    assert_eq!(
        (
            &record["session_id"],
            &record["compaction_type"],
            &record["trigger"]
        ),
        (&json!("s-audit"), &json!("full"), &json!("manual"))
    );
}

/// The command guest answers in JSON on exit 0, and hookbox's Claude dialect reads a deny from
/// it. (Rust's wasip2 std cannot send exit 2: see guest-examples/cli-guard/README.md.)
#[tokio::test]
async fn cli_guard() {
    let event = bash("rm -rf /");
    let out = command(run_file(CLI_GUARD, &event, "null", &[]).await.unwrap());
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let answer: Value = serde_json::from_str(&out.stdout).unwrap();
    let reason = "cli-guard: the command recursively deletes `/`";
    assert_eq!(
        answer,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
               "permissionDecision": "deny", "permissionDecisionReason": reason}})
    );
    assert_eq!(out.stderr, format!("{reason}\n"));
    let effect = Interpretation {
        dialect: Dialect::Claude,
        event: &event,
        fail_mode: FailMode::Allow,
        timeout_secs: 2.0,
    }
    .interpret(&out);
    assert_eq!(effect.permission, Some(PermissionDecision::Deny));
    assert_eq!(effect.permission_reason.as_deref(), Some(reason));

    // A rewrite: updated input, no decision.
    let out = command(
        run_file(CLI_GUARD, &bash("git push --force"), "null", &[])
            .await
            .unwrap(),
    );
    let answer: Value = serde_json::from_str(&out.stdout).unwrap();
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(
        specific["updatedInput"],
        json!({"command": "git push --force-with-lease", "timeout": 5})
    );
    assert_eq!(specific.get("permissionDecision"), None, "{answer}");
    assert_eq!(out.exit_code, Some(0));

    // Nothing to say: no output, exit 0.
    let out = command(run_file(CLI_GUARD, &bash("ls"), "null", &[]).await.unwrap());
    assert_eq!(
        (out.exit_code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "", "")
    );
}

/// The demo's misbehaving example: a hog is stopped by the memory cap, a slow hook answers late
/// (its endless loop meets the timeout in `tests/all/demo.rs` of the CLI).
#[tokio::test]
async fn runaway() {
    let f = run_file(
        RUNAWAY,
        &prompt("x"),
        r#"{"behaviour":"alloc:200000000"}"#,
        &[],
    )
    .await
    .unwrap_err();
    assert_eq!(
        f.class(),
        FailureClass::MemoryLimit,
        "{}",
        f.failure.message
    );
    let r = typed(run_file(RUNAWAY, &prompt("alloc:1000"), "null", &[]).await);
    assert_eq!(r.additional_contexts, ["allocated 1000"]);
    let r = typed(run_file(RUNAWAY, &prompt("sleep:10"), "null", &[]).await);
    assert_eq!(r, Default::default());
}

/// The hostile guests: `chaos` answers on request (its misbehaviours are in `rust_guests.rs`),
/// `net` imports `wasi:sockets` and is refused at load.
#[tokio::test]
async fn chaos() {
    let r = typed(run_file(CHAOS, &prompt("ok"), "null", &[]).await);
    assert_eq!(r.additional_contexts, ["ok"]);
    let r = typed(run_file(CHAOS, &prompt("config"), r#"{"x":1}"#, &[]).await);
    assert_eq!(r.additional_contexts, [r#"{"x":1}"#]);
}

#[test]
fn net() {
    let err = runtime().load_file(std::path::Path::new(NET)).unwrap_err();
    assert_eq!(
        err.failure_class(),
        Some(FailureClass::IncompatibleComponent)
    );
    let msg = err.to_string();
    assert!(
        msg.contains("wasi:sockets/") && msg.contains("hooks have no network"),
        "{msg}"
    );
}
