//! One replay folder as the writer holds it: what it holds, for its quota ([`Folder`], learnt
//! by [`scan`]), and its files open for appending ([`OpenFile`], each holding its batch of
//! lines until it is written with one `write`). Files are opened beneath the folder without
//! following symlinks, created 0600, regular files of ours with one link only.
//!
//! A folder keeps its own open files, by file name: a record finds its folder by the folder's
//! path bytes and its file by name, with no path built or hashed component by component per
//! record (that bookkeeping was a third of the writer's cost per record; docs/performance.md).

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hookbox_wasm::MountDir;

use super::sink::ReplayError;

pub(super) struct OpenFile {
    pub(super) file: File,
    pub(super) last: Instant,
    /// Whole lines appended this batch, written with one `write` when the batch ends (a flush,
    /// the writer's pause, the file closed): one syscall per file per batch instead of one per
    /// record (measured in `hookbox serve`: the writer's largest cost after serialising).
    pub(super) pending: Vec<u8>,
    pub(super) pending_lines: u64,
}

/// What one replay folder holds, for its quota: learnt from the folder the first time a record
/// goes there (files from earlier runs count), then kept up to date by the writer (the only
/// one writing there), and forgotten when the folder has been idle for `idle_close`.
pub(super) struct Folder {
    pub(super) files: HashMap<String, FileUse>,
    /// Its files open for appending, by name; all folders together hold at most the writer's
    /// `max_open` (the writer counts them).
    pub(super) open: HashMap<String, OpenFile>,
    pub(super) bytes: u64,
    /// Write counter: the order in which files were last written.
    pub(super) clock: u64,
    pub(super) last: Instant,
}

pub(super) struct FileUse {
    pub(super) bytes: u64,
    pub(super) written: u64,
}

/// What `dir` holds already: its `*.jsonl` regular files (never following a link), oldest
/// modification first.
pub(super) fn scan(dir: &MountDir) -> Result<Folder, String> {
    use rustix::fs::{AtFlags, FileType, statat};
    let mut entries = Vec::new();
    let listing =
        rustix::fs::Dir::read_from(dir.as_fd()).map_err(|e| format!("cannot list it: {e}"))?;
    for entry in listing {
        let entry = entry.map_err(|e| format!("cannot list it: {e}"))?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if !name.ends_with(".jsonl") {
            continue;
        }
        let Ok(st) = statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            continue;
        }
        let modified = (st.st_mtime, st.st_mtime_nsec);
        entries.push((modified, name.to_owned(), st.st_size.max(0) as u64));
    }
    entries.sort();
    let mut folder = Folder {
        files: HashMap::with_capacity(entries.len()),
        open: HashMap::new(),
        bytes: 0,
        clock: 0,
        last: Instant::now(),
    };
    for (_, name, bytes) in entries {
        folder.clock += 1;
        folder.bytes += bytes;
        folder.files.insert(
            name,
            FileUse {
                bytes,
                written: folder.clock,
            },
        );
    }
    Ok(folder)
}

impl Folder {
    /// Appends `line` to the batch of `file` (in this folder, `dir`), opening the file if it is
    /// not open; says whether it opened one (the writer counts open files over all folders and
    /// closes the oldest when there are more than its `max_open`, see [`close_oldest`]).
    pub(super) fn append(
        &mut self,
        dir: &MountDir,
        file: &str,
        line: &[u8],
        errors: &AtomicU64,
    ) -> Result<bool, ReplayError> {
        let err = |reason: String| ReplayError {
            path: dir.path().join(file).display().to_string(),
            reason,
        };
        let opened = !self.open.contains_key(file);
        if opened {
            let f = open_record_file(dir, file).map_err(err)?;
            self.open.insert(
                file.to_owned(),
                OpenFile {
                    file: f,
                    last: Instant::now(),
                    pending: Vec::new(),
                    pending_lines: 0,
                },
            );
        }
        let Some(entry) = self.open.get_mut(file) else {
            return Err(err("file vanished from the open set".into()));
        };
        entry.last = Instant::now();
        entry.pending.extend_from_slice(line);
        entry.pending_lines += 1;
        // A batch never holds more than this in memory: under a steady flood the queue may
        // never run empty, and the lines must reach the disk all the same.
        if entry.pending.len() >= PENDING_MAX_BYTES
            && let Err(e) = entry.write_pending()
        {
            // Counted here, line by line, like a batch that fails at its end.
            errors.fetch_add(e.lines, Ordering::Relaxed);
            tracing::warn!(file, error = %e.error, "replay records not written");
        }
        Ok(opened)
    }
}

