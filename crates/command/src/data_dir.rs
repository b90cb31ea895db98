//! The per-plugin, per-session writable folder hooks get as `PLUGIN_DATA`/`CLAUDE_PLUGIN_DATA`.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Longest sanitised component kept before the hash suffix, well under the 255-byte name limit.
const MAX_COMPONENT_CHARS: usize = 64;

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
/// [`sanitize_component`]: a session id like `../../x` stays one folder inside `data_root`.
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
        .join(sanitize_component(plugin))
        .join(sanitize_component(session));
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

/// Turns an arbitrary name into one safe path component.
///
/// Keeps ASCII letters, digits, `-`, `_` and `.`; every other character becomes `_`; a name of
/// only dots (`.`, `..`) or an empty one becomes underscores. Long names are cut at 64
/// characters. When anything changed, a hash of the original is appended, so two different ids
/// (`a/b` and `a_b`) never share a folder, and the same id always maps to the same folder.
pub fn sanitize_component(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .take(MAX_COMPONENT_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.chars().all(|c| c == '.') {
        out = "_".repeat(out.len().max(1));
    }
    if out != raw {
        out.push('-');
        out.push_str(&format!("{:016x}", fnv1a(raw.as_bytes())));
    }
    out
}

/// FNV-1a, 64 bit: a stable, dependency-free hash (not for security; only to tell names apart).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept() {
        assert_eq!(sanitize_component("my-plugin_1.2"), "my-plugin_1.2");
        assert_eq!(sanitize_component("3f2a9c"), "3f2a9c");
    }

    #[test]
    fn traversal_and_separators_become_one_component() {
        for raw in [
            "..",
            ".",
            "",
            "../../x",
            "/etc/passwd",
            "a/b",
            "a\\b",
            "a\0b",
            "..\u{2215}x",
        ] {
            let s = sanitize_component(raw);
            assert!(
                !s.contains('/') && !s.contains('\\') && !s.contains('\0'),
                "{raw:?} -> {s:?}"
            );
            assert!(!s.chars().all(|c| c == '.'), "{raw:?} -> {s:?}");
            assert!(!s.is_empty());
        }
    }

    #[test]
    fn altered_names_do_not_collide_and_are_stable() {
        assert_ne!(sanitize_component("a/b"), sanitize_component("a_b"));
        assert_ne!(sanitize_component("a/b"), sanitize_component("a:b"));
        assert_eq!(sanitize_component("a/b"), sanitize_component("a/b"));
    }

    #[test]
    fn long_names_are_cut() {
        let s = sanitize_component(&"x".repeat(1000));
        assert!(s.len() <= MAX_COMPONENT_CHARS + 17, "{}", s.len());
    }

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
