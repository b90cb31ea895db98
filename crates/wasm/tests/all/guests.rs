//! Hostile and ordinary guests written as WAT and wrapped into components with wit-component, so
//! the suite needs no wasm toolchain. Typed guests implement the canonical ABI of
//! `handle: func(event) -> result<response, string>` by hand:
//!
//! - the event record (156 bytes) arrives by pointer; `name` is at offset 0, `payload` at 148;
//! - the result is returned by pointer to a 96-byte area at 1024: discriminant at 1024
//!   (0 = ok), the response at 1028: `additional-contexts` (ptr, len) at 1028, `block-reason` at
//!   1036, `permission` at 1060 (decision byte at 1064), `updated-input` at 1080; an `err`
//!   string is at 1028.

use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::Resolve;

const HOOK_WIT: &str = include_str!("../../../../wit/hook.wit");

const WASI_IO: &str = r#"
package wasi:io@0.2.12;
interface error { resource error; }
interface streams {
    use error.{error};
    variant stream-error { last-operation-failed(error), closed }
    resource input-stream { blocking-read: func(len: u64) -> result<list<u8>, stream-error>; }
    resource output-stream { blocking-write-and-flush: func(contents: list<u8>) -> result<_, stream-error>; }
}
"#;

const WASI_CLI: &str = r#"
package wasi:cli@0.2.12;
interface stdin { use wasi:io/streams@0.2.12.{input-stream}; get-stdin: func() -> input-stream; }
interface stdout { use wasi:io/streams@0.2.12.{output-stream}; get-stdout: func() -> output-stream; }
interface stderr { use wasi:io/streams@0.2.12.{output-stream}; get-stderr: func() -> output-stream; }
interface exit { exit-with-code: func(status-code: u8); }
interface run { run: func() -> result; }
"#;

/// `wasi:cli/exit` as toolchains built against WASI 0.2.0 import it, `exit-with-code` included
/// (there behind the `cli-exit-with-code` feature gate; stable since 0.2.12).
const WASI_CLI_020: &str = r#"
package wasi:cli@0.2.0;
interface exit { exit-with-code: func(status-code: u8); }
"#;

/// Stand-ins for interfaces a hook must not get; only their names matter to the host.
const FORBIDDEN: &[&str] = &[
    "package wasi:sockets@0.2.0; interface tcp { connect-anywhere: func() -> u32; }",
    "package wasi:http@0.2.0; interface outgoing-handler { handle: func() -> u32; }",
    "package evil:pkg; interface thing { steal: func() -> u32; }",
];

const WORLDS: &str = r#"
package test:guests;
world cmd {
    import wasi:cli/stdin@0.2.12;
    import wasi:cli/stdout@0.2.12;
    import wasi:cli/stderr@0.2.12;
    import wasi:cli/exit@0.2.12;
    export wasi:cli/run@0.2.12;
}
world cmd-exit-020 {
    import wasi:cli/stderr@0.2.12;
    import wasi:cli/exit@0.2.0;
    export wasi:cli/run@0.2.12;
}
world hook-sockets { import hookbox:hook/host@0.1.0; import wasi:sockets/tcp@0.2.0; export hookbox:hook/handler@0.1.0; }
world hook-http { import wasi:http/outgoing-handler@0.2.0; export hookbox:hook/handler@0.1.0; }
world hook-evil { import evil:pkg/thing; export hookbox:hook/handler@0.1.0; }
world nothing { export dummy: func(); }
"#;

/// Memory, a bump allocator and the result area; shared by every guest.
const PRELUDE: &str = r#"
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 8192))
  (func $realloc (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.sub (local.get 2) (i32.const 1)))
                           (i32.sub (i32.const 0) (local.get 2))))
    (global.set $heap (i32.add (local.get $p) (local.get 3)))
    (block $ok
      (br_if $ok (i32.le_u (global.get $heap) (i32.shl (memory.size) (i32.const 16))))
      (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (global.get $heap)
                                                              (i32.shl (memory.size) (i32.const 16)))
                                                     (i32.const 16))
                                        (i32.const 1)))
                  (i32.const -1))
        (then unreachable)))
    (local.get $p))
"#;

