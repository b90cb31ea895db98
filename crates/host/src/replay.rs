//! Replay: an append-only JSONL file per session (`<dir>/<session>.jsonl`), one record per
//! dispatch that ran hooks. Each record is redacted by the secret scanner, hook output is cut to
//! a 500-character preview unless full capture is on, and each record is written with a single
//! `write` of one line on an `O_APPEND` file — so a crash can at worst leave a torn last line,
//! which the reader skips without losing any earlier record.
//!
//! Records are written by one thread per runtime ([`ReplaySink`]) through a bounded queue, off
//! the async workers; files are opened beneath the host's replay folder without following
//! symlinks, created 0600, and closed when idle or when too many are open.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hookbox_wasm::MountDir;

use hookbox_core::HookFired;
use hookbox_core::event::wire::cut_chars;
use hookbox_core::report::HookReport;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::secrets::{redact, redact_json};

/// Characters of hook output kept in a record unless full capture is on (the main source's
/// `PLUGIN_HOOK_OUTPUT_MAX_CHARS`).
pub const OUTPUT_PREVIEW_CHARS: usize = 500;

/// One hook in a replay record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayHook {
    /// Rule position in load order.
    pub rule_index: usize,
    /// Plugin name.
    pub plugin: String,
    /// Command, prompt or component label.
    pub hook_name: String,
    /// `command`, `prompt`, `wasm`.
    pub handler_type: String,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// Exit code, for command-style hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Attachment types it yielded.
    pub attachments: Vec<String>,
    /// Failure class, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Its output: a preview, or whole with full capture; always redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_preview: Option<String>,
    /// True when `output_preview` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_truncated: bool,
    /// Wasm fuel it consumed, when the host meters fuel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_consumed: Option<u64>,
}

/// One dispatch in replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRecord {
    /// Milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The session.
    pub session_id: String,
    /// The event name.
    pub event: String,
    /// `allow`, `block`, `continue`, …
    pub outcome: String,
    /// Rules dispatched.
    pub matched_rule_count: usize,
    /// Wall time of the dispatch in milliseconds.
    pub duration_ms: f64,
    /// Each hook, in rule order.
    pub hooks: Vec<ReplayHook>,
    /// The HookFired record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_fired: Option<Value>,
}

/// What a replay record says about the dispatch as a whole.
#[derive(Debug, Clone, Copy)]
pub struct RecordHead<'a> {
    /// The session.
    pub session_id: &'a str,
    /// The event name.
    pub event: &'a str,
    /// The outcome.
    pub outcome: &'a str,
    /// Rules dispatched.
    pub matched_rule_count: usize,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// The HookFired record.
    pub hook_fired: Option<&'a HookFired>,
}

