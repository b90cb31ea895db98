//! The host policy: every limit and switch of one `HookHost` (one project, or one tenant), each a
//! named field with its default. The defaults suit one developer running their own plugins; a
//! SaaS embedder builds tenants from [`TenantPolicy`](crate::TenantPolicy), whose defaults are
//! safe for untrusted code. Engine-wide settings (the wasm engine and pool, the shared hook
//! bound) are the runtime's: [`RuntimeSettings`](crate::RuntimeSettings).
//!
//! A host reads nothing from its project by itself: switches an operator keeps in a project's
//! `.hookbox/settings.json` reach a host only as fields of this policy, set by the caller (the
//! CLI reads that file; see [`Settings::apply`](crate::Settings::apply)). A tenant's policy
//! comes from its operator alone, so nothing in the tenant's folder can loosen it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_core::aggregate::DEFAULT_STOP_REENTRY_CAP;
use hookbox_core::files::path;
use hookbox_core::matcher::ToolAliases;
use hookbox_core::rule::FailMode;
use hookbox_http::HttpPolicy;
use hookbox_wasm::{DEFAULT_MAX_COMPONENT_BYTES, WasmPolicy};

use crate::error::HostError;
use crate::trust::TrustPolicy;

/// A token bucket: `per_second` dispatches on average, bursts of up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RateLimit {
    /// Sustained dispatches per second.
    pub per_second: f64,
    /// Dispatches allowed at once after a quiet period.
    pub burst: u32,
}

