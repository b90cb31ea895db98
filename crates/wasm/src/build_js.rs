//! `build_js`: a JavaScript hook made into a component of hookbox's `hook` world, with the
//! interpreter's state made here, once, instead of per event (`hookbox build-js`).
//!
//! The input is the QuickJS runtime component (`guest-examples/js-quickjs/runtime`, carried by a
//! `hookbox` built with its toolchain), which exports `wizer-initialize(source)` beside the
//! hook's handler. This instantiates it, calls the initialiser with the hook's source (QuickJS
//! compiles and evaluates the module and looks up `handler.handle`), and snapshots the
//! instance's memories and globals into a new component (wasmtime's own wizer, the same
//! version): every event then starts from that snapshot and only runs `handle`. The output
//! still exports the initialiser (wasmtime-wizer 48 cannot drop it cleanly); hookbox calls only
//! the handler.
//!
//! The author's module runs here, at build time, so it is bounded like a hook: fuel
//! ([`JsBuildLimits::fuel`]), linear memory ([`JsBuildLimits::memory_bytes`]) and the source's
//! size ([`JsBuildLimits::max_source_bytes`]). It runs with no host: every import traps,
//! except the clocks (QuickJS reads them when it makes a runtime and a context) and the hash
//! seed (Rust's `HashMap`s in the runtime). So top-level code that calls `config()` or `log()`
//! fails the build, with the trap named.
//!
//! The same file is the pre-initialiser of `guest-examples/js-quickjs/build` (by `#[path]`),
//! which builds the QuickJS guests before any `hookbox` binary exists: it needs only wasmtime,
//! wasmtime-wizer, thiserror and a `restrict_proposals` of its includer.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use wasmtime::component::{Component, Instance, Lift, Linker, Val, WasmList};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

/// The runtime's initialiser export.
const INIT: &str = "wizer-initialize";

/// The bounds of one build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsBuildLimits {
    /// The largest hook source accepted, in bytes. Default **4 MiB** (a hook is a small module;
    /// this bounds a mistake such as a bundled `node_modules`).
    pub max_source_bytes: u64,
    /// Fuel for instantiating the runtime and evaluating the module. Default **10,000,000,000**
    /// (a few seconds of guest work; evaluating the example hook takes ~0.05 % of it): a
    /// top-level loop that never ends fails the build instead of hanging it.
    pub fuel: u64,
    /// The largest linear memory the runtime may grow to while the module is evaluated. Default
    /// **256 MiB** (the snapshot is the memory as it is then: it is also the floor of every
    /// event's memory).
    pub memory_bytes: usize,
}

impl Default for JsBuildLimits {
    fn default() -> JsBuildLimits {
        JsBuildLimits {
            max_source_bytes: 4 << 20,
            fuel: 10_000_000_000,
            memory_bytes: 256 << 20,
        }
    }
}

/// Why a JavaScript hook could not be built.
#[derive(Debug, thiserror::Error)]
pub enum JsBuildError {
    /// The source is over [`JsBuildLimits::max_source_bytes`].
    #[error(
        "the hook's source is {size} bytes, over the limit of {max} bytes (max_source_bytes): a hook is one module, not a bundle of its dependencies"
    )]
    SourceTooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The runtime component is not one this can initialise (a defect of the build, not of the
    /// hook).
    #[error("the QuickJS runtime cannot be used: {0}")]
    Runtime(String),
    /// The module threw, failed to compile, has no `handler.handle`, called the host at top
    /// level, or ran out of fuel or memory while it was evaluated.
    #[error("{0}")]
    Module(String),
    /// The initialised instance could not be snapshotted.
    #[error("cannot snapshot the initialised instance: {0}")]
    Snapshot(String),
}

