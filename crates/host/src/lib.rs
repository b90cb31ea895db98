//! hookbox-host: the hook host. It wires `hookbox-core` (rules, matching, aggregation) to the
//! runners (`hookbox-command` for native processes, `hookbox-wasm` for sandboxed components):
//! build a [`HookHost`] from a [`HostPolicy`], install rules, and `dispatch(event)`; hooks run
//! concurrently and the verdict is aggregated in rule order. It also emits `HookFired` records,
//! keeps metrics, and writes redacted replay files.

mod dispatch;
mod host;
mod metrics;
mod payloads;
mod policy;
mod prepare_wasm;
pub mod replay;
mod run_command;
mod run_wasm;
pub mod secrets;
mod settings;

pub use dispatch::Dispatch;
pub use host::{HookHost, HostError};
pub use metrics::{LATENCY_BUCKETS_US, MetricsSnapshot};
pub use policy::HostPolicy;
pub use prepare_wasm::read_component;
pub use settings::{CaptureFlags, ReplaySettings, Settings, SettingsError};
