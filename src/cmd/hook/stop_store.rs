//! Where `hookbox hook` keeps each agent turn's Stop re-entry count between its processes
//! (`hookbox_core::stop_loop::StopCount`): one small file per agent, session and turn in
//! `<state>/stop-loops/`, named by a hash of the three (the session id is the agent's, so it is
//! never a path). The folder is bounded: records older than [`MAX_AGE`] are swept, and past
//! [`MAX_RECORDS`] the oldest go first. A record that cannot be read counts as lost (the count
//! restarts at one, never at zero), so a broken folder can lengthen a loop by a few rounds but
//! never unbind it: each sweep window still ends at the cap.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hookbox_core::files::{Symlinks, read_file};
use sha2::{Digest, Sha256};

/// The most turn records kept (each a few bytes): a sweep deletes the oldest beyond it.
pub(super) const MAX_RECORDS: usize = 256;

/// A record untouched this long is swept: a Stop loop's rounds follow each other within
/// minutes, so an older record belongs to a turn that ended without a final Stop.
pub(super) const MAX_AGE: Duration = Duration::from_secs(60 * 60);

/// The largest record read.
const MAX_RECORD_BYTES: u64 = 64;

/// The file name of the record keyed by `parts` (agent, session, and the turn or the message):
/// a hash of them, each length-prefixed so no two keys share a name — never a path, whatever the
/// agent sends. Shared with the trust notices' markers (`trust_notice.rs`).
pub(super) fn record_name(parts: [&str; 3]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Creates `dir` (and its parents) and makes it private to the user: a session's records say
/// which sessions ran which plugins.
pub(super) fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// One turn's record.
pub(super) struct StopStore {
    dir: PathBuf,
    file: PathBuf,
}

impl StopStore {
    /// The record of `agent`'s turn `turn` (Codex's `turn_id`; empty where the agent has none) in
    /// session `session`, under the state root `root`.
    pub(super) fn new(root: &Path, agent: &str, session: &str, turn: &str) -> StopStore {
        let dir = root.join("stop-loops");
        StopStore {
            file: dir.join(record_name([agent, session, turn])),
            dir,
        }
    }

    /// The stored count, if any (a record that does not read as a count is none).
    pub(super) fn load(&self) -> Option<u32> {
        read_file(&self.file, MAX_RECORD_BYTES, Symlinks::Refuse)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    }

    /// Stores `count`, or removes the record for `None`; sweeps the folder. Errors are the
    /// caller's warning, never a reason not to answer.
    pub(super) fn save(&self, count: Option<u32>) -> std::io::Result<()> {
        match count {
            None => match std::fs::remove_file(&self.file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
            Some(n) => {
                private_dir(&self.dir)?;
                let tmp = self
                    .file
                    .with_extension(format!("tmp{}", std::process::id()));
                std::fs::write(&tmp, format!("{n}\n"))?;
                std::fs::rename(&tmp, &self.file)?;
                sweep(&self.dir, MAX_RECORDS, MAX_AGE);
                Ok(())
            }
        }
    }
}

/// Removes the files of `dir` older than `max_age`, then the oldest beyond `max_records` (also
/// `hookbox hook`'s trust notices).
pub(super) fn sweep(dir: &Path, max_records: usize, max_age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut kept: Vec<(SystemTime, PathBuf)> = Vec::new();
    // Bounded: a folder flooded by someone else is read only this far.
    for e in entries.flatten().take(max_records * 4) {
        let Ok(meta) = e.metadata() else { continue };
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if now.duration_since(modified).unwrap_or_default() > max_age {
            let _ = std::fs::remove_file(e.path());
        } else {
            kept.push((modified, e.path()));
        }
    }
    if kept.len() > max_records {
        kept.sort();
        for (_, p) in &kept[..kept.len() - max_records] {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_round_trips_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let s = StopStore::new(dir.path(), "codex", "s1", "t1");
        assert_eq!(s.load(), None);
        s.save(Some(2)).unwrap();
        assert_eq!(s.load(), Some(2));
        assert_eq!(StopStore::new(dir.path(), "codex", "s1", "t2").load(), None);
        s.save(None).unwrap();
        assert_eq!(s.load(), None);
        s.save(None).unwrap();
    }

    #[test]
    fn the_folder_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_RECORDS + 20 {
            StopStore::new(dir.path(), "claude", &format!("s{i}"), "")
                .save(Some(1))
                .unwrap();
        }
        let n = std::fs::read_dir(dir.path().join("stop-loops"))
            .unwrap()
            .count();
        assert!(n <= MAX_RECORDS, "{n} records");
    }

    #[test]
    fn a_record_that_is_not_a_count_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let s = StopStore::new(dir.path(), "claude", "s", "");
        s.save(Some(1)).unwrap();
        std::fs::write(&s.file, "garbage").unwrap();
        assert_eq!(s.load(), None);
    }
}