/// How a host runs hooks.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// The project root: `CLAUDE_PROJECT_DIR` for hooks, and a folder rules may mount. Default:
    /// the process's working directory — empty when it cannot be read, which a host refuses
    /// ([`HostError::Path`]) rather than guessing `.`.
    pub project_dir: PathBuf,
    /// Where this host keeps its state: plugin data folders (`data/`) and replay files
    /// (`replay/`). It must not be inside the project or any folder rules may mount: hooks must
    /// never reach hookbox's state or each other's data. Default `None`: a private temporary
    /// folder removed with the host, and no replay. The CLI uses `~/.local/state/hookbox/…`
    /// ([`default_state_root`](crate::default_state_root)).
    pub state_dir: Option<PathBuf>,
    /// Whether dispatches append replay records (needs `state_dir`). Default: true.
    pub replay: bool,
    /// Times a turn's Stop hooks may make it continue (the main source's cap; Claude Code's is
    /// 8). The CLI sets it from `--stop-reentry-cap`, else `.hookbox/settings.json`'s
    /// `stop.reentry_cap`. Default: 3.
    pub stop_reentry_cap: u32,
    /// Keep hook output whole in replay records instead of a 500-character preview (secrets are
    /// still redacted). The CLI sets it from `.hookbox/settings.json`'s
    /// `replay.capture_flags.capture_plugin_hook_output_full`. Default: false.
    pub capture_full_output: bool,
    /// What a failed hook means when its rule does not say (`on_failure` / `onFailure`).
    /// Default: [`FailMode::Allow`] (fail open, as Claude Code).
    pub fail_mode: FailMode,
    /// Whether native command hooks may be loaded. When false a command rule is refused at
    /// load with a located error (native hooks are not sandboxed). Default: true.
    pub allow_native_commands: bool,
    /// Where `http` hooks may send the payload. Default: [`HttpPolicy::developer`] — any
    /// destination, as Claude Code in a developer's own settings. When `enabled` is false, an
    /// `http` rule is refused at load.
    pub http: HttpPolicy,
    /// Whether `$VAR` in an `http` hook's header values (for names its `allowedEnvVars` lists)
    /// reads this process's environment, as Claude Code does. Default: true; tenants: false
    /// (their hooks never see the host's environment).
    pub http_env: bool,
    /// Run identical command handlers from different files of one plugin once per dispatch.
    /// Default: true (Claude Code dedups identical handlers).
    pub dedup_commands: bool,
    /// Tool-name aliases used by matchers. Default: Claude Code ↔ Agentao ↔ Gemini CLI.
    pub aliases: ToolAliases,
    /// What wasm rules may ask for (limits' defaults and maxima, fuel, `rw` mounts, env names).
    /// Default: [`WasmPolicy::default`], with fuel allowed when the runtime meters it.
    pub wasm: WasmPolicy,
    /// Folders besides the project and the rule's own plugin folder that wasm rules may mount.
    /// Default: none — a rule cannot mount `/`, `$HOME` or another plugin's folder.
    pub extra_mount_roots: Vec<PathBuf>,
    /// Files and folders hookbox reads rules, policy, settings or approvals from besides the
    /// plugins it loads (which are always protected: every path given to a load, every plugin
    /// folder, hook file and component). No read-write mount may contain one or lie inside one:
    /// a guest that could write there would change what the host runs next. The CLI lists the
    /// project's `.hookbox` folder; a tenant its `tenant.toml`. Default: none.
    pub protected_paths: Vec<PathBuf>,
    /// Largest component file a wasm rule may name, in bytes. Default: 64 MiB.
    pub max_component_bytes: u64,
    /// Rules this host may hold; a load with more refuses the extra ones. Default: 10,000.
    pub max_rules: usize,
    /// Rules one dispatch may run; the rest fail with `overloaded` (their fail mode applies).
    /// Default: 128.
    pub max_matched_rules: usize,
    /// Wall-clock budget of one whole dispatch: every hook's own timeout is cut to what is left
    /// of it, and a hook still running at the deadline fails with `timeout`. Default: 600 s
    /// (Claude Code's longest hook timeout).
    pub dispatch_deadline: Duration,
    /// Hooks of this host running at once (its quota of the runtime's shared bound); one more is
    /// refused at once with `overloaded`. Default: 256.
    pub max_hooks_in_flight: usize,
    /// Wasm instance-pool slots this host may hold at once; one more is refused at once with
    /// `overloaded`. Default: 256.
    pub max_pool_slots: usize,
    /// Wasm guests of this host that execute at once: its share of the CPU
    /// ([`CpuShare`](hookbox_wasm::CpuShare)). The others wait for a turn, taken in order at
    /// every 2 ms yield point, so a host's spinning guests queue behind each other, never in
    /// front of another host's (tenant's) hooks. Default: `usize::MAX`, no share (a host alone on
    /// its runtime lets every guest run whenever the executor polls it); tenants: 1, one core's
    /// worth (`TenantPolicy::wasm_cpu_share`).
    pub wasm_cpu_share: usize,
    /// Dispatches of this host admitted at once ([`HookHost::admit`](crate::HookHost::admit):
    /// `hookbox serve`'s requests, counted from before their body is read); one more is refused
    /// at once. Default: 256.
    pub max_dispatches_in_flight: usize,
    /// Dispatches per second (token bucket); over it a dispatch runs no hook and every matched
    /// rule fails with `overloaded`. Default: `None` (no limit).
    pub dispatch_rate: Option<RateLimit>,
    /// Re-check a rewritten tool input (`updatedInput`) once through the event's rules before
    /// the verdict, so a guard that denies the rewritten command still wins. Default: true.
    pub recheck_updated_input: bool,
    /// Wall-clock budget of one load's component compiles: once a load has spent it, its
    /// remaining wasm rules are refused (a located error; what compiled is cached, so the next
    /// load goes on from there). Default: 300 s.
    pub compile_budget: Duration,
    /// HookFired records queued for one subscriber that does not read; past it the subscriber
    /// is dropped (it reads `Lagged`). Default: 1,024.
    pub fired_queue_records: usize,
    /// Bytes of HookFired records (as JSON) queued for one subscriber; past it the subscriber is
    /// dropped. Default: 1 MiB.
    pub fired_queue_bytes: usize,
    /// Whether rules run only as they were approved (`trust`: `off`, `warn`, `require`), where
    /// approvals are read, and the bounds on pinned files. Default: off
    /// ([`TrustPolicy::default`]).
    pub trust: TrustPolicy,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            project_dir: std::env::current_dir().unwrap_or_default(),
            state_dir: None,
            replay: true,
            stop_reentry_cap: DEFAULT_STOP_REENTRY_CAP,
            capture_full_output: false,
            fail_mode: FailMode::Allow,
            allow_native_commands: true,
            http: HttpPolicy::developer(),
            http_env: true,
            dedup_commands: true,
            aliases: ToolAliases::default(),
            wasm: WasmPolicy::default(),
            extra_mount_roots: Vec::new(),
            protected_paths: Vec::new(),
            max_component_bytes: DEFAULT_MAX_COMPONENT_BYTES,
            max_rules: 10_000,
            max_matched_rules: 128,
            dispatch_deadline: Duration::from_secs(600),
            max_hooks_in_flight: 256,
            max_pool_slots: 256,
            wasm_cpu_share: usize::MAX,
            max_dispatches_in_flight: 256,
            dispatch_rate: None,
            recheck_updated_input: true,
            compile_budget: Duration::from_secs(300),
            fired_queue_records: 1024,
            fired_queue_bytes: 1 << 20,
            trust: TrustPolicy::default(),
        }
    }
}

