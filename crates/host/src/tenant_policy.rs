//! `TenantPolicy`: what one tenant's hooks may do, with defaults safe for untrusted code. Its
//! field names are the keys of `[policy]` in a tenant's `tenant.toml` (`hookbox serve`); every
//! field has a documented default, and an unknown key is an error. A rule asking for more than
//! its tenant's policy allows is refused when the tenant is loaded.

use std::path::Path;
use std::time::Duration;

use hookbox_core::rule::FailMode;
use hookbox_http::{Destination, HttpPolicy};
use hookbox_wasm::{WasmLimits, WasmPolicy};
use serde::{Deserialize, Serialize};

use crate::policy::{HostPolicy, RateLimit};

const MIB: u64 = 1 << 20;

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
    /// Wall-clock timeout of a wasm hook that sets none, in seconds. Default **2**.
    pub default_timeout_secs: f64,
    /// Largest `timeout` a rule may ask for, in seconds. Default **10**.
    pub max_timeout_secs: f64,
    /// Fuel (a deterministic instruction budget) of a wasm hook that sets none, when the runtime
    /// meters fuel. Default **2,000,000,000** (about a second of guest CPU here; a typical hook
    /// uses well under 1% of it).
    pub default_fuel: u64,
    /// Largest `fuel` a rule may ask for. Default **10,000,000,000**.
    pub max_fuel: u64,
    /// Linear-memory cap of a wasm hook that sets none, in MiB. Default **32**.
    pub default_memory_mb: u64,
    /// Largest `memory_mb` a rule may ask for. Default **128**.
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
    /// Dispatches per second (token bucket), or none. Default **none** (off).
    pub dispatches_per_second: Option<f64>,
    /// Burst of the dispatch rate. Default **20**.
    pub dispatch_burst: u32,
    /// Rules one dispatch may run; the rest fail with `overloaded`. Default **32**.
    pub max_matched_rules: usize,
    /// Wall-clock budget of one whole dispatch, in seconds. Default **15**.
    pub dispatch_deadline_secs: f64,
    /// What a failed hook means when its rule does not say. Default **allow** (fail open).
    pub fail_mode: FailMode,
    /// Stop re-entry cap. Default **3**.
    pub stop_reentry_cap: u32,
    /// Whether dispatches write replay records (in the tenant's state folder). Default **true**.
    pub replay: bool,
}

impl Default for TenantPolicy {
    fn default() -> Self {
        TenantPolicy {
            allow_native_commands: false,
            allow_http: false,
            http_allow: Vec::new(),
            max_rules: 64,
            max_component_bytes: 32 * MIB,
            default_timeout_secs: 2.0,
            max_timeout_secs: 10.0,
            default_fuel: 2_000_000_000,
            max_fuel: 10_000_000_000,
            default_memory_mb: 32,
            max_memory_mb: 128,
            allow_rw_mounts: false,
            max_hooks_in_flight: 16,
            max_pool_slots: 8,
            wasm_cpu_share: 1,
            dispatches_per_second: None,
            dispatch_burst: 20,
            max_matched_rules: 32,
            dispatch_deadline_secs: 15.0,
            fail_mode: FailMode::Allow,
            stop_reentry_cap: hookbox_core::aggregate::DEFAULT_STOP_REENTRY_CAP,
            replay: true,
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

fn secs(field: &'static str, v: f64) -> Result<Duration, TenantPolicyError> {
    Duration::try_from_secs_f64(v)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| TenantPolicyError {
            field,
            reason: format!("is {v}: it must be a positive number of seconds"),
        })
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
        let default_timeout = secs("default_timeout_secs", self.default_timeout_secs)?;
        let max_timeout = secs("max_timeout_secs", self.max_timeout_secs)?;
        let deadline = secs("dispatch_deadline_secs", self.dispatch_deadline_secs)?;
        let bad = |field, reason: String| Err(TenantPolicyError { field, reason });
        if default_timeout > max_timeout {
            return bad("default_timeout_secs", "is above max_timeout_secs".into());
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
        Ok(HostPolicy {
            project_dir: folder.to_owned(),
            state_dir: Some(state_dir.to_owned()),
            replay: self.replay,
            stop_reentry_cap: self.stop_reentry_cap,
            fail_mode: self.fail_mode,
            allow_native_commands: self.allow_native_commands,
            http: if self.allow_http {
                HttpPolicy::allow_only(self.http_allow.iter().cloned())
            } else {
                HttpPolicy::tenant()
            },
            http_env: false,
            wasm,
            extra_mount_roots: Vec::new(),
            max_component_bytes: self.max_component_bytes,
            max_rules: self.max_rules,
            max_matched_rules: self.max_matched_rules,
            dispatch_deadline: deadline,
            max_hooks_in_flight: self.max_hooks_in_flight,
            max_pool_slots: self.max_pool_slots,
            wasm_cpu_share: self.wasm_cpu_share,
            dispatch_rate: self.dispatches_per_second.map(|per_second| RateLimit {
                per_second,
                burst: self.dispatch_burst,
            }),
            ..HostPolicy::default()
        })
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
            default_timeout_secs: 20.0,
            ..TenantPolicy::default()
        };
        let e = p
            .host_policy(Path::new("/t"), Path::new("/s"), true)
            .unwrap_err();
        assert_eq!(e.field, "default_timeout_secs");
        let p = TenantPolicy {
            dispatch_deadline_secs: f64::NAN,
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
    }
}
