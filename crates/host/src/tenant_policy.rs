//! `TenantPolicy`: what one tenant's hooks may do, with defaults safe for untrusted code. Its
//! field names are the keys of `[policy]` in a tenant's `tenant.toml` (`hookbox serve`); every
//! field has a documented default, and an unknown key is an error. Durations are read as
//! [`Duration`]s by a deserializer that refuses a bad value where it is written
//! ([`crate::duration`]). A rule asking for more than its tenant's policy allows is refused when
//! the tenant is loaded.
//!
//! [`TenantMaxima`] are the operator's caps on those values (`[tenant_maxima]` in `serve.toml`):
//! a policy over one is refused, naming the key, its value and the maximum.

use std::path::Path;
use std::time::Duration;

use hookbox_core::matcher::ToolAliases;
use hookbox_core::rule::FailMode;
use hookbox_http::{Destination, HttpPolicy};
use hookbox_wasm::{WasmLimits, WasmPolicy};
use serde::{Deserialize, Serialize};

use crate::error::HostError;
use crate::policy::{HostPolicy, RateLimit};
use crate::trust::{TrustMode, TrustPolicy};

const MIB: u64 = 1 << 20;

/// HookFired records queued for one of a tenant's `/fired` subscribers that does not read: the
/// host's default, written here so that a change there is a decision here.
const TENANT_FIRED_QUEUE_RECORDS: usize = 1024;

/// Bytes of HookFired records queued for one of a tenant's subscribers: the host's default.
const TENANT_FIRED_QUEUE_BYTES: usize = 1 << 20;

/// The file in a tenant's folder holding its token digest and policy (`hookbox serve`). Hooks
/// never get a read-write mount holding it.
pub const TENANT_FILE: &str = "tenant.toml";

/// Largest `max_memory_mb`: core's maximum for a hooks file's `memory_mb` (a wasm32 memory
/// addresses at most 4 GiB).
pub use hookbox_core::limits::MAX_MEMORY_MB;

/// One tenant's limits and grants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantPolicy {
    /// Whether native command hooks may be loaded. Default **false**: they are not sandboxed.
    /// A command rule is refused at load with a located error saying why.
    pub allow_native_commands: bool,
    /// Whether `http` hooks may be loaded. Default **false**.
    pub allow_http: bool,
    /// Where `http` hooks may send their payload when `allow_http` is on: host names
    /// (`hooks.example.com`, `*.example.com`, with an optional `:port`), IP addresses or CIDR
    /// ranges. Loopback, private, link-local (cloud metadata) and unique-local addresses are
    /// refused unless an IP or CIDR entry holds them; names are checked after DNS resolution.
    /// Default **none**.
    pub http_allow: Vec<Destination>,
    /// Rules the tenant may hold. Default **64**.
    pub max_rules: usize,
    /// Largest component file, in bytes. Default **32 MiB** (a componentize-py guest is ~19 MB).
    pub max_component_bytes: u64,
    /// Wall-clock timeout of a wasm hook that sets none, in seconds (above 0, at most a day).
    /// Default **2**.
    #[serde(with = "crate::duration::positive_secs")]
    pub default_timeout_secs: Duration,
    /// Largest `timeout` a rule may ask for, in seconds (above 0, at most a day). Default **10**.
    #[serde(with = "crate::duration::positive_secs")]
    pub max_timeout_secs: Duration,
    /// Fuel (a deterministic instruction budget) of a wasm hook that sets none, when the runtime
    /// meters fuel. Default **2,000,000,000** (about a second of guest CPU here; a typical hook
    /// uses well under 1% of it).
    pub default_fuel: u64,
    /// Largest `fuel` a rule may ask for. Default **10,000,000,000**.
    pub max_fuel: u64,
    /// Linear-memory cap of a wasm hook that sets none, in MiB. Default **32**.
    pub default_memory_mb: u64,
    /// Largest `memory_mb` a rule may ask for (at most [`MAX_MEMORY_MB`]). Default **128**.
    pub max_memory_mb: u64,
    /// Whether mounts may be read-write. Default **false**: mounts (only inside the tenant's own
    /// folder) are read-only.
    pub allow_rw_mounts: bool,
    /// Hooks of the tenant running at once; one more is refused at once (`overloaded`).
    /// Default **16**.
    pub max_hooks_in_flight: usize,
    /// Wasm pool slots the tenant may hold at once; one more is refused at once (`overloaded`).
    /// Default **8**.
    pub max_pool_slots: usize,
    /// The tenant's wasm guests that execute at once: its share of the CPU. More wait for a turn,
    /// taken in order at every 2 ms yield point, so its spinners queue behind each other, never in
    /// front of another tenant's hooks. Default **1** (one core's worth); at least 1.
    pub wasm_cpu_share: usize,
    /// Requests (dispatches) of the tenant admitted at once, counted from before their body is
    /// read; one more is refused at once (`hookbox serve` answers 429), so a tenant that opens
    /// many slow requests holds only its own places. Default **32**.
    pub max_dispatches_in_flight: usize,
    /// Dispatches per second (token bucket), or none. Default **none** (off).
    pub dispatches_per_second: Option<f64>,
    /// Burst of the dispatch rate. Default **20**.
    pub dispatch_burst: u32,
    /// Rules one dispatch may run; the rest fail with `overloaded`. Default **32**.
    pub max_matched_rules: usize,
    /// Wall-clock budget of one whole dispatch, in seconds (above 0, at most a day).
    /// Default **15**.
    #[serde(with = "crate::duration::positive_secs")]
    pub dispatch_deadline_secs: Duration,
    /// What a failed hook means when its rule does not say. Default **allow** (fail open).
    pub fail_mode: FailMode,
    /// Stop re-entry cap. Default **3**.
    pub stop_reentry_cap: u32,
    /// Whether dispatches write replay records (in the tenant's state folder). Default **true**.
    pub replay: bool,
    /// Wall-clock budget of one load's component compiles, in seconds: past it the tenant's
    /// remaining wasm rules are refused and the load fails (its previous rules keep serving;
    /// what compiled is cached for the next try). Default **60**.
    #[serde(with = "crate::duration::positive_secs")]
    pub compile_budget_secs: Duration,
}

