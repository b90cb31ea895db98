//! Preparing wasm rules when they are loaded, so every refusal is a load-time diagnostic and the
//! dispatch path only instantiates: the component is read beneath its plugin folder (cap-std),
//! compiled (or fetched from the cache) and checked (imports, WIT version); its limits are
//! resolved against the host's policy; its mounts are resolved and confined to the folders the
//! host lets rules mount.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::rule::{Access, PluginInfo, Rule, WasmSpec};
use hookbox_wasm::{LoadedComponent, MountDir, ResolvedMount, WasmLimits, WasmRuntime, resolve};

use crate::policy::HostPolicy;

/// A mount's host side: fixed at load, or the per-session plugin data folder (known at dispatch).
#[derive(Debug, Clone)]
pub(crate) enum MountHost {
    Fixed(MountDir),
    /// `${PLUGIN_DATA}` / `${CLAUDE_PLUGIN_DATA}`, plus a relative suffix.
    PluginData(PathBuf),
}

#[derive(Debug, Clone)]
pub(crate) struct MountTemplate {
    pub(crate) host: MountHost,
    pub(crate) guest: String,
    pub(crate) access: Access,
}

/// A wasm rule ready to run.
pub(crate) struct PreparedWasm {
    pub(crate) component: Arc<LoadedComponent>,
    pub(crate) limits: WasmLimits,
    /// Mounts when none depends on the session: used as is, no per-event allocation.
    pub(crate) fixed_mounts: Option<Vec<ResolvedMount>>,
    pub(crate) mounts: Vec<MountTemplate>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) config_json: Arc<str>,
    pub(crate) label: Arc<str>,
}

impl std::fmt::Debug for PreparedWasm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedWasm")
            .field("label", &self.label)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

const ROOT_PREFIXES: [&str; 2] = ["${CLAUDE_PLUGIN_ROOT}", "${PLUGIN_ROOT}"];
const DATA_PREFIXES: [&str; 2] = ["${CLAUDE_PLUGIN_DATA}", "${PLUGIN_DATA}"];
const PROJECT_PREFIX: &str = "${CLAUDE_PROJECT_DIR}";

/// `prefix/rest` → `Some(rest)` (also `prefix` alone → `Some("")`).
fn strip_var<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| {
        let rest = s.strip_prefix(p)?;
        if rest.is_empty() {
            Some("")
        } else {
            rest.strip_prefix('/')
        }
    })
}

/// A relative path that stays beneath its base: no `..`, no root, no prefix.
fn confined(rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| {
            p.components()
                .filter(|c| matches!(c, Component::Normal(_)))
                .collect()
        })
}

/// Reads a wasm rule's component beneath its plugin folder `root`: `${PLUGIN_ROOT}/` and
/// `${CLAUDE_PLUGIN_ROOT}/` prefixes are allowed; `..`, absolute paths, and symlinks that leave
/// the folder are refused (cap-std). Returns the path relative to `root` and the bytes.
pub fn read_component(root: &Path, spec: &WasmSpec) -> Result<(PathBuf, Vec<u8>), String> {
    let rel = strip_var(&spec.component, &ROOT_PREFIXES).unwrap_or(&spec.component);
    let rel = confined(rel).ok_or_else(|| {
        format!(
            "component path `{}` leaves the plugin folder; give a path inside {}",
            spec.component,
            root.display()
        )
    })?;
    // Opened beneath the plugin folder: a symlink inside the plugin cannot point outside it.
    let dir = Dir::open_ambient_dir(root, ambient_authority())
        .map_err(|e| format!("cannot open plugin folder {}: {e}", root.display()))?;
    let bytes = dir.read(&rel).map_err(|e| {
        format!(
            "cannot read component {} in {}: {e}",
            rel.display(),
            root.display()
        )
    })?;
    Ok((rel, bytes))
}

