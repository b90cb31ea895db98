//! Where a host keeps its state, out of reach of every hook: plugin data folders and replay
//! files live in a state folder that must not be inside (or contain) the project or any folder
//! rules may mount. The CLI's default is the XDG state folder
//! (`$HOOKBOX_STATE_DIR`, else `$XDG_STATE_HOME/hookbox`, else `~/.local/state/hookbox`), one
//! subfolder per project; a tenant's is its own folder under the fleet's state root.
//!
//! Data folders are keyed by the plugin's name **and** a hash of its canonical root, so a
//! plugin declaring another's `name` gets a folder of its own. They are persistent per plugin
//! (Claude Code's `~/.claude/plugins/data/<id>/`, also for Agentao and bare files) and per plugin
//! and session in the Ghast dialect, as its document says — at most
//! `RuntimeSettings::max_session_dirs` sessions per plugin, the least recently used removed
//! first (`session_dirs`). Every folder is created and opened beneath the state folder without
//! following symlinks ([`MountDir::create_beneath`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hookbox_core::Dialect;
use hookbox_core::files::{PathError, path, safe_component};
use hookbox_core::rule::PluginInfo;
use hookbox_wasm::{MountDir, MountError};
use sha2::{Digest, Sha256};

use crate::error::HostError;
use crate::policy::HostPolicy;
use crate::replay::{ReplayDir, ReplayOutput};
use crate::session_dirs::open_session_dir;

/// The state root the CLI and the server use by default: `$HOOKBOX_STATE_DIR`, else
/// `$XDG_STATE_HOME/hookbox`, else `$HOME/.local/state/hookbox`; `None` when none is set.
pub fn default_state_root() -> Option<PathBuf> {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("HOOKBOX_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("hookbox")))
        .or_else(|| var("HOME").map(|d| d.join(".local").join("state").join("hookbox")))
}

/// The state folder of `project` under `root`: `root/projects/<name>-<hash of its real path>`,
/// so two projects never share data or replay files. A project that cannot be resolved (a
/// folder on the way that cannot be searched, a working directory that is gone) is an error:
/// a guessed path would key another project's state.
pub fn project_state_dir(root: &Path, project: &Path) -> Result<PathBuf, PathError> {
    let canon = path::resolve(project)?;
    let name = canon
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    Ok(root
        .join("projects")
        .join(format!("{}-{}", safe_component(&name), hash16(&canon))))
}

/// First 16 hex digits of the sha256 of a path.
fn hash16(path: &Path) -> String {
    let d = Sha256::digest(path.as_os_str().as_encoded_bytes());
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// An open state folder.
#[derive(Debug)]
pub(crate) struct StateDir {
    data: MountDir,
    pub(crate) replay: Option<ReplayDir>,
    /// Session folders kept per plugin (`RuntimeSettings::max_session_dirs`).
    max_session_dirs: usize,
    /// Set when the folder is a temporary one, removed with the host.
    temp: Option<PathBuf>,
}

impl Drop for StateDir {
    fn drop(&mut self) {
        if let Some(t) = &self.temp {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a fresh private (0700) folder under the system's temporary folder.
fn temp_state() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = base.join(format!(
            "hookbox-state-{}-{n}-{nanos:08x}",
            std::process::id()
        ));
        // `mkdir` fails if the name exists: a folder planted under that name is never used.
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl StateDir {
    /// Opens (creating, 0700) the host's state folder and checks it is out of every mountable
    /// root.
    pub(crate) fn open(
        policy: &HostPolicy,
        max_session_dirs: usize,
        replay_output: ReplayOutput,
    ) -> Result<StateDir, HostError> {
        let (root, temp) = match &policy.state_dir {
            Some(d) => (d.clone(), None),
            None => {
                let t = temp_state().map_err(|e| HostError::State {
                    path: std::env::temp_dir(),
                    reason: e.to_string(),
                })?;
                (t.clone(), Some(t))
            }
        };
        let err = |reason: String| HostError::State {
            path: root.clone(),
            reason,
        };
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&root)
                .map_err(|e| err(format!("cannot create it: {e}")))?;
        }
        let state = path::canonical(&root).map_err(|e| err(e.to_string()))?;
        let roots = std::iter::once(&policy.project_dir).chain(&policy.extra_mount_roots);
        for r in roots {
            // Compared where it really is, or not at all: an overlap must never be missed
            // because a path could not be resolved.
            let r = path::resolve(r).map_err(|e| {
                err(format!(
                    "cannot tell whether it overlaps a folder hooks may mount: {e}"
                ))
            })?;
            if state.starts_with(&r) || r.starts_with(&state) {
                return Err(err(format!(
                    "it overlaps {}, a folder hooks may mount: keep hookbox's state outside the project and every mount root (e.g. ~/.local/state/hookbox)",
                    r.display()
                )));
            }
        }
        let dir = MountDir::open(&root).map_err(|e| err(e.to_string()))?;
        let data = dir
            .create_beneath(Path::new("data"), 0o700)
            .map_err(|e| err(e.to_string()))?;
        let replay = match (policy.replay, temp.is_none()) {
            (true, true) => {
                let replay = ReplayDir::create(&root.join("replay"), replay_output);
                Some(replay.map_err(|e| err(e.to_string()))?)
            }
            _ => None,
        };
        Ok(StateDir {
            data,
            replay,
            max_session_dirs,
            temp,
        })
    }

    /// The data folder of `plugin` (for `session` in the Ghast dialect), created if needed.
    pub(crate) fn plugin_data(
        &self,
        plugin: &PluginInfo,
        session: &str,
    ) -> Result<MountDir, MountError> {
        let plugin_dir = self.plugin_dir(plugin)?;
        match plugin.dialect {
            Dialect::Ghast => {
                open_session_dir(&plugin_dir, &safe_component(session), self.max_session_dirs)
            }
            _ => Ok(plugin_dir),
        }
    }

    /// The plugin's own folder under `data/` (persistent; the Ghast sessions live beneath it).
    pub(crate) fn plugin_dir(&self, plugin: &PluginInfo) -> Result<MountDir, MountError> {
        let root = path::canonical(&plugin.root).map_err(|e| MountError::Io {
            path: plugin.root.clone(),
            reason: format!("the plugin folder's data folder is keyed by its real path: {e}"),
        })?;
        let key = format!("{}-{}", safe_component(&plugin.name), hash16(&root));
        self.data.create_beneath(Path::new(&key), 0o700)
    }

    /// Whether the plugin's data folder is per session (known only at dispatch).
    pub(crate) fn per_session(plugin: &PluginInfo) -> bool {
        plugin.dialect == Dialect::Ghast
    }
}