/// A resolve with stand-in WASI packages, `hook_wit`, the forbidden packages and (for the real
/// hook package) the test worlds; returns the package holding `world`.
fn resolve_for(hook_wit: &str, world: &str) -> (Resolve, wit_parser::PackageId) {
    let mut r = Resolve::new();
    r.push_str("io.wit", WASI_IO).unwrap();
    r.push_str("cli.wit", WASI_CLI).unwrap();
    r.push_str("cli-0.2.0.wit", WASI_CLI_020).unwrap();
    let hook = r.push_str("hook.wit", hook_wit).unwrap();
    for (i, src) in FORBIDDEN.iter().enumerate() {
        r.push_str(format!("forbidden{i}.wit"), src).unwrap();
    }
    if world == "hook" {
        return (r, hook);
    }
    let worlds = r.push_str("worlds.wit", WORLDS).unwrap();
    (r, worlds)
}

/// Encodes the core module `wat` as a component of `world` (`hook` of `hook_wit`, or one of the
/// test worlds).
fn encode(hook_wit: &str, world: &str, wat: &str) -> Vec<u8> {
    let (resolve, pkg) = resolve_for(hook_wit, world);
    let world = resolve.select_world(&[pkg], Some(world)).unwrap();
    let mut module = wat::parse_str(wat).unwrap();
    wit_component::embed_component_metadata(&mut module, &resolve, world, StringEncoding::UTF8)
        .unwrap();
    ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap()
}

/// A typed hook whose `handle` runs `body` (with `$ev`, the event pointer) then returns the
/// result area; `extra` adds module fields (imports, data, functions).
fn typed_in(hook_wit: &str, world: &str, version: &str, extra: &str, body: &str) -> Vec<u8> {
    let export = if version.is_empty() {
        "hookbox:hook/handler#handle".to_owned()
    } else {
        format!("hookbox:hook/handler@{version}#handle")
    };
    encode(
        hook_wit,
        world,
        &format!(
            r#"(module {extra} {PRELUDE}
                 (func (export "{export}") (param $ev i32) (result i32) {body} (i32.const 1024)))"#
        ),
    )
}

fn typed(extra: &str, body: &str) -> Vec<u8> {
    typed_in(HOOK_WIT, "hook", "0.1.0", extra, body)
}

const LOG: &str = r#"(import "hookbox:hook/host@0.1.0" "log" (func $log (param i32 i32 i32)))"#;
const CONFIG: &str = r#"(import "hookbox:hook/host@0.1.0" "config" (func $config (param i32)))"#;

/// A typed hook whose module adds `extra` and whose `handle` runs `body`, then answers the empty
/// response: for guests written per test (`proposals.rs`).
pub(crate) fn hook_with(extra: &str, body: &str) -> Vec<u8> {
    typed(extra, body)
}

/// The shape of GHSA-rc4p-x33f-vpr2: a non-final function type (`sub`, a GC proposal rule) and a
/// `call_indirect` through it to a function of another type, run by the module's start function
/// (so at instantiation) and by `handle`. wasmtime 48.0.8 without its `gc` cargo feature answers
/// the type check with an `unreachable!()` inside an `extern "C"` libcall: the process aborts.
/// Never run it on an engine that accepts it, except in a child process.
pub(crate) fn subtype_call_indirect() -> Vec<u8> {
    typed(
        r#"(type $sub (sub (func)))
           (type $other (func))
           (table $t 1 funcref)
           (elem (table $t) (i32.const 0) func $callee)
           (func $callee (type $other))
           (func $abort (call_indirect $t (type $sub) (i32.const 0)))
           (start $abort)"#,
        "(call $abort)",
    )
}

