//! The runtime: one engine, one linker, the compiled-component caches (memory and disk), the
//! memory budget, and loading: bytes → checked header → shape checked against the pool (before
//! any compile) → compiled (or cached) component → world and imports checked → pre-linked
//! `*Pre`, once per component per runtime.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::admission::Admission;
use crate::bindings::HookPre;
use crate::cache::{self, DiskCache, Sha};
use crate::config::RuntimeConfig;
use crate::error::WasmError;
use crate::limits::WasmLimits;
use crate::memcache::{MemCache, MemoryCacheUsage, lock};
use crate::policy::{PolicyError, WasmPolicy};
use crate::shape::{self, ComponentShape};
use crate::state::StoreState;
use crate::world::{self, Analysis, World};

/// The two kinds of component this host runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComponentKind {
    /// Targets the typed `hookbox:hook` world: `handler.handle(event)` returns a response.
    TypedHook,
    /// Exports `wasi:cli/run`: a sandboxed command hook (payload on stdin, exit code, stdout).
    WasiCommand,
}

/// Where a loaded component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheStatus {
    /// Already loaded by this runtime.
    Memory,
    /// Deserialized from the disk cache.
    Disk,
    /// Compiled now (and written to the disk cache when there is one).
    Compiled,
}

impl CacheStatus {
    /// True unless the component had to be compiled.
    pub fn is_hit(self) -> bool {
        self != CacheStatus::Compiled
    }
}

/// The pre-linked entry point of a component.
pub(crate) enum Prepared {
    Typed(HookPre<StoreState>),
    Command(CommandPre<StoreState>),
}

/// A component compiled, checked and pre-linked by one [`WasmRuntime`]; run it with
/// [`WasmRuntime::run`]. Cheap to share (`Arc`).
pub struct LoadedComponent {
    pub(crate) kind: ComponentKind,
    pub(crate) wit_version: Option<String>,
    pub(crate) sha256: Sha,
    pub(crate) size: usize,
    pub(crate) origin: String,
    pub(crate) status: CacheStatus,
    pub(crate) shape: ComponentShape,
    pub(crate) code_bytes: u64,
    pub(crate) engine: Engine,
    pub(crate) pre: Prepared,
}

impl LoadedComponent {
    /// Typed hook or command.
    pub fn kind(&self) -> ComponentKind {
        self.kind
    }
    /// The `hookbox:hook` version of a typed hook.
    pub fn wit_version(&self) -> Option<&str> {
        self.wit_version.as_deref()
    }
    /// sha256 of the component's bytes, hex.
    pub fn sha256(&self) -> String {
        cache::hex(&self.sha256)
    }
    /// Size of the component's bytes.
    pub fn size_bytes(&self) -> usize {
        self.size
    }
    /// The file it was loaded from, or `<bytes>`.
    pub fn origin(&self) -> &str {
        &self.origin
    }
    /// Whether its first load compiled it or found it cached.
    pub fn cache_status(&self) -> CacheStatus {
        self.status
    }
    /// What one instantiation creates (core instances, memories, tables): a run's `instances`
    /// limit must cover `core_instances`, and its memory budget charge is `memory_bytes` per
    /// memory.
    pub fn shape(&self) -> ComponentShape {
        self.shape
    }
    /// Bytes of compiled code (what it weighs in the runtime's memory cache).
    pub fn code_bytes(&self) -> u64 {
        self.code_bytes
    }
}

impl std::fmt::Debug for LoadedComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedComponent")
            .field("kind", &self.kind)
            .field("origin", &self.origin)
            .field("sha256", &self.sha256())
            .finish_non_exhaustive()
    }
}

/// The WebAssembly hook runtime: `Send + Sync`, shared by every task that runs hooks.
pub struct WasmRuntime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<StoreState>,
    pub(crate) config: RuntimeConfig,
    pub(crate) pooled: bool,
    pagemap_scan: bool,
    disk: Option<DiskCache>,
    loaded: Mutex<MemCache>,
    /// The memory budget: a run waits (briefly) for room in it. Slots are the embedder's to
    /// admit (the host's pool).
    pub(crate) admission: Admission,
}