/// Closes the least recently written open file of all `folders`, writing its batch first (a
/// failure counts its lines as errors: they are lost, not the record that made room); says
/// whether it closed one. Called when a file was just opened over the cap: that file is the
/// most recent, so it is never the one closed unless it is the only one.
pub(super) fn close_oldest<'a>(
    folders: impl Iterator<Item = &'a mut Folder>,
    errors: &AtomicU64,
) -> bool {
    let mut oldest: Option<(Instant, &mut Folder)> = None;
    for folder in folders {
        let Some(last) = folder.open.values().map(|f| f.last).min() else {
            continue;
        };
        if oldest.as_ref().is_none_or(|(t, _)| last < *t) {
            oldest = Some((last, folder));
        }
    }
    let Some((last, folder)) = oldest else {
        return false;
    };
    let Some(name) = folder
        .open
        .iter()
        .find(|(_, f)| f.last == last)
        .map(|(n, _)| n.clone())
    else {
        return false;
    };
    let Some(mut closed) = folder.open.remove(&name) else {
        return false;
    };
    if let Err(e) = closed.write_pending() {
        errors.fetch_add(e.lines, Ordering::Relaxed);
        tracing::warn!(file = %name, error = %e.error, "replay records not written");
    }
    true
}

/// Most bytes of lines one open file holds before they are written, batch or not: with at most
/// `max_open` files open, the writer's buffers stay within `max_open` × 64 KiB.
const PENDING_MAX_BYTES: usize = 64 << 10;

/// A batch that could not be written: how many lines it held, and why.
pub(super) struct PendingError {
    pub(super) lines: u64,
    pub(super) error: String,
}

impl OpenFile {
    /// Writes the batch's lines with one write on the O_APPEND file (whole lines only: a crash
    /// leaves at most a torn last line), and empties the batch whatever the outcome.
    pub(super) fn write_pending(&mut self) -> Result<(), PendingError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let written = self.file.write_all(&self.pending);
        let lines = std::mem::take(&mut self.pending_lines);
        self.pending.clear();
        written.map_err(|e| PendingError {
            lines,
            error: e.to_string(),
        })
    }
}