impl Default for TenantPolicy {
    fn default() -> Self {
        TenantPolicy {
            allow_native_commands: false,
            allow_http: false,
            http_allow: Vec::new(),
            max_rules: 64,
            max_component_bytes: 32 * MIB,
            default_timeout_secs: Duration::from_secs(2),
            max_timeout_secs: Duration::from_secs(10),
            default_fuel: 2_000_000_000,
            max_fuel: 10_000_000_000,
            default_memory_mb: 32,
            max_memory_mb: 128,
            allow_rw_mounts: false,
            max_hooks_in_flight: 16,
            max_pool_slots: 8,
            wasm_cpu_share: 1,
            max_dispatches_in_flight: 32,
            dispatches_per_second: None,
            dispatch_burst: 20,
            max_matched_rules: 32,
            dispatch_deadline_secs: Duration::from_secs(15),
            fail_mode: FailMode::Allow,
            stop_reentry_cap: hookbox_core::aggregate::DEFAULT_STOP_REENTRY_CAP,
            replay: true,
            compile_budget_secs: Duration::from_secs(60),
        }
    }
}

/// Why a tenant policy is inconsistent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("tenant policy: `{field}` {reason}")]
pub struct TenantPolicyError {
    /// The field.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

/// The operator's caps on what a tenant's policy may set (`[tenant_maxima]` in `serve.toml`):
/// a `tenant.toml` over any of them is refused, naming the key, its value and the maximum. The
/// switches say whether a tenant's policy may turn the grant on at all. Defaults: what a SaaS
/// platform can carry per tenant on one machine; every key is documented in the server's
/// default configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantMaxima {
    /// Whether `allow_native_commands = true` is accepted. Default **true**.
    pub allow_native_commands: bool,
    /// Whether `allow_http = true` is accepted. Default **true**.
    pub allow_http: bool,
    /// Whether `allow_rw_mounts = true` is accepted. Default **true**.
    pub allow_rw_mounts: bool,
    /// Largest `max_rules`. Default **10,000**.
    pub max_rules: usize,
    /// Largest `max_component_bytes`. Default **64 MiB**.
    pub max_component_bytes: u64,
    /// Largest `max_timeout_secs` (and so `default_timeout_secs`). Default **600**.
    #[serde(with = "crate::duration::positive_secs")]
    pub max_timeout_secs: Duration,
    /// Largest `max_fuel` (and so `default_fuel`). Default **100,000,000,000**.
    pub max_fuel: u64,
    /// Largest `max_memory_mb` (and so `default_memory_mb`). Default **1024**.
    pub max_memory_mb: u64,
    /// Largest `max_hooks_in_flight`. Default **256**.
    pub max_hooks_in_flight: usize,
    /// Largest `max_pool_slots`. Default **256**.
    pub max_pool_slots: usize,
    /// Largest `max_dispatches_in_flight`. Default **256**.
    pub max_dispatches_in_flight: usize,
    /// Largest `wasm_cpu_share`: guests of one tenant executing at once. Default **2** (a tenant
    /// that could take every core would make the share meaningless on a small machine).
    pub wasm_cpu_share: usize,
    /// Largest `dispatches_per_second`. Default **10,000**.
    pub dispatches_per_second: f64,
    /// Largest `dispatch_burst`. Default **10,000**.
    pub dispatch_burst: u32,
    /// Largest `max_matched_rules`. Default **128**.
    pub max_matched_rules: usize,
    /// Largest `dispatch_deadline_secs`. Default **600**.
    #[serde(with = "crate::duration::positive_secs")]
    pub dispatch_deadline_secs: Duration,
    /// Largest `stop_reentry_cap`. Default **8** (Claude Code's own cap).
    pub stop_reentry_cap: u32,
    /// Largest `compile_budget_secs`. Default **300**.
    #[serde(with = "crate::duration::positive_secs")]
    pub compile_budget_secs: Duration,
}