impl std::fmt::Debug for WasmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmRuntime")
            .field("config", &self.config)
            .field("pooled", &self.pooled)
            .finish_non_exhaustive()
    }
}

impl WasmRuntime {
    /// Builds the engine (and its epoch ticker), the linker and the caches.
    pub fn new(config: RuntimeConfig) -> Result<WasmRuntime, WasmError> {
        let built = crate::engine::build(&config)?;
        let linker = crate::linker::build(&built.engine)
            .map_err(|e| WasmError::Engine(format!("cannot link WASI: {e:#}")))?;
        let disk = match &config.cache_dir {
            Some(dir) => Some(DiskCache::open(dir, &built.engine, &config)?),
            None => None,
        };
        Ok(WasmRuntime {
            engine: built.engine,
            linker,
            pooled: built.pooled,
            pagemap_scan: built.pagemap_scan,
            disk,
            loaded: Mutex::new(MemCache::new(config.memory_cache_bytes)),
            admission: Admission::new(config.memory_budget_bytes),
            config,
        })
    }

    /// Whether the pool resets slots with `PAGEMAP_SCAN`: only when asked for
    /// ([`PoolConfig::pagemap_scan`](crate::PoolConfig::pagemap_scan)), pooled, supported by the
    /// kernel, and no swap was configured when the runtime was built.
    pub fn pagemap_scan_active(&self) -> bool {
        self.pagemap_scan
    }

    /// What the in-memory map of loaded components holds now (bounded by
    /// [`RuntimeConfig::memory_cache_bytes`]).
    pub fn memory_cache_usage(&self) -> MemoryCacheUsage {
        lock(&self.loaded).usage()
    }

