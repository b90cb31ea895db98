//! The per-plugin, per-session writable folder hooks get as `PLUGIN_DATA`/`CLAUDE_PLUGIN_DATA`.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use hookbox_core::files::safe_component;

/// Why the data folder could not be provided.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    /// Creating a folder failed (permissions, read-only file system, a file in the way, …).
    #[error("cannot create plugin data folder `{path}`: {source}")]
    Create {
        /// The folder being created.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The folder exists but resolves outside the data root, through a symlink planted there.
    #[error(
        "plugin data folder `{path}` resolves to `{resolved}`, outside the data root `{root}`; \
         remove the symlink"
    )]
    Escapes {
        /// The folder as built from the data root.
        path: PathBuf,
        /// Where it really points.
        resolved: PathBuf,
        /// The data root.
        root: PathBuf,
    },
}

/// Creates (if needed) and returns `<data_root>/<plugin>/<session>`, canonicalised.
///
/// `plugin` and `session` come from manifests and payloads, so each is passed through
/// [`safe_component`] (core's one sanitiser): a session id like `../../x` stays one folder inside `data_root`.
/// New folders are created private to the user (mode 0700): they hold session state. The
/// result is checked to resolve inside `data_root`, so a symlink planted in the tree cannot
/// redirect a later session's data elsewhere.
///
/// This is a blocking call (a few `mkdir`s); call it once per plugin and session.
pub fn create_plugin_data_dir(
    data_root: &Path,
    plugin: &str,
    session: &str,
) -> Result<PathBuf, DataDirError> {
    let path = data_root
        .join(safe_component(plugin))
        .join(safe_component(session));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&path)
        .map_err(|source| DataDirError::Create {
            path: path.clone(),
            source,
        })?;
    let canon = |p: &Path| {
        p.canonicalize().map_err(|source| DataDirError::Create {
            path: p.to_owned(),
            source,
        })
    };
    let (root, resolved) = (canon(data_root)?, canon(&path)?);
    if !resolved.starts_with(&root) {
        return Err(DataDirError::Escapes {
            path,
            resolved,
            root,
        });
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_folder_stays_inside_the_root() {
        let root = tempfile::tempdir().unwrap();
        let dir = create_plugin_data_dir(root.path(), "../evil", "../../x").unwrap();
        assert!(dir.is_dir());
        assert!(dir.starts_with(root.path().canonicalize().unwrap()));
        assert_eq!(
            create_plugin_data_dir(root.path(), "../evil", "../../x").unwrap(),
            dir
        );
    }

    #[test]
    fn a_planted_symlink_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("p")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("p").join("s")).unwrap();
        let err = create_plugin_data_dir(root.path(), "p", "s").unwrap_err();
        assert!(matches!(err, DataDirError::Escapes { .. }), "{err}");
    }
}