/// Builds `source` (an ES module exporting `handler`) with `runtime` into a hook component.
pub fn build_js(
    runtime: &[u8],
    source: &str,
    limits: &JsBuildLimits,
) -> Result<Vec<u8>, JsBuildError> {
    let size = source.len() as u64;
    if size > limits.max_source_bytes {
        return Err(JsBuildError::SourceTooLarge {
            size,
            max: limits.max_source_bytes,
        });
    }
    let runtime_error =
        |what: &str, e: wasmtime::Error| JsBuildError::Runtime(format!("{what}: {e:#}"));
    let mut wizer = Wizer::new();
    // Kept: wasmtime-wizer 48 removes the component's export but leaves the alias of the core
    // function behind it, which makes the output invalid. hookbox calls only the handler.
    wizer.init_func(INIT).keep_init_func(true);
    let (cx, instrumented) = wizer
        .instrument_component(runtime)
        .map_err(|e| runtime_error("not a QuickJS runtime component", e))?;
    let mut config = Config::new();
    config.consume_fuel(true);
    // What the host accepts (this file is also compiled into the repository's bootstrap tool,
    // `guest-examples/js-quickjs/build`, which brings its own).
    super::restrict_proposals(&mut config);
    let engine = Engine::new(&config).map_err(|e| runtime_error("wasmtime", e))?;
    let component = Component::new(&engine, &instrumented)
        .map_err(|e| runtime_error("cannot compile it", e))?;
    let mut linker: Linker<StoreLimits> = Linker::new(&engine);
    build_time_imports(&mut linker).map_err(|e| runtime_error("cannot link the clocks", e))?;
    linker
        .define_unknown_imports_as_traps(&component)
        .map_err(|e| runtime_error("cannot link it", e))?;
    let store_limits = StoreLimitsBuilder::new()
        .memory_size(limits.memory_bytes)
        .trap_on_grow_failure(true)
        .build();
    let mut store = Store::new(&engine, store_limits);
    store.limiter(|limits| limits);
    store
        .set_fuel(limits.fuel)
        .map_err(|e| runtime_error("cannot give it fuel", e))?;
    let instance = linker
        .instantiate(&mut store, &component)
        .map_err(|e| runtime_error("cannot instantiate it", e))?;
    let init = instance
        .get_func(&mut store, INIT)
        .ok_or_else(|| JsBuildError::Runtime(format!("it does not export `{INIT}`")))?;
    let mut result = [Val::Bool(false)];
    init.call(&mut store, &[Val::String(source.to_owned())], &mut result)
        .map_err(|e| JsBuildError::Module(why_evaluation_trapped(&e, limits)))?;
    match &result[0] {
        Val::Result(Ok(_)) => {}
        Val::Result(Err(Some(message))) => match &**message {
            Val::String(m) => return Err(JsBuildError::Module(m.clone())),
            other => return Err(JsBuildError::Module(format!("{other:?}"))),
        },
        other => {
            return Err(JsBuildError::Runtime(format!(
                "`{INIT}` answered {other:?}"
            )));
        }
    }
    let mut snapshotter = Snapshotter {
        store: &mut store,
        instance,
        failed: None,
    };
    let snapshot = block_on(wizer.snapshot_component(&cx, &mut snapshotter))
        .map_err(|e| JsBuildError::Snapshot(format!("{e:#}")))?;
    match snapshotter.failed {
        Some(failure) => Err(JsBuildError::Snapshot(failure)),
        None => Ok(snapshot),
    }
}

/// Why evaluating the module at build time trapped, in the author's terms.
fn why_evaluation_trapped(e: &wasmtime::Error, limits: &JsBuildLimits) -> String {
    let cause = e.root_cause().to_string();
    if e.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::OutOfFuel) {
        return format!(
            "the module's top-level code ran out of fuel while it was evaluated at build time \
             ({} units, fuel): a loop that does not end?",
            limits.fuel
        );
    }
    if cause.contains("unknown import") || cause.contains("has not been defined") {
        return format!(
            "the module's top-level code called the host while it was evaluated at build time, \
             where there is none: call `config()` and `log()` inside `handle` ({cause})"
        );
    }
    if cause.contains("memory") {
        return format!(
            "the module's top-level code outgrew the build's memory ({} bytes, memory_bytes) \
             while it was evaluated: {cause}",
            limits.memory_bytes
        );
    }
    format!("the module's top-level code trapped while it was evaluated at build time: {cause}")
}

