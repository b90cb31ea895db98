//! hookbox-host: the hook host. It wires `hookbox-core` (rules, matching, aggregation) to the
//! runners (`hookbox-command` for native processes, `hookbox-wasm` for sandboxed components).
//!
//! - [`HookRuntime`]: built once per process from [`RuntimeSettings`] — the wasm engine, pool
//!   and compile cache, the command runner, the shared admission bounds (with reserves), the
//!   background hooks and the replay writer.
//! - [`HookHost`]: one project's or one tenant's hooks, built from a runtime and a
//!   [`HostPolicy`]: load plugins, `dispatch(event)`; hooks run concurrently and the verdict is
//!   aggregated in rule order; HookFired records, metrics and redacted replay files.
//! - [`Tenants`]: many tenants' hosts over one runtime, each with a [`TenantPolicy`] safe for
//!   untrusted code, added, reloaded (validate-then-swap), disabled and removed at run time.
//! - [`trust`]: rules run as they were approved, pinned to the bytes of what they run
//!   ([`TrustPolicy`], [`ApprovalStore`]).

mod admission;
mod background;
mod dispatch;
mod host;
mod install;
mod metrics;
mod payloads;
mod policy;
mod rate;
pub mod replay;
mod run_command;
mod run_http;
mod run_wasm;
mod runtime;
pub mod secrets;
mod session_dirs;
mod settings;
mod state;
mod tenant_id;
mod tenant_policy;
mod tenants;
pub mod trust;
mod wake;

pub use background::DrainReport;
pub use dispatch::Dispatch;
pub use host::{HookHost, HostError};
pub use metrics::{LATENCY_BUCKETS_US, MetricsSnapshot};
pub use policy::{HostPolicy, RateLimit};
pub use runtime::{HookRuntime, RuntimeError, RuntimeSettings};
pub use settings::{
    CaptureFlags, MAX_SETTINGS_BYTES, ReplaySettings, Settings, SettingsError, StopSettings,
};
pub use state::{default_state_root, project_state_dir};
pub use tenant_id::{MAX_TENANT_ID_CHARS, TenantId, TenantIdError};
pub use tenant_policy::{TenantPolicy, TenantPolicyError};
pub use tenants::{Removed, TenantError, TenantInfo, TenantSpec, TenantState, Tenants};
pub use trust::{ApprovalStore, TrustFinding, TrustMode, TrustPolicy};
pub use wake::Wake;