/// A `wasi:cli/run` command composed of two components (siblings: the component model traps a
/// call into a parent or a child) whose core instances have their own linear memories, one
/// calling the other with a string through the canonical ABI — as `wac` composes components, or
/// componentize-qjs's output. wasmtime compiles that call into an adapter
/// module using both memories (multi-memory), which wasmtime 48.0.8 panicked on when the engine
/// had multi-memory off. `run` answers `ok` only if the callee read "hello" in its own memory.
pub(crate) fn two_memories_cmd() -> Vec<u8> {
    wat::parse_str(
        r#"(component
  (component $callee
    (core module $callee
      (memory (export "memory") 1)
      (global $heap (mut i32) (i32.const 1024))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32)
        (local $p i32)
        (local.set $p (global.get $heap))
        (global.set $heap (i32.add (global.get $heap) (local.get 3)))
        (local.get $p))
      ;; 5 if the string is "hello" (copied into this memory by the adapter), else 0
      (func (export "len") (param $ptr i32) (param $len i32) (result i32)
        (if (result i32)
          (i32.and (i32.eq (local.get $len) (i32.const 5))
                   (i32.eq (i32.load (local.get $ptr)) (i32.const 0x6c6c6568)))
          (then (local.get $len))
          (else (i32.const 0)))))
    (core instance $callee (instantiate $callee))
    (func $len (param "s" string) (result u32)
      (canon lift (core func $callee "len") (memory (core memory $callee "memory"))
        (realloc (core func $callee "realloc"))))
    (export "len" (func $len)))
  (instance $callee (instantiate $callee))
  (alias export $callee "len" (func $len))
  (component $caller
    (import "len" (func $len (param "s" string) (result u32)))
    (core module $memory (memory (export "memory") 1))
    (core instance $memory (instantiate $memory))
    (core func $len_lowered (canon lower (func $len) (memory (core memory $memory "memory"))))
    (core module $caller
      (import "env" "memory" (memory 1))
      (import "env" "len" (func $len (param i32 i32) (result i32)))
      (data (i32.const 16) "hello")
      (func (export "run") (result i32)
        (if (result i32) (i32.eq (call $len (i32.const 16) (i32.const 5)) (i32.const 5))
          (then (i32.const 0))
          (else (i32.const 1)))))
    (alias core export $memory "memory" (core memory $shared))
    (core instance $env
      (export "memory" (memory $shared))
      (export "len" (func $len_lowered)))
    (core instance $caller (instantiate $caller (with "env" (instance $env))))
    (func $run (result (result)) (canon lift (core func $caller "run")))
    (export "run" (func $run)))
  (instance $caller (instantiate $caller (with "len" (func $len))))
  (alias export $caller "run" (func $run))
  (instance $run (export "run" (func $run)))
  (export "wasi:cli/run@0.2.12" (instance $run)))"#,
    )
    .unwrap()
}

/// Returns the empty response.
pub(crate) fn ok() -> Vec<u8> {
    typed("", "")
}

