//! hookbox-host: the hook host. It wires `hookbox-core` (rules, matching, aggregation) to the
//! runners (`hookbox-command` for native processes, `hookbox-wasm` for sandboxed components).
//!
//! - [`HookRuntime`]: built once per process from [`RuntimeSettings`] — the wasm engine, pool
//!   and compile cache, the command runner, the shared admission bounds (with reserves), the
//!   background hooks and the replay writer.
//! - [`HookHost`]: one project's or one tenant's hooks, built from a runtime and a
//!   [`HostPolicy`]: load plugins, `dispatch(event)`; hooks run concurrently and the verdict is
//!   aggregated in rule order; HookFired records, metrics and redacted replay files.
//!   [`dispatch_json`] is its answer as the JSON the CLI prints and the server answers.
//! - [`Tenants`]: many tenants over one runtime, one map of them, each tenant's [`HookHost`] its
//!   long-lived owner, with a [`TenantPolicy`] safe for untrusted code (within the operator's
//!   [`TenantMaxima`]): added, replaced and reloaded (validate-then-swap of policy and rules
//!   only), disabled and removed at run time, each operation under the tenant's admin lock.
//! - [`trust`]: rules run as they were approved, pinned to the bytes of what they run
//!   ([`TrustPolicy`], [`ApprovalStore`]).
//!
//! A host reads nothing from its project by itself: settings are policy input ([`Settings`] is
//! read by the CLI and applied to the [`HostPolicy`]).
//!
//! Inside, `host.rs` is the facade; below it `inner.rs` defines one generation (`Inner`) and the
//! long-lived state (`Live`) and is the only `impl Inner`. Each other module owns its functions
//! over `&Inner`: `install` (load and build a rule set), `dispatch` (match, run, aggregate,
//! re-check, hand the replay record to the writer), `run_command` / `run_wasm` / `run_http` (one rule each), `permits` (a hook's
//! quota and pool slot), `hook_report` (a run becomes the rule's report), `trust_gate`
//! (refusals, findings and sealed copies at dispatch), `trust_report` (a loaded set's subjects,
//! records and verdicts). `trust` is the host's trust model (policy, store, pins, the load-time
//! survey) and imports none of those. No module imports the facade (`scripts/check-deps.sh`).

mod admission;
mod background;
mod by_position;
mod dispatch;
mod dispatch_json;
pub mod duration;
mod error;
mod fired;
mod hook_report;
mod host;
mod inner;
mod install;
mod metrics;
mod missing_guards;
mod payloads;
mod permits;
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
pub mod tenant_control;
mod tenant_id;
mod tenant_policy;
pub mod tenant_trust;
mod tenants;
pub mod trust;
mod trust_gate;
mod trust_report;
mod wake;

pub use admission::{DispatchRefused, DispatchTicket};
pub use background::DrainReport;
pub use dispatch::Dispatch;
pub use dispatch_json::dispatch_json;
pub use error::HostError;
pub use fired::{FiredError, FiredReceiver, TryFiredError};
pub use host::HookHost;
pub use metrics::{LATENCY_BUCKETS_US, MetricsSnapshot};
pub use policy::{HostPolicy, RateLimit};
pub use runtime::{HookRuntime, RuntimeError, RuntimeSettings};
pub use settings::{
    CaptureFlags, MAX_SETTINGS_BYTES, ReplaySettings, Settings, SettingsError, StopSettings,
};
pub use state::{default_state_root, project_state_dir};
pub use tenant_id::{MAX_TENANT_ID_CHARS, TenantId, TenantIdError};
pub use tenant_policy::{
    MAX_MEMORY_MB, OverMaximum, TENANT_FILE, TenantMaxima, TenantPolicy, TenantPolicyError,
};
pub use tenant_trust::{HeldAnswer, TenantTrustSettings};
pub use tenants::{
    ControlSync, Held, HeldUnavailable, Removed, TenantAdmin, TenantAttachment, TenantError,
    TenantInfo, TenantRef, TenantSpec, TenantState, Tenants,
};
pub use trust::{ApprovalStore, TrustFinding, TrustMode, TrustPolicy};
pub use wake::Wake;
