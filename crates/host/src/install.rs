//! Turning loaded rules into a rule set a host can serve, refusing at load — with a located
//! diagnostic — everything this host would refuse at dispatch: rules over `max_rules`, native
//! command and `http` rules the policy forbids, wasm rules whose plugin is unknown or whose
//! component, limits or mounts cannot be granted, read-write mounts over anything hookbox reads
//! rules, policy or settings from (a guest could otherwise rewrite what the host runs next), and
//! wasm rules left when the load's compile budget is spent; and checking that each command
//! rule's program and scripts are there (`programs`). Nothing is dropped silently.
//!
//! A rule that cannot run is **kept, as failing** (`Loaded::cannot_run`), not dropped: at
//! dispatch it matches as written and fails with the reason found here, so its fail mode decides
//! — a fail-closed guard whose script or component is missing blocks instead of vanishing. Its
//! diagnostic is an error when the rule fails closed (the guard would block every matching
//! action) and whenever a wasm rule is refused; a fail-open command rule's missing script is a
//! warning (it would only ever warn at dispatch). Only rules over `max_rules`, and rules naming a
//! plugin that does not exist (built in code), are dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::files::path;
use hookbox_core::index::RuleSet;
use hookbox_core::output::{FailureClass, HookFailure};
use hookbox_core::rule::{Access, FailMode, Handler, PluginInfo, Rule};
use hookbox_wasm::{
    MountDir, MountTemplate, PluginData, PrepareError, PrepareInput, PreparedHook, prepare,
};

use crate::inner::{Inner, Loaded, RuleNames};
use crate::policy::HostPolicy;
use crate::state::StateDir;

mod programs;

/// A candidate rule set: what would be installed, and every refusal.
pub(crate) struct Built {
    pub(crate) loaded: Loaded,
    pub(crate) rules: Vec<Rule>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// The diagnostic for a rule refused at load, located at the rule.
pub(crate) fn rule_error(rule: &Rule, plugin: Option<&PluginInfo>, message: String) -> Diagnostic {
    // `source.file` is relative to the plugin root, or already a path as the user gave it.
    let file = match plugin {
        Some(p) if !rule.source.file.starts_with(&p.root) => p.root.join(&rule.source.file),
        _ => rule.source.file.clone(),
    };
    let mut d = Diagnostic::error(file, message).at(rule.source.json_path.clone());
    if let (Some(l), Some(c)) = (rule.source.line, rule.source.column) {
        d = d.located(l, c);
    }
    d
}

/// A warning about a rule that loads but does not behave exactly as its agent's would.
pub(crate) fn rule_warning(
    rule: &Rule,
    plugin: Option<&PluginInfo>,
    message: String,
) -> Diagnostic {
    let mut d = rule_error(rule, plugin, message);
    d.severity = hookbox_core::diagnostic::Severity::Warning;
    d
}

/// Per-plugin handles opened once for the whole load.
#[derive(Default)]
struct PluginHandles {
    roots: HashMap<usize, Result<MountDir, String>>,
    data: HashMap<usize, Result<MountDir, String>>,
}

impl PluginHandles {
    fn root(&mut self, i: usize, p: &PluginInfo) -> Result<MountDir, String> {
        self.roots
            .entry(i)
            .or_insert_with(|| {
                let abs = path::absolute(&p.root)
                    .map_err(|e| format!("cannot open the plugin folder: {e}"))?;
                MountDir::open(&abs).map_err(|e| format!("cannot open the plugin folder: {e}"))
            })
            .clone()
    }