impl Default for TenantMaxima {
    fn default() -> Self {
        TenantMaxima {
            allow_native_commands: true,
            allow_http: true,
            allow_rw_mounts: true,
            max_rules: 10_000,
            max_component_bytes: 64 * MIB,
            max_timeout_secs: Duration::from_secs(600),
            max_fuel: 100_000_000_000,
            max_memory_mb: 1024,
            max_hooks_in_flight: 256,
            max_pool_slots: 256,
            max_dispatches_in_flight: 256,
            wasm_cpu_share: 2,
            dispatches_per_second: 10_000.0,
            dispatch_burst: 10_000,
            max_matched_rules: 128,
            dispatch_deadline_secs: Duration::from_secs(600),
            stop_reentry_cap: 8,
            compile_budget_secs: Duration::from_secs(300),
        }
    }
}

/// A tenant policy value over its operator's maximum.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{field}` is {value}: over the operator's maximum of {max} ([tenant_maxima] {field})")]
pub struct OverMaximum {
    /// The policy key.
    pub field: &'static str,
    /// Its value, as written.
    pub value: String,
    /// The maximum.
    pub max: String,
}

impl TenantMaxima {
    /// Every value of `policy` over these maxima (empty when it is within them).
    pub fn check(&self, policy: &TenantPolicy) -> Vec<OverMaximum> {
        let mut over = Vec::new();
        let mut num = |field: &'static str, value: String, max: String, is_over: bool| {
            if is_over {
                over.push(OverMaximum { field, value, max });
            }
        };
        let secs = |d: Duration| format!("{}", d.as_secs_f64());
        let grant = |b: bool| if b { "true" } else { "false (refused)" }.to_owned();
        let p = policy;
        num(
            "allow_native_commands",
            p.allow_native_commands.to_string(),
            grant(self.allow_native_commands),
            p.allow_native_commands && !self.allow_native_commands,
        );
        num(
            "allow_http",
            p.allow_http.to_string(),
            grant(self.allow_http),
            p.allow_http && !self.allow_http,
        );
        num(
            "allow_rw_mounts",
            p.allow_rw_mounts.to_string(),
            grant(self.allow_rw_mounts),
            p.allow_rw_mounts && !self.allow_rw_mounts,
        );
        macro_rules! cap {
            ($field:ident) => {
                num(
                    stringify!($field),
                    p.$field.to_string(),
                    self.$field.to_string(),
                    p.$field > self.$field,
                )
            };
            ($field:ident, $max:ident) => {
                num(
                    stringify!($field),
                    p.$field.to_string(),
                    self.$max.to_string(),
                    p.$field > self.$max,
                )
            };
        }
        cap!(max_rules);
        cap!(max_component_bytes);
        num(
            "default_timeout_secs",
            secs(p.default_timeout_secs),
            secs(self.max_timeout_secs),
            p.default_timeout_secs > self.max_timeout_secs,
        );
        num(
            "max_timeout_secs",
            secs(p.max_timeout_secs),
            secs(self.max_timeout_secs),
            p.max_timeout_secs > self.max_timeout_secs,
        );
        cap!(default_fuel, max_fuel);
        cap!(max_fuel);
        cap!(default_memory_mb, max_memory_mb);
        cap!(max_memory_mb);
        cap!(max_hooks_in_flight);
        cap!(max_pool_slots);
        cap!(max_dispatches_in_flight);
        cap!(wasm_cpu_share);
        if let Some(rate) = p.dispatches_per_second {
            num(
                "dispatches_per_second",
                rate.to_string(),
                self.dispatches_per_second.to_string(),
                rate > self.dispatches_per_second,
            );
        }
        cap!(dispatch_burst);
        cap!(max_matched_rules);
        num(
            "dispatch_deadline_secs",
            secs(p.dispatch_deadline_secs),
            secs(self.dispatch_deadline_secs),
            p.dispatch_deadline_secs > self.dispatch_deadline_secs,
        );
        cap!(stop_reentry_cap);
        num(
            "compile_budget_secs",
            secs(p.compile_budget_secs),
            secs(self.compile_budget_secs),
            p.compile_budget_secs > self.compile_budget_secs,
        );
        over
    }
}

