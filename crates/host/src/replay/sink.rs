//! The replay writer's handle ([`ReplaySink`]): one thread per runtime fed through a bounded
//! queue, off the async workers, so a dispatch never waits for the disk — nor redacts or
//! serialises its record: it hands over a raw copy (bounded in bytes) and the writer does that
//! work, in batches that no queued record has to wake. The writer thread is
//! [`writer`](super::writer); what it does in one folder (its quota, its open files) is
//! [`folder`](super::folder).

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use hookbox_wasm::MountDir;

use super::record::{RawRecord, ReplayRecord, session_file_name};
use super::stream::{ReplayOutput, ReplayStream, stream_line_into};
use super::writer::{Ack, Counts, Message, Writer};

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

/// Where one host's replay records go: its replay folder, held open — records are appended to
/// files beneath it, opened without following symlinks, private to the user (0600), regular
/// files only — or the runtime's stream ([`ReplayOutput::Stdout`]), each line naming the host.
#[derive(Debug, Clone)]
pub(crate) enum ReplayDir {
    /// Per-session files in this folder.
    Folder(MountDir),
    /// Lines on the runtime's stream, with `host` in each.
    Stream {
        /// The name of the host's state folder (a tenant's id in `hookbox serve`).
        host: Arc<str>,
    },
}

impl ReplayDir {
    /// Where the replay of the host whose replay folder is `path` goes: that folder, opened
    /// (created 0700), for [`ReplayOutput::Files`]; the stream, named after the host's state
    /// folder (`path`'s parent), for [`ReplayOutput::Stdout`] — no folder is created then.
    pub(crate) fn create(path: &Path, output: ReplayOutput) -> Result<ReplayDir, ReplayError> {
        if output == ReplayOutput::Stdout {
            let host = path
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Ok(ReplayDir::Stream { host: host.into() });
        }
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
        Ok(ReplayDir::Folder(dir))
    }

