//! The data of one event's `Store`: a closed WASI context, the resource table, the limiter that
//! records which limit a guest hit, and the `host` interface's state (rule config, capped logs).
//! A fresh one is built per event and dropped with the store.
//!
//! The WASI context of a typed hook without mounts is made when the guest first calls WASI, not
//! with the store: most typed hooks never do, and making one costs more than the rest of the
//! store (wasmtime-wasi's builder seeds four random number generators and boxes its clocks and
//! streams — twice, since `build` leaves a fresh builder behind). It is the same closed context
//! either way; one with mounts is made with the store, so a mount that cannot be opened fails
//! the run before the guest starts.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::capture::CappedPipe;
use crate::limits::WasmLimits;
use crate::links::MountLinks;
use crate::quota::WriteQuota;
use crate::run::{GuestLog, LogLevel};

/// Largest `get-random-bytes` request, far below wasmtime-wasi's 64 MiB default: a guest cannot
/// make the host allocate much on its behalf.
const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// A run's WASI context, made at the first WASI call unless it was made with the store.
pub(crate) struct Wasi {
    ctx: Option<WasiCtx>,
    stdout: CappedPipe,
    stderr: CappedPipe,
    env: Vec<(String, String)>,
}

impl Wasi {
    /// The closed context's builder: captured and capped stdout and stderr, the rule's
    /// environment and nothing else (no stdin, preopens, arguments or network).
    pub(crate) fn closed(
        stdout: &CappedPipe,
        stderr: &CappedPipe,
        env: &[(String, String)],
    ) -> WasiCtxBuilder {
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdout.clone())
            .stderr(stderr.clone())
            .max_random_size(MAX_RANDOM_BYTES);
        for (k, v) in env {
            wasi.env(k, v);
        }
        wasi
    }

    /// A context made now (from a builder that may hold more: stdin, mounts).
    pub(crate) fn ready(ctx: WasiCtx, stdout: &CappedPipe, stderr: &CappedPipe) -> Wasi {
        Wasi {
            ctx: Some(ctx),
            stdout: stdout.clone(),
            stderr: stderr.clone(),
            env: Vec::new(),
        }
    }

    /// A closed context with `env` to be made at the first WASI call.
    pub(crate) fn later(
        stdout: &CappedPipe,
        stderr: &CappedPipe,
        env: &[(String, String)],
    ) -> Wasi {
        Wasi {
            ctx: None,
            stdout: stdout.clone(),
            stderr: stderr.clone(),
            env: env.to_vec(),
        }
    }

    /// The context, made now if it was not yet.
    pub(crate) fn get(&mut self) -> &mut WasiCtx {
        let Wasi {
            ctx,
            stdout,
            stderr,
            env,
        } = self;
        ctx.get_or_insert_with(|| Wasi::closed(stdout, stderr, env).build())
    }

    /// Whether the context was made (the guest called WASI, or it was made with the store).
    #[cfg(test)]
    pub(crate) fn is_made(&self) -> bool {
        self.ctx.is_some()
    }
}

/// Everything a store holds for one run.
pub(crate) struct StoreState {
    pub(crate) wasi: Wasi,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: Limiter,
    pub(crate) host: HostState,
    /// What the run may still write to `rw` mounts (shared with its file streams).
    pub(crate) quota: Arc<WriteQuota>,
    /// The run's mounts, when one of them allows symbolic links; `None`: no link anywhere.
    pub(crate) links: Option<Arc<MountLinks>>,
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: self.wasi.get(),
            table: &mut self.table,
        }
    }
}

/// Which limit a guest ran into (recorded because a memory-cap hit is not a `wasmtime::Trap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LimitHit {
    /// A linear memory wanted `desired` bytes, over the cap.
    Memory { desired: usize, cap: usize },
    /// A table wanted `desired` elements, over the cap.
    Table { desired: usize, cap: usize },
    /// Growth within the cap failed anyway (the pool's hard cap, or the OS).
    GrowFailed(String),
}

impl LimitHit {
    pub(crate) fn describe(&self) -> String {
        match self {
            LimitHit::Memory { desired, cap } => {
                format!(
                    "linear memory limit of {cap} bytes exceeded (the guest asked for {desired} bytes)"
                )
            }
            LimitHit::Table { desired, cap } => {
                format!("table limit of {cap} elements exceeded (the guest asked for {desired})")
            }
            LimitHit::GrowFailed(why) => format!("growing memory failed: {why}"),
        }
    }
}

/// Enforces the memory, table and instance caps, trapping on a failed grow and recording why.
pub(crate) struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    instances: usize,
    pub(crate) hit: Option<LimitHit>,
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

impl Limiter {
    pub(crate) fn new(limits: &WasmLimits) -> Limiter {
        Limiter {
            memory_bytes: to_usize(limits.memory_bytes),
            table_elements: to_usize(limits.table_elements),
            instances: to_usize(limits.instances),
            hit: None,
        }
    }