impl TenantPolicy {
    /// The host policy of a tenant whose folder is `folder` (its `${CLAUDE_PROJECT_DIR}` and the
    /// only folder its rules may mount) and whose state lives in `state_dir`. `fuel_metered`:
    /// whether the runtime meters fuel (otherwise the fuel fields do not apply).
    pub fn host_policy(
        &self,
        folder: &Path,
        state_dir: &Path,
        fuel_metered: bool,
    ) -> Result<HostPolicy, TenantPolicyError> {
        let default_timeout = self.default_timeout_secs;
        let max_timeout = self.max_timeout_secs;
        let bad = |field, reason: String| Err(TenantPolicyError { field, reason });
        // The deserializer refuses these in a file; a policy built in code is checked here.
        for (field, d) in [
            ("default_timeout_secs", default_timeout),
            ("max_timeout_secs", max_timeout),
            ("dispatch_deadline_secs", self.dispatch_deadline_secs),
            ("compile_budget_secs", self.compile_budget_secs),
        ] {
            if d.is_zero() || d > Duration::from_secs(crate::duration::MAX_CONFIG_SECS) {
                return bad(
                    field,
                    format!(
                        "is {} s: it must be above 0 and at most {} s",
                        d.as_secs_f64(),
                        crate::duration::MAX_CONFIG_SECS
                    ),
                );
            }
        }
        if default_timeout > max_timeout {
            return bad("default_timeout_secs", "is above max_timeout_secs".into());
        }
        if self.max_memory_mb > MAX_MEMORY_MB {
            return bad(
                "max_memory_mb",
                format!(
                    "is {}: at most {MAX_MEMORY_MB} (a wasm32 memory's 4 GiB)",
                    self.max_memory_mb
                ),
            );
        }
        if self.default_memory_mb == 0 || self.default_memory_mb > self.max_memory_mb {
            return bad(
                "default_memory_mb",
                "must be at least 1 and at most max_memory_mb".into(),
            );
        }
        if fuel_metered && (self.default_fuel == 0 || self.default_fuel > self.max_fuel) {
            return bad(
                "default_fuel",
                "must be at least 1 and at most max_fuel".into(),
            );
        }
        if self.wasm_cpu_share == 0 {
            return bad(
                "wasm_cpu_share",
                "is 0: at least one guest must be able to run".into(),
            );
        }
        if let Some(r) = self.dispatches_per_second
            && !(r.is_finite() && r > 0.0)
        {
            return bad(
                "dispatches_per_second",
                format!("is {r}: it must be positive"),
            );
        }
        let defaults = WasmLimits {
            timeout: default_timeout,
            fuel: fuel_metered.then_some(self.default_fuel),
            memory_bytes: self.default_memory_mb.saturating_mul(MIB),
            ..WasmLimits::default()
        };
        let mut wasm = WasmPolicy {
            defaults,
            allow_fuel: fuel_metered,
            allow_rw_mounts: self.allow_rw_mounts,
            ..WasmPolicy::default()
        };
        wasm.maxima.timeout = max_timeout;
        wasm.maxima.fuel = fuel_metered.then_some(self.max_fuel);
        wasm.maxima.memory_bytes = self.max_memory_mb.saturating_mul(MIB);
        // Every field named (no `..HostPolicy::default()`): the host's defaults suit a developer
        // running their own plugins, so a field added there must not reach tenants unseen — it
        // does not compile here until someone decides its tenant value.
        let policy = HostPolicy {
            project_dir: folder.to_owned(),
            state_dir: Some(state_dir.to_owned()),
            replay: self.replay,
            stop_reentry_cap: self.stop_reentry_cap,
            // Replay keeps previews only: a tenant's hooks' whole output is not the server's to
            // keep.
            capture_full_output: false,
            fail_mode: self.fail_mode,
            allow_native_commands: self.allow_native_commands,
            http: if self.allow_http {
                HttpPolicy::allow_only(self.http_allow.iter().cloned())
            } else {
                HttpPolicy::tenant()
            },
            // A tenant's `http` hooks never read the server's environment.
            http_env: false,
            dedup_commands: true,
            aliases: ToolAliases::default(),
            wasm,
            // Only the tenant's own folder (and each rule's plugin inside it) may be mounted.
            extra_mount_roots: Vec::new(),
            // The tenant's own file is its operator's: no hook may get a writable mount of it.
            protected_paths: vec![folder.join(TENANT_FILE)],
            max_component_bytes: self.max_component_bytes,
            max_rules: self.max_rules,
            max_matched_rules: self.max_matched_rules,
            dispatch_deadline: self.dispatch_deadline_secs,
            max_hooks_in_flight: self.max_hooks_in_flight,
            max_pool_slots: self.max_pool_slots,
            wasm_cpu_share: self.wasm_cpu_share,
            max_dispatches_in_flight: self.max_dispatches_in_flight,
            dispatch_rate: self.dispatches_per_second.map(|per_second| RateLimit {
                per_second,
                burst: self.dispatch_burst,
            }),
            // A guard that denies the rewritten input still wins.
            recheck_updated_input: true,
            compile_budget: self.compile_budget_secs,
            fired_queue_records: TENANT_FIRED_QUEUE_RECORDS,
            fired_queue_bytes: TENANT_FIRED_QUEUE_BYTES,
            // Nothing is refused at dispatch (a tenant's approval point is the swap, where its
            // loads are held), but every rule is recorded at load, with the digests of what it
            // runs, for that comparison; the pinning bounds are the host's.
            trust: TrustPolicy {
                mode: TrustMode::Off,
                record: true,
                ..TrustPolicy::default()
            },
        };
        // What every host policy is checked for (quotas of 0, a burst of 0), located at the
        // tenant.toml key it came from.
        policy.validate().map_err(|e| match e {
            HostError::Invalid { field, reason } => TenantPolicyError {
                field: tenant_key(field),
                reason,
            },
            other => TenantPolicyError {
                field: "policy",
                reason: other.to_string(),
            },
        })?;
        Ok(policy)
    }
}

