//! Per-session data folders — the Ghast dialect gives a plugin one data folder per session —
//! are named after session ids, which the client chooses: 300 dispatches with 300 ids made 300
//! folders. A plugin keeps at most `max_session_dirs` of them
//! ([`RuntimeSettings::max_session_dirs`](crate::RuntimeSettings::max_session_dirs)); opening one
//! more removes the least recently used first, as replay removes its least recently written
//! files (see [`crate::replay`] for why removal rather than refusal). Every use refreshes a
//! folder's modification time, so a session in use is not the one removed unless that many
//! newer sessions used theirs since.

use std::path::Path;
use std::time::SystemTime;

use hookbox_wasm::{MountDir, MountError};
use rustix::fs::{AtFlags, FileType, statat};

/// Opens (creating, 0700) the session folder `name` beneath `plugin_dir`, first removing the
/// least recently used ones when `plugin_dir` already holds `max` and `name` is new.
pub(crate) fn open_session_dir(
    plugin_dir: &MountDir,
    name: &str,
    max: usize,
) -> Result<MountDir, MountError> {
    if !plugin_dir.has_entry(name) {
        make_room(plugin_dir, max.saturating_sub(1));
    }
    let dir = plugin_dir.create_beneath(Path::new(name), 0o700)?;
    // A folder that cannot be touched is only judged older than it is: nothing to fail for.
    if let Ok(f) = dir.try_clone_std() {
        let _ = f.set_modified(SystemTime::now());
    }
    Ok(dir)
}

/// Removes the least recently used session folders of `plugin_dir` until at most `keep` are
/// left. Entries are never followed (a planted symlink is neither counted nor removed through).
fn make_room(plugin_dir: &MountDir, keep: usize) {
    let Ok(listing) = rustix::fs::Dir::read_from(plugin_dir.as_fd()) else {
        return;
    };
    let mut folders = Vec::new();
    for entry in listing.flatten() {
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        let Ok(st) = statat(plugin_dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            folders.push(((st.st_mtime, st.st_mtime_nsec), name.to_owned()));
        }
    }
    if folders.len() <= keep {
        return;
    }
    folders.sort();
    let excess = folders.len() - keep;
    for (_, name) in folders.into_iter().take(excess) {
        // std's remove_dir_all walks with openat/unlinkat and never follows a link the hook
        // planted inside; the path up to the plugin folder is hookbox's own state.
        let path = plugin_dir.path().join(&name);
        match std::fs::remove_dir_all(&path) {
            Ok(()) => {
                tracing::debug!(folder = %path.display(), "session data folder removed (max_session_dirs)")
            }
            Err(e) => {
                tracing::warn!(folder = %path.display(), error = %e, "cannot remove a session data folder over max_session_dirs")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn at_most_max_folders_are_kept_the_least_recently_used_go_first() {
        let tmp = tempfile::tempdir().unwrap();
        let plugin = MountDir::open(tmp.path()).unwrap();
        let base = SystemTime::now() - Duration::from_secs(3600);
        for (i, name) in ["a", "b", "c"].iter().enumerate() {
            let d = open_session_dir(&plugin, name, 3).unwrap();
            std::fs::write(d.path().join("f"), "x").unwrap();
            // Distinct times: `a` oldest.
            let f = d.try_clone_std().unwrap();
            f.set_modified(base + Duration::from_secs(i as u64))
                .unwrap();
        }
        // Using `a` again makes `b` the least recently used.
        open_session_dir(&plugin, "a", 3).unwrap();
        open_session_dir(&plugin, "d", 3).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a", "c", "d"]);
        assert!(tmp.path().join("a/f").exists(), "a kept its files");
    }

    #[test]
    fn a_planted_link_is_not_followed_when_making_room() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        std::fs::write(victim.path().join("keep"), "x").unwrap();
        let plugin_path = tmp.path().join("plugin");
        std::fs::create_dir(&plugin_path).unwrap();
        let plugin = MountDir::open(&plugin_path).unwrap();
        let old = open_session_dir(&plugin, "old", 1).unwrap();
        std::os::unix::fs::symlink(victim.path(), old.path().join("link")).unwrap();
        std::os::unix::fs::symlink(victim.path(), plugin_path.join("planted")).unwrap();
        let f = old.try_clone_std().unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        open_session_dir(&plugin, "new", 1).unwrap();
        assert!(!plugin_path.join("old").exists());
        assert!(
            victim.path().join("keep").exists(),
            "nothing removed through a link"
        );
        assert!(
            plugin_path.join("planted").exists(),
            "a link is not a session folder"
        );
    }
}
