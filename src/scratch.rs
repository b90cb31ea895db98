//! The scratch folders `demo` and `bench` work in: created fresh, private (0700), under the
//! system's temporary folder. Never an existing path: a name in a shared `/tmp` is predictable,
//! and another local user could have planted a folder or a symlink there to receive (or
//! redirect) what we write.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::PathBuf;

use anyhow::Context;

/// Creates `<tmp>/<name>-<pid>-<n>` exclusively (`mkdir`, no parents, fails on anything that
/// already exists there, symlinks included), mode 0700.
pub(crate) fn private_dir(name: &str) -> anyhow::Result<PathBuf> {
    let tmp = std::env::temp_dir();
    let mut last = None;
    for n in 0..16 {
        let dir = tmp.join(format!("{name}-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(dir),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot create {}", dir.display()));
            }
        }
    }
    anyhow::bail!(
        "cannot create a scratch folder: {} and 15 others like it already exist",
        last.map_or_else(String::new, |d| d.display().to_string())
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_planted_path_is_never_used() {
        // Plant what another user could: a symlink under the first name we would pick.
        let name = "hookbox-scratch-test";
        let first = std::env::temp_dir().join(format!("{name}-{}-0", std::process::id()));
        let _ = std::fs::remove_file(&first);
        std::os::unix::fs::symlink("/", &first).unwrap();
        let dir = private_dir(name).unwrap();
        assert_ne!(dir, first);
        let meta = std::fs::symlink_metadata(&dir).unwrap();
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        std::fs::remove_dir(&dir).unwrap();
        std::fs::remove_file(&first).unwrap();
    }
}
