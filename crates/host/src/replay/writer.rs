//! The replay writer thread: it takes records off the queue, redacts and serialises the raw
//! ones, appends each to its session's file (one batch per file per pause, see [`BATCH_PAUSE`])
//! within its folder's quota ([`folder`](super::folder)), and closes idle files.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hookbox_wasm::MountDir;

use super::folder::{FileUse, Folder, close_oldest, scan};
use super::record::{RawRecord, session_file_name};
use super::sink::{ReplayDir, ReplayError, ReplayQuota};
use super::stream::ReplayStream;

pub(super) enum Message {
    Record {
        dir: ReplayDir,
        file: String,
        line: Vec<u8>,
    },
    /// A record the writer redacts and serialises; `weight` counts against the sink's
    /// `raw_limit` (`RuntimeSettings::replay_queue_bytes`).
    Raw {
        dir: ReplayDir,
        raw: Box<RawRecord>,
        weight: usize,
    },
    /// Answered once every message queued before it is handled.
    Flush(Ack),
}

/// Who waits for a flush: a thread (it blocks on a channel) or a task (it awaits a oneshot).
pub(super) enum Ack {
    Thread(std::sync::mpsc::SyncSender<()>),
    Task(tokio::sync::oneshot::Sender<()>),
}

/// How long the writer pauses after writing what was queued, so that the records of a busy
/// runtime are written in batches: a record queued while the writer works or pauses wakes
/// nobody. Waking the writer for every record cost each dispatch a futex wake and the machine a
/// context switch (measured: the largest part of replay's cost on the dispatch path after
/// redaction). A record waits at most this long (plus the write) before it is on disk; a flush
/// does not wait for it.
pub(super) const BATCH_PAUSE: Duration = Duration::from_millis(5);

/// The writer thread's counters, shared with the [`ReplaySink`].
#[derive(Debug, Default)]
pub(super) struct Counts {
    pub(super) dropped: Arc<AtomicU64>,
    pub(super) errors: Arc<AtomicU64>,
    pub(super) removed: Arc<AtomicU64>,
    pub(super) raw_bytes: Arc<AtomicUsize>,
}

/// The writer thread's state.
pub(super) struct Writer {
    /// The folders written to, by their path's bytes (hashed as bytes, not component by
    /// component as a `Path` is), each with its open files.
    pub(super) folders: HashMap<OsString, Folder>,
    /// Files open over all folders; at most `max_open` once a record is written.
    pub(super) open_files: usize,
    pub(super) max_open: usize,
    pub(super) idle_close: Duration,
    pub(super) quota: ReplayQuota,
    pub(super) counts: Counts,
    /// Where the records of hosts replaying to the stream go (`ReplayOutput::Stdout`).
    pub(super) stream: Option<ReplayStream>,
    /// The line of the record being written, reused from record to record.
    pub(super) line: Vec<u8>,
}

/// Largest line buffer the writer keeps between records (a larger one, grown by one large
/// record, is freed after it).
const LINE_BUFFER_KEPT: usize = 64 << 10;

