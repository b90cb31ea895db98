//! The replay writer: one thread per runtime ([`ReplaySink`]) fed through a bounded queue, off
//! the async workers, so a dispatch never waits for the disk — nor redacts or serialises its
//! record: it hands over a raw copy (bounded in bytes) and the writer does that work, in
//! batches that no queued record has to wake. Files are opened beneath the
//! host's replay folder without following symlinks, created 0600, appended with one `write` per
//! line, and closed when idle or when too many are open; each folder is held to its
//! [`ReplayQuota`] by removing the least recently written files.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hookbox_wasm::MountDir;

use super::record::{RawRecord, ReplayRecord, session_file_name};

/// What one host's replay folder may hold. Over it, the least recently written files are
/// removed (see the module documentation for why).
///
/// | field | default |
/// | --- | --- |
/// | [`max_bytes`](Self::max_bytes) | 64 MiB |
/// | [`max_files`](Self::max_files) | 256 (sessions) |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayQuota {
    /// Bytes of replay files the folder may hold. A record that alone is larger is dropped
    /// (and counted as dropped). Default **64 MiB**.
    pub max_bytes: u64,
    /// Replay files the folder may hold: one per session, so this is the number of sessions
    /// kept. Default **256**.
    pub max_files: usize,
}

impl Default for ReplayQuota {
    fn default() -> Self {
        ReplayQuota {
            max_bytes: 64 << 20,
            max_files: 256,
        }
    }
}

/// Why a replay record could not be written (the dispatch itself is never failed by this).
#[derive(Debug, thiserror::Error)]
#[error("cannot write replay file {path}: {reason}")]
pub struct ReplayError {
    /// The file.
    pub path: String,
    /// What went wrong.
    pub reason: String,
}

/// A host's replay folder, held open: records are appended to files beneath it, opened without
/// following symlinks, private to the user (0600), regular files only.
#[derive(Debug, Clone)]
pub(crate) struct ReplayDir {
    pub(crate) dir: MountDir,
}

