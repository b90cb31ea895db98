//! `wasi:cli/run` components: payload on stdin, stdout/stderr captured, exit code passed through
//! for the host to read in the rule's dialect.

use std::time::Duration;

use hookbox_core::output::FailureClass;
use hookbox_wasm::{WasmLimits, WasmOutput};

use crate::common::{assert_serves, class, event, run, run_with, runtime};
use crate::guests;

#[tokio::test]
async fn payload_arrives_on_stdin() {
    let run = run(runtime(), &guests::cmd_echo()).await.unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!("{:?}", run.output)
    };
    assert_eq!(out.exit_code, Some(0));
    let echoed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        echoed,
        serde_json::Value::Object(hookbox_core::event::wire::flat(&event()))
    );
    assert_eq!(run.report.stdout.text, out.stdout);
}

#[tokio::test]
async fn exit_code_and_stderr_pass_through() {
    let run = run(runtime(), &guests::cmd_exit2()).await.unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!("{:?}", run.output)
    };
    assert_eq!(
        (out.exit_code, out.stderr.as_str(), out.stdout.as_str()),
        (Some(2), "blocked by wat\n", "")
    );
}

/// A component importing `exit-with-code` from `wasi:cli/exit@0.2.0` (older toolchains, where it
/// was feature-gated) is linked to wasmtime-wasi's 0.2.12 definition and blocks with 2 too.
#[tokio::test]
async fn exit_code_through_wasi_0_2_0_passes_through() {
    let run = run(runtime(), &guests::cmd_exit2_wasi_020()).await.unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!("{:?}", run.output)
    };
    assert_eq!(
        (out.exit_code, out.stderr.as_str()),
        (Some(2), "blocked by wat\n")
    );
}

#[tokio::test]
async fn command_timeout_is_classified() {
    let l = WasmLimits::default().with_timeout(Duration::from_millis(20));
    assert_eq!(
        class(run_with(runtime(), &guests::cmd_spin(), &l).await),
        FailureClass::Timeout
    );
    assert_serves(runtime()).await;
}
