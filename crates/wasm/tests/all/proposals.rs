//! WebAssembly proposals: the engine refuses, at load, every proposal hooks do not need — first
//! of all the GC type rules whose `is_subtype` libcall aborts wasmtime 48.0.8 built without its
//! `gc` feature (GHSA-rc4p-x33f-vpr2), and the atomics wait/notify of GHSA-2674-w29h-wqvj — and
//! still runs what guest toolchains emit.

use std::process::Command;

use hookbox_core::output::FailureClass;
use hookbox_wasm::{WasmError, WasmOutput};

use crate::common::{assert_serves, run, runtime, typed};
use crate::guests;

/// The reason `bytes` (a guest using `what`) were refused at load, after checking the refusal
/// is `incompatible_component` and names a proposal hookbox does not run.
fn refused_proposal(what: &str, bytes: &[u8]) -> String {
    match runtime().load_bytes(bytes) {
        Err(e @ WasmError::Incompatible { .. }) => {
            assert_eq!(e.failure().class, FailureClass::IncompatibleComponent);
            let msg = e.to_string();
            assert!(
                msg.contains("uses a WebAssembly proposal hookbox does not run"),
                "{what}: {msg}"
            );
            msg
        }
        Ok(_) => panic!("{what}: loaded, but the engine must refuse this proposal"),
        Err(other) => panic!("{what}: expected incompatible_component, got {other:?}"),
    }
}

/// GHSA-rc4p-x33f-vpr2: refused when it is validated, so it is never compiled, instantiated or
/// run, and the runtime keeps serving. Without `Config::wasm_gc(false)` (the allow-list) this
/// component loads — and then aborts the test binary at its first instantiation.
#[tokio::test]
async fn a_gc_subtype_reaching_the_aborting_libcall_is_refused_at_load() {
    let msg = refused_proposal("a GC subtype", &guests::subtype_call_indirect());
    assert!(msg.contains("gc proposal must be enabled"), "{msg}");
    assert_serves(runtime()).await;
}

/// GHSA-2674-w29h-wqvj: atomics (`memory.atomic.wait32/64`, `memory.atomic.notify`) are the
/// threads proposal, which this build of wasmtime lacks and the allow-list keeps off.
#[tokio::test]
async fn atomics_wait_and_notify_are_refused_at_load() {
    for body in [
        "(drop (memory.atomic.notify (i32.const 0) (i32.const 1)))",
        "(drop (memory.atomic.wait32 (i32.const 0) (i32.const 0) (i64.const 0)))",
        "(drop (memory.atomic.wait64 (i32.const 0) (i64.const 0) (i64.const 0)))",
    ] {
        let msg = refused_proposal(body, &guests::hook_with("", body));
        assert!(msg.contains("threads"), "{body}: {msg}");
    }
    assert_serves(runtime()).await;
}

/// A call between two core instances with their own memories (two composed components;
/// componentize-qjs's JavaScript hooks) loads and runs: wasmtime's adapter for it uses
/// multi-memory, which the engine accepts for its adapters. With multi-memory off in the engine,
/// wasmtime 48.0.8 panicked on its own adapter ("invalid adapter module generated: multiple
/// memories") and took the process down. A guest's own module still gets one memory (below).
#[tokio::test]
async fn a_call_between_two_memories_runs() {
    let run = run(runtime(), &guests::two_memories_cmd()).await.unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!("{:?}", run.output)
    };
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    // `hookbox inspect`'s path compiles it too (it panicked there as well).
    let report = runtime().inspect_bytes(&guests::two_memories_cmd());
    assert!(report.accepted, "{report:?}");
    assert_serves(runtime()).await;
}