/// Prepares one wasm rule; the error is the load-time diagnostic.
pub(crate) fn prepare(
    runtime: &WasmRuntime,
    policy: &HostPolicy,
    rule: &Rule,
    spec: &WasmSpec,
    plugin: &PluginInfo,
) -> Result<PreparedWasm, String> {
    let root = std::path::absolute(&plugin.root).unwrap_or_else(|_| plugin.root.clone());
    let (_, bytes) = read_component(&root, spec)?;
    let component = runtime
        .load_bytes(&bytes)
        .map_err(|e| match e.failure_class() {
            Some(class) => format!("{class}: {e}"),
            None => e.to_string(),
        })?;
    let limits =
        resolve(spec, &policy.wasm).map_err(|e| format!("refused by the host policy: {e}"))?;
    let mut mounts = Vec::with_capacity(spec.mounts.len());
    for m in &spec.mounts {
        let host = if let Some(rest) = strip_var(&m.host, &DATA_PREFIXES) {
            MountHost::PluginData(confined(rest).ok_or_else(|| {
                format!("mount host path `{}` leaves the plugin data folder", m.host)
            })?)
        } else {
            let path = if let Some(rest) = strip_var(&m.host, &ROOT_PREFIXES) {
                root.join(confined(rest).ok_or_else(|| {
                    format!("mount host path `{}` leaves the plugin folder", m.host)
                })?)
            } else if let Some(rest) = strip_var(&m.host, &[PROJECT_PREFIX]) {
                policy.project_dir.join(confined(rest).ok_or_else(|| {
                    format!("mount host path `{}` leaves the project folder", m.host)
                })?)
            } else if Path::new(&m.host).is_absolute() {
                PathBuf::from(&m.host)
            } else {
                root.join(confined(&m.host).ok_or_else(|| {
                    format!("mount host path `{}` leaves the plugin folder", m.host)
                })?)
            };
            check_mount_root(policy, &root, &path)
                .map_err(|why| format!("mount `{}` -> `{}`: {why}", m.host, m.guest))?;
            MountHost::Fixed(
                MountDir::open(&path)
                    .map_err(|why| format!("mount `{}` -> `{}`: {why}", m.host, m.guest))?,
            )
        };
        mounts.push(MountTemplate {
            host,
            guest: m.guest.clone(),
            access: m.access,
        });
    }
    let fixed_mounts = mounts
        .iter()
        .map(|m| match &m.host {
            MountHost::Fixed(p) => Some(ResolvedMount {
                host: p.clone(),
                guest: m.guest.clone(),
                access: m.access,
            }),
            MountHost::PluginData(_) => None,
        })
        .collect::<Option<Vec<_>>>();
    Ok(PreparedWasm {
        component,
        limits,
        fixed_mounts,
        mounts,
        env: spec
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        config_json: Arc::from(spec.config.to_string()),
        label: Arc::from(format!("{}:{}", plugin.name, rule.handler.label())),
    })
}

/// A fixed mount must be inside the project, the rule's plugin, or a folder the policy adds:
/// a tenant's rule cannot mount `/` or another tenant's folder.
fn check_mount_root(policy: &HostPolicy, plugin_root: &Path, path: &Path) -> Result<(), String> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let target = canon(path);
    let mut roots = vec![canon(&policy.project_dir), canon(plugin_root)];
    roots.extend(policy.extra_mount_roots.iter().map(|r| canon(r)));
    if roots.iter().any(|r| target.starts_with(r)) {
        Ok(())
    } else {
        Err(format!(
            "{} is outside the folders this host lets rules mount (the project {}, the plugin folder, and HostPolicy::extra_mount_roots)",
            target.display(),
            policy.project_dir.display()
        ))
    }
}

/// The diagnostic for a wasm rule that could not be prepared.
pub(crate) fn diagnostic(rule: &Rule, plugin: &PluginInfo, why: &str) -> Diagnostic {
    let mut d = Diagnostic::error(
        plugin.root.join(&rule.source.file),
        format!("wasm hook not loaded: {why}"),
    )
    .at(rule.source.json_path.clone());
    if let (Some(l), Some(c)) = (rule.source.line, rule.source.column) {
        d = d.located(l, c);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_confinement() {
        assert_eq!(
            strip_var("${PLUGIN_ROOT}/hooks/g.wasm", &ROOT_PREFIXES),
            Some("hooks/g.wasm")
        );
        assert_eq!(strip_var("${CLAUDE_PLUGIN_ROOT}", &ROOT_PREFIXES), Some(""));
        assert_eq!(strip_var("${PLUGIN_ROOTX}/a", &ROOT_PREFIXES), None);
        assert_eq!(
            confined("./hooks/g.wasm"),
            Some(PathBuf::from("hooks/g.wasm"))
        );
        assert_eq!(confined("../g.wasm"), None);
        assert_eq!(confined("/etc/passwd"), None);
        assert_eq!(confined("a/../../b"), None);
    }
}