/// Opens `<dir>/<name>` for appending: never through a symlink (`O_NOFOLLOW`), never blocking
/// on a FIFO planted there (`O_NONBLOCK`, then a regular-file check), created 0600, and refused
/// when it has other names (a hard link to a file elsewhere) or another owner.
fn open_record_file(dir: &MountDir, name: &str) -> Result<File, String> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::WRONLY
        | OFlags::APPEND
        | OFlags::CREATE
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::CLOEXEC;
    let fd =
        rustix::fs::openat(dir.as_fd(), name, flags, Mode::from_raw_mode(0o600)).map_err(|e| {
            match e {
                rustix::io::Errno::LOOP => {
                    "it is a symbolic link; replay files are never written through one".to_owned()
                }
                rustix::io::Errno::NXIO => "it is a FIFO or socket, not a replay file".to_owned(),
                e => e.to_string(),
            }
        })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| e.to_string())?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err("it is not a regular file".into());
    }
    if st.st_nlink > 1 {
        return Err("it has other hard links; a replay file must be the folder's own".into());
    }
    if st.st_uid != rustix::process::geteuid().as_raw() {
        return Err("it belongs to another user".into());
    }
    // Clear O_NONBLOCK again: appends to a regular file are unaffected, but be explicit.
    rustix::fs::fcntl_setfl(&fd, OFlags::APPEND).map_err(|e| e.to_string())?;
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{ReplayDir, ReplayOutput};

    fn folder(dir: &ReplayDir) -> &MountDir {
        match dir {
            ReplayDir::Folder(d) => d,
            ReplayDir::Stream { .. } => unreachable!("a folder"),
        }
    }

    #[test]
    fn a_batch_waits_for_its_end_and_a_file_closed_to_make_room_writes_its_lines_first() {
        let tmp = tempfile::tempdir().unwrap();
        let one = ReplayDir::create(&tmp.path().join("one"), ReplayOutput::Files).unwrap();
        let two = ReplayDir::create(&tmp.path().join("two"), ReplayOutput::Files).unwrap();
        let errors = AtomicU64::new(0);
        let mut folders = [scan(folder(&one)).unwrap(), scan(folder(&two)).unwrap()];
        let on_disk = |dir: &ReplayDir, name: &str| {
            std::fs::read(dir.path().unwrap().join(name)).unwrap_or_default()
        };
        let mut opened = Vec::new();
        for (i, dir, name, line) in [
            (0, &one, "a.jsonl", "1\n"),
            (0, &one, "a.jsonl", "2\n"),
            (1, &two, "b.jsonl", "3\n"),
        ] {
            let f = &mut folders[i];
            opened.push(
                f.append(folder(dir), name, line.as_bytes(), &errors)
                    .unwrap(),
            );
        }
        assert_eq!(opened, [true, false, true], "a file opens once");
        // Two files open, each holding its batch: nothing written yet.
        assert_eq!(
            (on_disk(&one, "a.jsonl"), on_disk(&two, "b.jsonl")),
            (vec![], vec![])
        );
        // A third file, in the second folder, makes three; the least recently written of all
        // folders (`a`, in the first) closes, and writes its lines first.
        assert!(
            folders[1]
                .append(folder(&two), "c.jsonl", b"4\n", &errors)
                .unwrap()
        );
        assert!(close_oldest(folders.iter_mut(), &errors));
        assert_eq!(on_disk(&one, "a.jsonl"), b"1\n2\n");
        assert!(folders[0].open.is_empty());
        assert_eq!(folders[1].open.len(), 2, "the newer files stay open");
        for f in folders[1].open.values_mut() {
            assert!(f.write_pending().is_ok());
        }
        assert_eq!(
            (on_disk(&two, "b.jsonl"), on_disk(&two, "c.jsonl")),
            (b"3\n".to_vec(), b"4\n".to_vec())
        );
        assert_eq!(errors.load(Ordering::Relaxed), 0);
        // Nothing open anywhere: nothing to close.
        folders[1].open.clear();
        assert!(!close_oldest(folders.iter_mut(), &errors));
    }

    #[test]
    fn a_batch_that_cannot_be_written_is_counted_line_by_line_and_emptied() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("read-only.jsonl");
        std::fs::write(&path, b"").unwrap();
        // Opened for reading only: every write fails (EBADF), as a full or broken disk would.
        let mut f = OpenFile {
            file: File::open(&path).unwrap(),
            last: Instant::now(),
            pending: b"1\n2\n3\n".to_vec(),
            pending_lines: 3,
        };
        let e = f
            .write_pending()
            .expect_err("a write on a read-only file fails");
        assert_eq!(e.lines, 3);
        assert!(!e.error.is_empty());
        assert!(f.pending.is_empty() && f.pending_lines == 0);
        assert!(f.write_pending().is_ok(), "an empty batch writes nothing");
    }

    #[test]
    fn a_batch_that_reaches_its_byte_bound_is_written_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let errors = AtomicU64::new(0);
        let mut f = scan(folder(&dir)).unwrap();
        let key = dir.path().unwrap().join("a.jsonl");
        let mut line = vec![b'x'; 1023];
        line.push(b'\n');
        let lines = PENDING_MAX_BYTES / line.len();
        for _ in 0..lines - 1 {
            f.append(folder(&dir), "a.jsonl", &line, &errors).unwrap();
        }
        let on_disk = || std::fs::read(&key).unwrap_or_default().len();
        assert_eq!(
            on_disk(),
            0,
            "below the bound the lines wait for the batch's end"
        );
        f.append(folder(&dir), "a.jsonl", &line, &errors).unwrap();
        assert_eq!(
            on_disk(),
            lines * line.len(),
            "at the bound they are written at once"
        );
        assert!(f.open["a.jsonl"].pending.is_empty());
        assert_eq!(errors.load(Ordering::Relaxed), 0);
    }
}
