//! Turning loaded rules into a rule set a host can serve, refusing at load — with a located
//! diagnostic — everything this host would refuse at dispatch: rules over `max_rules`, native
//! command and `http` rules the policy forbids, wasm rules whose plugin is unknown or whose
//! component, limits or mounts cannot be granted, read-write mounts over anything hookbox reads
//! rules, policy or settings from (a guest could otherwise rewrite what the host runs next), and
//! wasm rules left when the load's compile budget is spent. Nothing is dropped silently.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::files::path;
use hookbox_core::index::RuleSet;
use hookbox_core::rule::{Access, Handler, PluginInfo, Rule};
use hookbox_wasm::{MountDir, MountTemplate, PluginData, PrepareInput, PreparedHook, prepare};

use crate::inner::{Inner, Loaded};
use crate::policy::HostPolicy;
use crate::state::StateDir;

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
        if let Some(why) = forbidden(policy, &rule) {
            diagnostics.push(rule_error(
                &rule,
                plugin,
                format!(
                    "{} hook not loaded: {why}",
                    rule.handler.handler_type().as_str()
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
        // Every plugin that runs a hook gets its data folder now: a failure is a load error,
        // not a surprise at dispatch.
        if !StateDir::per_session(plugin)
            && matches!(rule.handler, Handler::Command(_) | Handler::Wasm(_))
        {
            match handles.data(rule.plugin, plugin, &inner.state) {
                Ok(d) => {
                    data.insert(rule.plugin, d);
                }
                Err(why) => {
                    diagnostics.push(rule_error(
                        &rule,
                        Some(plugin),
                        format!("hook not loaded: {why}"),
                    ));
                    continue;
                }
            }
        }
        if let Handler::Command(c) = &rule.handler
            && c.async_rewake
        {
            diagnostics.push(rule_warning(
                &rule,
                Some(plugin),
                "asyncRewake: hookbox runs this hook in the background (like `async`); when it exits 2, its stderr goes to the embedder's wake subscribers (`HookHost::subscribe_wakes`; `hookbox dispatch` prints it) — hookbox cannot wake the agent by itself".to_owned(),
            ));
        }
        if let Handler::Wasm(spec) = &rule.handler {
            let spent = started.elapsed();
            if spent > policy.compile_budget {
                diagnostics.push(rule_error(
                    &rule,
                    Some(plugin),
                    format!(
                        "wasm hook not loaded: this load already spent {:.1} s preparing components, over its budget of {} s (compile_budget); what compiled is cached, so loading again goes on from there",
                        spent.as_secs_f64(),
                        policy.compile_budget.as_secs_f64()
                    ),
                ));
                continue;
            }
            let prepared = handles.root(rule.plugin, plugin).and_then(|root| {
                let persistent = data.get(&rule.plugin);
                let data = match (StateDir::per_session(plugin), persistent) {
                    (true, _) => PluginData::PerSession,
                    (false, Some(d)) => PluginData::Persistent(d),
                    (false, None) => PluginData::Unavailable,
                };
                let label = format!("{}:{}", plugin.name, rule.handler.label());
                let input = PrepareInput {
                    spec,
                    plugin_root: &root,
                    label: &label,
                    project: inner.project.as_ref(),
                    extra_roots: &inner.extra_roots,
                    data,
                    policy: &policy.wasm,
                    max_component_bytes: policy.max_component_bytes,
                };
                let prepared =
                    prepare(inner.runtime.wasm(), &input).map_err(|e| match e.failure_class() {
                        Some(class) => format!("{class}: {e}"),
                        None => e.to_string(),
                    })?;
                match rw_mount_over_protected(&prepared, &protected) {
                    Some(why) => Err(why),
                    None => Ok(prepared),
                }
            });
            match prepared {
                Ok(p) => {
                    wasm.insert(kept.len(), p);
                }
                Err(why) => {
                    diagnostics.push(rule_error(
                        &rule,
                        Some(plugin),
                        format!("wasm hook not loaded: {why}"),
                    ));
                    continue;
                }
            }
        }
        rule.index = kept.len();
        kept.push(rule);
    }
    let (trust, trust_diagnostics) =
        crate::trust::survey(&inner.trust, inner.project.as_ref(), &plugins, &kept, &wasm);
    diagnostics.extend(trust_diagnostics);
    let set = RuleSet::new(plugins, kept.clone(), policy.aliases.clone());
    Built {
        loaded: Loaded {
            set,
            wasm,
            data,
            trust,
        },
        rules: kept,
        diagnostics,
    }
}

/// The absolute root of a plugin, for hooks that run in the session's cwd.
pub(crate) fn plugin_root(p: &PluginInfo) -> PathBuf {
    std::path::absolute(&p.root).unwrap_or_else(|_| p.root.clone())
}
