//! Path normalisation, in one place and without silent fallbacks: a path either resolves or
//! the caller gets a [`PathError`] naming it. Used to key "the same folder named twice", to
//! tell whether one folder lies inside another (state folders kept out of mountable roots), and
//! to turn what a user typed into an absolute path.
//!
//! The one fallback is [`resolve`]'s, and it is documented there: a path that does not exist
//! *yet* (a state folder about to be created) resolves through its nearest existing ancestor.

use std::io;
use std::path::{Path, PathBuf};

/// Why a path could not be normalised.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The empty path names nothing.
    #[error("the path is empty")]
    Empty,
    /// The current folder (needed to make a relative path absolute) cannot be read.
    #[error("cannot make `{}` absolute: the current folder cannot be read: {source}", path.display())]
    CurrentDir {
        /// The relative path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Resolving the path (or a folder on the way) failed: it does not exist, a link loops,
    /// permission is denied.
    #[error("cannot resolve `{}`: {source}", path.display())]
    Resolve {
        /// The path as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// `path` made absolute against the current folder, lexically (nothing is read: symlinks and
/// `..` are kept as written). For a path that is shown or stored, not compared.
pub fn absolute(path: &Path) -> Result<PathBuf, PathError> {
    if path.as_os_str().is_empty() {
        return Err(PathError::Empty);
    }
    std::path::absolute(path).map_err(|source| PathError::CurrentDir {
        path: path.to_path_buf(),
        source,
    })
}

/// The real location of an existing `path`: absolute, every symlink and `..` resolved. Two
/// names of one folder give the same answer, so it is what "named twice" and "inside another
/// folder" compare.
pub fn canonical(path: &Path) -> Result<PathBuf, PathError> {
    if path.as_os_str().is_empty() {
        return Err(PathError::Empty);
    }
    std::fs::canonicalize(path).map_err(|source| PathError::Resolve {
        path: path.to_path_buf(),
        source,
    })
}

/// [`canonical`] for a path that may not exist yet — the one fallback, and only for
/// "does not exist": the nearest existing ancestor is resolved and the missing rest appended
/// as written (without `.`; a `..` in the missing rest is refused, as it could not be resolved
/// truthfully). Any other failure (a loop, permission denied) is an error, never papered over.
pub fn resolve(path: &Path) -> Result<PathBuf, PathError> {
    let path = absolute(path)?;
    let mut missing = Vec::new();
    let mut existing = path.as_path();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(real) => {
                let mut out = real;
                for name in missing.iter().rev() {
                    out.push(name);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(PathError::Resolve { path, source: e });
                };
                missing.push(name.to_owned());
                existing = parent;
            }
            Err(source) => return Err(PathError::Resolve { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_paths_are_errors_not_the_current_folder() {
        assert!(matches!(absolute(Path::new("")), Err(PathError::Empty)));
        assert!(matches!(canonical(Path::new("")), Err(PathError::Empty)));
        assert!(matches!(resolve(Path::new("")), Err(PathError::Empty)));
    }

    #[test]
    fn absolute_is_lexical() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(absolute(Path::new("a/../b")).unwrap(), cwd.join("a/../b"));
        assert_eq!(absolute(Path::new("/x/y")).unwrap(), Path::new("/x/y"));
    }

    #[test]
    fn canonical_needs_the_path_and_says_which() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = canonical(&missing).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot resolve `{}`", missing.display())),
            "{e}"
        );
        let real = canonical(dir.path()).unwrap();
        assert!(real.is_absolute());
    }

    #[cfg(unix)]
    #[test]
    fn two_names_of_one_folder_resolve_alike() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        assert_eq!(
            canonical(&dir.path().join("link")).unwrap(),
            canonical(&real).unwrap()
        );
        assert_eq!(
            canonical(&dir.path().join("real/../real")).unwrap(),
            canonical(&real).unwrap()
        );
    }

    #[cfg(unix)]
    #[test]
    fn resolve_goes_through_the_nearest_existing_folder() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let want = canonical(&real).unwrap().join("state/projects");
        assert_eq!(
            resolve(&dir.path().join("link/state/projects")).unwrap(),
            want
        );
        assert_eq!(
            resolve(&dir.path().join("link/./state/projects")).unwrap(),
            want
        );
        // An existing path resolves as `canonical` does.
        assert_eq!(
            resolve(&dir.path().join("link")).unwrap(),
            canonical(&real).unwrap()
        );
        // A loop is an error, not a fallback.
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        let e = resolve(&dir.path().join("loop/x")).unwrap_err();
        assert!(matches!(e, PathError::Resolve { .. }), "{e:?}");
    }
}
