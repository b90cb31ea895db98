//! `hookbox-js-build RUNTIME.wasm HOOK.js OUT.wasm`: builds a JavaScript hook into a component of
//! hookbox's `hook` world, with the interpreter's state made here, once, instead of per event.
//!
//! `RUNTIME.wasm` is the QuickJS runtime component (`runtime/`), which exports
//! `wizer-initialize(source)` beside the hook's handler. This tool instantiates it, calls the
//! initialiser with the hook's source (QuickJS compiles and evaluates the module and looks up
//! `handler.handle`), and snapshots the instance's memories and globals into a new component
//! (wasmtime's wizer): every event then starts from that snapshot and only runs `handle`. The
//! output still exports the initialiser (wasmtime-wizer 48 cannot drop it cleanly); hookbox
//! calls only the handler.
//!
//! The initialiser runs with no host: every import is a function that traps, except the clocks
//! (QuickJS reads them when it makes a runtime and a context) and the hash seed (Rust's
//! `HashMap`). So module top-level code that calls `config()` or `log()` fails the build, with
//! the trap named.

use std::future::Future;
use std::path::Path;
use std::pin::pin;
use std::process::ExitCode;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use wasmtime::component::{Component, Instance, Lift, Linker, Val, WasmList};
use wasmtime::{Config, Engine, Store};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

/// The runtime's initialiser export.
const INIT: &str = "wizer-initialize";
/// The largest hook source read, in bytes (a hook is a small module; this bounds a mistake).
const MAX_SOURCE_BYTES: u64 = 4 << 20;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [runtime, source, output] = args.as_slice() else {
        eprintln!("usage: hookbox-js-build RUNTIME.wasm HOOK.js OUT.wasm");
        return ExitCode::from(2);
    };
    match build(Path::new(runtime), Path::new(source), Path::new(output)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookbox-js-build: {e}");
            ExitCode::FAILURE
        }
    }
}