impl ReplayDir {
    /// Opens (creating, 0700) the folder `path`.
    pub(crate) fn create(path: &Path) -> Result<ReplayDir, ReplayError> {
        let err = |reason: String| ReplayError {
            path: path.display().to_string(),
            reason,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(|e| err(e.to_string()))?;
        let dir = MountDir::open(path).map_err(|e| err(e.to_string()))?;
        Ok(ReplayDir { dir })
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

enum Message {
    Record {
        dir: MountDir,
        file: String,
        line: Vec<u8>,
    },
    /// A record the writer redacts and serialises; `weight` counts against the sink's
    /// `raw_limit` (`RuntimeSettings::replay_queue_bytes`).
    Raw {
        dir: MountDir,
        raw: Box<RawRecord>,
        weight: usize,
    },
    /// Answered once every message queued before it is handled.
    Flush(Ack),
}

/// Who waits for a flush: a thread (it blocks on a channel) or a task (it awaits a oneshot).
enum Ack {
    Thread(std::sync::mpsc::SyncSender<()>),
    Task(tokio::sync::oneshot::Sender<()>),
}

/// How long the writer pauses after writing what was queued, so that the records of a busy
/// runtime are written in batches: a record queued while the writer works or pauses wakes
/// nobody. Waking the writer for every record cost each dispatch a futex wake and the machine a
/// context switch (measured: the largest part of replay's cost on the dispatch path after
/// redaction). A record waits at most this long (plus the write) before it is on disk; a flush
/// does not wait for it.
const BATCH_PAUSE: Duration = Duration::from_millis(5);

/// The runtime's replay writer: one thread, fed through a bounded queue, so a dispatch never
/// waits for the disk (or for a mutex held across a write). A full queue drops the record and
/// counts it. Open files are bounded (least recently used closed first) and idle ones closed.
pub(crate) struct ReplaySink {
    tx: Option<std::sync::mpsc::SyncSender<Message>>,
    /// Weight of the [`Message::Raw`] records queued (the writer subtracts what it takes).
    raw_bytes: Arc<AtomicUsize>,
    /// Most weight that may wait raw (`RuntimeSettings::replay_queue_bytes`).
    raw_limit: usize,
    dropped: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    removed: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ReplaySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplaySink").finish_non_exhaustive()
    }
}

impl ReplaySink {
    /// Starts the writer thread; every host's folder it writes to is held to `quota`. `queue`
    /// records and `raw_limit` bytes of records not yet redacted may wait.
    pub(crate) fn start(
        queue: usize,
        raw_limit: usize,
        max_open: usize,
        idle_close: Duration,
        quota: ReplayQuota,
    ) -> std::io::Result<ReplaySink> {
        let (tx, rx) = std::sync::mpsc::sync_channel(queue.max(1));
        let counts = Counts::default();
        let (dropped, errors, removed, raw_bytes) = (
            counts.dropped.clone(),
            counts.errors.clone(),
            counts.removed.clone(),
            counts.raw_bytes.clone(),
        );
        let writer = Writer {
            open: HashMap::new(),
            folders: HashMap::new(),
            max_open: max_open.max(1),
            idle_close,
            quota,
            counts,
        };
        let thread = std::thread::Builder::new()
            .name("hookbox-replay".into())
            .spawn(move || writer.run(&rx))?;
        Ok(ReplaySink {
            tx: Some(tx),
            raw_bytes,
            raw_limit,
            dropped,
            errors,
            removed,
            thread: Some(thread),
        })
    }

    /// Queues one record for `dir`; never blocks.
    pub(crate) fn send(&self, dir: &ReplayDir, record: &ReplayRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            self.errors.fetch_add(1, Ordering::Relaxed);
            return;
        };
        line.push(b'\n');
        let msg = Message::Record {
            dir: dir.dir.clone(),
            file: session_file_name(&record.session_id),
            line,
        };
        let sent = self.tx.as_ref().map(|tx| tx.try_send(msg));
        if !matches!(sent, Some(Ok(()))) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Queues the record of one dispatch for the writer to redact, serialise and write; never
    /// blocks. Past `raw_limit` bytes of such records waiting (a burst of hooks printing a
    /// lot), it is built here instead, as before the writer took that work: the queue's memory
    /// stays bounded whatever the hooks print.
    pub(crate) fn send_raw(&self, dir: &ReplayDir, raw: RawRecord) {
        let weight = raw.weight();
        let queued = self.raw_bytes.fetch_add(weight, Ordering::AcqRel);
        if queued.saturating_add(weight) > self.raw_limit {
            self.raw_bytes.fetch_sub(weight, Ordering::AcqRel);
            self.send(dir, &raw.into_record());
            return;
        }
        let msg = Message::Raw {
            dir: dir.dir.clone(),
            raw: Box::new(raw),
            weight,
        };
        let sent = self.tx.as_ref().map(|tx| tx.try_send(msg));
        if !matches!(sent, Some(Ok(()))) {
            self.raw_bytes.fetch_sub(weight, Ordering::AcqRel);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Ends the writer's pause at once (a flush must not wait for the next batch).
    fn wake(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// Blocks until every record queued before this call is written.
    ///
    /// # Blocking
    /// Waits for the writer thread (the disk); from async code use [`ReplaySink::flushed`].
    pub(crate) fn flush(&self) {
        let (ack, done) = std::sync::mpsc::sync_channel(1);
        if let Some(tx) = &self.tx
            && tx.send(Message::Flush(Ack::Thread(ack))).is_ok()
        {
            self.wake();
            let _ = done.recv();
        }
    }

    /// Waits, without blocking the thread, until every record queued before this call is
    /// written. The flush request takes a place in the queue at once when there is one;
    /// behind a full queue it is handed over from a blocking-pool thread (the writer is busy
    /// emptying it), never from this one.
    pub(crate) async fn flushed(&self) {
        let Some(tx) = &self.tx else { return };
        let (ack, done) = tokio::sync::oneshot::channel();
        match tx.try_send(Message::Flush(Ack::Task(ack))) {
            Ok(()) => {}
            Err(std::sync::mpsc::TrySendError::Full(msg)) => {
                let tx = tx.clone();
                let sent = tokio::task::spawn_blocking(move || tx.send(msg).is_ok()).await;
                if !matches!(sent, Ok(true)) {
                    return;
                }
            }
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => return,
        }
        self.wake();
        let _ = done.await;
    }

    /// Records dropped because the queue was full, or because one alone was larger than the
    /// folder's byte quota.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Replay files removed to keep a folder within its quota.
    pub(crate) fn files_removed(&self) -> u64 {
        self.removed.load(Ordering::Relaxed)
    }

    /// Records that could not be written (refused file, I/O error).
    pub(crate) fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

impl Drop for ReplaySink {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has written what is queued.
        self.tx = None;
        self.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The writer thread's counters, shared with the [`ReplaySink`].
#[derive(Debug, Default)]
struct Counts {
    dropped: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    removed: Arc<AtomicU64>,
    raw_bytes: Arc<AtomicUsize>,
}

struct OpenFile {
    file: File,
    last: Instant,
    /// Whole lines appended this batch, written with one `write` when the batch ends (a flush,
    /// the writer's pause, the file closed): one syscall per file per batch instead of one per
    /// record (measured in `hookbox serve`: the writer's largest cost after serialising).
    pending: Vec<u8>,
    pending_lines: u64,
}

/// What one replay folder holds, for its quota: learnt from the folder the first time a record
/// goes there (files from earlier runs count), then kept up to date by the writer (the only
/// one writing there), and forgotten when the folder has been idle for `idle_close`.
struct Folder {
    files: HashMap<String, FileUse>,
    bytes: u64,
    /// Write counter: the order in which files were last written.
    clock: u64,
    last: Instant,
}

struct FileUse {
    bytes: u64,
    written: u64,
}

/// The writer thread's state.
struct Writer {
    open: HashMap<PathBuf, OpenFile>,
    folders: HashMap<PathBuf, Folder>,
    max_open: usize,
    idle_close: Duration,
    quota: ReplayQuota,
    counts: Counts,
}

impl Writer {
    fn run(mut self, rx: &std::sync::mpsc::Receiver<Message>) {
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
            self.open.retain(|_, f| now.duration_since(f.last) < idle);
            self.folders
                .retain(|_, f| now.duration_since(f.last) < idle);
            // Let the next batch gather. A flush or the end of the sink unparks at once.
            std::thread::park_timeout(BATCH_PAUSE);
        }
    }

    fn handle(&mut self, msg: Message) {
        match msg {
            Message::Record { dir, file, line } => self.write(&dir, &file, &line),
            Message::Raw { dir, raw, weight } => {
                let file = session_file_name(raw.session_id());
                let record = raw.into_record();
                self.counts.raw_bytes.fetch_sub(weight, Ordering::AcqRel);
                match serde_json::to_vec(&record) {
                    Ok(mut line) => {
                        line.push(b'\n');
                        self.write(&dir, &file, &line);
                    }
                    Err(_) => {
                        self.counts.errors.fetch_add(1, Ordering::Relaxed);
                    }
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
        for (path, f) in &mut self.open {
            if let Err(e) = f.write_pending() {
                self.counts.errors.fetch_add(e.lines, Ordering::Relaxed);
                tracing::warn!(file = %path.display(), error = %e.error, "replay records not written");
            }
        }
    }

    /// Appends `line`, counting and logging a failure.
    fn write(&mut self, dir: &MountDir, file: &str, line: &[u8]) {
        if let Err(e) = self.record(dir, file, line) {
            self.counts.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(error = %e, "replay record not written");
        }
    }

    /// Makes room for `line` in `file` of `dir` within the quota, then appends it.
    fn record(&mut self, dir: &MountDir, file: &str, line: &[u8]) -> Result<(), ReplayError> {
        let len = line.len() as u64;
        if len > self.quota.max_bytes {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                bytes = len,
                max_bytes = self.quota.max_bytes,
                "replay record larger than the folder's quota: dropped"
            );
            return Ok(());
        }
        let key = dir.path().to_owned();
        if !self.folders.contains_key(&key) {
            let folder = scan(dir).map_err(|reason| ReplayError {
                path: key.display().to_string(),
                reason,
            })?;
            self.folders.insert(key.clone(), folder);
        }
        let quota = self.quota;
        let Some(folder) = self.folders.get_mut(&key) else {
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
            let path = key.join(&victim);
            self.open.remove(&path);
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
                    tracing::warn!(file = %path.display(), error = %e, "cannot remove a replay file over the quota");
                }
            }
        }
        append(
            &mut self.open,
            &key.join(file),
            dir,
            file,
            line,
            self.max_open,
            &self.counts.errors,
        )?;
        folder.clock += 1;
        let used = folder.files.entry(file.to_owned()).or_insert(FileUse {
            bytes: 0,
            written: 0,
        });
        used.bytes += len;
        used.written = folder.clock;
        folder.bytes += len;
        Ok(())
    }
}

/// What `dir` holds already: its `*.jsonl` regular files (never following a link), oldest
/// modification first.
fn scan(dir: &MountDir) -> Result<Folder, String> {
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

fn append(
    open: &mut HashMap<PathBuf, OpenFile>,
    key: &Path,
    dir: &MountDir,
    file: &str,
    line: &[u8],
    max_open: usize,
    errors: &AtomicU64,
) -> Result<(), ReplayError> {
    let err = |reason: String| ReplayError {
        path: key.display().to_string(),
        reason,
    };
    if !open.contains_key(key) {
        if open.len() >= max_open
            && let Some(oldest) = open
                .iter()
                .min_by_key(|(_, f)| f.last)
                .map(|(k, _)| k.clone())
            && let Some(mut closed) = open.remove(&oldest)
            && let Err(e) = closed.write_pending()
        {
            // The closed file's lines are lost, not this one: count them and go on.
            errors.fetch_add(e.lines, Ordering::Relaxed);
            tracing::warn!(file = %oldest.display(), error = %e.error, "replay records not written");
        }
        let f = open_record_file(dir, file).map_err(err)?;
        open.insert(
            key.to_owned(),
            OpenFile {
                file: f,
                last: Instant::now(),
                pending: Vec::new(),
                pending_lines: 0,
            },
        );
    }
    let Some(entry) = open.get_mut(key) else {
        return Err(err("file vanished from the open set".into()));
    };
    entry.last = Instant::now();
    entry.pending.extend_from_slice(line);
    entry.pending_lines += 1;
    // A batch never holds more than this in memory: under a steady flood the queue may never
    // run empty, and the lines must reach the disk all the same.
    if entry.pending.len() >= PENDING_MAX_BYTES
        && let Err(e) = entry.write_pending()
    {
        // Counted here, line by line, like a batch that fails at its end.
        errors.fetch_add(e.lines, Ordering::Relaxed);
        tracing::warn!(file = %key.display(), error = %e.error, "replay records not written");
    }
    Ok(())
}

/// Most bytes of lines one open file holds before they are written, batch or not: with at most
/// `max_open` files open, the writer's buffers stay within `max_open` × 64 KiB.
const PENDING_MAX_BYTES: usize = 64 << 10;

/// A batch that could not be written: how many lines it held, and why.
struct PendingError {
    lines: u64,
    error: String,
}

impl OpenFile {
    /// Writes the batch's lines with one write on the O_APPEND file (whole lines only: a crash
    /// leaves at most a torn last line), and empties the batch whatever the outcome.
    fn write_pending(&mut self) -> Result<(), PendingError> {
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
    use crate::replay::read_replay;
    use crate::replay::record::tests::{head, report};

    fn sink() -> ReplaySink {
        ReplaySink::start(
            16,
            16 << 20,
            2,
            Duration::from_secs(30),
            ReplayQuota::default(),
        )
        .unwrap()
    }

    fn record(session: &str) -> ReplayRecord {
        ReplayRecord::new(&head(session), &[report("ok")], false)
    }

    #[test]
    fn a_record_handed_over_raw_is_redacted_previewed_and_written_by_the_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = sink();
        let secret = "AKIAIOSFODNN7EXAMPLE";
        let out = format!("{secret} {}", "x".repeat(2000));
        sink.send_raw(
            &dir,
            RawRecord::new(&head("raw"), vec![report(&out)], false),
        );
        sink.flush();
        let text = std::fs::read_to_string(dir.path().join("raw.jsonl")).unwrap();
        assert!(!text.contains(secret), "{text}");
        let read = read_replay(&dir.path().join("raw.jsonl")).unwrap();
        let hook = &read.records[0].hooks[0];
        let preview = hook.output_preview.as_deref().unwrap();
        assert!(
            preview.starts_with("[REDACTED:aws_access_key_id]"),
            "{preview}"
        );
        assert_eq!(preview.chars().count(), crate::replay::OUTPUT_PREVIEW_CHARS);
        assert!(hook.output_truncated);
        assert_eq!(
            sink.raw_bytes.load(Ordering::Acquire),
            0,
            "the writer took it"
        );
    }

    #[test]
    fn past_the_raw_bytes_bound_the_dispatch_builds_its_record_and_nothing_is_lost() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = sink();
        // As if the queue held the bound already: this record may not wait in it raw.
        sink.raw_bytes.store(sink.raw_limit, Ordering::Release);
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        sink.send_raw(
            &dir,
            RawRecord::new(&head("big"), vec![report(&format!("{secret} big"))], false),
        );
        assert_eq!(
            sink.raw_bytes.load(Ordering::Acquire),
            sink.raw_limit,
            "nothing more was counted as waiting raw"
        );
        sink.flush();
        let read = read_replay(&dir.path().join("big.jsonl")).unwrap();
        assert_eq!(read.records.len(), 1);
        assert_eq!(
            read.records[0].hooks[0].output_preview.as_deref(),
            Some("[REDACTED:github_token] big")
        );
        assert_eq!(sink.dropped(), 0);
    }

    #[test]
    fn torn_last_line_is_skipped_and_earlier_records_survive() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = sink();
        for _ in 0..3 {
            sink.send(&dir, &record("s1"));
        }
        sink.flush();
        let path = dir.path().join(session_file_name("s1"));
        // A crash mid-write: half a record, no newline.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(br#"{"ts_ms":1,"session_id":"s1","ev"#).unwrap();
        let read = read_replay(&path).unwrap();
        assert_eq!(read.records.len(), 3);
        assert_eq!(read.skipped_lines, vec![4]);
    }

    #[test]
    fn files_are_private_and_more_sessions_than_open_files_all_land() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = sink();
        for i in 0..5 {
            sink.send(&dir, &record(&format!("s{i}")));
            sink.send(&dir, &record(&format!("s{i}")));
        }
        sink.flush();
        for i in 0..5 {
            let path = dir.path().join(format!("s{i}.jsonl"));
            assert_eq!(read_replay(&path).unwrap().records.len(), 2, "{i}");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{i}");
        }
        assert_eq!((sink.errors(), sink.dropped()), (0, 0));
    }

    #[test]
    fn a_batch_waits_for_its_end_and_a_file_closed_to_make_room_writes_its_lines_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let errors = AtomicU64::new(0);
        let mut open = HashMap::new();
        let on_disk = |name: &str| std::fs::read(dir.path().join(name)).unwrap_or_default();
        for (name, line) in [("a.jsonl", "1\n"), ("a.jsonl", "2\n"), ("b.jsonl", "3\n")] {
            let key = dir.path().join(name);
            append(&mut open, &key, &dir.dir, name, line.as_bytes(), 2, &errors).unwrap();
        }
        // Two files open, each holding its batch: nothing written yet.
        assert_eq!((on_disk("a.jsonl"), on_disk("b.jsonl")), (vec![], vec![]));
        // A third file closes the least recently used (`a`), which writes its lines first.
        let key = dir.path().join("c.jsonl");
        append(&mut open, &key, &dir.dir, "c.jsonl", b"4\n", 2, &errors).unwrap();
        assert_eq!(on_disk("a.jsonl"), b"1\n2\n");
        assert!(!open.contains_key(&dir.path().join("a.jsonl")));
        for f in open.values_mut() {
            assert!(f.write_pending().is_ok());
        }
        assert_eq!(
            (on_disk("b.jsonl"), on_disk("c.jsonl")),
            (b"3\n".to_vec(), b"4\n".to_vec())
        );
        assert_eq!(errors.load(Ordering::Relaxed), 0);
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
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let errors = AtomicU64::new(0);
        let mut open = HashMap::new();
        let key = dir.path().join("a.jsonl");
        let mut line = vec![b'x'; 1023];
        line.push(b'\n');
        let lines = PENDING_MAX_BYTES / line.len();
        for _ in 0..lines - 1 {
            append(&mut open, &key, &dir.dir, "a.jsonl", &line, 2, &errors).unwrap();
        }
        let on_disk = || std::fs::read(&key).unwrap_or_default().len();
        assert_eq!(
            on_disk(),
            0,
            "below the bound the lines wait for the batch's end"
        );
        append(&mut open, &key, &dir.dir, "a.jsonl", &line, 2, &errors).unwrap();
        assert_eq!(
            on_disk(),
            lines * line.len(),
            "at the bound they are written at once"
        );
        assert!(open[&key].pending.is_empty());
        assert_eq!(errors.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_planted_symlink_fifo_or_hard_link_is_never_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let victim = tmp.path().join("bashrc");
        std::fs::write(&victim, "original\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("link.jsonl")).unwrap();
        std::fs::hard_link(&victim, dir.path().join("hard.jsonl")).unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let sink = sink();
        for s in ["link", "hard", "fifo"] {
            sink.send(&dir, &record(s));
        }
        sink.flush();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original\n");
        assert_eq!(sink.errors(), 3);
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = ReplaySink::start(
            1,
            16 << 20,
            1,
            Duration::from_secs(30),
            ReplayQuota::default(),
        )
        .unwrap();
        for _ in 0..10_000 {
            sink.send(&dir, &record("s"));
        }
        sink.flush();
        let written = read_replay(&dir.path().join("s.jsonl"))
            .unwrap()
            .records
            .len() as u64;
        assert_eq!(written + sink.dropped(), 10_000);
    }

    fn files_in(dir: &ReplayDir) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, e.metadata().unwrap().len())
            })
            .collect();
        v.sort();
        v
    }

    fn quota_sink(max_bytes: u64, max_files: usize) -> ReplaySink {
        let quota = ReplayQuota {
            max_bytes,
            max_files,
        };
        ReplaySink::start(64, 16 << 20, 4, Duration::from_secs(30), quota).unwrap()
    }

    #[test]
    fn a_folder_keeps_at_most_max_files_sessions_the_most_recent() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = quota_sink(u64::MAX, 10);
        for i in 0..300 {
            sink.send(&dir, &record(&format!("s{i:03}")));
            sink.flush();
        }
        let names: Vec<String> = files_in(&dir).into_iter().map(|(n, _)| n).collect();
        let want: Vec<String> = (290..300).map(|i| format!("s{i:03}.jsonl")).collect();
        assert_eq!(names, want);
        assert_eq!(sink.files_removed(), 290);
        assert_eq!((sink.errors(), sink.dropped()), (0, 0));
    }