    /// Bytes of the memory budget held by runs in progress
    /// ([`RuntimeConfig::memory_budget_bytes`]).
    pub fn memory_in_use(&self) -> u64 {
        self.admission.memory_in_use()
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Whether instances come from the pool (false after an on-demand fallback).
    pub fn is_pooled(&self) -> bool {
        self.pooled
    }

    /// Checks that this runtime can enforce `policy`: consistent, fuel only if the engine meters
    /// fuel, and no maximum above the engine's hard caps. Call it when installing a policy.
    pub fn check_policy(&self, policy: &WasmPolicy) -> Result<(), PolicyError> {
        policy.validate()?;
        let cannot = |what: String| Err(PolicyError::RuntimeCannotEnforce { what });
        if (policy.allow_fuel || policy.defaults.fuel.is_some()) && !self.config.fuel {
            return cannot("allows fuel, but this runtime was built without fuel metering (RuntimeConfig::fuel)".into());
        }
        let pool = &self.config.pool;
        if policy.maxima.memory_bytes > pool.max_memory_bytes {
            return cannot(format!(
                "allows {} bytes of memory, above the runtime's hard cap of {} bytes (pool.max_memory_bytes)",
                policy.maxima.memory_bytes, pool.max_memory_bytes
            ));
        }
        if policy.maxima.memory_bytes > self.config.memory_budget_bytes {
            return cannot(format!(
                "allows {} bytes of memory, above the runtime's whole memory budget of {} bytes (memory_budget_bytes)",
                policy.maxima.memory_bytes, self.config.memory_budget_bytes
            ));
        }
        if self.pooled && policy.maxima.instances > u64::from(pool.core_instances_per_slot) {
            return cannot(format!(
                "allows {} core instances, above the {} one pool slot holds (pool.core_instances_per_slot)",
                policy.maxima.instances, pool.core_instances_per_slot
            ));
        }
        if policy.maxima.table_elements > u64::from(pool.max_table_elements) {
            return cannot(format!(
                "allows {} table elements, above the runtime's hard cap of {} (pool.max_table_elements)",
                policy.maxima.table_elements, pool.max_table_elements
            ));
        }
        Ok(())
    }

    /// Loads the component at `path` (a regular file of at most
    /// [`RuntimeConfig::max_component_bytes`], opened without blocking); see
    /// [`WasmRuntime::load_bytes`].
    pub fn load_file(&self, path: &Path) -> Result<Arc<LoadedComponent>, WasmError> {
        let bytes = crate::read::read_path(path, self.config.max_component_bytes)?;
        self.load(&bytes, &path.display().to_string(), None)
            .map(|(c, _)| c)
    }

    /// Loads a component: compiled once per runtime (or taken from the disk cache), its world,
    /// version and imports checked, pre-linked. Blocking: a compile takes ~100 ms; call it from
    /// `spawn_blocking` in async code. The same bytes return the same `Arc`.
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<Arc<LoadedComponent>, WasmError> {
        self.load(bytes, "<bytes>", None).map(|(c, _)| c)
    }

    /// [`WasmRuntime::load_file`] for a hook that will run under `limits`: a component whose
    /// structure already needs more core instances than `limits.instances` is refused from its
    /// bytes, before it is compiled (a 19 MB componentize-py guest compiles for seconds).
    pub fn load_file_within(
        &self,
        path: &Path,
        limits: &WasmLimits,
    ) -> Result<Arc<LoadedComponent>, WasmError> {
        let bytes = crate::read::read_path(path, self.config.max_component_bytes)?;
        self.load(&bytes, &path.display().to_string(), Some(limits.instances))
            .map(|(c, _)| c)
    }

    /// [`WasmRuntime::load_bytes`] for a hook that will run under `limits` (see
    /// [`WasmRuntime::load_file_within`]).
    pub fn load_bytes_within(
        &self,
        bytes: &[u8],
        origin: &str,
        limits: &WasmLimits,
    ) -> Result<Arc<LoadedComponent>, WasmError> {
        self.load(bytes, origin, Some(limits.instances))
            .map(|(c, _)| c)
    }

    /// Compiles the component at `path` into the cache ahead of time (`hookbox compile`), with
    /// the same checks as loading; says whether it was already cached.
    pub fn precompile_file(&self, path: &Path) -> Result<CacheStatus, WasmError> {
        let bytes = crate::read::read_path(path, self.config.max_component_bytes)?;
        self.load(&bytes, &path.display().to_string(), None)
            .map(|(_, s)| s)
    }

    /// [`WasmRuntime::precompile_file`] for bytes.
    pub fn precompile_bytes(&self, bytes: &[u8]) -> Result<CacheStatus, WasmError> {
        self.load(bytes, "<bytes>", None).map(|(_, s)| s)
    }

    /// Forgets `component` in the memory cache (a reloaded plugin); runs holding it finish.
    /// The cache also forgets the least recently used components by itself past
    /// [`RuntimeConfig::memory_cache_bytes`].
    pub fn evict(&self, component: &LoadedComponent) {
        lock(&self.loaded).remove(&component.sha256);
    }

    /// `max_instances`: the rule's `instances` limit, checked against the component's structure
    /// before compiling (and on a memory-cache hit).
    fn load(
        &self,
        bytes: &[u8],
        origin: &str,
        max_instances: Option<u64>,
    ) -> Result<(Arc<LoadedComponent>, CacheStatus), WasmError> {
        let incompatible = |reason: String| WasmError::Incompatible {
            origin: origin.to_owned(),
            reason,
        };
        let within = |shape: &ComponentShape| match max_instances {
            Some(max) if shape.core_instances > max => Err(WasmError::AboveLimit {
                origin: origin.to_owned(),
                reason: format!(
                    "it creates {} core instances, above this rule's `instances` limit of {max}; raise `instances` to at least {}",
                    shape.core_instances, shape.core_instances
                ),
            }),
            _ => Ok(()),
        };
        world::check_header(bytes).map_err(incompatible)?;
        let sha = cache::sha256(bytes);
        let slot = lock(&self.loaded).slot(sha);
        // One compile per component: concurrent loads of the same bytes wait here.
        let mut guard = lock(&slot);
        if let Some(loaded) = &*guard {
            within(&loaded.shape)?;
            return Ok((loaded.clone(), CacheStatus::Memory));
        }
        // The structure is read once, before compiling: the rule's limit, then the pool's.
        let shape = match shape::shape(bytes)
            .map_err(|e| incompatible(format!("invalid component: {e}")))
            .and_then(|shape| within(&shape).map(|()| shape))
        {
            Ok(shape) => shape,
            Err(e) => {
                drop(guard);
                lock(&self.loaded).remove(&sha);
                return Err(e);
            }
        };
        // Compiling, reading the component's types and pre-linking are wasmtime's code on the
        // guest's bytes: a panic in any of them refuses this component only.
        match guard_wasmtime(origin, || self.prepare(bytes, sha, origin, shape)).and_then(|r| r) {
            Ok(loaded) => {
                let loaded = Arc::new(loaded);
                *guard = Some(loaded.clone());
                drop(guard);
                lock(&self.loaded).loaded(&sha, loaded.code_bytes);
                let status = loaded.status;
                Ok((loaded, status))
            }
            Err(e) => {
                drop(guard);
                lock(&self.loaded).remove(&sha);
                Err(e)
            }
        }
    }

    /// Refuses, before any compile, a component the pool can never instantiate: more core
    /// instances, memories or tables than one slot holds. Names the setting to raise.
    pub(crate) fn check_shape(&self, shape: &ComponentShape) -> Result<(), String> {
        if !self.pooled {
            return Ok(());
        }
        let pool = &self.config.pool;
        for (what, count, max, setting) in [
            (
                "core module instances",
                shape.core_instances,
                pool.core_instances_per_slot,
                "pool.core_instances_per_slot",
            ),
            (
                "linear memories",
                shape.memories,
                pool.memories_per_slot,
                "pool.memories_per_slot",
            ),
            (
                "tables",
                shape.tables,
                pool.tables_per_slot,
                "pool.tables_per_slot",
            ),
        ] {
            if count > u64::from(max) {
                return Err(format!(
                    "component creates {count} {what}, but one slot of this host's instance pool holds {max} ({setting}); raise {setting} to at least {count} to run it"
                ));
            }
        }
        Ok(())
    }

    /// The compiled component for `bytes`: from disk if possible, else compiled (and stored).
    /// With a disk cache the compiled artefact is written before wasmtime builds the component
    /// from it, so a compile is never lost, whatever happens next.
    pub(crate) fn compile(
        &self,
        bytes: &[u8],
        sha: &Sha,
        origin: &str,
    ) -> Result<(Component, CacheStatus), WasmError> {
        let invalid = |e: wasmtime::Error| WasmError::Incompatible {
            origin: origin.to_owned(),
            reason: format!("invalid component: {e:#}"),
        };
        // Compiling validates: say so when what failed is a proposal hookbox refuses.
        let refused = |e: wasmtime::Error| match crate::proposals::uses_a_refused_proposal(bytes) {
            true => WasmError::Incompatible {
                origin: origin.to_owned(),
                reason: format!("{}: {e:#}", crate::proposals::REFUSED_HINT),
            },
            false => invalid(e),
        };
        let Some(disk) = &self.disk else {
            crate::proposals::validate_guest(bytes).map_err(|e| refused(e.into()))?;
            let component = Component::new(&self.engine, bytes).map_err(refused)?;
            return Ok((component, CacheStatus::Compiled));
        };
        if let Some(c) = disk.get(&self.engine, sha) {
            return Ok((c, CacheStatus::Disk));
        }
        // Only what this engine compiled after this check is ever in the disk cache.
        crate::proposals::validate_guest(bytes).map_err(|e| refused(e.into()))?;
        let code = self.engine.precompile_component(bytes).map_err(refused)?;
        if let Err(e) = disk.put(sha, &code) {
            tracing::warn!(error = %e, "cannot write the wasm cache; the component will be recompiled next time");
        }
        #[allow(
            unsafe_code,
            reason = "building a component from precompiled native code is unsafe in wasmtime"
        )]
        // SAFETY: `code` was produced a moment ago by `precompile_component` of this very engine,
        // from the bytes being loaded, and never left this process's memory.
        let component = unsafe { Component::deserialize(&self.engine, &code) }.map_err(invalid)?;
        Ok((component, CacheStatus::Compiled))
    }

    fn prepare(
        &self,
        bytes: &[u8],
        sha: Sha,
        origin: &str,
        shape: ComponentShape,
    ) -> Result<LoadedComponent, WasmError> {
        let incompatible = |reason: String| WasmError::Incompatible {
            origin: origin.to_owned(),
            reason,
        };
        self.check_shape(&shape).map_err(incompatible)?;
        let (component, status) = self.compile(bytes, &sha, origin)?;
        let analysis = Analysis::of(&self.engine, &component);
        if let Some(first) = analysis.problems().into_iter().next() {
            return Err(incompatible(first));
        }
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| incompatible(format!("{e:#}")))?;
        let (kind, wit_version, pre) = match analysis.world {
            Ok(World::Hook(v)) => (
                ComponentKind::TypedHook,
                Some(v.to_string()),
                Prepared::Typed(HookPre::new(pre).map_err(|e| incompatible(format!("{e:#}")))?),
            ),
            Ok(World::Command) => (
                ComponentKind::WasiCommand,
                None,
                Prepared::Command(
                    CommandPre::new(pre).map_err(|e| incompatible(format!("{e:#}")))?,
                ),
            ),
            Err(reason) => return Err(incompatible(reason)),
        };
        Ok(LoadedComponent {
            kind,
            wit_version,
            sha256: sha,
            size: bytes.len(),
            origin: origin.to_owned(),
            status,
            shape,
            code_bytes: {
                let code = component.image_range();
                (code.end as u64).saturating_sub(code.start as u64)
            },
            engine: self.engine.clone(),
            pre,
        })
    }
}