impl HostPolicy {
    /// Checks the values a host is built from, naming the field of the first one out of range:
    /// a quota of 0, a rate that admits nothing, a CPU share of 0 turns. Nothing is clamped —
    /// a value that would silently become another is refused. Every host build and policy
    /// replacement calls it.
    pub fn validate(&self) -> Result<(), HostError> {
        for (field, v) in [
            ("max_hooks_in_flight", self.max_hooks_in_flight),
            ("max_pool_slots", self.max_pool_slots),
            ("max_dispatches_in_flight", self.max_dispatches_in_flight),
            ("max_matched_rules", self.max_matched_rules),
        ] {
            if v == 0 {
                return Err(HostError::Invalid {
                    field,
                    reason: "is 0: it must be at least 1".into(),
                });
            }
        }
        if let Some(rate) = self.dispatch_rate {
            if rate.burst == 0 {
                return Err(HostError::Invalid {
                    field: "dispatch_rate.burst",
                    reason: "is 0: it must be at least 1".into(),
                });
            }
            if !(rate.per_second.is_finite() && rate.per_second > 0.0) {
                return Err(HostError::Invalid {
                    field: "dispatch_rate.per_second",
                    reason: format!(
                        "is {}: it must be a number above 0 (no rate at all is `dispatch_rate: None`)",
                        rate.per_second
                    ),
                });
            }
        }
        Ok(())
    }

    /// A policy rooted at `project_dir`, everything else default.
    pub fn for_project(project_dir: impl Into<PathBuf>) -> HostPolicy {
        HostPolicy {
            project_dir: project_dir.into(),
            ..HostPolicy::default()
        }
    }

    /// The same policy keeping its state in `dir`.
    pub fn with_state_dir(mut self, dir: impl Into<PathBuf>) -> HostPolicy {
        self.state_dir = Some(dir.into());
        self
    }
}