/// Every other proposal off in `proposals.rs`, each by a guest that uses it.
#[test]
fn proposals_hooks_do_not_need_are_refused_at_load() {
    let cases: &[(&str, &str, &str)] = &[
        ("gc struct types", "(type $s (struct))", ""),
        (
            "shared memory",
            "",
            "(drop (i32.atomic.load (i32.const 0)))",
        ),
        (
            "memory64 (a 64-bit table)",
            "(table $t64 i64 1 funcref)",
            "",
        ),
        ("multi-memory", "(memory $second 1)", ""),
        (
            "relaxed SIMD",
            "",
            "(drop (i32x4.relaxed_trunc_f32x4_s (v128.const i32x4 0 0 0 0)))",
        ),
        ("tail calls", "(func $a (return_call $b)) (func $b)", ""),
        (
            "typed function references",
            "(func $f (param (ref func)))",
            "",
        ),
        ("exceptions", "(tag $e)", ""),
        (
            "wide arithmetic",
            "",
            "(drop (drop (i64.add128 (i64.const 0) (i64.const 0) (i64.const 0) (i64.const 0))))",
        ),
    ];
    for (what, extra, body) in cases {
        refused_proposal(what, &guests::hook_with(extra, body));
    }
}

/// What guest toolchains emit still loads and runs: SIMD, bulk memory, sign extension,
/// saturating conversions, multi-value, reference types (the overlong `call_indirect`
/// encoding, `ref.null`, `table.grow`), floats, mutable globals and extended constant
/// expressions (componentize-py's CPython has them).
#[tokio::test]
async fn proposals_toolchains_emit_still_run() {
    let bytes = guests::hook_with(
        r#"(table $t 1 funcref)
           (global $g (mut f64) (f64.const 1.5))
           (global $sum i32 (i32.add (i32.const 1) (i32.const 2)))
           (func $two (result i32 i64) (i32.const 1) (i64.const 2))
           (func $nop)
           (elem (table $t) (i32.const 0) func $nop)"#,
        r#"(drop (i32x4.extract_lane 0 (i32x4.add (i32x4.splat (i32.const 1)) (i32x4.splat (i32.const 2)))))
           (memory.fill (i32.const 4096) (i32.const 7) (i32.const 64))
           (memory.copy (i32.const 5000) (i32.const 4096) (i32.const 64))
           (drop (i32.extend8_s (i32.const 255)))
           (drop (i32.trunc_sat_f64_s (f64.const 1e100)))
           (drop (drop (call $two)))
           (drop (table.grow $t (ref.null func) (i32.const 1)))
           (call_indirect $t (i32.const 0))
           (global.set $g (f64.mul (global.get $g) (f64.const 2)))"#,
    );
    let response = typed(run(runtime(), &bytes).await);
    assert!(response.additional_contexts.is_empty());
}

/// The canary: the component of GHSA-rc4p-x33f-vpr2 on an engine configured as wasmtime's
/// defaults (what hookbox used before the allow-list) aborts the process — checked in a child
/// process, the test binary itself. It shows the refusal above is what stands between a tenant's
/// upload and every tenant going down. When wasmtime is bumped to a release with the fix (48.0.9
/// or later), this child stops aborting and the test fails: keep the allow-list, and update
/// SECURITY.md's section on the advisory.
#[test]
fn unmitigated_wasmtime_aborts_on_the_gc_subtype_component() {
    const CHILD: &str = "HOOKBOX_TEST_UNMITIGATED_ABORT";
    if std::env::var_os(CHILD).is_some() {
        // In the child: wasmtime's default configuration, as hookbox had it.
        let engine = wasmtime::Engine::new(&wasmtime::Config::new()).unwrap();
        let component =
            wasmtime::component::Component::new(&engine, guests::subtype_call_indirect()).unwrap();
        let mut linker = wasmtime::component::Linker::<()>::new(&engine);
        linker.define_unknown_imports_as_traps(&component).unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        // The start function runs the `call_indirect`: this does not return.
        let _ = linker.instantiate(&mut store, &component);
        eprintln!("CHILD-SURVIVED");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "proposals::unmitigated_wasmtime_aborts_on_the_gc_subtype_component",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(6),
        "expected SIGABRT, got {:?}; stderr: {stderr}",
        out.status
    );
    assert!(stderr.contains("entered unreachable code"), "{stderr}");
    assert!(!stderr.contains("CHILD-SURVIVED"), "{stderr}");
}
