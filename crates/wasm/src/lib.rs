//! hookbox-wasm: hookbox's WebAssembly runtime, and the only crate that touches wasmtime.
//!
//! It compiles hook components once (an on-disk `.cwasm` cache keyed by the wasm's sha256 and
//! the engine's configuration, plus an in-memory map), pre-links them, and runs each event in a
//! fresh `Store` under [`WasmLimits`], returning a typed [`HookResponse`](hookbox_core::output::HookResponse)
//! (components of the `hookbox:hook` world) or a [`RawOutput`](hookbox_core::output::RawOutput)
//! (`wasi:cli/run` components, read by the host like a native command), or a classified
//! [`HookFailure`](hookbox_core::output::HookFailure).
//!
//! It depends on hookbox-core's types only: it knows nothing of the host (matching, aggregation,
//! policies per tenant) or of the native command runner.
//!
//! # The sandbox's defaults
//!
//! A guest starts with nothing: no preopened folder, no environment variable, no arguments, no
//! inherited stdio (stdout and stderr are captured and capped; stdin is the payload for commands
//! and empty for typed hooks), and no network at all: `wasi:sockets` and `wasi:http` are not
//! linked, and a component importing them is refused at load (`incompatible_component`). It can
//! read clocks and random numbers. Each grant comes from the rule, checked against a
//! [`WasmPolicy`] by [`resolve`]: mounts (read-only unless the policy allows `rw`; wasmtime-wasi's
//! capability model keeps `..`, absolute paths and symlinks inside a mount), environment
//! variables, and the rule's `config` JSON through `host.config`.
//!
//! Every run is bounded: wall-clock timeout (epoch deadline, checked in 2 ms slices between
//! which a CPU-bound guest yields its tokio worker, plus a timer backstop covering the host's
//! calls and the reading of the answer), linear memory, table elements, instances, output bytes,
//! response bytes, log calls, bytes and files written to `rw` mounts, and optionally fuel; a
//! guest can open only regular files and folders. A run is admitted only while there is room in
//! the runtime's aggregate memory budget, waiting briefly for it; instance slots are admitted by
//! the embedder (the host's pool), and a run the pool cannot place fails at once. Failures
//! are classified `timeout`, `out_of_fuel`, `memory_limit`, `trap`, `invalid_output`,
//! `overloaded`, `instantiate_error` or `incompatible_component`; the runtime keeps serving
//! after any of them.
//!
//! ```no_run
//! # async fn demo(event: &hookbox_core::Event) -> Result<(), Box<dyn std::error::Error>> {
//! use hookbox_wasm::{Invocation, RuntimeConfig, WasmLimits, WasmRuntime};
//! let runtime = WasmRuntime::new(RuntimeConfig::default().with_default_cache_dir())?;
//! let hook = runtime.load_file("guard.wasm".as_ref())?;
//! let limits = WasmLimits::default();
//! let run = runtime
//!     .run(&hook, Invocation {
//!         event,
//!         payload_json: "{}",
//!         tool_input_json: None,
//!         limits: &limits,
//!         mounts: &[],
//!         env: &[],
//!         config_json: "null".into(),
//!         label: "guard".into(),
//!     })
//!     .await?;
//! # let _ = run; Ok(()) }
//! ```

mod admission;
mod bindings;
mod build_js;
mod cache;
mod cache_dir;
mod capture;
mod classify;
mod config;
mod cpu_share;
mod engine;
mod error;
pub mod floor;
mod fs_guard;
mod inspect;
mod limits;
mod linker;
mod links;
mod memcache;
mod mount;
mod policy;
mod prepare;
mod proposals;
mod quota;
mod read;
mod run;
mod runtime;
mod scope;
mod shape;
mod state;
mod world;

pub use build_js::{JsBuildError, JsBuildLimits, build_js};
pub use capture::Captured;
pub use config::{PoolConfig, PoolingMode, RuntimeConfig, default_cache_dir};
pub use cpu_share::CpuShare;
pub use error::WasmError;
pub use inspect::{ImportReport, InspectKind, InspectReport};
pub use limits::WasmLimits;
pub use memcache::MemoryCacheUsage;
pub use mount::{MountDir, MountError};
pub use policy::{PolicyError, WasmPolicy, resolve};
pub use prepare::{
    DEFAULT_MAX_COMPONENT_BYTES, MountTemplate, PROTECTED_ENTRIES, PluginData, PrepareError,
    PrepareInput, PreparedHook, prepare, read_component_beneath,
};
/// The proposal allow-list, for `build_js` (which reaches it as `super::restrict_proposals`, so
/// that the bootstrap tool including the same file can bring its own).
use proposals::restrict as restrict_proposals;
pub use read::read_component;
pub use run::{
    FailedRun, GuestLog, Invocation, LogLevel, ResolvedMount, RunReport, WasmOutput, WasmRun,
};
pub use runtime::{CacheStatus, ComponentKind, LoadedComponent, WasmRuntime};
pub use scope::{FuelMeter, RunScope};
pub use shape::ComponentShape;
pub use world::Grant;
