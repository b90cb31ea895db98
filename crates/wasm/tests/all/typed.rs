//! Typed hooks (`hookbox:hook/handler@0.1.0`): the event goes in as the WIT record, the response
//! comes back as a core `HookResponse`; guest errors and unreadable answers are classified.

use hookbox_core::output::{FailureClass, HookResponse, PermissionDecision};
use hookbox_wasm::{LogLevel, WasmOutput};
use serde_json::json;

use crate::common::{assert_serves, class, run, runtime, typed};
use crate::guests;

#[tokio::test]
async fn empty_answer_is_an_empty_response() {
    assert_eq!(
        typed(run(runtime(), &guests::ok()).await),
        HookResponse::default()
    );
}

#[tokio::test]
async fn guest_sees_event_payload_and_config_and_logs_are_kept() {
    let run = run(runtime(), &guests::echo()).await.unwrap();
    let WasmOutput::Typed(r) = &run.output else {
        panic!("{:?}", run.output)
    };
    assert_eq!(r.additional_contexts[0], "PreToolUse");
    let payload: serde_json::Value = serde_json::from_str(&r.additional_contexts[1]).unwrap();
    assert_eq!(payload["tool_input"], json!({"command": "rm -rf /"}));
    assert_eq!(payload["hook_event_name"], "PreToolUse");
    assert_eq!(r.additional_contexts[2], r#"{"deny":["rm"]}"#);
    assert_eq!(run.report.logs.len(), 1);
    assert_eq!(
        (
            run.report.logs[0].level,
            run.report.logs[0].message.as_str()
        ),
        (LogLevel::Info, "hello from wat")
    );
    assert_eq!(run.report.logs_dropped, 0);
}

#[tokio::test]
async fn response_fields_reach_the_core_type() {
    let r = typed(run(runtime(), &guests::deny()).await);
    assert_eq!(r.blocking_error.as_deref(), Some("no rm"));
    assert_eq!(r.permission_decision, Some(PermissionDecision::Deny));
    assert_eq!(r.permission_decision_reason, None);
    assert_eq!(r.updated_input, Some(json!({"command": "ls"})));
}

#[tokio::test]
async fn invalid_updated_input_is_invalid_output() {
    assert_eq!(
        class(run(runtime(), &guests::bad_json()).await),
        FailureClass::InvalidOutput
    );
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn guest_error_is_a_trap_with_its_message() {
    let failed = run(runtime(), &guests::guest_err()).await.unwrap_err();
    assert_eq!(failed.class(), FailureClass::Trap);
    assert_eq!(failed.failure.message, "guest returned error: boom");
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn unreachable_is_a_trap() {
    assert_eq!(
        class(run(runtime(), &guests::trap()).await),
        FailureClass::Trap
    );
    assert_serves(runtime()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_runs_from_many_tasks() {
    let rt = runtime();
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            tokio::spawn(async move {
                let bytes = if i % 4 == 0 {
                    guests::trap()
                } else {
                    guests::echo()
                };
                (i, run(rt, &bytes).await)
            })
        })
        .collect();
    for t in tasks {
        let (i, result) = t.await.unwrap();
        if i % 4 == 0 {
            assert_eq!(class(result), FailureClass::Trap);
        } else {
            assert_eq!(typed(result).additional_contexts[0], "PreToolUse");
        }
    }
}
