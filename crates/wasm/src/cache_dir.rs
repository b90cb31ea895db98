//! The cache folder itself: created private, and refused unless only we can change what is in
//! it — its files are loaded as native code, so whoever can write or replace them runs code in
//! the host.

use std::fs;
use std::path::Path;

#[cfg(unix)]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

/// Refuses a cache folder that anyone but us could write to, since its files are loaded as
/// native code: the folder must be ours and private (no group or other write), and every folder
/// above it must belong to us or root and be writable by nobody else, unless sticky (as `/tmp`,
/// where others cannot rename or remove what is ours). Symlinks are resolved first, so the
/// folders checked are the real ones.
#[cfg(unix)]
pub(crate) fn check_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let real = fs::canonicalize(dir).map_err(|e| e.to_string())?;
    let meta = fs::metadata(&real).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err("not a folder".into());
    }
    let mut parents = Vec::new();
    for parent in real.ancestors().skip(1) {
        let m = fs::metadata(parent).map_err(|e| format!("`{}`: {e}", parent.display()))?;
        parents.push(Folder {
            path: parent,
            mode: m.mode(),
            uid: m.uid(),
        });
    }
    let me = rustix::process::geteuid().as_raw();
    judge(meta.mode(), meta.uid(), &parents, me)
}

/// One folder above the cache, as `check_private` saw it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Folder<'a> {
    pub(crate) path: &'a Path,
    pub(crate) mode: u32,
    pub(crate) uid: u32,
}

/// The rules of [`check_private`], on what it read: the cache folder's `mode` and `uid`, the
/// folders above it, and our effective user `me`.
pub(crate) fn judge(mode: u32, uid: u32, parents: &[Folder<'_>], me: u32) -> Result<(), String> {
    if mode & 0o022 != 0 {
        return Err(format!(
            "writable by group or others (mode {:o}); compiled code is loaded from it, so it must be private: chmod go-w",
            mode & 0o777
        ));
    }
    if uid != me {
        return Err(format!(
            "owned by user {uid}, not by this process's user {me}; compiled code is loaded from it, so it must be ours: chown it or choose another folder"
        ));
    }
    for parent in parents {
        if parent.uid != me && parent.uid != 0 {
            return Err(format!(
                "its parent `{}` is owned by user {}, neither this process's user ({me}) nor root: that user could replace the cache folder",
                parent.path.display(),
                parent.uid
            ));
        }
        if parent.mode & 0o022 != 0 && parent.mode & 0o1000 == 0 {
            return Err(format!(
                "its parent `{}` is writable by group or others without the sticky bit (mode {:o}): they could replace the cache folder",
                parent.path.display(),
                parent.mode & 0o7777
            ));
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn check_private(dir: &Path) -> Result<(), String> {
    if fs::metadata(dir).map_err(|e| e.to_string())?.is_dir() {
        Ok(())
    } else {
        Err("not a folder".into())
    }
}

#[cfg(unix)]
pub(crate) fn private_file(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
pub(crate) fn private_file(path: &Path) -> std::io::Result<fs::File> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    fn folder(path: &str, mode: u32, uid: u32) -> Folder<'_> {
        Folder {
            path: Path::new(path),
            mode,
            uid,
        }
    }

    #[test]
    fn ours_and_private_below_root_or_our_folders_is_accepted() {
        let parents = [
            folder("/home/me/.cache", 0o700, ME),
            folder("/home/me", 0o755, ME),
            folder("/home", 0o755, 0),
            folder("/", 0o755, 0),
        ];
        judge(0o700, ME, &parents, ME).unwrap();
        // A sticky world-writable parent (as /tmp) is fine.
        judge(0o700, ME, &[folder("/tmp", 0o1777, 0)], ME).unwrap();
    }

    #[test]
    fn anything_another_user_could_change_is_refused() {
        let e = judge(0o770, ME, &[], ME).unwrap_err();
        assert!(e.contains("writable by group or others (mode 770)"), "{e}");
        let e = judge(0o700, 1001, &[], ME).unwrap_err();
        assert!(e.contains("owned by user 1001"), "{e}");
        let e = judge(0o700, ME, &[folder("/shared", 0o777, 0)], ME).unwrap_err();
        assert!(
            e.contains("`/shared` is writable by group or others without the sticky bit"),
            "{e}"
        );
        let e = judge(0o700, ME, &[folder("/srv/other", 0o755, 1001)], ME).unwrap_err();
        assert!(e.contains("`/srv/other` is owned by user 1001"), "{e}");
        let e = judge(0o700, ME, &[folder("/g", 0o775, 0)], ME).unwrap_err();
        assert!(e.contains("`/g` is writable by group"), "{e}");
    }
}