/// The `ok` guest with `n` in a data segment: as many distinct components (distinct bytes,
/// distinct cache entries) as needed.
pub(crate) fn numbered(n: u32) -> Vec<u8> {
    typed(&format!(r#"(data (i32.const 300) "guest {n}")"#), "")
}

/// Logs `hello from wat`, then answers with contexts `[event.name, event.payload, config()]`.
pub(crate) fn echo() -> Vec<u8> {
    typed(
        &format!(r#"{LOG} {CONFIG} (data (i32.const 256) "hello from wat")"#),
        r#"(call $log (i32.const 2) (i32.const 256) (i32.const 14))
           (call $config (i32.const 512))
           (i32.store (i32.const 2048) (i32.load (local.get $ev)))
           (i32.store (i32.const 2052) (i32.load offset=4 (local.get $ev)))
           (i32.store (i32.const 2056) (i32.load offset=148 (local.get $ev)))
           (i32.store (i32.const 2060) (i32.load offset=152 (local.get $ev)))
           (i32.store (i32.const 2064) (i32.load (i32.const 512)))
           (i32.store (i32.const 2068) (i32.load (i32.const 516)))
           (i32.store (i32.const 1028) (i32.const 2048))
           (i32.store (i32.const 1032) (i32.const 3))"#,
    )
}

/// Blocks with `no rm`, denies, and rewrites the input to `{"command":"ls"}`.
pub(crate) fn deny() -> Vec<u8> {
    typed(
        r#"(data (i32.const 256) "no rm") (data (i32.const 272) "{\"command\":\"ls\"}")"#,
        r#"(i32.store8 (i32.const 1036) (i32.const 1))
           (i32.store (i32.const 1040) (i32.const 256))
           (i32.store (i32.const 1044) (i32.const 5))
           (i32.store8 (i32.const 1060) (i32.const 1))
           (i32.store8 (i32.const 1064) (i32.const 3))
           (i32.store8 (i32.const 1080) (i32.const 1))
           (i32.store (i32.const 1084) (i32.const 272))
           (i32.store (i32.const 1088) (i32.const 16))"#,
    )
}

/// Answers with `updated-input` = `{not json`.
pub(crate) fn bad_json() -> Vec<u8> {
    typed(
        r#"(data (i32.const 256) "{not json")"#,
        r#"(i32.store8 (i32.const 1080) (i32.const 1))
           (i32.store (i32.const 1084) (i32.const 256))
           (i32.store (i32.const 1088) (i32.const 9))"#,
    )
}

/// Returns `err("boom")`.
pub(crate) fn guest_err() -> Vec<u8> {
    typed(
        r#"(data (i32.const 256) "boom")"#,
        r#"(i32.store8 (i32.const 1024) (i32.const 1))
           (i32.store (i32.const 1028) (i32.const 256))
           (i32.store (i32.const 1032) (i32.const 4))"#,
    )
}

/// Loops forever.
pub(crate) fn spin() -> Vec<u8> {
    typed("", "(loop $l (br $l))")
}

/// Counts down from 5 000 000, then answers.
pub(crate) fn count() -> Vec<u8> {
    typed(
        "",
        r#"(local $i i32) (local.set $i (i32.const 5000000))
           (loop $l (local.set $i (i32.sub (local.get $i) (i32.const 1))) (br_if $l (local.get $i)))"#,
    )
}

/// Counts down from `n`, then answers: about six fuel units per step, in one loop without a call
/// (so compiled code keeps its fuel count in a register until `handle` returns).
pub(crate) fn count_n(n: u32) -> Vec<u8> {
    work_then(n, "")
}

/// Counts down from `n` in `handle`'s own loop — at least six fuel units per step, no call on
/// the way — then runs `end` in the same function: how a run ends after known work, for the
/// fuel accounting of every ending.
pub(crate) fn work_then(n: u32, end: &str) -> Vec<u8> {
    typed(
        "",
        &format!(
            r#"(local $i i32) (local.set $i (i32.const {n}))
               (loop $l (local.set $i (i32.sub (local.get $i) (i32.const 1))) (br_if $l (local.get $i)))
               {end}"#
        ),
    )
}

/// Grows its memory by 8 MiB (traps if refused).
pub(crate) fn grow() -> Vec<u8> {
    typed(
        "",
        "(if (i32.eq (memory.grow (i32.const 128)) (i32.const -1)) (then unreachable))",
    )
}

/// Starts with a 125 MiB memory.
pub(crate) fn big_memory() -> Vec<u8> {
    let wat = format!(
        r#"(module {} (func (export "hookbox:hook/handler@0.1.0#handle") (param i32) (result i32) (i32.const 1024)))"#,
        PRELUDE.replace(
            r#"(memory (export "memory") 1)"#,
            r#"(memory (export "memory") 2000)"#
        )
    );
    encode(HOOK_WIT, "hook", &wat)
}

/// Grows a table to 5 001 elements.
pub(crate) fn table() -> Vec<u8> {
    typed(
        "(table $t 1 funcref)",
        "(drop (table.grow $t (ref.null func) (i32.const 5000)))",
    )
}

/// Executes `unreachable`.
pub(crate) fn trap() -> Vec<u8> {
    typed("", "unreachable")
}

/// Recurses without end.
pub(crate) fn recurse() -> Vec<u8> {
    typed("(func $r (call $r))", "(call $r)")
}

/// Recurses 1 000 deep, then answers.
pub(crate) fn recurse_bounded() -> Vec<u8> {
    typed(
        "(func $r (param i32) (if (local.get 0) (then (call $r (i32.sub (local.get 0) (i32.const 1))))))",
        "(call $r (i32.const 1000))",
    )
}

/// Logs 10 times.
pub(crate) fn chatty() -> Vec<u8> {
    typed(
        &format!(r#"{LOG} (data (i32.const 256) "line")"#),
        r#"(local $i i32) (local.set $i (i32.const 10))
           (loop $l (call $log (i32.const 1) (i32.const 256) (i32.const 4))
                    (local.set $i (i32.sub (local.get $i) (i32.const 1))) (br_if $l (local.get $i)))"#,
    )
}

/// A typed hook that also imports `wasi:sockets/tcp`.
pub(crate) fn sockets() -> Vec<u8> {
    typed_in(
        HOOK_WIT,
        "hook-sockets",
        "0.1.0",
        r#"(import "wasi:sockets/tcp@0.2.0" "connect-anywhere" (func $c (result i32)))"#,
        "(drop (call $c))",
    )
}

/// A typed hook that also imports `wasi:http/outgoing-handler`.
pub(crate) fn http() -> Vec<u8> {
    typed_in(
        HOOK_WIT,
        "hook-http",
        "0.1.0",
        r#"(import "wasi:http/outgoing-handler@0.2.0" "handle" (func $c (result i32)))"#,
        "(drop (call $c))",
    )
}

/// A typed hook that imports an interface no host offers.
pub(crate) fn evil_import() -> Vec<u8> {
    typed_in(
        HOOK_WIT,
        "hook-evil",
        "0.1.0",
        r#"(import "evil:pkg/thing" "steal" (func $c (result i32)))"#,
        "(drop (call $c))",
    )
}

/// The `ok` guest built against `hookbox:hook@0.2.0`.
pub(crate) fn wrong_version() -> Vec<u8> {
    let wit = HOOK_WIT.replace("package hookbox:hook@0.1.0;", "package hookbox:hook@0.2.0;");
    typed_in(&wit, "hook", "0.2.0", "", "")
}

/// The `ok` guest built against an unversioned `hookbox:hook`.
pub(crate) fn unversioned() -> Vec<u8> {
    let wit = HOOK_WIT.replace("package hookbox:hook@0.1.0;", "package hookbox:hook;");
    typed_in(&wit, "hook", "", "", "")
}

/// A component exporting only a bare function.
pub(crate) fn no_world() -> Vec<u8> {
    encode(HOOK_WIT, "nothing", r#"(module (func (export "dummy")))"#)
}

/// A core module (not a component).
pub(crate) fn core_module() -> Vec<u8> {
    wat::parse_str("(module (func (export \"handle\")))").unwrap()
}

const CMD_IMPORTS: &str = r#"
  (import "wasi:cli/stdin@0.2.12" "get-stdin" (func $get_stdin (result i32)))
  (import "wasi:cli/stdout@0.2.12" "get-stdout" (func $get_stdout (result i32)))
  (import "wasi:cli/stderr@0.2.12" "get-stderr" (func $get_stderr (result i32)))
  (import "wasi:cli/exit@0.2.12" "exit-with-code" (func $exit (param i32)))
  (import "wasi:io/streams@0.2.12" "[method]input-stream.blocking-read" (func $read (param i32 i64 i32)))
  (import "wasi:io/streams@0.2.12" "[method]output-stream.blocking-write-and-flush"
    (func $write (param i32 i32 i32 i32)))
"#;

fn command(extra: &str, body: &str) -> Vec<u8> {
    encode(
        HOOK_WIT,
        "cmd",
        &format!(
            r#"(module {CMD_IMPORTS} {PRELUDE} {extra}
                 (func (export "wasi:cli/run@0.2.12#run") (result i32) {body} (i32.const 0)))"#
        ),
    )
}

/// Copies stdin to stdout, exits 0.
pub(crate) fn cmd_echo() -> Vec<u8> {
    command(
        "",
        r#"(local $in i32) (local $out i32)
           (local.set $in (call $get_stdin))
           (local.set $out (call $get_stdout))
           (block $done
             (loop $l
               (call $read (local.get $in) (i64.const 4096) (i32.const 512))
               (br_if $done (i32.load8_u (i32.const 512)))
               (call $write (local.get $out) (i32.load (i32.const 516)) (i32.load (i32.const 520)) (i32.const 600))
               (br $l)))"#,
    )
}

/// Writes `blocked by wat` to stderr and exits with code 2.
pub(crate) fn cmd_exit2() -> Vec<u8> {
    command(
        r#"(data (i32.const 256) "blocked by wat\n")"#,
        r#"(call $write (call $get_stderr) (i32.const 256) (i32.const 15) (i32.const 600))
           (call $exit (i32.const 2))"#,
    )
}

/// Writes `blocked by wat` to stderr and exits with code 2 through `exit-with-code` imported
/// from `wasi:cli/exit@0.2.0`, as an older toolchain would.
pub(crate) fn cmd_exit2_wasi_020() -> Vec<u8> {
    encode(
        HOOK_WIT,
        "cmd-exit-020",
        &format!(
            r#"(module
                 (import "wasi:cli/stderr@0.2.12" "get-stderr" (func $get_stderr (result i32)))
                 (import "wasi:cli/exit@0.2.0" "exit-with-code" (func $exit (param i32)))
                 (import "wasi:io/streams@0.2.12" "[method]output-stream.blocking-write-and-flush"
                   (func $write (param i32 i32 i32 i32)))
                 {PRELUDE}
                 (data (i32.const 256) "blocked by wat\n")
                 (func (export "wasi:cli/run@0.2.12#run") (result i32)
                   (call $write (call $get_stderr) (i32.const 256) (i32.const 15) (i32.const 600))
                   (call $exit (i32.const 2))
                   (i32.const 0)))"#
        ),
    )
}

/// Writes 1 MiB of `x` to stdout in 4 KiB chunks, exits 0.
pub(crate) fn cmd_flood() -> Vec<u8> {
    command(
        "",
        r#"(local $i i32) (local $out i32)
           (memory.fill (i32.const 4096) (i32.const 120) (i32.const 4096))
           (local.set $out (call $get_stdout))
           (local.set $i (i32.const 256))
           (loop $l
             (call $write (local.get $out) (i32.const 4096) (i32.const 4096) (i32.const 600))
             (local.set $i (i32.sub (local.get $i) (i32.const 1)))
             (br_if $l (local.get $i)))"#,
    )
}

/// Loops forever as a command.
pub(crate) fn cmd_spin() -> Vec<u8> {
    command("", "(loop $l (br $l))")
}