    #[test]
    fn bytes_stay_within_the_quota_and_recently_written_files_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let line = serde_json::to_vec(&record("a")).unwrap().len() as u64 + 1;
        let sink = quota_sink(line * 6, 100);
        // `a` is written to again and again; `b`…`f` once each.
        for s in ["a", "b", "c", "a", "d", "e", "a", "f"] {
            sink.send(&dir, &record(s));
            sink.flush();
            let total: u64 = files_in(&dir).iter().map(|(_, b)| b).sum();
            assert!(total <= line * 6, "{total} after {s}");
        }
        let names: Vec<String> = files_in(&dir).into_iter().map(|(n, _)| n).collect();
        // The least recently written went first: `b`, then `c` — not `a`, older than both but
        // written since.
        assert_eq!(names, ["a.jsonl", "d.jsonl", "e.jsonl", "f.jsonl"]);
        assert_eq!(
            read_replay(&dir.path().join("a.jsonl"))
                .unwrap()
                .records
                .len(),
            3
        );
        assert_eq!(sink.files_removed(), 2);
    }

    #[test]
    fn one_session_alone_over_the_quota_starts_its_file_afresh() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let line = serde_json::to_vec(&record("s")).unwrap().len() as u64 + 1;
        let sink = quota_sink(line * 3, 100);
        for _ in 0..10 {
            sink.send(&dir, &record("s"));
        }
        sink.flush();
        let files = files_in(&dir);
        assert_eq!(files.len(), 1);
        assert!(files[0].1 <= line * 3);
        // 10 records, 3 per file: the file was started afresh three times, holding the last one.
        assert_eq!(
            read_replay(&dir.path().join("s.jsonl"))
                .unwrap()
                .records
                .len(),
            1
        );
        assert_eq!(sink.files_removed(), 3);
    }

    #[test]
    fn a_record_larger_than_the_quota_is_dropped_and_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let sink = quota_sink(100, 10);
        let big = ReplayRecord::new(&head("s"), &[report(&"x".repeat(400))], false);
        sink.send(&dir, &big);
        sink.flush();
        assert_eq!(sink.dropped(), 1);
        assert!(files_in(&dir).is_empty());
    }

    #[test]
    fn files_from_an_earlier_run_count_oldest_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay")).unwrap();
        let base = std::time::SystemTime::now() - Duration::from_secs(3600);
        // Left by an earlier process: `old` is the oldest by modification time.
        for (name, age) in [("old", 0), ("mid", 1), ("new", 2)] {
            let path = dir.path().join(format!("{name}.jsonl"));
            std::fs::write(&path, b"{}\n").unwrap();
            let f = std::fs::File::options().append(true).open(&path).unwrap();
            f.set_modified(base + Duration::from_secs(age)).unwrap();
        }
        let sink = quota_sink(u64::MAX, 3);
        sink.send(&dir, &record("fresh"));
        sink.flush();
        let names: Vec<String> = files_in(&dir).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["fresh.jsonl", "mid.jsonl", "new.jsonl"]);
    }

    #[test]
    fn session_ids_cannot_escape_the_folder() {
        assert_eq!(
            session_file_name("../../etc/passwd"),
            "______etc_passwd.jsonl"
        );
        assert_eq!(session_file_name(""), "session.jsonl");
    }
}