    fn refuse(&mut self, hit: LimitHit) -> wasmtime::Result<bool> {
        let msg = hit.describe();
        self.hit.get_or_insert(hit);
        // An error (not `Ok(false)`) makes the grow trap instead of returning -1 to the guest:
        // `trap_on_grow_failure`, so the failure is reported as `memory_limit`, not as whatever
        // the guest's allocator does with -1.
        Err(wasmtime::format_err!(msg))
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            return self.refuse(LimitHit::Memory {
                desired,
                cap: self.memory_bytes,
            });
        }
        Ok(true)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        let msg = format!("{error:#}");
        self.hit.get_or_insert(LimitHit::GrowFailed(msg.clone()));
        Err(wasmtime::format_err!(msg))
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.table_elements {
            return self.refuse(LimitHit::Table {
                desired,
                cap: self.table_elements,
            });
        }
        Ok(true)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        let msg = format!("{error:#}");
        self.hit.get_or_insert(LimitHit::GrowFailed(msg.clone()));
        Err(wasmtime::format_err!(msg))
    }

    fn instances(&self) -> usize {
        self.instances
    }
}

/// State behind the `hookbox:hook/host` imports.
pub(crate) struct HostState {
    label: Arc<str>,
    config: Arc<str>,
    pub(crate) logs: Vec<GuestLog>,
    pub(crate) logs_dropped: u64,
    max_calls: u64,
    max_bytes: usize,
}

impl HostState {
    pub(crate) fn new(label: Arc<str>, config: Arc<str>, limits: &WasmLimits) -> HostState {
        HostState {
            label,
            config,
            logs: Vec::new(),
            logs_dropped: 0,
            max_calls: limits.log_calls,
            max_bytes: to_usize(limits.log_message_bytes),
        }
    }

    pub(crate) fn config_json(&self) -> &str {
        &self.config
    }

    /// Records one guest log line (capped per event and per message) and emits it as a
    /// `tracing` event tagged with the rule.
    pub(crate) fn log(&mut self, level: LogLevel, mut message: String) {
        if self.logs.len() as u64 >= self.max_calls {
            self.logs_dropped += 1;
            return;
        }
        let truncated = message.len() > self.max_bytes;
        if truncated {
            let mut end = self.max_bytes;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            // A copy of the kept prefix, not `truncate`: that keeps the whole lifted buffer
            // (up to the hostcall budget) allocated behind a short line, for every line kept.
            message = message[..end].to_owned();
        }
        let rule = &*self.label;
        match level {
            LogLevel::Trace => {
                tracing::trace!(target: "hookbox::guest", rule, truncated, "{message}")
            }
            LogLevel::Debug => {
                tracing::debug!(target: "hookbox::guest", rule, truncated, "{message}")
            }
            LogLevel::Info => {
                tracing::info!(target: "hookbox::guest", rule, truncated, "{message}")
            }
            LogLevel::Warn => {
                tracing::warn!(target: "hookbox::guest", rule, truncated, "{message}")
            }
            LogLevel::Error => {
                tracing::error!(target: "hookbox::guest", rule, truncated, "{message}")
            }
        }
        self.logs.push(GuestLog {
            level,
            message,
            truncated,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_capped_in_count_and_size() {
        let limits = WasmLimits {
            log_calls: 2,
            log_message_bytes: 4,
            ..WasmLimits::default()
        };
        let mut h = HostState::new("r".into(), "null".into(), &limits);
        h.log(LogLevel::Info, "héllo".repeat(10_000));
        h.log(LogLevel::Warn, "ok".into());
        h.log(LogLevel::Error, "dropped".into());
        assert_eq!(
            h.logs[0],
            GuestLog {
                level: LogLevel::Info,
                message: "hél".into(),
                truncated: true
            }
        );
        assert_eq!(
            h.logs[1],
            GuestLog {
                level: LogLevel::Warn,
                message: "ok".into(),
                truncated: false
            }
        );
        assert_eq!((h.logs.len(), h.logs_dropped), (2, 1));
        // What is kept is what is held: no 60 KB buffer behind the 3-byte line.
        assert!(
            h.logs[0].message.capacity() <= 4,
            "{}",
            h.logs[0].message.capacity()
        );
    }

    #[test]
    fn a_typed_hooks_wasi_context_is_made_at_its_first_use_and_only_once() {
        let (out, err) = (CappedPipe::new(16), CappedPipe::new(16));
        let env = [("MODE".to_owned(), "strict".to_owned())];
        let mut wasi = Wasi::later(&out, &err, &env);
        assert!(!wasi.is_made(), "no WASI call yet: no context");
        let first: *const WasiCtx = wasi.get();
        assert!(wasi.is_made());
        let again: *const WasiCtx = wasi.get();
        assert_eq!(first, again, "made once, then kept for the run");
        // The chaos guest's `env` behaviour checks what the guest sees in it (rust_guests.rs).
    }

    #[test]
    fn limiter_records_the_hit_and_traps() {
        let limits = WasmLimits {
            memory_bytes: 100,
            table_elements: 10,
            ..WasmLimits::default()
        };
        let mut l = Limiter::new(&limits);
        assert!(l.memory_growing(0, 100, None).unwrap());
        assert!(l.memory_growing(100, 101, None).is_err());
        assert!(l.table_growing(0, 11, None).is_err());
        assert_eq!(
            l.hit,
            Some(LimitHit::Memory {
                desired: 101,
                cap: 100
            })
        );
    }
}
