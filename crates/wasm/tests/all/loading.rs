//! Loading: what is refused (and how it is named), version detection, compile-once, mounts.

use std::path::Path;
use std::sync::Arc;

use hookbox_core::event::EventData;
use hookbox_core::output::FailureClass;
use hookbox_core::rule::Access;
use hookbox_core::{Event, EventName};
use hookbox_test_artifacts::CHAOS;
use hookbox_wasm::{
    CacheStatus, ComponentKind, ComponentShape, InspectKind, Invocation, MountDir, MountError,
    PolicyError, ResolvedMount, RuntimeConfig, WasmError, WasmLimits, WasmPolicy, WasmRuntime,
    read_component,
};

use crate::common::{runtime, tmp_dir, typed};
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
    // A folder deleted after it was opened, its name then taken by a symlink to `/`: the guest
    // lists the (now empty) folder it was granted, never `/`.
    let dir = tempfile::tempdir().unwrap();
    let granted = dir.path().join("granted");
    std::fs::create_dir(&granted).unwrap();
    let handle = MountDir::open(&granted).unwrap();
    std::fs::remove_dir(&granted).unwrap();
    std::os::unix::fs::symlink("/", &granted).unwrap();
    let component = runtime().load_file(Path::new(CHAOS)).unwrap();
    let limits = WasmLimits::default();
    let mounts = [ResolvedMount {
        host: handle,
        guest: "/data".into(),
        access: Access::Ro,
        symlinks: false,
    }];
    let mut listing = Event::new(EventName::UserPromptSubmit, "s", "/work");
    if let EventData::UserPromptSubmit { prompt } = &mut listing.data {
        *prompt = "fs-list:/data".to_owned();
    }
    let run = runtime()
        .run(
            &component,
            Invocation {
                event: &listing,
                payload_json: "{}",
                tool_input_json: None,
                limits: &limits,
                mounts: &mounts,
                env: &[],
                config_json: "null".into(),
                label: "t".into(),
            },
        )
        .await;
    assert_eq!(typed(run).additional_contexts, ["ok:"]);
}

#[test]
fn policies_the_runtime_cannot_enforce_are_refused() {
    let cannot = |policy: &WasmPolicy, rt: &WasmRuntime| match rt.check_policy(policy) {
        Err(PolicyError::RuntimeCannotEnforce { what }) => what,
        other => panic!("expected RuntimeCannotEnforce, got {other:?}"),
    };
    let fuel = WasmPolicy {
        allow_fuel: true,
        ..WasmPolicy::default()
    };
    assert!(cannot(&fuel, runtime()).contains("without fuel metering"));
    runtime().check_policy(&WasmPolicy::default()).unwrap();
    let mut huge = WasmPolicy::default();
    huge.maxima.memory_bytes = 1 << 40;
    assert!(cannot(&huge, runtime()).contains("(pool.max_memory_bytes)"));
    let mut many = WasmPolicy::default();
    many.maxima.instances = 200;
    assert!(cannot(&many, runtime()).contains("(pool.core_instances_per_slot)"));
    let small_budget = WasmRuntime::new(RuntimeConfig {
        memory_budget_bytes: 128 << 20,
        ..RuntimeConfig::default()
    })
    .unwrap();
    assert!(cannot(&WasmPolicy::default(), &small_budget).contains("(memory_budget_bytes)"));
}

