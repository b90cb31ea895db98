//! Loading: what is refused (and how it is named), version detection, compile-once, mounts.

use std::path::Path;
use std::sync::Arc;

use hookbox_core::output::FailureClass;
use hookbox_core::rule::Access;
use hookbox_wasm::{
    CacheStatus, ComponentKind, Invocation, MountDir, MountError, ResolvedMount, WasmError,
    WasmLimits, WasmPolicy,
};

use crate::common::{event, runtime};
use crate::guests;

/// The reason a load was refused, after checking it is `incompatible_component`.
fn refused(bytes: &[u8]) -> String {
    match runtime().load_bytes(bytes) {
        Err(e @ WasmError::Incompatible { .. }) => {
            assert_eq!(e.failure_class(), Some(FailureClass::IncompatibleComponent));
            assert_eq!(e.failure().class, FailureClass::IncompatibleComponent);
            e.to_string()
        }
        other => panic!("expected an incompatible component, got {other:?}"),
    }
}

#[test]
fn core_module_is_named_as_such() {
    assert!(refused(&guests::core_module()).contains("core WebAssembly module, not a component"));
}

#[test]
fn not_wasm_is_refused() {
    assert!(refused(b"#!/bin/sh\necho hi\n").contains("not a WebAssembly binary"));
}

#[test]
fn sockets_are_refused_at_load_naming_the_import() {
    let msg = refused(&guests::sockets());
    assert!(
        msg.contains("`wasi:sockets/tcp@0.2.0`") && msg.contains("hooks have no network"),
        "{msg}"
    );
}

#[test]
fn http_is_refused_at_load_naming_the_import() {
    let msg = refused(&guests::http());
    assert!(
        msg.contains("`wasi:http/outgoing-handler@0.2.0`") && msg.contains("hooks have no network"),
        "{msg}"
    );
}

#[test]
fn unknown_imports_are_refused_naming_the_import() {
    let msg = refused(&guests::evil_import());
    assert!(
        msg.contains("`evil:pkg/thing`") && msg.contains("does not grant"),
        "{msg}"
    );
}

#[test]
fn wrong_wit_version_is_named() {
    let msg = refused(&guests::wrong_version());
    assert!(
        msg.contains("component exports hookbox:hook/handler@0.2.0; this host speaks 0.1.0"),
        "{msg}"
    );
}

#[test]
fn unversioned_handler_is_named() {
    let msg = refused(&guests::unversioned());
    assert!(
        msg.contains("hookbox:hook/handler without a version"),
        "{msg}"
    );
}

#[test]
fn component_without_a_hook_world_is_refused() {
    let msg = refused(&guests::no_world());
    assert!(
        msg.contains("exports neither hookbox:hook/handler@0.1.0 nor wasi:cli/run@0.2.x"),
        "{msg}"
    );
}

#[test]
fn kinds_and_versions_are_detected() {
    let typed = runtime().load_bytes(&guests::ok()).unwrap();
    assert_eq!(
        (typed.kind(), typed.wit_version()),
        (ComponentKind::TypedHook, Some("0.1.0"))
    );
    let cmd = runtime().load_bytes(&guests::cmd_echo()).unwrap();
    assert_eq!(
        (cmd.kind(), cmd.wit_version()),
        (ComponentKind::WasiCommand, None)
    );
}

#[test]
fn a_component_is_compiled_once_per_runtime() {
    let bytes = guests::deny();
    let a = runtime().load_bytes(&bytes).unwrap();
    let b = runtime().load_bytes(&bytes).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(
        runtime().precompile_bytes(&bytes).unwrap(),
        CacheStatus::Memory
    );
}

#[tokio::test]
async fn a_mount_is_the_folder_opened_not_its_name() {
    // A missing folder cannot become a mount at all: the error names it.
    let e = MountDir::open(Path::new("/no/such/folder")).unwrap_err();
    assert!(matches!(e, MountError::Missing { .. }), "{e}");
    assert!(e.to_string().contains("/no/such/folder"), "{e}");
    // A folder deleted after it was opened: the guest gets the (now empty) folder it was
    // granted, never whatever takes its name later.
    let dir = tempfile::tempdir().unwrap();
    let granted = dir.path().join("granted");
    std::fs::create_dir(&granted).unwrap();
    let handle = MountDir::open(&granted).unwrap();
    std::fs::remove_dir(&granted).unwrap();
    std::os::unix::fs::symlink("/", &granted).unwrap();
    let component = runtime().load_bytes(&guests::ok()).unwrap();
    let limits = WasmLimits::default();
    let mounts = [ResolvedMount {
        host: handle,
        guest: "/data".into(),
        access: Access::Ro,
    }];
    let run = runtime()
        .run(
            &component,
            Invocation {
                event: &event(),
                payload_json: "{}",
                limits: &limits,
                mounts: &mounts,
                env: &[],
                config_json: "null".into(),
                label: "t".into(),
            },
        )
        .await;
    assert!(run.is_ok(), "{run:?}");
}

#[test]
fn policies_the_runtime_cannot_enforce_are_refused() {
    let fuel = WasmPolicy {
        allow_fuel: true,
        ..WasmPolicy::default()
    };
    assert!(runtime().check_policy(&fuel).is_err());
    runtime().check_policy(&WasmPolicy::default()).unwrap();
    let mut huge = WasmPolicy::default();
    huge.maxima.memory_bytes = 1 << 40;
    assert!(runtime().check_policy(&huge).is_err());
}
