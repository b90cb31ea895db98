//! The runtime: one engine, one linker, the compiled-component caches (memory and disk), and
//! loading: bytes → checked header → compiled (or cached) component → world and imports checked
//! → pre-linked `*Pre`, once per component per runtime.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::bindings::HookPre;
use crate::cache::{self, DiskCache, Sha};
use crate::config::RuntimeConfig;
use crate::error::WasmError;
use crate::policy::{PolicyError, WasmPolicy};
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

type Slot = Arc<Mutex<Option<Arc<LoadedComponent>>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded maps stay consistent even if a holder panicked.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The WebAssembly hook runtime: `Send + Sync`, shared by every task that runs hooks.
pub struct WasmRuntime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<StoreState>,
    pub(crate) config: RuntimeConfig,
    pub(crate) pooled: bool,
    disk: Option<DiskCache>,
    loaded: Mutex<HashMap<Sha, Slot>>,
    /// One permit per instance slot: a run waits for a slot instead of failing when all are busy.
    pub(crate) gate: Semaphore,
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
        let slots = usize::try_from(config.pool.slots)
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS);
        Ok(WasmRuntime {
            engine: built.engine,
            linker,
            pooled: built.pooled,
            disk,
            loaded: Mutex::new(HashMap::new()),
            gate: Semaphore::new(slots),
            config,
        })
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
        if policy.maxima.table_elements > u64::from(pool.max_table_elements) {
            return cannot(format!(
                "allows {} table elements, above the runtime's hard cap of {} (pool.max_table_elements)",
                policy.maxima.table_elements, pool.max_table_elements
            ));
        }
        Ok(())
    }

    /// Loads the component at `path`; see [`WasmRuntime::load_bytes`].
    pub fn load_file(&self, path: &Path) -> Result<Arc<LoadedComponent>, WasmError> {
        let bytes = std::fs::read(path).map_err(|source| WasmError::Read {
            path: path.to_owned(),
            source,
        })?;
        self.load(&bytes, &path.display().to_string())
            .map(|(c, _)| c)
    }

    /// Loads a component: compiled once per runtime (or taken from the disk cache), its world,
    /// version and imports checked, pre-linked. Blocking: a compile takes ~100 ms; call it from
    /// `spawn_blocking` in async code. The same bytes return the same `Arc`.
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<Arc<LoadedComponent>, WasmError> {
        self.load(bytes, "<bytes>").map(|(c, _)| c)
    }

    /// Compiles the component at `path` into the cache ahead of time (`hookbox compile`), with
    /// the same checks as loading; says whether it was already cached.
    pub fn precompile_file(&self, path: &Path) -> Result<CacheStatus, WasmError> {
        let bytes = std::fs::read(path).map_err(|source| WasmError::Read {
            path: path.to_owned(),
            source,
        })?;
        self.load(&bytes, &path.display().to_string())
            .map(|(_, s)| s)
    }

    /// [`WasmRuntime::precompile_file`] for bytes.
    pub fn precompile_bytes(&self, bytes: &[u8]) -> Result<CacheStatus, WasmError> {
        self.load(bytes, "<bytes>").map(|(_, s)| s)
    }

    /// Forgets `component` in the memory cache (a reloaded plugin); runs holding it finish.
    pub fn evict(&self, component: &LoadedComponent) {
        lock(&self.loaded).remove(&component.sha256);
    }

    fn load(
        &self,
        bytes: &[u8],
        origin: &str,
    ) -> Result<(Arc<LoadedComponent>, CacheStatus), WasmError> {
        let incompatible = |reason: String| WasmError::Incompatible {
            origin: origin.to_owned(),
            reason,
        };
        world::check_header(bytes).map_err(incompatible)?;
        let sha = cache::sha256(bytes);
        let slot = lock(&self.loaded).entry(sha).or_default().clone();
        // One compile per component: concurrent loads of the same bytes wait here.
        let mut guard = lock(&slot);
        if let Some(loaded) = &*guard {
            return Ok((loaded.clone(), CacheStatus::Memory));
        }
        match self.prepare(bytes, sha, origin) {
            Ok(loaded) => {
                let loaded = Arc::new(loaded);
                *guard = Some(loaded.clone());
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

    /// The compiled component for `bytes`: from disk if possible, else compiled (and stored).
    pub(crate) fn compile(
        &self,
        bytes: &[u8],
        sha: &Sha,
        origin: &str,
    ) -> Result<(Component, CacheStatus), WasmError> {
        if let Some(c) = self.disk.as_ref().and_then(|d| d.get(&self.engine, sha)) {
            return Ok((c, CacheStatus::Disk));
        }
        let component =
            Component::new(&self.engine, bytes).map_err(|e| WasmError::Incompatible {
                origin: origin.to_owned(),
                reason: format!("invalid component: {e:#}"),
            })?;
        if let Some(disk) = &self.disk
            && let Err(e) = disk.put(sha, &component)
        {
            tracing::warn!(error = %e, "cannot write the wasm cache; the component will be recompiled next time");
        }
        Ok((component, CacheStatus::Compiled))
    }

    fn prepare(&self, bytes: &[u8], sha: Sha, origin: &str) -> Result<LoadedComponent, WasmError> {
        let incompatible = |reason: String| WasmError::Incompatible {
            origin: origin.to_owned(),
            reason,
        };
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
            engine: self.engine.clone(),
            pre,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared<T: Send + Sync>() {}

    #[test]
    fn runtime_and_components_are_shareable_across_tasks() {
        shared::<WasmRuntime>();
        shared::<LoadedComponent>();
    }
}