impl ReplayRecord {
    /// Builds the record of one dispatch, redacted and (unless `full`) previewed.
    pub fn new(head: &RecordHead<'_>, reports: &[HookReport], full: bool) -> ReplayRecord {
        let hooks = reports
            .iter()
            .map(|r| {
                // Redact before cutting: a cut can only shorten a redacted text, never reveal a
                // secret that the scanner would have matched whole.
                let (output_preview, output_truncated) = match r.output.as_deref() {
                    None | Some("") => (None, false),
                    Some(out) => {
                        let clean = redact(out);
                        if full || clean.chars().count() <= OUTPUT_PREVIEW_CHARS {
                            (Some(clean.into_owned()), false)
                        } else {
                            (Some(cut_chars(&clean, OUTPUT_PREVIEW_CHARS)), true)
                        }
                    }
                };
                ReplayHook {
                    rule_index: r.hook.rule_index,
                    plugin: r.hook.plugin.clone(),
                    hook_name: redact(&r.hook.hook_name).into_owned(),
                    handler_type: r.hook.handler_type.as_str().to_owned(),
                    duration_ms: r.duration_ms,
                    exit_code: r.exit_code,
                    attachments: r
                        .attachments()
                        .iter()
                        .map(|a| {
                            serde_json::to_value(a.attachment_type)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default()
                        })
                        .collect(),
                    failure: r
                        .effect
                        .failure
                        .as_ref()
                        .map(|f| f.class.as_str().to_owned()),
                    output_preview,
                    output_truncated,
                    fuel_consumed: r.fuel_consumed,
                }
            })
            .collect();
        let mut hook_fired = head.hook_fired.and_then(|f| serde_json::to_value(f).ok());
        if let Some(v) = &mut hook_fired {
            redact_json(v);
        }
        ReplayRecord {
            ts_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            session_id: head.session_id.to_owned(),
            event: head.event.to_owned(),
            outcome: head.outcome.to_owned(),
            matched_rule_count: head.matched_rule_count,
            duration_ms: head.duration_ms,
            hooks,
            hook_fired,
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

/// A session id made safe as a file name: `../x` cannot leave the replay folder.
pub fn session_file_name(session: &str) -> String {
    let mut name: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if name.is_empty() {
        name.push_str("session");
    }
    format!("{name}.jsonl")
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
    Flush(std::sync::mpsc::SyncSender<()>),
}

/// The runtime's replay writer: one thread, fed through a bounded queue, so a dispatch never
/// waits for the disk (or for a mutex held across a write). A full queue drops the record and
/// counts it. Open files are bounded (least recently used closed first) and idle ones closed.
pub(crate) struct ReplaySink {
    tx: Option<std::sync::mpsc::SyncSender<Message>>,
    dropped: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ReplaySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplaySink").finish_non_exhaustive()
    }
}

impl ReplaySink {
    /// Starts the writer thread.
    pub(crate) fn start(
        queue: usize,
        max_open: usize,
        idle_close: Duration,
    ) -> std::io::Result<ReplaySink> {
        let (tx, rx) = std::sync::mpsc::sync_channel(queue.max(1));
        let errors = Arc::new(AtomicU64::new(0));
        let errs = errors.clone();
        let thread = std::thread::Builder::new()
            .name("hookbox-replay".into())
            .spawn(move || writer_loop(&rx, max_open.max(1), idle_close, &errs))?;
        Ok(ReplaySink {
            tx: Some(tx),
            dropped: Arc::new(AtomicU64::new(0)),
            errors,
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

    /// Blocks until every record queued before this call is written.
    pub(crate) fn flush(&self) {
        let (ack, done) = std::sync::mpsc::sync_channel(1);
        if let Some(tx) = &self.tx
            && tx.send(Message::Flush(ack)).is_ok()
        {
            let _ = done.recv();
        }
    }

    /// Records dropped because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
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
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct OpenFile {
    file: File,
    last: Instant,
}

fn writer_loop(
    rx: &std::sync::mpsc::Receiver<Message>,
    max_open: usize,
    idle_close: Duration,
    errors: &AtomicU64,
) {
    let mut open: HashMap<PathBuf, OpenFile> = HashMap::new();
    let tick = idle_close
        .min(Duration::from_secs(1))
        .max(Duration::from_millis(10));
    loop {
        match rx.recv_timeout(tick) {
            Ok(Message::Record { dir, file, line }) => {
                let key = dir.path().join(&file);
                if let Err(e) = append(&mut open, &key, &dir, &file, &line, max_open) {
                    errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "replay record not written");
                }
            }
            Ok(Message::Flush(ack)) => {
                let _ = ack.send(());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        open.retain(|_, f| now.duration_since(f.last) < idle_close);
    }
}

fn append(
    open: &mut HashMap<PathBuf, OpenFile>,
    key: &Path,
    dir: &MountDir,
    file: &str,
    line: &[u8],
    max_open: usize,
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
        {
            open.remove(&oldest);
        }
        let f = open_record_file(dir, file).map_err(err)?;
        open.insert(
            key.to_owned(),
            OpenFile {
                file: f,
                last: Instant::now(),
            },
        );
    }
    let Some(entry) = open.get_mut(key) else {
        return Err(err("file vanished from the open set".into()));
    };
    entry.last = Instant::now();
    // One write of one line on an O_APPEND file: a crash leaves at most a torn last line.
    entry.file.write_all(line).map_err(|e| err(e.to_string()))
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

/// What reading a replay file found.
#[derive(Debug, Default)]
pub struct ReplayRead {
    /// Every intact record, in order.
    pub records: Vec<ReplayRecord>,
    /// Lines that could not be parsed (a torn last line after a crash), by 1-based number.
    pub skipped_lines: Vec<usize>,
}

/// Reads a replay file, skipping lines that do not parse (a torn write) instead of failing.
pub fn read_replay(path: &Path) -> std::io::Result<ReplayRead> {
    let mut out = ReplayRead::default();
    let reader = BufReader::new(File::open(path)?);
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ReplayRecord>(&line) {
            Ok(r) => out.records.push(r),
            Err(_) => out.skipped_lines.push(i + 1),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::event::{EventName, HandlerType};
    use hookbox_core::output::Effect;
    use hookbox_core::report::HookRef;

    fn head(session_id: &str) -> RecordHead<'_> {
        RecordHead {
            session_id,
            event: "PostToolUse",
            outcome: "allow",
            matched_rule_count: 1,
            duration_ms: 2.0,
            hook_fired: None,
        }
    }

    fn report(output: &str) -> HookReport {
        HookReport {
            hook: HookRef {
                rule_index: 0,
                plugin: "p".into(),
                hook_name: "echo".into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::PostToolUse,
            },
            effect: Effect::default(),
            duration_ms: 1.5,
            exit_code: Some(0),
            output: Some(output.into()),
            fuel_consumed: None,
        }
    }

    #[test]
    fn previews_are_cut_and_redacted_full_capture_only_redacted() {
        let secret = "AKIAIOSFODNN7EXAMPLE";
        let out = format!("{secret} {}", "x".repeat(2000));
        let r = ReplayRecord::new(&head("s"), &[report(&out)], false);
        let p = r.hooks[0].output_preview.as_ref().unwrap();
        assert!(!p.contains(secret) && p.contains("[REDACTED:aws_access_key_id]"));
        assert_eq!(p.chars().count(), OUTPUT_PREVIEW_CHARS);
        assert!(r.hooks[0].output_truncated);
        let r = ReplayRecord::new(&head("s"), &[report(&out)], true);
        let p = r.hooks[0].output_preview.as_ref().unwrap();
        assert!(!p.contains(secret) && p.len() > 2000 && !r.hooks[0].output_truncated);
    }

    fn sink() -> ReplaySink {
        ReplaySink::start(16, 2, Duration::from_secs(30)).unwrap()
    }

    fn record(session: &str) -> ReplayRecord {
        ReplayRecord::new(&head(session), &[report("ok")], false)
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
        let sink = ReplaySink::start(1, 1, Duration::from_secs(30)).unwrap();
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

    #[test]
    fn session_ids_cannot_escape_the_folder() {
        assert_eq!(
            session_file_name("../../etc/passwd"),
            "______etc_passwd.jsonl"
        );
        assert_eq!(session_file_name(""), "session.jsonl");
    }
}