impl HostPolicy {
    /// Refuses an approval store inside (or containing) the project or a mount root: hooks
    /// must never reach the approvals.
    /// Each folder is compared where it really is (symlinks resolved, a folder not created yet
    /// through its nearest existing one): one that cannot be resolved is an error, never a
    /// guess.
    pub fn check_trust_store_outside(&self, store: &Path) -> Result<(), HostError> {
        let resolved =
            |field, p: &Path| path::resolve(p).map_err(|source| HostError::Path { field, source });
        let s = resolved("trust.store", store)?;
        let roots = std::iter::once(("project_dir", &self.project_dir)).chain(
            self.extra_mount_roots
                .iter()
                .map(|r| ("extra_mount_roots", r)),
        );
        for (field, r) in roots {
            let r = resolved(field, r)?;
            if s.starts_with(&r) || r.starts_with(&s) {
                return Err(HostError::TrustStoreOverlaps {
                    store: store.to_owned(),
                    overlaps: r,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HookHost, HookRuntime, RuntimeSettings};

    fn refused(runtime: &HookRuntime, policy: HostPolicy) -> HostError {
        HookHost::with_runtime(runtime, policy).expect_err("a host was built")
    }

    #[test]
    fn policy_values_out_of_range_are_refused_naming_the_field_not_clamped() {
        // A quota of 0 was made 1, a burst of 0 was made 1, a CPU share of 0 turns 1.
        let rt = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let base = || HostPolicy::for_project(dir.path());
        for (field, policy) in [
            (
                "max_pool_slots",
                HostPolicy {
                    max_pool_slots: 0,
                    ..base()
                },
            ),
            (
                "max_hooks_in_flight",
                HostPolicy {
                    max_hooks_in_flight: 0,
                    ..base()
                },
            ),
            (
                "max_matched_rules",
                HostPolicy {
                    max_matched_rules: 0,
                    ..base()
                },
            ),
            (
                "dispatch_rate.burst",
                HostPolicy {
                    dispatch_rate: Some(RateLimit {
                        per_second: 1.0,
                        burst: 0,
                    }),
                    ..base()
                },
            ),
            (
                "dispatch_rate.per_second",
                HostPolicy {
                    dispatch_rate: Some(RateLimit {
                        per_second: f64::NAN,
                        burst: 1,
                    }),
                    ..base()
                },
            ),
        ] {
            match refused(&rt, policy) {
                HostError::Invalid { field: f, .. } => assert_eq!(f, field),
                e => panic!("{field}: another error: {e}"),
            }
        }
        let e = refused(
            &rt,
            HostPolicy {
                wasm_cpu_share: 0,
                ..base()
            },
        );
        assert!(
            matches!(
                e,
                HostError::WasmPolicy(hookbox_wasm::PolicyError::Invalid {
                    field: "wasm_cpu_share",
                    ..
                })
            ),
            "{e}"
        );
    }

    /// Issue 32: a path a host is built from or compares either resolves or is refused, naming
    /// the field — never replaced by a guess (`.` for an unreadable working folder, the lexical
    /// path for one that cannot be resolved, under which an overlap would go unseen).
    #[test]
    fn paths_that_cannot_be_resolved_are_refused_never_guessed() {
        let rt = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e = refused(
            &rt,
            HostPolicy {
                project_dir: PathBuf::new(),
                ..HostPolicy::for_project(dir.path()).with_state_dir(dir.path().join("state"))
            },
        );
        assert!(e.to_string().contains("the path is empty"), "{e}");
        // A store folder beneath a symlink loop: whether it lies in the project cannot be told.
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        std::os::unix::fs::symlink(dir.path().join("b"), dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("b")).unwrap();
        let e = HostPolicy::for_project(&project)
            .check_trust_store_outside(&dir.path().join("a/trust"))
            .unwrap_err();
        assert!(
            matches!(
                e,
                HostError::Path {
                    field: "trust.store",
                    ..
                }
            ),
            "{e}"
        );
        let e = HostPolicy::for_project(dir.path().join("a/project"))
            .check_trust_store_outside(&dir.path().join("trust"))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("host policy `project_dir`: cannot resolve"),
            "{e}"
        );
    }

    #[test]
    fn a_wasm_policy_the_runtime_cannot_enforce_keeps_wasms_typed_error() {
        // The runtime meters no fuel; a policy allowing fuel cannot be enforced.
        let rt = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut policy = HostPolicy::for_project(dir.path());
        policy.wasm.allow_fuel = true;
        let e = refused(&rt, policy);
        assert!(
            matches!(
                e,
                HostError::WasmPolicy(hookbox_wasm::PolicyError::RuntimeCannotEnforce { .. })
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("the wasm policy cannot be enforced: "),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_replacement_with_a_bad_value_changes_nothing() {
        let rt = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let host = HookHost::with_runtime(&rt, HostPolicy::for_project(dir.path())).unwrap();
        let bad = HostPolicy {
            max_dispatches_in_flight: 0,
            ..HostPolicy::for_project(dir.path())
        };
        let opts = hookbox_core::config::LoadOptions::default();
        let r = host.stage_reconfigure(bad, &[] as &[PathBuf], &opts, |_| Vec::new());
        assert!(matches!(
            r.map(|_| ()),
            Err(HostError::Invalid {
                field: "max_dispatches_in_flight",
                ..
            })
        ));
        assert_eq!(host.policy().max_dispatches_in_flight, 256);
    }
}
