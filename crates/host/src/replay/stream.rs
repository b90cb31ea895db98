//! Replay as a stream of JSON lines (`[replay] sink = "stdout"` in `hookbox serve`): the same
//! redacted records as the per-session files, one a line, each naming the host it came from,
//! written to standard output for the cluster's log pipeline — replay that outlives the pod.
//!
//! A log pipeline that stops reading must never stop the service: dispatches hand their records
//! to the writer thread through the sink's bounded queue and never wait (a full queue drops the
//! record and counts it in `replay_dropped`), and the writer itself never waits on the stream
//! for longer than [`ReplayStream`]'s `stall` bound: it writes only when the stream has room
//! (`poll`), at most [`CHUNK`] bytes at a time, so one `write` never blocks; past the bound the
//! lines it holds are dropped and counted. A line already begun is always finished first, so
//! the stream holds only whole lines whatever is dropped.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Where a runtime's replay records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplayOutput {
    /// One file per session beneath each host's state folder (`replay/<session>.jsonl`), within
    /// the folder's [`ReplayQuota`](super::ReplayQuota). The default.
    #[default]
    Files,
    /// JSON lines on this process's standard output, one record a line with a `host` field
    /// (the name of the host's state folder: a tenant's id in `hookbox serve`). No replay file
    /// is written.
    Stdout,
}

/// Most bytes given to one `write` on the stream: `PIPE_BUF`, which a pipe that `poll` says is
/// writable takes whole without blocking (and writes atomically).
pub(super) const CHUNK: usize = 4096;

/// Most bytes of lines the writer holds for the stream before it writes them, batch or not.
const PENDING_MAX_BYTES: usize = 64 << 10;

/// One line of the stream: a replay record ([`ReplayRecord`](super::record::ReplayRecord) or the
/// writer's [`LineRecord`](super::record::LineRecord)) with the host it belongs to.
#[derive(Serialize)]
struct StreamLine<'a, R> {
    host: &'a str,
    #[serde(flatten)]
    record: &'a R,
}

/// `record` as a line of the stream (its host beside its fields), written at the end of `out`;
/// the caller ends the line.
pub(super) fn stream_line_into<R: Serialize>(
    host: &str,
    record: &R,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    serde_json::to_writer(out, &StreamLine { host, record })
}

/// The stream the writer thread writes to (a duplicate of standard output in `hookbox serve`),
/// with the lines of the current batch.
pub(crate) struct ReplayStream {
    fd: OwnedFd,
    /// Longest the writer waits for the stream to take bytes before it drops what it holds.
    stall: Duration,
    /// Whole lines of this batch, not yet begun.
    pending: Vec<u8>,
    /// The rest of a line whose beginning is on the stream already: written before anything
    /// else, never dropped, so the stream holds whole lines only.
    owed: Vec<u8>,
}

impl ReplayStream {
    pub(crate) fn new(fd: OwnedFd, stall: Duration) -> ReplayStream {
        ReplayStream {
            fd,
            stall,
            pending: Vec::new(),
            owed: Vec::new(),
        }
    }

    /// Adds a line (newline included) to the batch, writing the batch at once when it reaches
    /// its byte bound.
    pub(super) fn push(&mut self, line: &[u8], dropped: &AtomicU64, errors: &AtomicU64) {
        self.pending.extend_from_slice(line);
        if self.pending.len() >= PENDING_MAX_BYTES {
            self.write_pending(dropped, errors);
        }
    }