    fn data(&mut self, i: usize, p: &PluginInfo, state: &StateDir) -> Result<MountDir, String> {
        self.data
            .entry(i)
            .or_insert_with(|| {
                state
                    .plugin_dir(p)
                    .map_err(|e| format!("cannot create the plugin data folder: {e}"))
            })
            .clone()
    }
}

/// Something hookbox reads rules, policy or settings from, that no read-write mount may reach.
pub(crate) struct Protected {
    /// Its real path (symlinks resolved as far as it exists), or why it cannot be resolved —
    /// then every read-write mount is refused, since whether one reaches it cannot be told.
    path: Result<PathBuf, String>,
    /// What hookbox reads there, for the message.
    what: &'static str,
}

/// The paths given to a load: folders of plugins (where new ones would be found) and files.
pub(crate) fn protected_by_load<P: AsRef<Path>>(paths: &[P]) -> Vec<Protected> {
    paths
        .iter()
        .map(|p| Protected {
            path: real_path(p.as_ref()),
            what: "plugins and hook files",
        })
        .collect()
}

/// `p` made absolute with its symlinks resolved as far as it exists (the rest as written), so a
/// path not created yet is compared where it would be created; an error when it cannot be
/// resolved (never a guess).
fn real_path(p: &Path) -> Result<PathBuf, String> {
    path::resolve(p).map_err(|e| e.to_string())
}

/// Everything this build must keep out of read-write mounts, most specific first (so a refusal
/// names the file a mount would expose): the policy's own `protected_paths` (settings,
/// `tenant.toml`), every rule's hook file, every plugin folder (manifests, hook files,
/// components), and what the load was given (`from_load`: folders where new plugins would be
/// found).
fn protected_set(
    inner: &Inner,
    from_load: Vec<Protected>,
    plugins: &[PluginInfo],
    rules: &[Rule],
) -> Vec<Protected> {
    let mut protected: Vec<Protected> = inner
        .policy
        .protected_paths
        .iter()
        .map(|p| Protected {
            path: real_path(p),
            what: "rules, policy or settings",
        })
        .collect();
    for r in rules {
        let file = match plugins.get(r.plugin) {
            Some(p) if !r.source.file.starts_with(&p.root) => p.root.join(&r.source.file),
            _ => r.source.file.clone(),
        };
        let path = real_path(&file);
        if !protected.iter().any(|p| p.path == path) {
            protected.push(Protected {
                path,
                what: "hook rules",
            });
        }
    }
    protected.extend(plugins.iter().map(|p| Protected {
        path: real_path(&p.root),
        what: "a plugin's manifest, hook files and components",
    }));
    protected.extend(from_load);
    protected
}

/// The refusal of a prepared rule's read-write mount that contains, or lies inside, something
/// hookbox reads rules, policy or settings from.
fn rw_mount_over_protected(prepared: &PreparedHook, protected: &[Protected]) -> Option<String> {
    prepared.mounts.iter().find_map(|m| {
        let MountTemplate::Ready(r) = m else {
            // Per-session data folders live in hookbox's state, outside every protected path.
            return None;
        };
        if r.access != Access::Rw {
            return None;
        }
        let refused = |shown: &Path, why: String| {
            Some(format!(
                "the read-write mount `{}` (guest `{}`) is refused: {why}",
                shown.display(),
                r.guest
            ))
        };
        let mount = match real_path(r.host.path()) {
            Ok(mount) => mount,
            Err(e) => return refused(r.host.path(), format!("its real place cannot be resolved ({e}), so whether it holds what hookbox reads rules from cannot be told")),
        };
        let mut resolved = Vec::with_capacity(protected.len());
        for p in protected {
            match &p.path {
                Ok(path) => resolved.push((path, p.what)),
                Err(e) => {
                    return refused(&mount, format!("a path where hookbox reads {} cannot be resolved ({e}), so whether the mount reaches it cannot be told", p.what));
                }
            }
        }
        // A file the mount would expose names the danger best; then what it lies inside.
        let holds = resolved.iter().find(|(p, _)| p.starts_with(&mount));
        let (how, (path, what)) = match holds {
            Some(p) => ("holds", p),
            None => ("lies inside", resolved.iter().find(|(p, _)| mount.starts_with(p))?),
        };
        refused(&mount, format!(
            "it {how} {}, where hookbox reads {what} — a guest writing there could change what the host runs next. Mount a folder that holds none of them (a hook's own files go in ${{CLAUDE_PLUGIN_DATA}}), or use \"access\": \"ro\"",
            path.display(),
        ))
    })
}

/// Loads `paths` under this generation's policy; `Err` (with every diagnostic) when
/// anything is an error.
pub(crate) fn load_checked<P: AsRef<std::path::Path>>(
    inner: &Inner,
    paths: &[P],
    opts: &LoadOptions,
    check: impl FnOnce(&LoadReport) -> Vec<Diagnostic>,
) -> Result<(LoadReport, Loaded), LoadReport> {
    let mut report = load_paths(paths, opts);
    let refused = check(&report);
    report.diagnostics.extend(refused);
    if report.has_errors() {
        return Err(report);
    }
    let built = build(
        inner,
        protected_by_load(paths),
        report.plugins.clone(),
        std::mem::take(&mut report.rules),
    );
    report.rules = built.rules;
    report.diagnostics.extend(built.diagnostics);
    if report.has_errors() {
        return Err(report);
    }
    Ok((report, built.loaded))
}

/// Whether a rule's handler is one this host's policy forbids, and why (a load error).
fn forbidden(policy: &HostPolicy, rule: &Rule) -> Option<&'static str> {
    match &rule.handler {
        Handler::Command(_) if !policy.allow_native_commands => Some(
            "native command hooks are not allowed by this host's policy (allow_native_commands = false): they run unsandboxed with the host's rights; write the hook as a \"type\": \"wasm\" component",
        ),
        Handler::Http(_) if !policy.http.enabled => Some(
            "http hooks are not allowed by this host's policy (allow_http = false); ask the operator to turn them on and allow-list the destination",
        ),
        _ => None,
    }
}

