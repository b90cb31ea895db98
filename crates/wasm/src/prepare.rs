//! Preparing a wasm rule when it is loaded, so every refusal is a load-time error and the
//! dispatch path only instantiates. The component file is opened beneath its plugin folder
//! (cap-std: no `..`, absolute path or symlink leaves it), must be a regular file no larger than
//! the host's `max_component_bytes` (opened without blocking, so a FIFO cannot hang the loader),
//! and is compiled or fetched from the cache and checked; the rule's limits are resolved against
//! the [`WasmPolicy`]; each mount is opened **once**, beneath the root its placeholder names,
//! without following symlinks ([`MountDir`]), and the handle is kept for every later event.
//! `hookbox exec`, `hookbox compile` and the host all go through here.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use hookbox_core::files::open_within;
use hookbox_core::output::FailureClass;
use hookbox_core::rule::{Access, WasmSpec};

use crate::error::WasmError;
use crate::limits::WasmLimits;
use crate::mount::{MountDir, MountError};
use crate::policy::{PolicyError, WasmPolicy, resolve};
use crate::run::ResolvedMount;
use crate::runtime::{LoadedComponent, WasmRuntime};

/// Default of [`PrepareInput::max_component_bytes`]: room for the largest guests the supported
/// toolchains produce (componentize-py ~19 MB, componentize-js ~11 MB), with a margin.
pub const DEFAULT_MAX_COMPONENT_BYTES: u64 = 64 << 20;

/// Entries whose presence in a folder makes a read-write mount of it refused: agent and VCS
/// configuration that turns a write into native code execution (a hook added to
/// `.claude/settings.json`, a git hook in `.git/hooks`), and hookbox's own state.
pub const PROTECTED_ENTRIES: &[&str] = &[
    ".git",
    ".hg",
    ".jj",
    ".claude",
    ".codex",
    ".cursor",
    ".gemini",
    ".windsurf",
    ".agentao",
    ".hookbox",
];

const ROOT_PREFIXES: [&str; 2] = ["${CLAUDE_PLUGIN_ROOT}", "${PLUGIN_ROOT}"];
const DATA_PREFIXES: [&str; 2] = ["${CLAUDE_PLUGIN_DATA}", "${PLUGIN_DATA}"];
const PROJECT_PREFIX: &str = "${CLAUDE_PROJECT_DIR}";

/// The plugin data folder a rule's `${CLAUDE_PLUGIN_DATA}` mounts refer to.
#[derive(Debug, Clone, Copy)]
pub enum PluginData<'a> {
    /// The host gives this plugin no data folder: data mounts are refused.
    Unavailable,
    /// One folder for the plugin's whole life (Claude Code's `~/.claude/plugins/data/<id>/`).
    Persistent(&'a MountDir),
    /// A folder per session, known only at dispatch (the Ghast dialect).
    PerSession,
}

/// Everything preparing one wasm rule needs.
#[derive(Debug, Clone, Copy)]
pub struct PrepareInput<'a> {
    /// The rule's wasm settings.
    pub spec: &'a WasmSpec,
    /// Its plugin folder, opened by the host.
    pub plugin_root: &'a MountDir,
    /// A label for logs and reports (`plugin:component`).
    pub label: &'a str,
    /// `${CLAUDE_PROJECT_DIR}`, when the host has a project.
    pub project: Option<&'a MountDir>,
    /// Further folders rules may mount by absolute path (beside the project and the plugin).
    pub extra_roots: &'a [MountDir],
    /// The plugin's data folder.
    pub data: PluginData<'a>,
    /// What rules may ask for.
    pub policy: &'a WasmPolicy,
    /// Largest component file accepted, in bytes ([`DEFAULT_MAX_COMPONENT_BYTES`]).
    pub max_component_bytes: u64,
}

/// A mount of a prepared rule.
#[derive(Debug, Clone)]
pub enum MountTemplate {
    /// Opened at load; used as is at every event.
    Ready(ResolvedMount),
    /// `${PLUGIN_DATA}/rel` of a per-session data folder: opened beneath the session's folder at
    /// each event (see [`PreparedHook::mounts_for`]).
    SessionData {
        /// The path beneath the data folder (may be empty).
        rel: PathBuf,
        /// The guest path.
        guest: String,
        /// `ro` or `rw`.
        access: Access,
        /// Whether the guest may create symbolic links in it.
        symlinks: bool,
    },
}

/// A wasm rule ready to run.
pub struct PreparedHook {
    /// The compiled, checked, pre-linked component.
    pub component: Arc<LoadedComponent>,
    /// The rule's limits, within the policy.
    pub limits: WasmLimits,
    /// Its mounts, in rule order.
    pub mounts: Vec<MountTemplate>,
    /// The same mounts when none depends on the session: used without any per-event work.
    pub fixed_mounts: Option<Vec<ResolvedMount>>,
    /// The guest's whole environment.
    pub env: Vec<(String, String)>,
    /// The rule's `config`, as JSON text.
    pub config_json: Arc<str>,
    /// The label for logs.
    pub label: Arc<str>,
}

