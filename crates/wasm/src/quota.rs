//! The per-event write budget of `rw` mounts: bytes written to files and files (and folders,
//! links) created, shared by every mount of one run. [`FsGuard`](crate::fs_guard) charges it on
//! the `wasi:filesystem` calls that write or create; [`QuotaStream`] charges it on the output
//! streams of files (`write-via-stream`, `append-via-stream`), whose writes bypass those calls.
//!
//! Over the budget the guest gets an error, never a trap: a hook that fills its quota can still
//! answer. Calls answer `insufficient-space` ("No space left on device"); a stream write fails
//! with `last-operation-failed`, whose `filesystem-error-code` is `insufficient-space` too, but
//! wasi-libc (so Rust's and C's `write`) reports any failed stream write as `EIO`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

/// What one run may still write, and what it wrote.
#[derive(Debug)]
pub(crate) struct WriteQuota {
    bytes_left: AtomicU64,
    files_left: AtomicU64,
    bytes_written: AtomicU64,
    files_created: AtomicU64,
}

/// The budget is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverQuota;

/// Takes `n` from `left` if it holds that much, atomically.
fn take(left: &AtomicU64, n: u64) -> Result<(), OverQuota> {
    left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| l.checked_sub(n))
        .map(drop)
        .map_err(|_| OverQuota)
}

impl WriteQuota {
    pub(crate) fn new(bytes: u64, files: u64) -> Arc<WriteQuota> {
        Arc::new(WriteQuota {
            bytes_left: AtomicU64::new(bytes),
            files_left: AtomicU64::new(files),
            bytes_written: AtomicU64::new(0),
            files_created: AtomicU64::new(0),
        })
    }

    /// Charges `n` bytes about to be written; refuses (charging nothing) past the budget.
    pub(crate) fn charge_bytes(&self, n: u64) -> Result<(), OverQuota> {
        take(&self.bytes_left, n)?;
        self.bytes_written.fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    /// Bytes that may still be written.
    pub(crate) fn bytes_left(&self) -> u64 {
        self.bytes_left.load(Ordering::Acquire)
    }

    /// Whether one more file may be created (checked before, charged after a success).
    pub(crate) fn check_file(&self) -> Result<(), OverQuota> {
        if self.files_left.load(Ordering::Acquire) == 0 {
            Err(OverQuota)
        } else {
            Ok(())
        }
    }

    /// Charges one created file (after the create succeeded: a failed create costs nothing).
    pub(crate) fn charge_file(&self) {
        // Saturating: a concurrent charge between check and charge cannot wrap around.
        let _ = take(&self.files_left, 1);
        self.files_created.fetch_add(1, Ordering::Relaxed);
    }

    /// Bytes written so far.
    pub(crate) fn bytes_written(&self) -> u64 {
        self.bytes_written.load(Ordering::Relaxed)
    }

    /// Files created so far.
    pub(crate) fn files_created(&self) -> u64 {
        self.files_created.load(Ordering::Relaxed)
    }
}

/// The error a stream write over the budget fails with: `ENOSPC`, which wasmtime-wasi reports
/// to the guest as `insufficient-space`.
fn over_quota_error() -> StreamError {
    StreamError::LastOperationFailed(wasmtime::Error::from(std::io::Error::from_raw_os_error(
        rustix::io::Errno::NOSPC.raw_os_error(),
    )))
}

/// A file's output stream that charges every byte to the run's [`WriteQuota`].
pub(crate) struct QuotaStream {
    inner: DynOutputStream,
    quota: Arc<WriteQuota>,
}

impl QuotaStream {
    pub(crate) fn wrap(inner: DynOutputStream, quota: Arc<WriteQuota>) -> DynOutputStream {
        Box::new(QuotaStream { inner, quota })
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for QuotaStream {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for QuotaStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.quota
            .charge_bytes(bytes.len() as u64)
            .map_err(|OverQuota| over_quota_error())?;
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    /// The inner permit, never more than the budget left: a guest asks before it writes, and
    /// an exhausted budget is an error here rather than a zero permit it would wait on forever.
    fn check_write(&mut self) -> StreamResult<usize> {
        let left = self.quota.bytes_left();
        if left == 0 {
            return Err(over_quota_error());
        }
        let permit = self.inner.check_write()?;
        Ok(permit.min(usize::try_from(left).unwrap_or(usize::MAX)))
    }

    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        self.quota
            .charge_bytes(nelem as u64)
            .map_err(|OverQuota| over_quota_error())?;
        self.inner.write_zeroes(nelem)
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_charged_and_refused_past_its_end() {
        let q = WriteQuota::new(10, 1);
        q.charge_bytes(6).unwrap();
        assert_eq!(q.charge_bytes(5), Err(OverQuota));
        q.charge_bytes(4).unwrap();
        assert_eq!((q.bytes_left(), q.bytes_written()), (0, 10));
        q.check_file().unwrap();
        q.charge_file();
        assert_eq!(q.check_file(), Err(OverQuota));
        assert_eq!(q.files_created(), 1);
    }
}