/// Why a kept rule cannot run: the failure it gives at dispatch, and whether its diagnostic is
/// an error.
struct Failing {
    failure: HookFailure,
    error: bool,
    /// What it means, said at load after the failure's message.
    consequence: Option<&'static str>,
    /// The diagnostic's fix line, when there is more to say than the message.
    fix: Option<String>,
}

impl Failing {
    fn error(class: FailureClass, message: String) -> Failing {
        Failing {
            failure: HookFailure::new(class, message),
            error: true,
            consequence: None,
            fix: None,
        }
    }
}

/// What to do about a component that cannot be read: most often it was never built.
const MISSING_COMPONENT_FIX: &str = "build the component (a guest of hookbox's own examples/: scripts/build-example-guests.sh), or correct \"component\", which is relative to the plugin folder";

/// Whether `rule` fails closed under `policy` (its own `onFailure`, else the policy's).
fn fails_closed(rule: &Rule, policy: &HostPolicy) -> bool {
    rule.on_failure.unwrap_or(policy.fail_mode) == FailMode::Block
}

/// Why a command rule cannot run (its program or a script missing, not a file, or a program not
/// executable): an error when the rule fails closed — every action it matches would be blocked
/// — and a warning when it fails open, as it would only ever warn.
fn command_failure(
    rule: &Rule,
    spec: &hookbox_core::rule::CommandSpec,
    plugin: &PluginInfo,
    policy: &HostPolicy,
) -> Option<Failing> {
    let root = plugin_root(plugin);
    let roots = programs::Roots {
        plugin: &root,
        project: &policy.project_dir,
    };
    let why = programs::cannot_run(spec, &roots)?;
    let closed = fails_closed(rule, policy);
    let consequence = if closed {
        "it fails closed (onFailure: block), so every action it matches is blocked"
    } else {
        "it fails open, so it guards nothing"
    };
    Some(Failing {
        failure: HookFailure::new(
            FailureClass::SpawnError,
            format!("command hook cannot run: {why}"),
        ),
        error: closed,
        consequence: Some(consequence),
        fix: None,
    })
}

/// What preparing one wasm rule needs besides its spec.
struct WasmRule<'a> {
    inner: &'a Inner,
    plugin: &'a PluginInfo,
    label: String,
    /// The plugin's persistent data folder, if it has one.
    data: Option<&'a MountDir>,
    protected: &'a [Protected],
}

/// Prepares a wasm rule (component read and compiled, limits and mounts granted) under the
/// host's policy, refusing a read-write mount over anything hookbox reads rules from. A refusal
/// comes with its failure class, its message and, where there is one, a fix.
fn prepare_wasm(
    w: &WasmRule<'_>,
    spec: &hookbox_core::rule::WasmSpec,
    root: Result<MountDir, String>,
) -> Result<PreparedHook, (FailureClass, String, Option<String>)> {
    let root = root.map_err(|why| (FailureClass::InstantiateError, why, None))?;
    let policy = &w.inner.policy;
    let data = match (StateDir::per_session(w.plugin), w.data) {
        (true, _) => PluginData::PerSession,
        (false, Some(d)) => PluginData::Persistent(d),
        (false, None) => PluginData::Unavailable,
    };
    let input = PrepareInput {
        spec,
        plugin_root: &root,
        label: &w.label,
        project: w.inner.project.as_ref(),
        extra_roots: &w.inner.extra_roots,
        data,
        policy: &policy.wasm,
        max_component_bytes: policy.max_component_bytes,
    };
    let prepared = prepare(w.inner.runtime.wasm(), &input).map_err(|e| {
        let fix = matches!(e, PrepareError::ComponentRead { .. })
            .then(|| MISSING_COMPONENT_FIX.to_owned());
        match e.failure_class() {
            Some(class) => (class, format!("{class}: {e}"), fix),
            None => (FailureClass::InstantiateError, e.to_string(), fix),
        }
    })?;
    match rw_mount_over_protected(&prepared, w.protected) {
        Some(why) => Err((FailureClass::InstantiateError, why, None)),
        None => Ok(prepared),
    }
}

