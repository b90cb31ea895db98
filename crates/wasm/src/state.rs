//! The data of one event's `Store`: a closed WASI context, the resource table, the limiter that
//! records which limit a guest hit, and the `host` interface's state (rule config, capped logs).
//! A fresh one is built per event and dropped with the store.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::limits::WasmLimits;
use crate::links::MountLinks;
use crate::quota::WriteQuota;
use crate::run::{GuestLog, LogLevel};

/// Everything a store holds for one run.
pub(crate) struct StoreState {
    pub(crate) wasi: WasiCtx,
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
            ctx: &mut self.wasi,
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