impl std::fmt::Debug for PreparedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedHook")
            .field("label", &self.label)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl PreparedHook {
    /// The mounts for one event: the fixed ones, or each per-session data mount opened beneath
    /// `session_data` (created if missing, never through a symlink a guest planted there).
    pub fn mounts_for(
        &self,
        session_data: Option<&MountDir>,
    ) -> Result<Vec<ResolvedMount>, MountError> {
        if let Some(m) = &self.fixed_mounts {
            return Ok(m.clone());
        }
        self.mounts
            .iter()
            .map(|m| match m {
                MountTemplate::Ready(r) => Ok(r.clone()),
                MountTemplate::SessionData {
                    rel,
                    guest,
                    access,
                    symlinks,
                } => {
                    let data = session_data.ok_or_else(|| MountError::Missing {
                        path: PathBuf::from("${CLAUDE_PLUGIN_DATA}").join(rel),
                    })?;
                    Ok(ResolvedMount {
                        host: data.create_beneath(rel, 0o700)?,
                        guest: guest.clone(),
                        access: *access,
                        symlinks: *symlinks,
                    })
                }
            })
            .collect()
    }
}

/// Why a wasm rule cannot be prepared: the load-time diagnostic.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The component path leaves the plugin folder.
    #[error("component path `{path}` leaves the plugin folder; give a path inside {root}")]
    ComponentEscapes {
        /// The path as written.
        path: String,
        /// The plugin folder.
        root: PathBuf,
    },
    /// The component file cannot be opened or read.
    #[error("cannot read component `{path}` in {root}: {reason}")]
    ComponentRead {
        /// The path beneath the plugin folder.
        path: PathBuf,
        /// The plugin folder.
        root: PathBuf,
        /// Why.
        reason: String,
    },
    /// A FIFO, device, folder…: not a component file.
    #[error("component `{path}` in {root} is not a regular file")]
    ComponentNotAFile {
        /// The path beneath the plugin folder.
        path: PathBuf,
        /// The plugin folder.
        root: PathBuf,
    },
    /// Larger than the host accepts.
    #[error(
        "component `{path}` is {size} bytes, over this host's limit of {max} bytes (max_component_bytes)"
    )]
    ComponentTooLarge {
        /// The path beneath the plugin folder.
        path: PathBuf,
        /// Its size (or the bytes read before stopping).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The bytes are not a component this host runs, or the runtime refused it.
    #[error("component `{path}`: {source}")]
    Component {
        /// The path beneath the plugin folder.
        path: PathBuf,
        /// Why.
        source: WasmError,
    },
    /// A limit or grant beyond the policy.
    #[error("refused by the host policy: {0}")]
    Policy(#[from] PolicyError),
    /// A mount that cannot be granted.
    #[error("mount `{host}` -> `{guest}`: {reason}")]
    Mount {
        /// The host path as written.
        host: String,
        /// The guest path.
        guest: String,
        /// Why.
        reason: String,
    },
}

impl PrepareError {
    /// The failure class this refusal would have as a run: `incompatible_component` for the
    /// component's own problems.
    pub fn failure_class(&self) -> Option<FailureClass> {
        match self {
            PrepareError::Component { source, .. } => source.failure_class(),
            _ => None,
        }
    }
}

/// Prepares one wasm rule (blocking: reads the file and may compile, ~100 ms per new
/// component; call it from `spawn_blocking` in async code).
pub fn prepare(
    runtime: &WasmRuntime,
    input: &PrepareInput<'_>,
) -> Result<PreparedHook, PrepareError> {
    let spec = input.spec;
    let (rel, bytes) = read_component_beneath(
        input.plugin_root,
        &spec.component,
        input.max_component_bytes,
    )?;
    // Limits first: a component needing more instances than its rule allows is refused from its
    // structure, before it is compiled.
    let limits = resolve(spec, input.policy)?;
    let component = runtime
        .load_bytes_within(&bytes, &rel.display().to_string(), &limits)
        .map_err(|source| PrepareError::Component { path: rel, source })?;
    let mut mounts = Vec::with_capacity(spec.mounts.len());
    for m in &spec.mounts {
        let fail = |reason: String| PrepareError::Mount {
            host: m.host.clone(),
            guest: m.guest.clone(),
            reason,
        };
        let template = open_mount(input, &m.host, m.access).map_err(fail)?;
        mounts.push(match template {
            Opened::Dir(host) => MountTemplate::Ready(ResolvedMount {
                host,
                guest: m.guest.clone(),
                access: m.access,
                symlinks: m.symlinks,
            }),
            Opened::SessionData(rel) => MountTemplate::SessionData {
                rel,
                guest: m.guest.clone(),
                access: m.access,
                symlinks: m.symlinks,
            },
        });
    }
    let fixed_mounts = mounts
        .iter()
        .map(|m| match m {
            MountTemplate::Ready(r) => Some(r.clone()),
            MountTemplate::SessionData { .. } => None,
        })
        .collect::<Option<Vec<_>>>();
    Ok(PreparedHook {
        component,
        limits,
        mounts,
        fixed_mounts,
        env: spec
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        config_json: Arc::from(spec.config.to_string()),
        label: Arc::from(input.label),
    })
}

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

/// A relative path that stays beneath its base: no `..`, no root, no prefix; `.` dropped.
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

/// Reads the component a rule names (`written`, e.g. `${PLUGIN_ROOT}/hooks/g.wasm`) beneath its
/// plugin folder `root`: `..`, absolute paths and symlinks leaving the folder are refused; a
/// regular file of at most `max` bytes, opened without blocking. Returns the path relative to
/// the plugin and the bytes.
pub fn read_component_beneath(
    root: &MountDir,
    written: &str,
    max: u64,
) -> Result<(PathBuf, Vec<u8>), PrepareError> {
    let rel = strip_var(written, &ROOT_PREFIXES).unwrap_or(written);
    let rel = confined(rel).ok_or_else(|| PrepareError::ComponentEscapes {
        path: written.to_owned(),
        root: root.path().to_owned(),
    })?;
    let read_err = |reason: String| PrepareError::ComponentRead {
        path: rel.clone(),
        root: root.path().to_owned(),
        reason,
    };
    let dir =
        cap_std::fs::Dir::from_std_file(root.try_clone_std().map_err(|e| read_err(e.to_string()))?);
    // Core's reader: beneath the plugin folder (a symlink only while it stays inside), without
    // blocking, so that a FIFO in its place cannot hang the open; checked once opened.
    let shown = root.path().join(&rel);
    let file = open_within(&dir, &rel, &shown).map_err(|e| read_err(e.kind.to_string()))?;
    let origin = shown.display().to_string();
    let bytes = crate::read::read_component(file, &origin, max).map_err(|e| match e {
        WasmError::NotAFile { .. } => PrepareError::ComponentNotAFile {
            path: rel.clone(),
            root: root.path().to_owned(),
        },
        WasmError::TooLarge { size, .. } => PrepareError::ComponentTooLarge {
            path: rel.clone(),
            size,
            max,
        },
        other => read_err(other.to_string()),
    })?;
    Ok((rel, bytes))
}

enum Opened {
    Dir(MountDir),
    SessionData(PathBuf),
}

/// Opens a mount's host folder beneath the root its placeholder (or absolute path) names.
fn open_mount(input: &PrepareInput<'_>, host: &str, access: Access) -> Result<Opened, String> {
    let leaves = |what: &str| format!("the path leaves the {what} folder (`..` is not allowed)");
    let dir = if let Some(rest) = strip_var(host, &DATA_PREFIXES) {
        let rel = confined(rest).ok_or_else(|| leaves("plugin data"))?;
        match input.data {
            PluginData::Unavailable => {
                return Err("this host gives the plugin no data folder".into());
            }
            PluginData::PerSession => return Ok(Opened::SessionData(rel)),
            PluginData::Persistent(data) => data
                .create_beneath(&rel, 0o700)
                .map_err(|e| e.to_string())?,
        }
    } else if let Some(rest) = strip_var(host, &ROOT_PREFIXES) {
        let rel = confined(rest).ok_or_else(|| leaves("plugin"))?;
        input
            .plugin_root
            .open_beneath(&rel)
            .map_err(|e| e.to_string())?
    } else if let Some(rest) = strip_var(host, &[PROJECT_PREFIX]) {
        let rel = confined(rest).ok_or_else(|| leaves("project"))?;
        let project = input
            .project
            .ok_or("this host has no project folder for ${CLAUDE_PROJECT_DIR}")?;
        project.open_beneath(&rel).map_err(|e| e.to_string())?
    } else if Path::new(host).is_absolute() {
        open_absolute(input, Path::new(host))?
    } else {
        let rel = confined(host).ok_or_else(|| leaves("plugin"))?;
        input
            .plugin_root
            .open_beneath(&rel)
            .map_err(|e| e.to_string())?
    };
    if access == Access::Rw
        && let Some(entry) = PROTECTED_ENTRIES.iter().find(|e| dir.has_entry(e))
    {
        return Err(format!(
            "a read-write mount of a folder holding `{entry}` is refused: writing there could add hooks or run code outside the sandbox; mount a subfolder, or use \"access\": \"ro\""
        ));
    }
    Ok(Opened::Dir(dir))
}

/// An absolute host path must lie beneath the project, the plugin folder or an extra root, as
/// written (no `..`); it is then opened beneath that root without following symlinks.
fn open_absolute(input: &PrepareInput<'_>, path: &Path) -> Result<MountDir, String> {
    if path.components().any(|c| c == Component::ParentDir) {
        return Err("an absolute mount path must not contain `..`".into());
    }
    let roots = input
        .project
        .into_iter()
        .chain([input.plugin_root])
        .chain(input.extra_roots);
    let mut names = Vec::new();
    for root in roots {
        if let Ok(rest) = path.strip_prefix(root.path()) {
            return root.open_beneath(rest).map_err(|e| e.to_string());
        }
        names.push(root.path().display().to_string());
    }
    Err(format!(
        "{} is outside the folders this host lets rules mount ({})",
        path.display(),
        names.join(", ")
    ))
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
