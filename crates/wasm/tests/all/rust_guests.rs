//! The Rust guests of `hookbox-test-artifacts`: the `chaos` hook (behaviour chosen by the
//! event's prompt) against every sandbox boundary, the `net` guest refused at load, and every
//! guest example loaded and inspected.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_core::EventName;
use hookbox_core::output::FailureClass;
use hookbox_core::rule::Access;
use hookbox_test_artifacts::{ALL, CHAOS, CLI_GUARD, Kind, NET, NOOP, NOOP_CLI};
use hookbox_wasm::{
    FailedRun, InspectKind, Invocation, ResolvedMount, WasmLimits, WasmOutput, WasmRun, WasmRuntime,
};

use crate::common::{event, fuel_runtime, runtime, tmp_dir, typed};

/// Runs the chaos guest on a `UserPromptSubmit` whose prompt is `behaviour`.
async fn chaos_in(
    rt: &WasmRuntime,
    behaviour: &str,
    limits: &WasmLimits,
    mounts: &[ResolvedMount],
    env: &[(String, String)],
) -> Result<WasmRun, FailedRun> {
    let component = rt.load_file(Path::new(CHAOS)).unwrap();
    let mut event = hookbox_core::Event::new(EventName::UserPromptSubmit, "s", "/work");
    if let hookbox_core::event::EventData::UserPromptSubmit { prompt } = &mut event.data {
        *prompt = behaviour.to_owned();
    }
    let inv = Invocation {
        event: &event,
        payload_json: "{}",
        limits,
        mounts,
        env,
        config_json: r#"{"behaviour":"ok","x":1}"#.into(),
        label: "chaos".into(),
    };
    rt.run(&component, inv).await
}

async fn chaos(behaviour: &str) -> Result<WasmRun, FailedRun> {
    chaos_in(runtime(), behaviour, &WasmLimits::default(), &[], &[]).await
}

/// The one context the chaos guest answers.
fn answer(result: Result<WasmRun, FailedRun>) -> String {
    let r = typed(result);
    assert_eq!(r.additional_contexts.len(), 1, "{r:?}");
    r.additional_contexts[0].clone()
}

fn failure(result: Result<WasmRun, FailedRun>) -> FailedRun {
    match result {
        Ok(run) => panic!("expected a failure, got {:?}", run.output),
        Err(f) => f,
    }
}

async fn assert_chaos_serves(rt: &WasmRuntime) {
    assert_eq!(
        answer(chaos_in(rt, "ok", &WasmLimits::default(), &[], &[]).await),
        "ok"
    );
}

