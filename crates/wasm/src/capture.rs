//! Captured guest stdout/stderr: keeps the first N bytes, counts and drops the rest, and never
//! fails a write. wasmtime-wasi's `MemoryOutputPipe` traps the guest on overflow, which would turn
//! a chatty hook into a crash; here a flood is just truncated output.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// Largest write permit handed to the guest at once (the usual WASI chunk).
const PERMIT: usize = 64 << 10;

/// Output a guest wrote, cut at the cap.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Captured {
    /// The kept bytes as text (lossy UTF-8).
    pub text: String,
    /// True when bytes past the cap were dropped.
    pub truncated: bool,
    /// Bytes the guest wrote in total, kept or not.
    pub total_bytes: u64,
}

#[derive(Debug, Default)]
struct Buffer {
    kept: Vec<u8>,
    cap: usize,
    total: u64,
}

/// A size-capped, truncating output pipe shared between the guest's stream and the host.
#[derive(Debug, Clone)]
pub(crate) struct CappedPipe(Arc<Mutex<Buffer>>);

impl CappedPipe {
    /// A pipe keeping at most `cap` bytes.
    pub(crate) fn new(cap: u64) -> CappedPipe {
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        CappedPipe(Arc::new(Mutex::new(Buffer {
            kept: Vec::new(),
            cap,
            total: 0,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Buffer> {
        // A panic while holding this lock cannot leave the buffer inconsistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, bytes: &[u8]) {
        let mut b = self.lock();
        b.total = b.total.saturating_add(bytes.len() as u64);
        let room = b.cap.saturating_sub(b.kept.len());
        let take = room.min(bytes.len());
        b.kept.extend_from_slice(&bytes[..take]);
    }

    /// What was captured so far (the guest may still hold a clone until its store drops).
    pub(crate) fn take(&self) -> Captured {
        let mut b = self.lock();
        let kept = std::mem::take(&mut b.kept);
        Captured {
            truncated: b.total > kept.len() as u64,
            total_bytes: b.total,
            text: match String::from_utf8(kept) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            },
        }
    }

    /// The last `max` bytes kept, as text: where a panic message usually is.
    pub(crate) fn tail(&self, max: usize) -> String {
        let b = self.lock();
        let start = b.kept.len().saturating_sub(max);
        String::from_utf8_lossy(&b.kept[start..]).into_owned()
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
    // Directly, rather than through wasmtime-wasi's AsyncWriteStream adapter, which spawns a
    // background task per stream.
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedPipe {
    async fn ready(&mut self) {}
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(PERMIT)
    }
}

impl AsyncWrite for CappedPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_reports_truncation() {
        let mut p = CappedPipe::new(5);
        p.write(Bytes::from_static(b"hello world")).unwrap();
        p.write(Bytes::from_static(b"!")).unwrap();
        assert_eq!(p.check_write().unwrap(), PERMIT);
        let c = p.take();
        assert_eq!(
            c,
            Captured {
                text: "hello".into(),
                truncated: true,
                total_bytes: 12
            }
        );
    }

    #[test]
    fn under_the_cap_is_not_truncated() {
        let mut p = CappedPipe::new(64);
        p.write(Bytes::from_static(b"ok\n")).unwrap();
        assert_eq!(p.tail(2), "k\n");
        assert_eq!(
            p.take(),
            Captured {
                text: "ok\n".into(),
                truncated: false,
                total_bytes: 3
            }
        );
    }
}
