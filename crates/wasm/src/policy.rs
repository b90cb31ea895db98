//! The host's (or a tenant's) policy for wasm hooks: the limits a rule gets when it says nothing,
//! the most it may ask for, and which capabilities may be granted at all. [`resolve`] turns a
//! rule's `WasmSpec` into [`WasmLimits`]; asking beyond the policy is a load-time error naming the
//! field, the value asked and the maximum, never a silent clamp.

use std::collections::BTreeSet;
use std::time::Duration;

use hookbox_core::rule::{Access, WasmSpec};
use serde::{Deserialize, Serialize};

use crate::limits::WasmLimits;

mod error;

pub use error::PolicyError;

const MIB: u64 = 1 << 20;

/// What wasm rules may ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WasmPolicy {
    /// The limits of every field a rule leaves out (see [`WasmLimits`] for each default).
    pub defaults: WasmLimits,
    /// The largest value a rule may ask for, per field. `maxima.fuel = None` means "no cap" when
    /// fuel is allowed. The policy-only fields (`log_message_bytes`, `resource_handles`) are
    /// always taken from `defaults`; `write_bytes` and `write_files` maxima equal their defaults
    /// unless the host raises them, so by default a rule may only lower them.
    pub maxima: WasmLimits,
    /// Whether rules may ask for a fuel budget. Default **false**: fuel instrumentation slows
    /// guests down (measured +5…+117 %), so a host opts in and builds its runtime with
    /// [`RuntimeConfig::fuel`](crate::RuntimeConfig::fuel).
    pub allow_fuel: bool,
    /// Whether a mount may be `rw`. Default **false**: mounts are read-only.
    pub allow_rw_mounts: bool,
    /// Most mounts one rule may declare. Default **8**.
    pub max_mounts: usize,
    /// Environment variable names a rule may set; `None` allows any name. Default `None`: the
    /// guest only ever sees what its rule lists, never the host's environment.
    pub allowed_env: Option<BTreeSet<String>>,
}

impl Default for WasmPolicy {
    fn default() -> WasmPolicy {
        WasmPolicy {
            defaults: WasmLimits::default(),
            maxima: WasmLimits {
                timeout: Duration::from_secs(60),
                fuel: None,
                memory_bytes: 256 * MIB,
                table_elements: 100_000,
                instances: 128,
                output_bytes: 16 * MIB,
                log_calls: 1_000,
                log_message_bytes: WasmLimits::DEFAULT_LOG_MESSAGE_BYTES,
                response_bytes: 16 * MIB,
                write_bytes: WasmLimits::DEFAULT_WRITE_BYTES,
                write_files: WasmLimits::DEFAULT_WRITE_FILES,
                resource_handles: WasmLimits::DEFAULT_RESOURCE_HANDLES,
            },
            allow_fuel: false,
            allow_rw_mounts: false,
            max_mounts: 8,
            allowed_env: None,
        }
    }
}