#[tokio::test]
async fn chaos_ok() {
    assert_eq!(answer(chaos("ok").await), "ok");
    assert_eq!(answer(chaos("config").await), r#"{"behaviour":"ok","x":1}"#);
}

#[tokio::test]
async fn chaos_spin_times_out() {
    let l = WasmLimits::default().with_timeout(Duration::from_millis(50));
    assert_eq!(
        failure(chaos_in(runtime(), "spin", &l, &[], &[]).await).class(),
        FailureClass::Timeout
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_spin_runs_out_of_fuel() {
    let l = WasmLimits::default().with_fuel(Some(1_000_000));
    assert_eq!(
        failure(chaos_in(fuel_runtime(), "spin", &l, &[], &[]).await).class(),
        FailureClass::OutOfFuel
    );
    assert_chaos_serves(fuel_runtime()).await;
}

#[tokio::test]
async fn chaos_sleep_in_a_host_call_times_out() {
    let l = WasmLimits::default().with_timeout(Duration::from_millis(100));
    assert_eq!(
        failure(chaos_in(runtime(), "sleep:60000", &l, &[], &[]).await).class(),
        FailureClass::Timeout
    );
    assert_eq!(
        answer(chaos_in(runtime(), "sleep:1", &l, &[], &[]).await),
        "slept"
    );
}

#[tokio::test]
async fn chaos_recursion_traps() {
    assert_eq!(failure(chaos("recurse").await).class(), FailureClass::Trap);
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_memory_bomb_hits_the_cap() {
    assert_eq!(answer(chaos("alloc:1000000").await), "alloc:1000000 ok");
    assert_eq!(
        failure(chaos("alloc:200000000").await).class(),
        FailureClass::MemoryLimit
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_stdout_flood_is_truncated() {
    let l = WasmLimits::default().with_output_bytes(100_000);
    let run = chaos_in(runtime(), "stdout:10000000", &l, &[], &[])
        .await
        .unwrap();
    assert_eq!(run.report.stdout.text.len(), 100_000);
    assert!(run.report.stdout.truncated);
    let WasmOutput::Typed(r) = run.output else {
        panic!()
    };
    assert_eq!(r.additional_contexts, ["wrote 10000000"]);
}

#[tokio::test]
async fn chaos_bad_json_is_invalid_output() {
    assert_eq!(
        failure(chaos("bad-json").await).class(),
        FailureClass::InvalidOutput
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_panic_is_a_trap_with_the_panic_message() {
    let f = failure(chaos("trap").await);
    assert_eq!(f.class(), FailureClass::Trap);
    assert!(
        f.failure.message.contains("chaos: trap requested"),
        "{}",
        f.failure.message
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_err_and_exit_are_traps() {
    let f = failure(chaos("err:no thanks").await);
    assert_eq!(
        (f.class(), f.failure.message.as_str()),
        (FailureClass::Trap, "guest returned error: no thanks")
    );
    assert_eq!(failure(chaos("exit:3").await).class(), FailureClass::Trap);
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_logs_are_capped() {
    let l = WasmLimits::default().with_log_calls(5);
    let run = chaos_in(runtime(), "log:50", &l, &[], &[]).await.unwrap();
    assert_eq!((run.report.logs.len(), run.report.logs_dropped), (5, 45));
    assert_eq!(run.report.logs[4].message, "chaos log line 4");
}

#[tokio::test]
async fn chaos_sees_only_the_rules_env_and_no_args() {
    // `PATH` exists in the host's environment; the guest must not see it.
    assert!(std::env::var_os("PATH").is_some());
    assert_eq!(answer(chaos("env").await), "");
    let env = [("MODE".to_owned(), "strict".to_owned())];
    assert_eq!(
        answer(chaos_in(runtime(), "env", &WasmLimits::default(), &[], &env).await),
        "MODE=strict"
    );
    assert_eq!(answer(chaos("args").await), "");
}

/// `root/{mounted/{inside.txt, link_out -> ../secret.txt, abs_link -> <root>/secret.txt},
/// secret.txt, other/other.txt}`.
fn tree(name: &str) -> PathBuf {
    let root = tmp_dir(name);
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("mounted")).unwrap();
    fs::create_dir_all(root.join("other")).unwrap();
    fs::write(root.join("mounted/inside.txt"), "inside").unwrap();
    fs::write(root.join("secret.txt"), "host secret").unwrap();
    fs::write(root.join("other/other.txt"), "other tenant").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../secret.txt", root.join("mounted/link_out")).unwrap();
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("mounted/abs_link")).unwrap();
    }
    root
}

fn mount(root: &Path, access: Access) -> Vec<ResolvedMount> {
    vec![ResolvedMount {
        host: root.join("mounted"),
        guest: "/data".into(),
        access,
    }]
}

async fn in_mount(root: &Path, access: Access, behaviour: &str) -> String {
    answer(
        chaos_in(
            runtime(),
            behaviour,
            &WasmLimits::default(),
            &mount(root, access),
            &[],
        )
        .await,
    )
}

#[tokio::test]
async fn mount_is_readable() {
    let root = tree("fs-read");
    assert_eq!(
        in_mount(&root, Access::Ro, "fs-read:/data/inside.txt").await,
        "ok:inside"
    );
    assert_eq!(
        in_mount(&root, Access::Ro, "fs-list:/data").await,
        "ok:abs_link\ninside.txt\nlink_out"
    );
}

#[tokio::test]
async fn no_escape_from_a_mount() {
    let root = tree("fs-escape");
    let secret = root.join("secret.txt").display().to_string();
    let other = root.join("other/other.txt").display().to_string();
    for path in [
        "/data/../secret.txt".to_owned(),
        "/data/../../secret.txt".to_owned(),
        "/secret.txt".to_owned(),
        "/data/link_out".to_owned(),
        "/data/link_out/".to_owned(),
        "/data/abs_link".to_owned(),
        secret,
        "/other/other.txt".to_owned(),
        "/data/../other/other.txt".to_owned(),
        other,
        "/etc/passwd".to_owned(),
    ] {
        let got = in_mount(&root, Access::Ro, &format!("fs-read:{path}")).await;
        assert!(got.starts_with("err:"), "{path}: {got}");
        assert!(
            !got.contains("secret") && !got.contains("other tenant"),
            "{path}: {got}"
        );
    }
}

#[tokio::test]
async fn read_only_mount_refuses_writes_and_rw_allows_them() {
    let root = tree("fs-write");
    let got = in_mount(&root, Access::Ro, "fs-write:/data/new.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert!(!root.join("mounted/new.txt").exists());
    let got = in_mount(&root, Access::Ro, "fs-write:/data/inside.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert_eq!(
        fs::read_to_string(root.join("mounted/inside.txt")).unwrap(),
        "inside"
    );
    assert_eq!(
        in_mount(&root, Access::Rw, "fs-write:/data/new.txt").await,
        "ok"
    );
    assert_eq!(
        fs::read_to_string(root.join("mounted/new.txt")).unwrap(),
        "written by chaos\n"
    );
    let got = in_mount(&root, Access::Rw, "fs-write:/data/../escaped.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert!(!root.join("escaped.txt").exists());
}

#[tokio::test]
async fn without_a_mount_there_is_no_filesystem() {
    let got = answer(chaos("fs-read:/etc/passwd").await);
    assert!(got.starts_with("err:"), "{got}");
    let got = answer(chaos("fs-list:/").await);
    assert!(got.starts_with("err:"), "{got}");
}

#[test]
fn socket_guest_is_refused_at_load() {
    let err = runtime().load_file(Path::new(NET)).unwrap_err();
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

#[test]
fn every_guest_is_inspected_as_built() {
    for guest in ALL {
        let r = runtime().inspect_file(Path::new(guest.path)).unwrap();
        let want = match guest.kind {
            Kind::Hook => InspectKind::TypedHook,
            Kind::Command => InspectKind::WasiCommand,
        };
        assert_eq!(r.kind, want, "{}", guest.name);
        assert_eq!(
            r.accepted,
            guest.name != "net",
            "{}: {:?}",
            guest.name,
            r.reasons
        );
    }
}

#[tokio::test]
async fn noop_guests_answer() {
    let noop = runtime().load_file(Path::new(NOOP)).unwrap();
    let limits = WasmLimits::default();
    let event = event();
    let inv = || Invocation {
        event: &event,
        payload_json: "{}",
        limits: &limits,
        mounts: &[],
        env: &[],
        config_json: "null".into(),
        label: "noop".into(),
    };
    assert_eq!(typed(runtime().run(&noop, inv()).await), Default::default());
    let noop_cli = runtime().load_file(Path::new(NOOP_CLI)).unwrap();
    let run = runtime().run(&noop_cli, inv()).await.unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!()
    };
    assert_eq!((out.exit_code, out.stdout.as_str()), (Some(0), ""));
}

/// Rust's `wasm32-wasip2` std cannot report an exit code other than 0 or 1: `main`'s
/// `ExitCode::from(2)` reaches the host as `wasi:cli/run` returning `err`, i.e. 1 (the guest
/// imports `wasi:cli/exit@0.2.0`, which has no `exit-with-code`). The host passes through any
/// code a guest does report (the WAT `cmd_exit2` test exits with 2 via `exit-with-code`).
#[tokio::test]
async fn cli_guard_denial_arrives_as_exit_1_from_rust_std() {
    let guard = runtime().load_file(Path::new(CLI_GUARD)).unwrap();
    let limits = WasmLimits::default();
    let event = event();
    let payload = serde_json::Value::Object(hookbox_core::event::wire::flat(&event)).to_string();
    let inv = Invocation {
        event: &event,
        payload_json: &payload,
        limits: &limits,
        mounts: &[],
        env: &[],
        config_json: "null".into(),
        label: "cli-guard".into(),
    };
    let run = runtime().run(&guard, inv).await.unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!()
    };
    assert_eq!(out.exit_code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        "cli-guard: the command recursively deletes `/`\n"
    );
}