fn build(runtime: &Path, source: &Path, output: &Path) -> Result<(), String> {
    let started = Instant::now();
    let wasm = std::fs::read(runtime)
        .map_err(|e| format!("cannot read the runtime {}: {e}", runtime.display()))?;
    let size = std::fs::metadata(source)
        .map_err(|e| format!("cannot read {}: {e}", source.display()))?
        .len();
    if size > MAX_SOURCE_BYTES {
        return Err(format!(
            "{} is {size} bytes, over the {MAX_SOURCE_BYTES}-byte limit for a hook's source",
            source.display()
        ));
    }
    let text = std::fs::read_to_string(source)
        .map_err(|e| format!("cannot read {} as UTF-8 text: {e}", source.display()))?;

    let mut wizer = Wizer::new();
    // Kept: wasmtime-wizer 48 removes the component's export but leaves the alias of the core
    // function behind it, which makes the output invalid. hookbox calls only the handler.
    wizer.init_func(INIT).keep_init_func(true);
    let (cx, instrumented) = wizer.instrument_component(&wasm).map_err(|e| {
        format!(
            "{}: not a QuickJS runtime component: {e:#}",
            runtime.display()
        )
    })?;
    let engine = Engine::new(&Config::new()).map_err(|e| format!("wasmtime: {e:#}"))?;
    let component = Component::new(&engine, &instrumented)
        .map_err(|e| format!("cannot compile {}: {e:#}", runtime.display()))?;
    let mut linker: Linker<()> = Linker::new(&engine);
    build_time_imports(&mut linker)
        .map_err(|e| format!("cannot link the clocks and the seed: {e:#}"))?;
    linker
        .define_unknown_imports_as_traps(&component)
        .map_err(|e| format!("cannot link {}: {e:#}", runtime.display()))?;
    let mut store = Store::new(&engine, ());
    let instance = linker
        .instantiate(&mut store, &component)
        .map_err(|e| format!("cannot instantiate {}: {e:#}", runtime.display()))?;
    let init = instance
        .get_func(&mut store, INIT)
        .ok_or_else(|| format!("{} does not export `{INIT}`", runtime.display()))?;
    let mut result = [Val::Bool(false)];
    init.call(&mut store, &[Val::String(text)], &mut result)
        .map_err(|e| {
            format!(
                "{}: the module's top-level code called the host or trapped while it was \
                 evaluated at build time (call `config()` and `log()` inside `handle`): {e:#}",
                source.display()
            )
        })?;
    match &result[0] {
        Val::Result(Ok(_)) => {}
        Val::Result(Err(Some(message))) => match &**message {
            Val::String(m) => return Err(format!("{}: {m}", source.display())),
            other => return Err(format!("{}: {other:?}", source.display())),
        },
        other => return Err(format!("`{INIT}` answered {other:?}")),
    }
    let snapshot = block_on(wizer.snapshot_component(
        &cx,
        &mut Snapshotter {
            store: &mut store,
            instance,
        },
    ))
    .map_err(|e| format!("cannot snapshot the initialised instance: {e:#}"))?;
    let partial = output.with_extension("wasm.partial");
    std::fs::write(&partial, &snapshot)
        .and_then(|()| std::fs::rename(&partial, output))
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    eprintln!(
        "built {} ({} bytes) in {:.1} s",
        output.display(),
        snapshot.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// What the initialiser may call: `wasi:clocks/wall-clock.now` and `monotonic-clock.now`
/// (QuickJS reads them when it makes a runtime and a context), the build's time; and `wasi:random/insecure-seed` (Rust's `HashMap`s, made by
/// rquickjs, take their keys from it once per instance), a seed drawn from the build's time —
/// so the snapshot's maps hash alike in every event, which is what a fresh instance of a
/// snapshot means; nothing secret depends on it. Every other import traps.
fn build_time_imports(linker: &mut Linker<()>) -> wasmtime::Result<()> {
    for version in ["0.2.0", "0.2.6"] {
        // QuickJS's `JS_NewRuntime` reads the monotonic clock (its GC and interrupt timing).
        let mut monotonic = linker.instance(&format!("wasi:clocks/monotonic-clock@{version}"))?;
        monotonic.func_wrap("now", |_, (): ()| {
            let nanos = std::time::Instant::now()
                .duration_since(*BUILD_STARTED.get_or_init(std::time::Instant::now))
                .as_nanos();
            Ok((u64::try_from(nanos).unwrap_or(u64::MAX),))
        })?;
        monotonic.func_wrap("resolution", |_, (): ()| Ok((1_u64,)))?;
        let mut seed = linker.instance(&format!("wasi:random/insecure-seed@{version}"))?;
        seed.func_wrap("insecure-seed", |_, (): ()| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let nanos = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
            Ok(((nanos, nanos.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15),))
        })?;
        let mut clock = linker.instance(&format!("wasi:clocks/wall-clock@{version}"))?;
        clock.func_new("now", |_, _, _, results| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            // `datetime { seconds: u64, nanoseconds: u32 }`
            results[0] = Val::Record(vec![
                ("seconds".into(), Val::U64(now.as_secs())),
                ("nanoseconds".into(), Val::U32(now.subsec_nanos())),
            ]);
            Ok(())
        })?;
    }
    Ok(())
}

/// The monotonic clock's origin during the build.
static BUILD_STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// wizer's view of the initialised instance: its accessor functions, called synchronously.
struct Snapshotter<'a> {
    store: &'a mut Store<()>,
    instance: Instance,
}

impl Snapshotter<'_> {
    fn call<R: Lift + 'static, R2>(
        &mut self,
        instance: &str,
        func: &str,
        use_ret: impl FnOnce(&mut Store<()>, R) -> R2,
    ) -> R2 {
        // wizer instrumented these accessors into the component itself: one missing is a bug
        // in wizer, not in the hook, so it ends the build with the name.
        let fail = |what: &dyn std::fmt::Display| -> ! {
            panic!("wizer's accessor {instance}#{func}: {what}")
        };
        let (_, outer) = self
            .instance
            .get_export(&mut *self.store, None, instance)
            .unwrap_or_else(|| fail(&"not exported"));
        let (_, inner) = self
            .instance
            .get_export(&mut *self.store, Some(&outer), func)
            .unwrap_or_else(|| fail(&"not exported"));
        let f = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, inner)
            .unwrap_or_else(|e| fail(&e));
        let (ret,) = f.call(&mut *self.store, ()).unwrap_or_else(|e| fail(&e));
        use_ret(&mut *self.store, ret)
    }
}

impl ComponentInstanceState for Snapshotter<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        self.call(instance, func, |store, list: WasmList<u8>| {
            contents(list.as_le_slice(&*store));
        });
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func, |_, r| r)
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func, |_, r| r)
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call(instance, func, |_, r: f32| r.to_bits())
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call(instance, func, |_, r: f64| r.to_bits())
    }
}

/// Runs a future that never waits (every call above is synchronous) to its end.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