    /// The folder, when records go to files.
    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            ReplayDir::Folder(dir) => Some(dir.path()),
            ReplayDir::Stream { .. } => None,
        }
    }

    /// `record` (a [`ReplayRecord`], or the writer's `LineRecord` of the same bytes) as the line
    /// written for it here, newline included.
    pub(super) fn line<R: serde::Serialize>(&self, record: &R) -> serde_json::Result<Vec<u8>> {
        let mut line = Vec::new();
        self.line_into(record, &mut line)?;
        Ok(line)
    }

    /// [`ReplayDir::line`] written at the end of `out`: the writer thread reuses one buffer
    /// for every record instead of growing a new one from 128 bytes each time.
    pub(super) fn line_into<R: serde::Serialize>(
        &self,
        record: &R,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        match self {
            ReplayDir::Folder(_) => serde_json::to_writer(&mut *out, record)?,
            ReplayDir::Stream { host } => stream_line_into(host, record, out)?,
        }
        out.push(b'\n');
        Ok(())
    }
}

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
    /// records and `raw_limit` bytes of records not yet redacted may wait. With `stream`,
    /// records of hosts whose replay goes to the stream ([`ReplayDir::Stream`]) are written
    /// there; without one they are counted as errors.
    pub(crate) fn start(
        queue: usize,
        raw_limit: usize,
        max_open: usize,
        idle_close: Duration,
        quota: ReplayQuota,
        stream: Option<ReplayStream>,
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
            folders: HashMap::new(),
            open_files: 0,
            line: Vec::new(),
            max_open: max_open.max(1),
            idle_close,
            quota,
            counts,
            stream,
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
        let Ok(line) = dir.line(record) else {
            self.errors.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let msg = Message::Record {
            dir: dir.clone(),
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
            dir: dir.clone(),
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

#[cfg(test)]
mod tests {
    use std::io::Write;

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
            None,
        )
        .unwrap()
    }

    fn record(session: &str) -> ReplayRecord {
        ReplayRecord::new(&head(session), &[report("ok")], false)
    }

    #[test]
    fn a_record_handed_over_raw_is_redacted_previewed_and_written_by_the_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let sink = sink();
        let secret = "AKIAIOSFODNN7EXAMPLE";
        let out = format!("{secret} {}", "x".repeat(2000));
        sink.send_raw(&dir, RawRecord::new(&head("raw"), [&report(&out)], false));
        sink.flush();
        let text = std::fs::read_to_string(dir.path().unwrap().join("raw.jsonl")).unwrap();
        assert!(!text.contains(secret), "{text}");
        let read = read_replay(&dir.path().unwrap().join("raw.jsonl")).unwrap();
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let sink = sink();
        // As if the queue held the bound already: this record may not wait in it raw.
        sink.raw_bytes.store(sink.raw_limit, Ordering::Release);
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        sink.send_raw(
            &dir,
            RawRecord::new(&head("big"), [&report(&format!("{secret} big"))], false),
        );
        assert_eq!(
            sink.raw_bytes.load(Ordering::Acquire),
            sink.raw_limit,
            "nothing more was counted as waiting raw"
        );
        sink.flush();
        let read = read_replay(&dir.path().unwrap().join("big.jsonl")).unwrap();
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let sink = sink();
        for _ in 0..3 {
            sink.send(&dir, &record("s1"));
        }
        sink.flush();
        let path = dir.path().unwrap().join(session_file_name("s1"));
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let sink = sink();
        for i in 0..5 {
            sink.send(&dir, &record(&format!("s{i}")));
            sink.send(&dir, &record(&format!("s{i}")));
        }
        sink.flush();
        for i in 0..5 {
            let path = dir.path().unwrap().join(format!("s{i}.jsonl"));
            assert_eq!(read_replay(&path).unwrap().records.len(), 2, "{i}");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{i}");
        }
        assert_eq!((sink.errors(), sink.dropped()), (0, 0));
    }

    /// Descriptors of this process open on files beneath `root`.
    fn open_beneath(root: &std::path::Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.starts_with(root) && target.extension().is_some())
            .count()
    }

    #[test]
    fn files_open_over_several_folders_stay_within_max_open_and_every_line_lands() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dirs: Vec<ReplayDir> = ["a", "b", "c"]
            .iter()
            .map(|n| ReplayDir::create(&root.join(n), ReplayOutput::Files).unwrap())
            .collect();
        let sink = sink();
        // Sessions of three folders in turn, with max_open = 2: every record but the first
        // two opens a file over the cap and closes the least recently written one.
        for round in 0..3 {
            for (i, dir) in dirs.iter().enumerate() {
                for s in 0..2 {
                    sink.send(dir, &record(&format!("s{i}{s}")));
                }
            }
            sink.flush();
            assert!(
                open_beneath(&root) <= 2,
                "round {round}: {} replay files open",
                open_beneath(&root)
            );
        }
        for (i, dir) in dirs.iter().enumerate() {
            for s in 0..2 {
                let path = dir.path().unwrap().join(format!("s{i}{s}.jsonl"));
                assert_eq!(read_replay(&path).unwrap().records.len(), 3, "{i}/{s}");
            }
        }
        assert_eq!((sink.errors(), sink.dropped()), (0, 0));
    }

    #[test]
    fn a_planted_symlink_fifo_or_hard_link_is_never_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let victim = tmp.path().join("bashrc");
        std::fs::write(&victim, "original\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().unwrap().join("link.jsonl")).unwrap();
        std::fs::hard_link(&victim, dir.path().unwrap().join("hard.jsonl")).unwrap();
        let fifo = dir.path().unwrap().join("fifo.jsonl");
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let sink = ReplaySink::start(
            1,
            16 << 20,
            1,
            Duration::from_secs(30),
            ReplayQuota::default(),
            None,
        )
        .unwrap();
        for _ in 0..10_000 {
            sink.send(&dir, &record("s"));
        }
        sink.flush();
        let written = read_replay(&dir.path().unwrap().join("s.jsonl"))
            .unwrap()
            .records
            .len() as u64;
        assert_eq!(written + sink.dropped(), 10_000);
    }

    fn files_in(dir: &ReplayDir) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = std::fs::read_dir(dir.path().unwrap())
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
        ReplaySink::start(64, 16 << 20, 4, Duration::from_secs(30), quota, None).unwrap()
    }

    #[test]
    fn a_folder_keeps_at_most_max_files_sessions_the_most_recent() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
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
            read_replay(&dir.path().unwrap().join("a.jsonl"))
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
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
            read_replay(&dir.path().unwrap().join("s.jsonl"))
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
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
        let dir = ReplayDir::create(&tmp.path().join("replay"), ReplayOutput::Files).unwrap();
        let base = std::time::SystemTime::now() - Duration::from_secs(3600);
        // Left by an earlier process: `old` is the oldest by modification time.
        for (name, age) in [("old", 0), ("mid", 1), ("new", 2)] {
            let path = dir.path().unwrap().join(format!("{name}.jsonl"));
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
