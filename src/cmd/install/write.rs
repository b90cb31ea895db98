//! Reading and replacing an agent's configuration file safely. The file and the folders above it
//! in a project come from a checkout, so they are hostile: a symlink is never followed (a
//! planted `.cursor -> ~/.ssh` must not make hookbox write there), the file is read bounded and
//! without blocking, and it is replaced atomically — a temporary file in the same folder,
//! created exclusively without following links, written, synced, given the old file's mode, and
//! renamed over it — so the agent never reads a half-written file. A file owned by someone else
//! is not replaced. The old content is kept as a backup in hookbox's state folder.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use hookbox_core::files::{Symlinks, read_file};

/// The largest configuration file read: 4 MiB. Agents' settings files are a few KiB.
pub(super) const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Refuses a symlink at `path` or at any folder between `root` (exclusive) and it.
pub(super) fn refuse_symlinks(root: Option<&Path>, path: &Path) -> anyhow::Result<()> {
    let mut at = Some(path);
    while let Some(p) = at {
        if root.is_some_and(|r| p == r) {
            break;
        }
        if let Ok(meta) = std::fs::symlink_metadata(p)
            && meta.file_type().is_symlink()
        {
            let target = std::fs::read_link(p)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            if p == path {
                bail!(
                    "{} is a symlink (to {target}); hookbox does not write through symlinks — pass --config with the file it points to if that is the one to change",
                    p.display()
                );
            }
            bail!(
                "{} is a symlink (to {target}) on the way to {}; hookbox does not write through symlinks",
                p.display(),
                path.display()
            );
        }
        if root.is_none() {
            break;
        }
        at = p.parent();
    }
    Ok(())
}

/// Refuses to write `path` when a folder on the way to it — from `root` (exclusive) down, or
/// only its own folder when there is no root — is owned by another user (root excepted) or
/// writable by everyone without the sticky bit: whoever owns such a folder can swap the file
/// between hookbox's write and the agent's read (a checkout's `.claude/` left 0777 by someone
/// else). Folders that do not exist yet are created by hookbox, as the user.
pub(super) fn refuse_shared_folders(root: Option<&Path>, path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::geteuid().as_raw();
        let mut at = path.parent();
        while let Some(dir) = at {
            if root.is_some_and(|r| dir == r || !dir.starts_with(r)) {
                break;
            }
            if let Ok(m) = std::fs::symlink_metadata(dir) {
                if m.uid() != me && m.uid() != 0 {
                    bail!(
                        "{} belongs to uid {}, not to you (uid {me}): whoever owns it could replace what hookbox writes there; hookbox does not write into another user's folder",
                        dir.display(),
                        m.uid()
                    );
                }
                if m.mode() & 0o002 != 0 && m.mode() & 0o1000 == 0 {
                    bail!(
                        "{} is writable by every user (mode {:o}): anyone could replace what hookbox writes there; make it private (chmod o-w) first",
                        dir.display(),
                        m.mode() & 0o7777
                    );
                }
            }
            if root.is_none() {
                break;
            }
            at = dir.parent();
        }
    }
    Ok(())
}

/// The file's text, or `None` when there is none.
pub(super) fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match read_file(path, MAX_CONFIG_BYTES, Symlinks::Refuse) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display()))),
    }
}

/// Replaces (or creates) `path` with `bytes`, atomically, keeping the old file's mode; refuses a
/// symlink or a non-regular file at `path` and another user's file. Also what `hookbox build-js`
/// writes its component with (a plugin checkout may hold a planted link beside its output).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    // A bare file name is in the current folder (which is synced, not the empty path).
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let old = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            bail!("{} is a symlink; not replaced", path.display())
        }
        Ok(m) if !m.is_file() => bail!("{} is not a regular file; not replaced", path.display()),
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot inspect {}", path.display())),
    };
    #[cfg(unix)]
    if let Some(m) = &old {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::geteuid().as_raw();
        if m.uid() != me {
            bail!(
                "{} belongs to uid {}, not to you (uid {me}); hookbox will not replace another user's file",
                path.display(),
                m.uid()
            );
        }
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.hookbox-{}.tmp", std::process::id()));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o644)
            .custom_flags(i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0));
    }
    let mut file = opts
        .open(&tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    let written = (|| -> std::io::Result<()> {
        file.write_all(bytes)?;
        if let Some(m) = &old {
            file.set_permissions(m.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // The rename itself is durable once the folder is.
        std::fs::File::open(dir)?.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

/// Removes `path` (a file hookbox emptied).
pub(super) fn remove(path: &Path) -> anyhow::Result<()> {
    std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))
}

/// Keeps `text` (the file's content before the change) in `<state>/backups/`, private to its
/// owner; returns where.
pub(super) fn backup(
    state_root: Option<PathBuf>,
    path: &Path,
    agent: &str,
    text: &str,
) -> anyhow::Result<PathBuf> {
    let root = state_root.context(
        "no state folder for the backup (set XDG_STATE_HOME or HOME), so nothing was changed",
    )?;
    let dir = root.join("backups");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0..1000 {
        let file = dir.join(format!("{secs}-{n}-{agent}-{name}"));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600)
                .custom_flags(i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0));
        }
        match opts.open(&file) {
            Ok(mut f) => {
                f.write_all(text.as_bytes())
                    .and_then(|()| f.sync_all())
                    .with_context(|| format!("cannot write the backup {}", file.display()))?;
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", file.display())),
        }
    }
    bail!("cannot find a free backup name in {}", dir.display())
}