    /// Writes the batch, waiting at most `stall` for the stream to take each chunk. Lines not
    /// begun when the stream stalls (or fails) are dropped and counted; a line begun is finished
    /// first at the next write.
    pub(super) fn write_pending(&mut self, dropped: &AtomicU64, errors: &AtomicU64) {
        if self.pending.is_empty() && self.owed.is_empty() {
            return;
        }
        let deadline = Instant::now() + self.stall;
        if let Err(e) = self.write_owed(deadline) {
            let lines = self.pending.iter().filter(|&&b| b == b'\n').count() as u64;
            self.pending.clear();
            count(e, lines, dropped, errors);
            return;
        }
        let mut at = 0;
        while at < self.pending.len() {
            let end = (at + CHUNK).min(self.pending.len());
            match self.write_chunk(&self.pending[at..end], deadline) {
                Ok(n) => at += n,
                Err(e) => {
                    // What is left of the line begun is owed; the lines after it are dropped.
                    let line_end = self.pending[at..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(self.pending.len(), |p| at + p + 1);
                    let begun = at > 0 && self.pending[at - 1] != b'\n';
                    if begun {
                        self.owed.extend_from_slice(&self.pending[at..line_end]);
                    }
                    let rest = &self.pending[if begun { line_end } else { at }..];
                    let lines = rest.iter().filter(|&&b| b == b'\n').count() as u64;
                    self.pending.clear();
                    count(e, lines, dropped, errors);
                    return;
                }
            }
        }
        self.pending.clear();
    }

    /// Finishes the line begun at an earlier write.
    fn write_owed(&mut self, deadline: Instant) -> Result<(), Stalled> {
        while !self.owed.is_empty() {
            let end = self.owed.len().min(CHUNK);
            let n = self.write_chunk(&self.owed[..end], deadline)?;
            self.owed.drain(..n);
        }
        Ok(())
    }

    /// Writes some of `chunk` (at most [`CHUNK`] bytes) once the stream has room, by `deadline`.
    fn write_chunk(&self, chunk: &[u8], deadline: Instant) -> Result<usize, Stalled> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = Timespec::try_from(left).unwrap_or(Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            });
            let mut fds = [PollFd::new(&self.fd, PollFlags::OUT)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => return Err(Stalled::Timeout),
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(Stalled::Error(e.to_string())),
            }
            let revents = fds[0].revents();
            if revents.intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL) {
                return Err(Stalled::Error(format!(
                    "the stream is closed ({revents:?})"
                )));
            }
            match rustix::io::write(self.fd.as_fd(), chunk) {
                Ok(n) => return Ok(n),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => continue,
                Err(e) => return Err(Stalled::Error(e.to_string())),
            }
        }
    }
}

/// Why the stream took no more bytes.
enum Stalled {
    /// It had no room for `stall`: its reader is slow or gone.
    Timeout,
    /// It failed (closed, an I/O error).
    Error(String),
}

/// Counts the lines a stalled or failed write lost: dropped for a stall, errors for a failure.
fn count(e: Stalled, lines: u64, dropped: &AtomicU64, errors: &AtomicU64) {
    match e {
        Stalled::Timeout => {
            dropped.fetch_add(lines, Ordering::Relaxed);
            tracing::warn!(
                lines,
                "replay stream not read for the stall bound: records dropped"
            );
        }
        Stalled::Error(error) => {
            errors.fetch_add(lines, Ordering::Relaxed);
            tracing::warn!(lines, %error, "replay records not written to the stream");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn counters() -> (AtomicU64, AtomicU64) {
        (AtomicU64::new(0), AtomicU64::new(0))
    }

    #[test]
    fn a_stream_nobody_reads_drops_whole_lines_within_the_stall_and_finishes_a_begun_line() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut s = ReplayStream::new(writer.into(), Duration::from_millis(50));
        let (dropped, errors) = counters();
        // Lines of 1000 bytes, more than a pipe (64 KiB) holds.
        let mut line = vec![b'x'; 999];
        line.push(b'\n');
        for _ in 0..100 {
            s.push(&line, &dropped, &errors);
        }
        s.write_pending(&dropped, &errors);
        let lost = dropped.load(Ordering::Relaxed);
        assert!(lost > 0 && lost < 100, "{lost} dropped");
        assert_eq!(errors.load(Ordering::Relaxed), 0);
        // The reader comes back: the begun line is finished before the next one.
        s.push(b"{\"after\":1}\n", &dropped, &errors);
        let reading = std::thread::spawn(move || {
            let mut all = Vec::new();
            reader.read_to_end(&mut all).unwrap();
            all
        });
        s.write_pending(&dropped, &errors);
        drop(s);
        let all = reading.join().unwrap();
        let text = String::from_utf8(all).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len() as u64, 100 - lost + 1, "whole lines only");
        assert!(lines[..lines.len() - 1].iter().all(|l| l.len() == 999));
        assert_eq!(lines.last(), Some(&"{\"after\":1}"));
    }

    #[test]
    fn a_closed_stream_counts_its_lines_as_errors() {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut s = ReplayStream::new(writer.into(), Duration::from_secs(5));
        let (dropped, errors) = counters();
        s.push(b"{}\n", &dropped, &errors);
        s.push(b"{}\n", &dropped, &errors);
        s.write_pending(&dropped, &errors);
        assert_eq!(
            (
                dropped.load(Ordering::Relaxed),
                errors.load(Ordering::Relaxed)
            ),
            (0, 2)
        );
    }
}