/// Runs wasmtime's work on a component's bytes (compiling, reading its types, pre-linking) so
/// that a panic inside it (a defect of wasmtime's, reached by those bytes) refuses that
/// component instead of taking down the process and with it every other plugin's hooks.
/// wasmtime 48.0.8 had one (its own adapter between two memories failed its validation, an
/// `expect`: see `proposals.rs`); this keeps the next one contained. That work touches no state
/// outside what it returns (the load's slot is filled only after it), so nothing is left
/// half-made.
pub(crate) fn guard_wasmtime<T>(origin: &str, work: impl FnOnce() -> T) -> Result<T, WasmError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic without a message");
        WasmError::Incompatible {
            origin: origin.to_owned(),
            reason: format!(
                "wasmtime failed on this component ({what}); it is refused, and the host goes on"
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_the_compiler_refuses_the_component_and_names_it() {
        let refused = guard_wasmtime("plugin/hooks/x.wasm", || -> u32 {
            panic!("invalid adapter module generated")
        });
        match refused {
            Err(e @ WasmError::Incompatible { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("plugin/hooks/x.wasm"), "{msg}");
                assert!(msg.contains("invalid adapter module generated"), "{msg}");
            }
            other => panic!("expected incompatible_component, got {other:?}"),
        }
        assert_eq!(guard_wasmtime("x", || 7).unwrap(), 7);
    }

    fn shared<T: Send + Sync>() {}

    #[test]
    fn runtime_and_components_are_shareable_across_tasks() {
        shared::<WasmRuntime>();
        shared::<LoadedComponent>();
    }
}
