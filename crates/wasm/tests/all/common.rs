//! Shared runtimes (so each guest compiles once per test binary), a sample event, and helpers to
//! run a guest and to check that a runtime still serves a normal event.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use hookbox_core::Event;
use hookbox_core::output::{FailureClass, HookResponse};
use hookbox_wasm::{
    FailedRun, Invocation, LoadedComponent, ResolvedMount, RuntimeConfig, WasmLimits, WasmOutput,
    WasmRun, WasmRuntime,
};
use serde_json::json;

/// A private folder under cargo's per-target temporary directory.
pub(crate) fn tmp_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("hookbox-wasm-tests")
        .join(name)
}

/// The runtime most tests share (no fuel, disk cache under the target dir).
pub(crate) fn runtime() -> &'static WasmRuntime {
    static RT: OnceLock<WasmRuntime> = OnceLock::new();
    RT.get_or_init(|| {
        WasmRuntime::new(RuntimeConfig::default().with_cache_dir(tmp_dir("cache"))).unwrap()
    })
}

/// A runtime with fuel metering, for the fuel tests.
pub(crate) fn fuel_runtime() -> &'static WasmRuntime {
    static RT: OnceLock<WasmRuntime> = OnceLock::new();
    RT.get_or_init(|| {
        WasmRuntime::new(
            RuntimeConfig::default()
                .with_fuel(true)
                .with_cache_dir(tmp_dir("cache")),
        )
        .unwrap()
    })
}

/// A `PreToolUse` event for `Bash`.
pub(crate) fn event() -> Event {
    Event::from_payload(
        None,
        json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/work",
               "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}),
        "d",
        "/",
    )
    .unwrap()
}

/// An event from a Claude Code payload (`hook_event_name` decides the event; session `s`, cwd
/// `/work` unless the payload says otherwise).
pub(crate) fn event_from(payload: serde_json::Value) -> Event {
    Event::from_payload(None, payload, "s", "/work").unwrap()
}

/// Runs the component file at `path` on `event` in the shared [`runtime`], as a rule with
/// `config_json` and `mounts` would: the event's flat payload, default limits, no env.
pub(crate) async fn run_file(
    path: &str,
    event: &Event,
    config_json: &str,
    mounts: &[ResolvedMount],
) -> Result<WasmRun, FailedRun> {
    let rt = runtime();
    let component = rt.load_file(Path::new(path)).unwrap();
    let payload = serde_json::Value::Object(hookbox_core::event::wire::flat(event)).to_string();
    rt.run(
        &component,
        Invocation {
            event,
            payload_json: &payload,
            tool_input_json: None,
            limits: &WasmLimits::default(),
            mounts,
            env: &[],
            config_json: config_json.into(),
            label: "test-rule".into(),
        },
    )
    .await
}

/// Loads `bytes` in `rt` (cached after the first time).
pub(crate) fn load(rt: &WasmRuntime, bytes: &[u8]) -> Arc<LoadedComponent> {
    rt.load_bytes(bytes).unwrap()
}

/// Runs `bytes` on [`event`] with `limits`, the event's flat payload on stdin, config
/// `{"deny":["rm"]}`.
pub(crate) async fn run_with(
    rt: &WasmRuntime,
    bytes: &[u8],
    limits: &WasmLimits,
) -> Result<WasmRun, FailedRun> {
    let component = load(rt, bytes);
    let event = event();
    let payload = serde_json::Value::Object(hookbox_core::event::wire::flat(&event)).to_string();
    rt.run(
        &component,
        Invocation {
            event: &event,
            payload_json: &payload,
            tool_input_json: None,
            limits,
            mounts: &[],
            env: &[],
            config_json: r#"{"deny":["rm"]}"#.into(),
            label: "test-rule".into(),
        },
    )
    .await
}

/// Runs `bytes` with default limits.
pub(crate) async fn run(rt: &WasmRuntime, bytes: &[u8]) -> Result<WasmRun, FailedRun> {
    run_with(rt, bytes, &WasmLimits::default()).await
}

/// The class of a run that must fail.
pub(crate) fn class(result: Result<WasmRun, FailedRun>) -> FailureClass {
    match result {
        Ok(run) => panic!("expected a failure, got {:?}", run.output),
        Err(failed) => failed.class(),
    }
}

/// The typed response of a run that must succeed.
pub(crate) fn typed(result: Result<WasmRun, FailedRun>) -> HookResponse {
    match result {
        Ok(WasmRun {
            output: WasmOutput::Typed(r),
            ..
        }) => r,
        other => panic!("expected a typed response, got {other:?}"),
    }
}

/// After a violation: the same runtime answers a normal event correctly.
pub(crate) async fn assert_serves(rt: &WasmRuntime) {
    let r = typed(run(rt, &crate::guests::echo()).await);
    assert_eq!(r.additional_contexts[0], "PreToolUse");
    assert_eq!(r.additional_contexts[2], r#"{"deny":["rm"]}"#);
}