fn fmt_secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn fmt_mib(bytes: u64) -> String {
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Checks `asked` (when the rule gave it) against `max`, else takes `default`.
fn count_field(
    field: &'static str,
    asked: Option<u64>,
    default: u64,
    max: u64,
    min: u64,
) -> Result<u64, PolicyError> {
    let Some(v) = asked else { return Ok(default) };
    if v < min {
        return Err(PolicyError::Invalid {
            field,
            value: v.to_string(),
            reason: "it must be at least 1",
        });
    }
    if v > max {
        return Err(PolicyError::AboveMaximum {
            field,
            asked: v.to_string(),
            maximum: max.to_string(),
        });
    }
    Ok(v)
}

/// Turns a rule's wasm settings into the limits it runs under, checking every grant against
/// `policy`: limits, fuel, mounts (count, `rw`, guest paths) and environment names.
pub fn resolve(spec: &WasmSpec, policy: &WasmPolicy) -> Result<WasmLimits, PolicyError> {
    let (d, m) = (&policy.defaults, &policy.maxima);
    let timeout = match spec.timeout_secs {
        None => d.timeout,
        Some(s) => {
            let t = Duration::try_from_secs_f64(s)
                .ok()
                .filter(|t| !t.is_zero())
                .ok_or(PolicyError::Invalid {
                    field: "timeout",
                    value: s.to_string(),
                    reason: "it must be a positive number of seconds",
                })?;
            if t > m.timeout {
                return Err(PolicyError::AboveMaximum {
                    field: "timeout",
                    asked: format!("{s} s"),
                    maximum: fmt_secs(m.timeout),
                });
            }
            t
        }
    };
    let fuel = match spec.fuel {
        None => d.fuel,
        Some(f) if !policy.allow_fuel => return Err(PolicyError::FuelNotAllowed { asked: f }),
        Some(0) => {
            return Err(PolicyError::Invalid {
                field: "fuel",
                value: "0".into(),
                reason: "it must be at least 1",
            });
        }
        Some(f) => match m.fuel {
            Some(max) if f > max => {
                return Err(PolicyError::AboveMaximum {
                    field: "fuel",
                    asked: f.to_string(),
                    maximum: max.to_string(),
                });
            }
            _ => Some(f),
        },
    };
    let memory_bytes = match spec.memory_mb {
        None => d.memory_bytes,
        Some(0) => {
            return Err(PolicyError::Invalid {
                field: "memory_mb",
                value: "0".into(),
                reason: "it must be at least 1",
            });
        }
        Some(mb) => match mb.checked_mul(MIB) {
            Some(bytes) if bytes <= m.memory_bytes => bytes,
            _ => {
                return Err(PolicyError::AboveMaximum {
                    field: "memory_mb",
                    asked: format!("{mb} MiB"),
                    maximum: fmt_mib(m.memory_bytes),
                });
            }
        },
    };
    let limits = WasmLimits {
        timeout,
        fuel,
        memory_bytes,
        table_elements: count_field(
            "table_elements",
            spec.table_elements,
            d.table_elements,
            m.table_elements,
            0,
        )?,
        instances: count_field("instances", spec.instances, d.instances, m.instances, 1)?,
        output_bytes: count_field(
            "output_bytes",
            spec.output_bytes,
            d.output_bytes,
            m.output_bytes,
            0,
        )?,
        log_calls: count_field("log_calls", spec.log_calls, d.log_calls, m.log_calls, 0)?,
        response_bytes: count_field(
            "response_bytes",
            spec.response_bytes,
            d.response_bytes,
            m.response_bytes,
            1,
        )?,
        log_message_bytes: d.log_message_bytes,
        write_bytes: count_field(
            "write_bytes",
            spec.write_bytes,
            d.write_bytes,
            m.write_bytes,
            1,
        )?,
        write_files: count_field(
            "write_files",
            spec.write_files,
            d.write_files,
            m.write_files,
            1,
        )?,
        resource_handles: d.resource_handles,
    };
    check_mounts(spec, policy)?;
    check_env(spec, policy)?;
    Ok(limits)
}

fn check_mounts(spec: &WasmSpec, policy: &WasmPolicy) -> Result<(), PolicyError> {
    if spec.mounts.len() > policy.max_mounts {
        return Err(PolicyError::TooManyMounts {
            count: spec.mounts.len(),
            maximum: policy.max_mounts,
        });
    }
    let mut seen = BTreeSet::new();
    for mount in &spec.mounts {
        if mount.access == Access::Rw && !policy.allow_rw_mounts {
            return Err(PolicyError::RwMountNotAllowed {
                host: mount.host.clone(),
                guest: mount.guest.clone(),
            });
        }
        let bad = |reason| PolicyError::BadGuestPath {
            guest: mount.guest.clone(),
            reason,
        };
        if !mount.guest.starts_with('/') {
            return Err(bad("must be absolute (start with `/`)"));
        }
        if mount.guest.contains('\0') {
            return Err(bad("contains a NUL byte"));
        }
        if mount.guest.split('/').any(|c| c == "..") {
            return Err(bad("must not contain `..`"));
        }
        if !seen.insert(mount.guest.trim_end_matches('/')) {
            return Err(bad("is mounted twice"));
        }
    }
    Ok(())
}

fn check_env(spec: &WasmSpec, policy: &WasmPolicy) -> Result<(), PolicyError> {
    for name in spec.env.keys() {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(PolicyError::BadEnvName { name: name.clone() });
        }
        if let Some(allowed) = &policy.allowed_env
            && !allowed.contains(name)
        {
            return Err(PolicyError::EnvNotAllowed { name: name.clone() });
        }
    }
    Ok(())
}

