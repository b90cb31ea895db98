//! The floor: what running one event costs wasmtime itself, for `hookbox bench` to print beside
//! every wasm figure (issue 30). It runs a component the way the least embedder that keeps the
//! same guarantees would — a fresh `Store` per event, instantiate, call, drop — on the **same
//! engine and pool** as a [`WasmRuntime`] (so the same wasmtime, pool configuration, compiled
//! code and epoch ticker), with the same per-store limits ([`WasmLimits`]: memory, tables,
//! instances, the deadline as one epoch deadline, fuel when the engine meters it), and nothing
//! of hookbox's run path: no admission, no CPU share, no captured-output pipes, no timer, no
//! classification, no report. What hookbox costs above it is hookbox's own share.
//!
//! Its store holds a WASI context only once the guest makes its first WASI call (a component
//! that makes none needs none) and answers the `hookbox:hook/host` imports trivially (`log`
//! drops the line, `config` returns the rule's JSON). Its own linker links wasmtime-wasi's whole
//! WASI 0.2, as a plain embedder would.
//!
//! Not part of the sandbox: nothing here is reachable from a rule, a plugin or a tenant.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hookbox_core::event::Event;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime::{Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{I32Exit, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::bindings::{self, HookPre, WitTexts, host, types};
use crate::error::WasmError;
use crate::limits::WasmLimits;
use crate::runtime::{LoadedComponent, Prepared, WasmRuntime};

/// One event's store data: the limits, the `host` interface's answers, the resource table, and
/// a WASI context made on first use.
struct FloorState {
    limits: StoreLimits,
    host: FloorHost,
    table: ResourceTable,
    wasi: Option<WasiCtx>,
    /// The payload, for a command's stdin (empty for typed hooks).
    stdin: Bytes,
    output_bytes: usize,
}

impl WasiView for FloorState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (stdin, cap) = (&self.stdin, self.output_bytes);
        let ctx = self.wasi.get_or_insert_with(|| {
            WasiCtxBuilder::new()
                .stdin(MemoryInputPipe::new(stdin.clone()))
                .stdout(MemoryOutputPipe::new(cap))
                .stderr(MemoryOutputPipe::new(cap))
                .build()
        });
        WasiCtxView {
            ctx,
            table: &mut self.table,
        }
    }
}

/// The `hookbox:hook/host` imports, answered without recording anything.
struct FloorHost {
    config: Arc<str>,
}

impl host::Host for FloorHost {
    fn log(&mut self, _level: host::Level, _message: String) {}

    fn config(&mut self) -> String {
        self.config.to_string()
    }
}

impl types::Host for FloorHost {}

struct FloorHostData;

impl HasData for FloorHostData {
    type Data<'a> = &'a mut FloorHost;
}

/// The floor's linker for one runtime's engine.
pub struct Floor {
    engine: wasmtime::Engine,
    linker: Linker<FloorState>,
    fuel: bool,
    epoch_tick: Duration,
}

impl std::fmt::Debug for Floor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Floor")
            .field("fuel", &self.fuel)
            .finish_non_exhaustive()
    }
}

/// A component ready to run at the floor.
pub struct FloorHook {
    engine: wasmtime::Engine,
    pre: FloorPre,
    fuel: bool,
    epoch_tick: Duration,
}

impl std::fmt::Debug for FloorHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FloorHook").finish_non_exhaustive()
    }
}

enum FloorPre {
    Typed(HookPre<FloorState>),
    Command(CommandPre<FloorState>),
}

/// One event as the floor gives it to a guest: the WIT event's texts made once, outside what is
/// measured (the typed event borrows them), and the payload (a command's stdin).
pub struct FloorInput {
    event: Event,
    texts: WitTexts,
    payload: String,
    stdin: Bytes,
    config: Arc<str>,
}

impl std::fmt::Debug for FloorInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FloorInput")
            .field("event", &self.event.name)
            .finish_non_exhaustive()
    }
}

impl FloorInput {
    /// `event` with `payload_json` (the flat payload for a typed hook, the dialect's payload for
    /// a command) and the rule's `config` JSON.
    pub fn new(event: &Event, payload_json: &str, config_json: &str) -> FloorInput {
        FloorInput {
            texts: WitTexts::of(event, payload_json),
            event: event.clone(),
            payload: payload_json.to_owned(),
            stdin: Bytes::copy_from_slice(payload_json.as_bytes()),
            config: Arc::from(config_json),
        }
    }
}