impl Writer {
    pub(super) fn run(mut self, rx: &std::sync::mpsc::Receiver<Message>) {
        let tick = self
            .idle_close
            .min(Duration::from_secs(1))
            .max(Duration::from_millis(10));
        loop {
            // Blocked here only when the queue was empty: the first record of a burst wakes
            // the thread; the records that follow it while it works or pauses do not.
            match rx.recv_timeout(tick) {
                Ok(msg) => self.handle(msg),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
            }
            loop {
                match rx.try_recv() {
                    Ok(msg) => self.handle(msg),
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        self.write_pending();
                        return;
                    }
                }
            }
            self.write_pending();
            let now = Instant::now();
            let idle = self.idle_close;
            // Their batches were written just above: closing loses nothing.
            self.folders
                .retain(|_, f| now.duration_since(f.last) < idle);
            for f in self.folders.values_mut() {
                f.open.retain(|_, o| now.duration_since(o.last) < idle);
            }
            self.open_files = self.folders.values().map(|f| f.open.len()).sum();
            // Let the next batch gather. A flush or the end of the sink unparks at once.
            std::thread::park_timeout(BATCH_PAUSE);
        }
    }

    fn handle(&mut self, msg: Message) {
        match msg {
            Message::Record { dir, file, line } => self.write(&dir, &file, &line),
            Message::Raw {
                dir,
                mut raw,
                weight,
            } => {
                let file = session_file_name(raw.session_id());
                let record = raw.line_record();
                self.counts.raw_bytes.fetch_sub(weight, Ordering::AcqRel);
                let mut line = std::mem::take(&mut self.line);
                line.clear();
                match dir.line_into(&record, &mut line) {
                    Ok(()) => self.write(&dir, &file, &line),
                    Err(_) => {
                        self.counts.errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                // Kept for the next record unless one unusually large record grew it.
                if line.capacity() <= LINE_BUFFER_KEPT {
                    self.line = line;
                }
            }
            Message::Flush(Ack::Thread(ack)) => {
                self.write_pending();
                let _ = ack.send(());
            }
            Message::Flush(Ack::Task(ack)) => {
                self.write_pending();
                let _ = ack.send(());
            }
        }
    }

    /// Writes every open file's pending lines (one `write` each), counting the lines of a
    /// failed write as errors. Their bytes stay counted in the folder's quota: it errs on the
    /// side of removing old files early, never of going over.
    fn write_pending(&mut self) {
        if let Some(stream) = &mut self.stream {
            stream.write_pending(&self.counts.dropped, &self.counts.errors);
        }
        for (dir, folder) in &mut self.folders {
            for (name, f) in &mut folder.open {
                if let Err(e) = f.write_pending() {
                    self.counts.errors.fetch_add(e.lines, Ordering::Relaxed);
                    tracing::warn!(folder = %dir.display(), file = %name, error = %e.error, "replay records not written");
                }
            }
        }
    }

    /// Appends `line` to `file` in `dir`'s folder, or to the stream, counting and logging a
    /// failure. A line over the byte quota is dropped either way: the stream's lines are held
    /// to the same bound as the files'.
    fn write(&mut self, dir: &ReplayDir, file: &str, line: &[u8]) {
        let len = line.len() as u64;
        if len > self.quota.max_bytes {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                bytes = len,
                max_bytes = self.quota.max_bytes,
                "replay record larger than the byte quota: dropped"
            );
            return;
        }
        let dir = match dir {
            ReplayDir::Folder(dir) => dir,
            ReplayDir::Stream { .. } => {
                if let Some(stream) = &mut self.stream {
                    stream.push(line, &self.counts.dropped, &self.counts.errors);
                } else {
                    self.counts.errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!("replay record for a stream this runtime does not have");
                }
                return;
            }
        };
        if let Err(e) = self.record(dir, file, line) {
            self.counts.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(error = %e, "replay record not written");
        }
    }

    /// Makes room for `line` in `file` of `dir` within the quota, then appends it.
    /// `line` is within the byte quota ([`Writer::write`] dropped a larger one).
    fn record(&mut self, dir: &MountDir, file: &str, line: &[u8]) -> Result<(), ReplayError> {
        let len = line.len() as u64;
        // Borrowed from `dir`: the folder's path is copied only the first time it is seen.
        let key = dir.path().as_os_str();
        if !self.folders.contains_key(key) {
            let folder = scan(dir).map_err(|reason| ReplayError {
                path: dir.path().display().to_string(),
                reason,
            })?;
            self.folders.insert(key.to_owned(), folder);
        }
        let quota = self.quota;
        let Some(folder) = self.folders.get_mut(key) else {
            return Ok(());
        };
        folder.last = Instant::now();
        // Least recently written first, never the file being written to — unless it alone is
        // what stands in the way, and then it goes last (the session starts a fresh file).
        loop {
            let is_new = !folder.files.contains_key(file);
            let too_many = is_new && folder.files.len() >= quota.max_files;
            let too_big = folder.bytes + len > quota.max_bytes;
            if !too_many && !too_big {
                break;
            }
            let victim = folder
                .files
                .iter()
                .filter(|(name, _)| name.as_str() != file)
                .min_by_key(|(_, u)| u.written)
                .map(|(name, _)| name.clone())
                .unwrap_or_else(|| file.to_owned());
            // Its batch goes with it: the file is being removed.
            if folder.open.remove(&victim).is_some() {
                self.open_files = self.open_files.saturating_sub(1);
            }
            let removed =
                rustix::fs::unlinkat(dir.as_fd(), victim.as_str(), rustix::fs::AtFlags::empty());
            if let Some(u) = folder.files.remove(&victim) {
                folder.bytes = folder.bytes.saturating_sub(u.bytes);
            }
            match removed {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {
                    self.counts.removed.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    // Forgotten above all the same, so the loop ends; the bytes it still
                    // holds are the operator's to see in the warning.
                    tracing::warn!(file = %dir.path().join(&victim).display(), error = %e, "cannot remove a replay file over the quota");
                }
            }
        }
        let opened = folder.append(dir, file, line, &self.counts.errors)?;
        folder.clock += 1;
        let clock = folder.clock;
        // Named once, when the file is first written: not copied for every record.
        match folder.files.get_mut(file) {
            Some(used) => {
                used.bytes += len;
                used.written = clock;
            }
            None => {
                folder.files.insert(
                    file.to_owned(),
                    FileUse {
                        bytes: len,
                        written: clock,
                    },
                );
            }
        }
        folder.bytes += len;
        if opened {
            self.open_files += 1;
            // Over the cap by the file just opened: the least recently written one closes.
            if self.open_files > self.max_open
                && close_oldest(self.folders.values_mut(), &self.counts.errors)
            {
                self.open_files -= 1;
            }
        }
        Ok(())
    }
}
