//! The WebAssembly proposals the engine accepts: an allow-list, so a component using anything
//! else is refused when it is validated (at load, `incompatible_component`), never compiled.
//!
//! Why an allow-list: wasmtime 48.0.8 turns on every proposal of its "Wasm 3.0" set that its
//! compiler supports, whether or not this build can run it. Its GC proposal's *type rules* are on
//! even though hookbox builds wasmtime without the `gc` cargo feature, and then the runtime's
//! `is_subtype` libcall is `unreachable!()` inside an `extern "C"` function: a 237-byte component
//! with a non-final function type (`(type $t (sub (func)))`) and a `call_indirect` through it to a
//! function of another type aborts the whole process (GHSA-rc4p-x33f-vpr2, fixed in 48.0.9, which
//! the registry does not serve). Validation with GC off refuses such a type ("gc proposal must be
//! enabled to use subtypes"), and the compiled code only calls that libcall for a non-final
//! expected type (or GC instructions), so nothing that validates can reach it. Everything
//! hooks do not need is off for the same reason: what a guest cannot express, it cannot attack.
//!
//! | proposal | | why |
//! | --- | --- | --- |
//! | MVP, mutable globals, sign extension, saturating float-to-int, multi-value, bulk memory, reference types (`funcref` tables; `externref` needs GC types, off), floats, SIMD, extended constant expressions | on | what guest toolchains emit: Rust's default `wasm32-wasip2` features, wasi-sdk (C), componentize-js, and componentize-py (whose CPython uses `i32.add` in constant expressions) |
//! | component model (synchronous) | on | hooks are components |
//! | GC (`sub` types, rec groups, `struct`/`array`, casts) | **off** | GHSA-rc4p-x33f-vpr2: its type rules reach the abort above; this build has no collector |
//! | threads (shared memory, atomics, `memory.atomic.wait`/`notify`) | **off** | GHSA-2674-w29h-wqvj (atomics wait/notify) and RUSTSEC-2025-0118 (shared memory API); a hook is one call on one thread |
//! | memory64 (64-bit memories and tables) | **off** | a hook's memory is capped far below 4 GiB; 64-bit tables had GHSA-m9w2-8782-2946, and huge tables RUSTSEC-2026-0114 |
//! | multi-memory | **off** in a guest's modules; on in the engine for wasmtime's own adapters | a guest module defines at most one memory (what Rust, C, componentize-js and componentize-py emit). But wasmtime compiles each call between two core instances with *different* memories (two composed components; componentize-qjs's output) through an adapter module that uses both, and validates that adapter with the engine's features: with multi-memory off in the engine, wasmtime 48.0.8 panics on its own adapter ("invalid adapter module generated: multiple memories") — one plugin's component took the whole `hookbox run` down, and every other plugin's guard with it. So the engine accepts it and [`validate_guest`] holds guests to one memory per module |
//! | relaxed SIMD | **off** | results differ between hosts, so a replayed verdict could differ; no toolchain emits it by default |
//! | tail calls | **off** | no toolchain emits it by default; GHSA-q8hx-mm92-4wvg crashed the host with tail calls and stack traces |
//! | typed function references (`call_ref`, non-nullable references) | **off** | only emitted for GC languages; another indirect-call path |
//! | exceptions, legacy exceptions, stack switching, custom page sizes, wide arithmetic, shared-everything threads, memory control | **off** | not needed; exceptions and stack switching need GC, the rest are unfinished proposals |
//! | component-model async, threading, error context, GC, map, memory64, fixed-length lists, `implements` | **off** | hooks are one synchronous call (`concurrency_support(false)`) |
//!
//! A guest's own modules are checked against [`ACCEPTED`] by [`validate_guest`] before wasmtime
//! compiles them; the engine validates with [`ENGINE`] (one proposal more, for its adapters).
//!
//! Changing this list changes the engine's compatibility hash, so compiled components cached by
//! an engine with other proposals are recompiled, never reused.

use wasmtime::{Config, WasmFeatures};

/// Everything a hook component may use; every other proposal is refused at validation.
pub(crate) const ACCEPTED: WasmFeatures = WasmFeatures::MUTABLE_GLOBAL
    .union(WasmFeatures::SATURATING_FLOAT_TO_INT)
    .union(WasmFeatures::SIGN_EXTENSION)
    .union(WasmFeatures::MULTI_VALUE)
    .union(WasmFeatures::BULK_MEMORY)
    .union(WasmFeatures::REFERENCE_TYPES)
    .union(WasmFeatures::FLOATS)
    .union(WasmFeatures::SIMD)
    .union(WasmFeatures::EXTENDED_CONST)
    .union(WasmFeatures::COMPONENT_MODEL);

/// What the engine validates with: [`ACCEPTED`] and multi-memory, which wasmtime's own fused
/// adapters use between two core instances that each have a memory. Guests never get it:
/// [`validate_guest`] checks their modules against [`ACCEPTED`] first.
pub(crate) const ENGINE: WasmFeatures = ACCEPTED.union(WasmFeatures::MULTI_MEMORY);

/// Turns off every proposal outside [`ENGINE`] (and leaves those at wasmtime's defaults, which
/// enable them all in this build).
pub(crate) fn restrict(cfg: &mut Config) {
    cfg.wasm_features(WasmFeatures::all().difference(ENGINE), false);
}

/// Validates a component's own modules against [`ACCEPTED`], before wasmtime compiles it with the
/// engine's wider [`ENGINE`] set: what a guest cannot express, it cannot attack.
pub(crate) fn validate_guest(bytes: &[u8]) -> Result<(), wasmparser::BinaryReaderError> {
    wasmparser::Validator::new_with_features(ACCEPTED)
        .validate_all(bytes)
        .map(drop)
}

/// After `bytes` failed to validate: whether they fail validation with the accepted proposals
/// and pass it with every proposal on, i.e. the component uses a proposal the engine refuses
/// (rather than being malformed). Only called on that failure path: it validates twice more.
pub(crate) fn uses_a_refused_proposal(bytes: &[u8]) -> bool {
    let valid = |features| {
        wasmparser::Validator::new_with_features(features)
            .validate_all(bytes)
            .is_ok()
    };
    !valid(ACCEPTED) && valid(WasmFeatures::all())
}

/// The sentence added to a validation error caused by a refused proposal.
pub(crate) const REFUSED_HINT: &str = "it uses a WebAssembly proposal hookbox does not run (hooks get the MVP with mutable globals, sign extension, saturating conversions, multi-value, bulk memory, reference types, floats, SIMD and extended constant expressions; GC, threads and atomics, memory64, multi-memory, relaxed SIMD, tail calls, typed function references, exceptions and the others are refused: see SECURITY.md, \"WebAssembly proposals\")";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defect_and_the_advisories_are_outside_the_list() {
        for refused in [
            WasmFeatures::GC,
            WasmFeatures::THREADS,
            WasmFeatures::SHARED_EVERYTHING_THREADS,
            WasmFeatures::MEMORY64,
            WasmFeatures::MULTI_MEMORY,
            WasmFeatures::RELAXED_SIMD,
            WasmFeatures::TAIL_CALL,
            WasmFeatures::FUNCTION_REFERENCES,
            WasmFeatures::EXCEPTIONS,
            WasmFeatures::STACK_SWITCHING,
            WasmFeatures::CM_ASYNC,
        ] {
            assert!(!ACCEPTED.intersects(refused), "{refused:?}");
        }
        // The engine adds one proposal, for its own adapters; guests are validated without it.
        assert_eq!(ENGINE.difference(ACCEPTED), WasmFeatures::MULTI_MEMORY);
    }
}