impl Floor {
    /// A floor on `runtime`'s engine (and so its pool and epoch ticker).
    pub fn new(runtime: &WasmRuntime) -> Result<Floor, WasmError> {
        let mut linker: Linker<FloorState> = Linker::new(&runtime.engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .and_then(|()| {
                bindings::Hook::add_to_linker::<_, FloorHostData>(&mut linker, |s| &mut s.host)
            })
            .map_err(|e| WasmError::Engine(format!("cannot link the floor: {e:#}")))?;
        Ok(Floor {
            engine: runtime.engine.clone(),
            linker,
            fuel: runtime.config.fuel,
            epoch_tick: runtime.config.epoch_tick,
        })
    }

    /// `component` (loaded by the same runtime) ready to run at the floor: the same compiled
    /// code, pre-linked against the floor's linker.
    pub fn prepare(&self, component: &LoadedComponent) -> Result<FloorHook, WasmError> {
        let fail = |e: wasmtime::Error| WasmError::Incompatible {
            origin: component.origin.clone(),
            reason: format!("the floor cannot link it: {e:#}"),
        };
        if !wasmtime::Engine::same(&component.engine, &self.engine) {
            return Err(WasmError::Engine(
                "the component was loaded by another runtime than the floor's".into(),
            ));
        }
        let pre = match &component.pre {
            Prepared::Typed(p) => FloorPre::Typed(
                HookPre::new(
                    self.linker
                        .instantiate_pre(p.instance_pre().component())
                        .map_err(fail)?,
                )
                .map_err(fail)?,
            ),
            Prepared::Command(p) => FloorPre::Command(
                CommandPre::new(
                    self.linker
                        .instantiate_pre(p.instance_pre().component())
                        .map_err(fail)?,
                )
                .map_err(fail)?,
            ),
        };
        Ok(FloorHook {
            engine: self.engine.clone(),
            pre,
            fuel: self.fuel,
            epoch_tick: self.epoch_tick,
        })
    }
}

impl FloorHook {
    /// One event: a fresh store under `limits`, instantiate, call, drop. The error is wasmtime's
    /// (a trap, a limit), as text; what the guest answered is not read.
    pub async fn run(&self, input: &FloorInput, limits: &WasmLimits) -> Result<(), String> {
        let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        let state = FloorState {
            limits: StoreLimitsBuilder::new()
                .memory_size(to_usize(limits.memory_bytes))
                .table_elements(to_usize(limits.table_elements))
                .instances(to_usize(limits.instances))
                .trap_on_grow_failure(true)
                .build(),
            host: FloorHost {
                config: input.config.clone(),
            },
            table: ResourceTable::new(),
            wasi: None,
            stdin: match self.pre {
                FloorPre::Typed(_) => Bytes::new(),
                FloorPre::Command(_) => input.stdin.clone(),
            },
            output_bytes: to_usize(limits.output_bytes),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        let ticks = limits
            .timeout
            .as_nanos()
            .div_ceil(self.epoch_tick.as_nanos().max(1));
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX).saturating_add(1));
        if self.fuel {
            store
                .set_fuel(limits.fuel.unwrap_or(u64::MAX))
                .map_err(|e| format!("{e:#}"))?;
        }
        let text = |e: wasmtime::Error| format!("{e:#}");
        match &self.pre {
            FloorPre::Typed(pre) => {
                let event = bindings::wit_event(&input.event, &input.texts, &input.payload);
                let hook = pre.instantiate_async(&mut store).await.map_err(text)?;
                hook.hookbox_hook_handler()
                    .call_handle(&mut store, event)
                    .await
                    .map_err(text)?
                    .map(drop)
            }
            FloorPre::Command(pre) => {
                let command = pre.instantiate_async(&mut store).await.map_err(text)?;
                command
                    .wasi_cli_run()
                    .call_run(&mut store)
                    .await
                    .or_else(|e| match e.downcast_ref::<I32Exit>() {
                        Some(I32Exit(0)) => Ok(Ok(())),
                        _ => Err(text(e)),
                    })?
                    .map_err(|()| "the command exited with 1".to_owned())
            }
        }
    }
}