impl WasmPolicy {
    /// Checks that the policy is consistent: each default within its maximum, and default fuel
    /// only where fuel is allowed.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let (d, m) = (&self.defaults, &self.maxima);
        let above = |field, default: String, maximum: String| {
            Err(PolicyError::DefaultAboveMaximum {
                field,
                default,
                maximum,
            })
        };
        if d.timeout > m.timeout {
            return above("timeout", fmt_secs(d.timeout), fmt_secs(m.timeout));
        }
        if d.memory_bytes > m.memory_bytes {
            return above(
                "memory_mb",
                fmt_mib(d.memory_bytes),
                fmt_mib(m.memory_bytes),
            );
        }
        let counts = [
            ("table_elements", d.table_elements, m.table_elements),
            ("instances", d.instances, m.instances),
            ("output_bytes", d.output_bytes, m.output_bytes),
            ("log_calls", d.log_calls, m.log_calls),
            ("response_bytes", d.response_bytes, m.response_bytes),
        ];
        for (field, default, maximum) in counts {
            if default > maximum {
                return above(field, default.to_string(), maximum.to_string());
            }
        }
        match (d.fuel, m.fuel) {
            (Some(f), _) if !self.allow_fuel => Err(PolicyError::FuelNotAllowed { asked: f }),
            (Some(f), Some(max)) if f > max => above("fuel", f.to_string(), max.to_string()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::rule::MountSpec;
    use serde_json::Value;

    fn spec() -> WasmSpec {
        WasmSpec {
            component: "x.wasm".into(),
            timeout_secs: None,
            fuel: None,
            memory_mb: None,
            table_elements: None,
            instances: None,
            output_bytes: None,
            log_calls: None,
            response_bytes: None,
            write_bytes: None,
            write_files: None,
            mounts: vec![],
            env: Default::default(),
            config: Value::Null,
        }
    }

    #[test]
    fn empty_rule_gets_the_defaults() {
        let p = WasmPolicy::default();
        assert_eq!(resolve(&spec(), &p).unwrap(), p.defaults);
        p.validate().unwrap();
    }

    #[test]
    fn above_maximum_names_field_asked_and_maximum() {
        let s = WasmSpec {
            memory_mb: Some(512),
            ..spec()
        };
        let e = resolve(&s, &WasmPolicy::default()).unwrap_err();
        assert_eq!(
            e,
            PolicyError::AboveMaximum {
                field: "memory_mb",
                asked: "512 MiB".into(),
                maximum: "256 MiB".into()
            }
        );
        let s = WasmSpec {
            timeout_secs: Some(61.0),
            ..spec()
        };
        assert!(matches!(
            resolve(&s, &WasmPolicy::default()),
            Err(PolicyError::AboveMaximum {
                field: "timeout",
                ..
            })
        ));
        let s = WasmSpec {
            log_calls: Some(5_000),
            ..spec()
        };
        assert!(matches!(
            resolve(&s, &WasmPolicy::default()),
            Err(PolicyError::AboveMaximum {
                field: "log_calls",
                ..
            })
        ));
    }

    #[test]
    fn values_within_the_policy_are_taken_as_asked() {
        let s = WasmSpec {
            timeout_secs: Some(0.5),
            memory_mb: Some(8),
            output_bytes: Some(10),
            ..spec()
        };
        let l = resolve(&s, &WasmPolicy::default()).unwrap();
        assert_eq!(l.timeout, Duration::from_millis(500));
        assert_eq!(l.memory_bytes, 8 * MIB);
        assert_eq!(l.output_bytes, 10);
    }

    #[test]
    fn response_and_write_caps_are_rule_fields_within_the_policy() {
        let p = WasmPolicy::default();
        let s = WasmSpec {
            response_bytes: Some(4096),
            write_bytes: Some(1024),
            write_files: Some(2),
            ..spec()
        };
        let l = resolve(&s, &p).unwrap();
        assert_eq!(
            (l.response_bytes, l.write_bytes, l.write_files),
            (4096, 1024, 2)
        );
        // By default a rule may lower the write caps, not raise them; a host raises the maxima.
        let more = WasmSpec {
            write_bytes: Some(WasmLimits::DEFAULT_WRITE_BYTES + 1),
            ..spec()
        };
        assert!(matches!(
            resolve(&more, &p),
            Err(PolicyError::AboveMaximum {
                field: "write_bytes",
                ..
            })
        ));
        let raised = WasmPolicy {
            maxima: WasmLimits {
                write_bytes: 1 << 30,
                ..p.maxima.clone()
            },
            ..p.clone()
        };
        assert_eq!(
            resolve(&more, &raised).unwrap().write_bytes,
            WasmLimits::DEFAULT_WRITE_BYTES + 1
        );
        let huge = WasmSpec {
            response_bytes: Some(p.maxima.response_bytes + 1),
            ..spec()
        };
        assert!(matches!(
            resolve(&huge, &p),
            Err(PolicyError::AboveMaximum {
                field: "response_bytes",
                ..
            })
        ));
    }

    #[test]
    fn fuel_needs_the_policy() {
        let s = WasmSpec {
            fuel: Some(1000),
            ..spec()
        };
        assert_eq!(
            resolve(&s, &WasmPolicy::default()).unwrap_err(),
            PolicyError::FuelNotAllowed { asked: 1000 }
        );
        let p = WasmPolicy {
            allow_fuel: true,
            ..WasmPolicy::default()
        };
        assert_eq!(resolve(&s, &p).unwrap().fuel, Some(1000));
        let p = WasmPolicy {
            allow_fuel: true,
            maxima: WasmLimits {
                fuel: Some(10),
                ..p.maxima
            },
            ..p
        };
        assert!(matches!(
            resolve(&s, &p),
            Err(PolicyError::AboveMaximum { field: "fuel", .. })
        ));
    }

    #[test]
    fn invalid_values_are_refused() {
        for s in [
            WasmSpec {
                timeout_secs: Some(0.0),
                ..spec()
            },
            WasmSpec {
                timeout_secs: Some(-1.0),
                ..spec()
            },
            WasmSpec {
                timeout_secs: Some(f64::NAN),
                ..spec()
            },
            WasmSpec {
                memory_mb: Some(0),
                ..spec()
            },
            WasmSpec {
                instances: Some(0),
                ..spec()
            },
        ] {
            assert!(
                matches!(
                    resolve(&s, &WasmPolicy::default()),
                    Err(PolicyError::Invalid { .. })
                ),
                "{s:?}"
            );
        }
    }

    #[test]
    fn mounts_are_checked() {
        let mount = |guest: &str, access| MountSpec {
            host: "/h".into(),
            guest: guest.into(),
            access,
            symlinks: false,
        };
        let p = WasmPolicy::default();
        let s = WasmSpec {
            mounts: vec![mount("/p", Access::Rw)],
            ..spec()
        };
        assert!(matches!(
            resolve(&s, &p),
            Err(PolicyError::RwMountNotAllowed { .. })
        ));
        let rw = WasmPolicy {
            allow_rw_mounts: true,
            ..WasmPolicy::default()
        };
        resolve(&s, &rw).unwrap();
        for guest in ["p", "/a/../b", "/p\0"] {
            let s = WasmSpec {
                mounts: vec![mount(guest, Access::Ro)],
                ..spec()
            };
            assert!(
                matches!(resolve(&s, &p), Err(PolicyError::BadGuestPath { .. })),
                "{guest}"
            );
        }
        let s = WasmSpec {
            mounts: vec![mount("/p", Access::Ro), mount("/p/", Access::Ro)],
            ..spec()
        };
        assert!(matches!(
            resolve(&s, &p),
            Err(PolicyError::BadGuestPath { .. })
        ));
        let s = WasmSpec {
            mounts: (0..9)
                .map(|i| mount(&format!("/m{i}"), Access::Ro))
                .collect(),
            ..spec()
        };
        assert!(matches!(
            resolve(&s, &p),
            Err(PolicyError::TooManyMounts {
                count: 9,
                maximum: 8
            })
        ));
    }

    #[test]
    fn env_names_are_checked() {
        let mut s = spec();
        s.env.insert("MODE".into(), "strict".into());
        resolve(&s, &WasmPolicy::default()).unwrap();
        let p = WasmPolicy {
            allowed_env: Some(BTreeSet::from(["OTHER".to_owned()])),
            ..WasmPolicy::default()
        };
        assert_eq!(
            resolve(&s, &p).unwrap_err(),
            PolicyError::EnvNotAllowed {
                name: "MODE".into()
            }
        );
        s.env.insert("A=B".into(), String::new());
        assert!(matches!(
            resolve(&s, &WasmPolicy::default()),
            Err(PolicyError::BadEnvName { .. })
        ));
    }

    #[test]
    fn inconsistent_policies_are_refused() {
        let mut p = WasmPolicy::default();
        p.defaults.memory_bytes = p.maxima.memory_bytes + 1;
        assert!(matches!(
            p.validate(),
            Err(PolicyError::DefaultAboveMaximum {
                field: "memory_mb",
                ..
            })
        ));
        let p = WasmPolicy {
            defaults: WasmLimits::default().with_fuel(Some(5)),
            ..WasmPolicy::default()
        };
        assert_eq!(p.validate(), Err(PolicyError::FuelNotAllowed { asked: 5 }));
        let mut p = WasmPolicy {
            allow_fuel: true,
            defaults: WasmLimits::default().with_fuel(Some(5)),
            ..WasmPolicy::default()
        };
        p.validate().unwrap();
        p.maxima.fuel = Some(4);
        assert_eq!(
            p.validate(),
            Err(PolicyError::DefaultAboveMaximum {
                field: "fuel",
                default: "5".into(),
                maximum: "4".into()
            })
        );
        let mut p = WasmPolicy::default();
        p.defaults.response_bytes = p.maxima.response_bytes + 1;
        assert!(matches!(
            p.validate(),
            Err(PolicyError::DefaultAboveMaximum {
                field: "response_bytes",
                ..
            })
        ));
    }
}
