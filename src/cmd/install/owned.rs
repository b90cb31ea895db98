//! What `hookbox install` created in an agent's configuration file, remembered so that
//! `hookbox uninstall` removes exactly that: a file the user had before stays (even when only
//! `{}` is left), a `"hooks": {}` the user wrote stays with the comment before it, an event list
//! the user had stays. One small JSON record per configuration file in `<state>/installs/`,
//! named by a hash of the file's path; a file installed into before these records existed has
//! none, and then nothing but hookbox's own entries is removed.

use std::path::{Path, PathBuf};

use hookbox_agents::install::Owned;
use hookbox_core::files::{Symlinks, read_file};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The largest record read.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    /// The configuration file, for people reading the folder.
    path: PathBuf,
    #[serde(default)]
    file: bool,
    #[serde(default)]
    hooks: bool,
    #[serde(default)]
    lists: Vec<String>,
}

fn record_path(state_root: &Path, config: &Path) -> PathBuf {
    let digest = Sha256::digest(config.as_os_str().as_encoded_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    state_root.join("installs").join(format!("{name}.json"))
}

/// What hookbox created in `config` so far (nothing when there is no record).
pub(super) fn load(state_root: Option<&Path>, config: &Path) -> Owned {
    let Some(root) = state_root else {
        return Owned::default();
    };
    let Ok(text) = read_file(
        &record_path(root, config),
        MAX_RECORD_BYTES,
        Symlinks::Refuse,
    ) else {
        return Owned::default();
    };
    let r: Record = serde_json::from_str(&text).unwrap_or_default();
    Owned {
        file: r.file,
        hooks: r.hooks,
        lists: r.lists,
    }
}

/// Records `owned` for `config`; an empty record removes the file.
pub(super) fn save(state_root: &Path, config: &Path, owned: &Owned) -> std::io::Result<()> {
    let path = record_path(state_root, config);
    if !owned.file && !owned.hooks && owned.lists.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let r = Record {
        path: config.to_owned(),
        file: owned.file,
        hooks: owned.hooks,
        lists: owned.lists.clone(),
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&r)?)?;
    std::fs::rename(&tmp, &path)
}