/// The `tenant.toml` key a [`HostPolicy`] field is set from (most share their name).
fn tenant_key(host_field: &'static str) -> &'static str {
    match host_field {
        "dispatch_rate.burst" => "dispatch_burst",
        "dispatch_rate.per_second" => "dispatches_per_second",
        same => same,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_closed_and_consistent() {
        let p = TenantPolicy::default();
        let h = p
            .host_policy(Path::new("/t/acme"), Path::new("/s/acme"), true)
            .unwrap();
        assert!(!h.allow_native_commands && !h.http.enabled && !h.wasm.allow_rw_mounts);
        assert!(h.extra_mount_roots.is_empty());
        assert_eq!(h.wasm.defaults.fuel, Some(2_000_000_000));
        assert_eq!(h.wasm_cpu_share, 1, "one core's worth per tenant");
        h.wasm.validate().unwrap();
        let no_fuel = p
            .host_policy(Path::new("/t"), Path::new("/s"), false)
            .unwrap();
        assert_eq!(
            (no_fuel.wasm.defaults.fuel, no_fuel.wasm.allow_fuel),
            (None, false)
        );
    }

    /// Issue 32: the tenant value of every host field whose host default is permissive (or
    /// merely generous) is pinned here, so a change to the host's defaults — or a field added
    /// to it — cannot loosen tenants unseen (`host_policy` names every field, so a new one does
    /// not compile until its tenant value is decided).
    #[test]
    fn every_permissive_host_field_has_its_tenant_value_pinned() {
        let h = TenantPolicy::default()
            .host_policy(Path::new("/t/acme"), Path::new("/s/acme"), true)
            .unwrap();
        let host = HostPolicy::default();
        // Grants that are on for a developer's own host and off for a tenant.
        assert!(host.allow_native_commands && !h.allow_native_commands);
        assert!(host.http.enabled && !h.http.enabled);
        assert!(host.http_env && !h.http_env);
        assert!(!h.capture_full_output && !h.wasm.allow_rw_mounts);
        assert!(h.extra_mount_roots.is_empty());
        assert_eq!(h.protected_paths, [Path::new("/t/acme/tenant.toml")]);
        assert_eq!(h.project_dir, Path::new("/t/acme"));
        assert_eq!(h.state_dir.as_deref(), Some(Path::new("/s/acme")));
        // Bounds: the host's are generous, a tenant's are its policy's.
        assert_eq!((h.max_rules, host.max_rules), (64, 10_000), "max_rules");
        assert_eq!(h.max_component_bytes, 32 * MIB);
        assert_eq!(h.max_matched_rules, 32);
        assert_eq!(h.dispatch_deadline, Duration::from_secs(15));
        assert_eq!(h.max_hooks_in_flight, 16);
        assert_eq!(h.max_pool_slots, 8);
        assert_eq!((h.wasm_cpu_share, host.wasm_cpu_share), (1, usize::MAX));
        assert_eq!(h.max_dispatches_in_flight, 32);
        assert_eq!(h.dispatch_rate, None);
        assert_eq!(h.compile_budget, Duration::from_secs(60));
        assert_eq!(h.stop_reentry_cap, 3);
        assert_eq!(h.fail_mode, FailMode::Allow);
        assert_eq!(
            (h.fired_queue_records, h.fired_queue_bytes),
            (1024, 1 << 20)
        );
        // Safety switches stay on; trust records every rule and refuses nothing at dispatch.
        assert!(h.recheck_updated_input && h.dedup_commands && h.replay);
        assert_eq!((h.trust.mode, h.trust.record), (TrustMode::Off, true));
        assert_eq!(h.trust.store, None);
    }

    #[test]
    fn keys_are_the_field_names_and_unknown_keys_are_refused() {
        let p: TenantPolicy = serde_json::from_str(
            r#"{"max_rules": 5, "allow_http": true, "http_allow": ["hooks.example.com"]}"#,
        )
        .unwrap();
        assert_eq!((p.max_rules, p.allow_http, p.max_pool_slots), (5, true, 8));
        let h = p
            .host_policy(Path::new("/t"), Path::new("/s"), true)
            .unwrap();
        assert!(h.http.enabled && !h.http.any_destination && h.http.allow.len() == 1);
        let e = serde_json::from_str::<TenantPolicy>(r#"{"max_rulez": 5}"#).unwrap_err();
        assert!(e.to_string().contains("max_rulez"), "{e}");
    }

    #[test]
    fn inconsistent_policies_name_the_field() {
        let p = TenantPolicy {
            default_timeout_secs: Duration::from_secs(20),
            ..TenantPolicy::default()
        };
        let e = p
            .host_policy(Path::new("/t"), Path::new("/s"), true)
            .unwrap_err();
        assert_eq!(e.field, "default_timeout_secs");
        let p = TenantPolicy {
            dispatch_deadline_secs: Duration::ZERO,
            ..TenantPolicy::default()
        };
        assert!(
            p.host_policy(Path::new("/t"), Path::new("/s"), true)
                .is_err()
        );
        let p = TenantPolicy {
            wasm_cpu_share: 0,
            ..TenantPolicy::default()
        };
        let e = p
            .host_policy(Path::new("/t"), Path::new("/s"), true)
            .unwrap_err();
        assert_eq!(e.field, "wasm_cpu_share");
        for bad in [
            TenantPolicy {
                max_hooks_in_flight: 0,
                ..TenantPolicy::default()
            },
            TenantPolicy {
                max_memory_mb: 1 << 40,
                ..TenantPolicy::default()
            },
        ] {
            assert!(
                bad.host_policy(Path::new("/t"), Path::new("/s"), true)
                    .is_err()
            );
        }
    }

    /// The checks shared with every host policy (made by `HostPolicy::validate`) still name
    /// the tenant.toml key, including the rate's burst, whose host field is named otherwise.
    #[test]
    fn a_zero_quota_or_burst_is_refused_at_its_tenant_toml_key() {
        let zero = |field: &str| {
            let mut p = TenantPolicy {
                dispatches_per_second: Some(5.0),
                ..TenantPolicy::default()
            };
            match field {
                "max_hooks_in_flight" => p.max_hooks_in_flight = 0,
                "max_pool_slots" => p.max_pool_slots = 0,
                "max_dispatches_in_flight" => p.max_dispatches_in_flight = 0,
                "max_matched_rules" => p.max_matched_rules = 0,
                "dispatch_burst" => p.dispatch_burst = 0,
                other => unreachable!("{other}"),
            }
            p.host_policy(Path::new("/t"), Path::new("/s"), true)
                .unwrap_err()
        };
        for field in [
            "max_hooks_in_flight",
            "max_pool_slots",
            "max_dispatches_in_flight",
            "max_matched_rules",
            "dispatch_burst",
        ] {
            let e = zero(field);
            assert_eq!(e.field, field);
            assert_eq!(e.reason, "is 0: it must be at least 1");
        }
    }

    #[test]
    fn the_defaults_are_within_the_default_maxima_and_more_is_refused_by_key() {
        let m = TenantMaxima::default();
        assert_eq!(m.check(&TenantPolicy::default()), []);
        // The attack of issue 16: a tenant file asking for the moon.
        let p: TenantPolicy = serde_json::from_str(
            r#"{"max_timeout_secs": 86400, "max_hooks_in_flight": 1000000000,
                "max_component_bytes": 1000000000000, "stop_reentry_cap": 100,
                "wasm_cpu_share": 64}"#,
        )
        .unwrap();
        let over: Vec<&str> = m.check(&p).iter().map(|o| o.field).collect();
        assert_eq!(
            over,
            [
                "max_component_bytes",
                "max_timeout_secs",
                "max_hooks_in_flight",
                "wasm_cpu_share",
                "stop_reentry_cap"
            ]
        );
        let e = m.check(&p)[1].to_string();
        assert!(e.contains("86400") && e.contains("600"), "{e}");
        let closed = TenantMaxima {
            allow_native_commands: false,
            ..TenantMaxima::default()
        };
        let p = TenantPolicy {
            allow_native_commands: true,
            ..TenantPolicy::default()
        };
        assert_eq!(closed.check(&p)[0].field, "allow_native_commands");
    }

    #[test]
    fn huge_durations_are_refused_where_they_are_read() {
        // 1e19 s once overflowed the time arithmetic of every dispatch (each answered 500).
        for key in [
            "dispatch_deadline_secs",
            "default_timeout_secs",
            "max_timeout_secs",
            "compile_budget_secs",
        ] {
            for v in ["1e19", "-1", "0"] {
                let e = serde_json::from_str::<TenantPolicy>(&format!("{{\"{key}\": {v}}}"))
                    .unwrap_err()
                    .to_string();
                assert!(e.contains("seconds") || e.contains("0"), "{key}={v}: {e}");
            }
        }
        let e = serde_json::from_str::<TenantPolicy>(r#"{"dispatch_deadline_secs": 1e19}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("over the maximum; give more than 0 and at most 86400 seconds"),
            "{e}"
        );
        let p: TenantPolicy = serde_json::from_str(r#"{"dispatch_deadline_secs": 0.5}"#).unwrap();
        assert_eq!(p.dispatch_deadline_secs, Duration::from_millis(500));
    }
}