/// What the initialiser may call: `wasi:clocks/wall-clock.now` and `monotonic-clock.now`
/// (QuickJS reads them when it makes a runtime and a context), the build's time; and
/// `wasi:random/insecure-seed` (Rust's `HashMap`s, made by rquickjs, take their keys from it
/// once per instance), a seed drawn from the build's time — so the snapshot's maps hash alike
/// in every event, which is what a fresh instance of a snapshot means; nothing secret depends
/// on it. Every other import traps.
fn build_time_imports(linker: &mut Linker<StoreLimits>) -> wasmtime::Result<()> {
    let started = std::time::Instant::now();
    for version in ["0.2.0", "0.2.6"] {
        // QuickJS's `JS_NewRuntime` reads the monotonic clock (its GC and interrupt timing).
        let mut monotonic = linker.instance(&format!("wasi:clocks/monotonic-clock@{version}"))?;
        monotonic.func_wrap("now", move |_, (): ()| {
            let nanos = started.elapsed().as_nanos();
            Ok((u64::try_from(nanos).unwrap_or(u64::MAX),))
        })?;
        monotonic.func_wrap("resolution", |_, (): ()| Ok((1_u64,)))?;
        let mut seed = linker.instance(&format!("wasi:random/insecure-seed@{version}"))?;
        seed.func_wrap("insecure-seed", |_, (): ()| {
            let nanos = u64::try_from(since_epoch().as_nanos()).unwrap_or(u64::MAX);
            Ok(((nanos, nanos.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15),))
        })?;
        let mut clock = linker.instance(&format!("wasi:clocks/wall-clock@{version}"))?;
        clock.func_new("now", |_, _, _, results| {
            let now = since_epoch();
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

fn since_epoch() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// wizer's view of the initialised instance: the accessor functions wizer instrumented into
/// the component, called synchronously. wizer's interface has no error channel: the first
/// failure is kept here (and a zero answered) and ends the build after the snapshot.
struct Snapshotter<'a> {
    store: &'a mut Store<StoreLimits>,
    instance: Instance,
    failed: Option<String>,
}

impl Snapshotter<'_> {
    fn call<R: Lift + 'static, R2: Default>(
        &mut self,
        instance: &str,
        func: &str,
        use_ret: impl FnOnce(&mut Store<StoreLimits>, R) -> R2,
    ) -> R2 {
        match self.try_call(instance, func) {
            Ok(ret) => use_ret(&mut *self.store, ret),
            Err(e) => {
                self.failed
                    .get_or_insert_with(|| format!("wizer's accessor {instance}#{func}: {e}"));
                R2::default()
            }
        }
    }

    fn try_call<R: Lift + 'static>(&mut self, instance: &str, func: &str) -> Result<R, String> {
        let (_, outer) = self
            .instance
            .get_export(&mut *self.store, None, instance)
            .ok_or("not exported")?;
        let (_, inner) = self
            .instance
            .get_export(&mut *self.store, Some(&outer), func)
            .ok_or("not exported")?;
        let f = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, inner)
            .map_err(|e| format!("{e:#}"))?;
        let (ret,) = f.call(&mut *self.store, ()).map_err(|e| format!("{e:#}"))?;
        Ok(ret)
    }
}

impl ComponentInstanceState for Snapshotter<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        let mut contents = Some(contents);
        self.call(instance, func, |store, list: WasmList<u8>| {
            if let Some(contents) = contents.take() {
                contents(list.as_le_slice(&*store));
            }
        });
        // A failed accessor still owes wizer its call: an empty list (the build fails anyway).
        if let Some(contents) = contents.take() {
            contents(&[]);
        }
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