/// Builds the rule set `rules` of `plugins` would give this host. `protected`: what the load
/// was given ([`protected_by_load`]); plugin folders and hook files are added here.
pub(crate) fn build(
    inner: &Inner,
    protected: Vec<Protected>,
    plugins: Vec<PluginInfo>,
    rules: Vec<Rule>,
) -> Built {
    let policy = &inner.policy;
    let started = Instant::now();
    let protected = protected_set(inner, protected, &plugins, &rules);
    let mut kept = Vec::with_capacity(rules.len().min(policy.max_rules));
    let mut wasm = HashMap::new();
    let mut data = HashMap::new();
    let mut diagnostics = Vec::new();
    let mut handles = PluginHandles::default();
    let mut cannot_run = HashMap::new();
    for mut rule in rules {
        let plugin = plugins.get(rule.plugin);
        if kept.len() >= policy.max_rules {
            diagnostics.push(rule_error(
                &rule,
                plugin,
                format!(
                    "rule not loaded: this host holds at most {} rules (max_rules)",
                    policy.max_rules
                ),
            ));
            continue;
        }
        let Some(plugin) = plugin else {
            diagnostics.push(rule_error(
                &rule,
                None,
                format!(
                    "rule not loaded: it names plugin #{} of a list of {}, which does not exist (a rule built in code with a wrong `plugin` index)",
                    rule.plugin,
                    plugins.len()
                ),
            ));
            continue;
        };
        // From here on a rule that cannot run is kept as failing, with the reason.
        let pos = kept.len();
        if let Handler::Command(c) = &rule.handler
            && c.async_rewake
        {
            diagnostics.push(rule_warning(
                &rule,
                Some(plugin),
                "asyncRewake: hookbox runs this hook in the background (like `async`); when it exits 2, its stderr goes to the embedder's wake subscribers (`HookHost::subscribe_wakes`; `hookbox dispatch` prints it) — hookbox cannot wake the agent by itself".to_owned(),
            ));
        }
        let failing = 'check: {
            if let Some(why) = forbidden(policy, &rule) {
                let kind = rule.handler.handler_type().as_str();
                break 'check Some(Failing::error(
                    FailureClass::SpawnError,
                    format!("{kind} hook cannot run: {why}"),
                ));
            }
            // Every plugin that runs a hook gets its data folder now: a failure is a load
            // error, not a surprise at dispatch.
            if !StateDir::per_session(plugin)
                && matches!(rule.handler, Handler::Command(_) | Handler::Wasm(_))
            {
                match handles.data(rule.plugin, plugin, &inner.state) {
                    Ok(d) => {
                        data.insert(rule.plugin, d);
                    }
                    Err(why) => {
                        break 'check Some(Failing::error(
                            FailureClass::SpawnError,
                            format!("hook cannot run: {why}"),
                        ));
                    }
                }
            }
            match &rule.handler {
                Handler::Command(spec) => command_failure(&rule, spec, plugin, policy),
                Handler::Wasm(spec) => {
                    let spent = started.elapsed();
                    if spent > policy.compile_budget {
                        break 'check Some(Failing::error(
                            FailureClass::InstantiateError,
                            format!(
                                "wasm hook not loaded: this load already spent {:.1} s preparing components, over its budget of {} s (compile_budget); what compiled is cached, so loading again goes on from there",
                                spent.as_secs_f64(),
                                policy.compile_budget.as_secs_f64()
                            ),
                        ));
                    }
                    let input = WasmRule {
                        inner,
                        plugin,
                        label: format!("{}:{}", plugin.name, rule.handler.label()),
                        data: data.get(&rule.plugin),
                        protected: &protected,
                    };
                    match prepare_wasm(&input, spec, handles.root(rule.plugin, plugin)) {
                        Ok(p) => {
                            wasm.insert(pos, p);
                            None
                        }
                        Err((class, why, fix)) => Some(Failing {
                            fix,
                            ..Failing::error(class, format!("wasm hook not loaded: {why}"))
                        }),
                    }
                }
                Handler::Prompt { .. } | Handler::Http(_) => None,
            }
        };
        if let Some(f) = failing {
            let message = match f.consequence {
                Some(c) => format!("{} — {c}", f.failure.message),
                None => f.failure.message.clone(),
            };
            let mut d = if f.error {
                rule_error(&rule, Some(plugin), message)
            } else {
                rule_warning(&rule, Some(plugin), message)
            };
            d.fix = f.fix;
            diagnostics.push(d);
            cannot_run.insert(pos, f.failure);
        }
        rule.index = pos;
        kept.push(rule);
    }
    let (trust, trust_diagnostics) =
        crate::trust::survey(&inner.trust, inner.project.as_ref(), &plugins, &kept, &wasm);
    diagnostics.extend(trust_diagnostics);
    let set = RuleSet::new(plugins, kept.clone(), policy.aliases.clone());
    let names = set.rules().iter().map(|r| RuleNames::of(&set, r)).collect();
    Built {
        loaded: Loaded {
            set,
            wasm: wasm.into(),
            data: data.into(),
            trust,
            cannot_run: cannot_run.into(),
            names,
        },
        rules: kept,
        diagnostics,
    }
}

/// The absolute root of a plugin, for hooks that run in the session's cwd.
pub(crate) fn plugin_root(p: &PluginInfo) -> PathBuf {
    std::path::absolute(&p.root).unwrap_or_else(|_| p.root.clone())
}
