//! The scratch folders `demo`, `bench` and `test` work in: created fresh, private (0700), under
//! the system's temporary folder. Never an existing path: a name in a shared `/tmp` is
//! predictable, and another local user could have planted a folder or a symlink there to receive
//! (or redirect) what we write. Files go in beneath a folder handle ([`create_beneath`]), so a
//! link planted inside is refused, not written through (`new` writes a plugin the same way).

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::PathBuf;

use anyhow::Context;
use rustix::fs::{Mode, OFlags};

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

/// Creates the file `names` (its folders, then its name) beneath the open folder `root` with
/// `bytes` and permission bits `mode`: each folder made, or taken when it exists, and opened
/// `O_DIRECTORY | O_NOFOLLOW`; the file created `O_EXCL | O_NOFOLLOW`. A symlink anywhere on the
/// way, or a file already there, is an error.
pub(crate) fn create_beneath(
    root: &OwnedFd,
    names: &[String],
    bytes: &[u8],
    mode: u32,
) -> anyhow::Result<()> {
    let (file, folders) = names.split_last().context("an empty path")?;
    let mut here = root.try_clone()?;
    for folder in folders {
        match rustix::fs::mkdirat(&here, folder.as_str(), Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e).with_context(|| format!("cannot create the folder {folder}")),
        }
        here = rustix::fs::openat(
            &here,
            folder.as_str(),
            OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("cannot open the folder {folder} (a link is not followed)"))?;
    }
    let fd = rustix::fs::openat(
        &here,
        file.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .with_context(|| format!("cannot create {file} (an existing file or link is not replaced)"))?;
    let mut out = std::fs::File::from(fd);
    out.write_all(bytes)?;
    // The umask may have taken bits from the mode: a script must stay executable.
    if mode & 0o111 != 0 {
        use std::os::unix::fs::PermissionsExt as _;
        out.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
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

    #[test]
    fn nothing_is_written_through_a_planted_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("f"), tmp.path().join("f")).unwrap();
        let root: OwnedFd = rustix::fs::open(
            tmp.path(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        let names = |p: &str| p.split('/').map(str::to_owned).collect::<Vec<_>>();
        assert!(create_beneath(&root, &names("sub/x"), b"x", 0o644).is_err());
        assert!(create_beneath(&root, &names("f"), b"x", 0o644).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        create_beneath(&root, &names("a/b/c.sh"), b"#!/bin/sh\n", 0o755).unwrap();
        let meta = std::fs::metadata(tmp.path().join("a/b/c.sh")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o755);
    }
}