/// A component the pool can never hold is refused from its structure, before any compile: with
/// a disk cache, nothing was written (a compile always writes its artefact first).
#[test]
fn a_component_too_big_for_the_pool_is_refused_before_compiling() {
    let dir = tmp_dir("shape-refused");
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = RuntimeConfig::default().with_cache_dir(&dir);
    config.pool.core_instances_per_slot = 2;
    let rt = WasmRuntime::new(config).unwrap();
    let err = rt.load_file(Path::new(CHAOS)).unwrap_err();
    assert_eq!(
        err.failure_class(),
        Some(FailureClass::IncompatibleComponent)
    );
    assert!(
        err.to_string().contains(
            "component creates 3 core module instances, but one slot of this host's instance pool holds 2 (pool.core_instances_per_slot)"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let report = rt.inspect_file(Path::new(CHAOS)).unwrap();
    assert_eq!(report.kind, InspectKind::TypedHook);
    assert!(!report.accepted);
    assert_eq!(
        report.shape,
        Some(ComponentShape {
            core_instances: 3,
            memories: 1,
            tables: 2
        })
    );
    // The same component within the pool: compiled once, then served from the disk cache.
    let fits = WasmRuntime::new(RuntimeConfig::default().with_cache_dir(&dir)).unwrap();
    assert_eq!(
        fits.precompile_file(Path::new(CHAOS)).unwrap(),
        CacheStatus::Compiled
    );
    let again = WasmRuntime::new(RuntimeConfig::default().with_cache_dir(&dir)).unwrap();
    assert_eq!(
        again.precompile_file(Path::new(CHAOS)).unwrap(),
        CacheStatus::Disk
    );
}

/// A component needing more core instances than its rule's `instances` limit is refused from its
/// structure before any compile (nothing written to the disk cache); within the limit it loads.
#[test]
fn a_component_above_its_rules_instances_limit_is_refused_before_compiling() {
    let dir = tmp_dir("instances-refused");
    let _ = std::fs::remove_dir_all(&dir);
    let rt = WasmRuntime::new(RuntimeConfig::default().with_cache_dir(&dir)).unwrap();
    let tight = WasmLimits {
        instances: 2,
        ..WasmLimits::default()
    };
    let err = rt.load_file_within(Path::new(CHAOS), &tight).unwrap_err();
    assert!(matches!(err, WasmError::AboveLimit { .. }), "{err:?}");
    assert_eq!(err.failure_class(), Some(FailureClass::InstantiateError));
    assert!(
        err.to_string()
            .contains("it creates 3 core instances, above this rule's `instances` limit of 2; raise `instances` to at least 3"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&dir).map_or(0, |d| d.count()), 0);
    let fits = WasmLimits {
        instances: 3,
        ..WasmLimits::default()
    };
    rt.load_file_within(Path::new(CHAOS), &fits).unwrap();
    // Once loaded, the memory cache answers for both limits the same way.
    assert!(rt.load_file_within(Path::new(CHAOS), &tight).is_err());
    assert!(rt.load_file_within(Path::new(CHAOS), &fits).is_ok());
}

/// What the structure says, for the guests of every toolchain: what the pool and the
/// `instances` limit must hold (componentize-py: 38 core instances).
#[test]
fn shapes_of_the_shipped_guests() {
    let shape = |path: &str| runtime().load_file(Path::new(path)).unwrap().shape();
    assert_eq!(
        shape(CHAOS),
        ComponentShape {
            core_instances: 3,
            memories: 1,
            tables: 2
        }
    );
    if hookbox_test_artifacts::POLYGLOT_BUILT {
        assert_eq!(
            shape(hookbox_test_artifacts::SHELL_GUARD_PY).core_instances,
            38
        );
        assert_eq!(
            shape(hookbox_test_artifacts::CONTEXT_INJECTION_JS).core_instances,
            4
        );
    }
}

/// Runs `f` on another thread and fails the test (instead of hanging it) if it takes longer
/// than a minute: for reads that must not block.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the read blocked")
}

#[cfg(unix)]
#[test]
fn max_component_bytes_violated_by_a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("hook.wasm");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let path = fifo.clone();
    let err = within_a_minute(move || runtime().load_file(&path).map(drop)).unwrap_err();
    assert!(
        matches!(&err, WasmError::NotAFile { kind, .. } if kind.contains("FIFO")),
        "{err}"
    );
    let path = fifo.clone();
    let err = within_a_minute(move || runtime().precompile_file(&path).map(drop)).unwrap_err();
    assert!(matches!(err, WasmError::NotAFile { .. }), "{err}");
}

#[test]
fn max_component_bytes_obeyed() {
    let bytes = std::fs::read(CHAOS).unwrap();
    let file = std::fs::File::open(CHAOS).unwrap();
    assert_eq!(
        read_component(file, "chaos", bytes.len() as u64).unwrap(),
        bytes
    );
}

#[test]
fn max_component_bytes_violated_is_refused() {
    let len = std::fs::metadata(CHAOS).unwrap().len();
    let file = std::fs::File::open(CHAOS).unwrap();
    let err = read_component(file, "chaos", len - 1).unwrap_err();
    assert!(
        matches!(err, WasmError::TooLarge { size, max_bytes, .. } if size == len && max_bytes == len - 1),
        "{err}"
    );
    let rt = WasmRuntime::new(RuntimeConfig {
        max_component_bytes: len - 1,
        ..RuntimeConfig::default()
    })
    .unwrap();
    assert!(matches!(
        rt.load_file(Path::new(CHAOS)),
        Err(WasmError::TooLarge { .. })
    ));
}

/// A 20 GB sparse file is refused from its size alone: reading it would abort the host.
#[test]
fn max_component_bytes_violated_by_a_sparse_file_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.wasm");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(20 << 30).unwrap();
    drop(file);
    let err = runtime().load_file(&path).unwrap_err();
    assert!(
        matches!(err, WasmError::TooLarge { size, .. } if size == 20 << 30),
        "{err}"
    );
}
