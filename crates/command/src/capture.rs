//! Capped capture of one output pipe: keep the first bytes, drain and discard the rest.

use std::io::ErrorKind;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Size of one read from a pipe (the Linux pipe buffer is 64 KiB; 8 KiB keeps the future small).
const CHUNK: usize = 8 * 1024;

/// What was kept of one stream.
#[derive(Debug)]
pub(crate) struct Capture {
    cap: usize,
    kept: Vec<u8>,
    truncated: bool,
}

impl Capture {
    pub(crate) fn new(cap: usize) -> Capture {
        Capture {
            cap,
            kept: Vec::new(),
            truncated: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The text (lossy UTF-8) and whether it was cut at the cap.
    pub(crate) fn finish(mut self) -> (String, bool) {
        if self.truncated {
            drop_partial_char(&mut self.kept);
        }
        (
            String::from_utf8_lossy(&self.kept).into_owned(),
            self.truncated,
        )
    }
}

/// Reads `pipe` into `capture` until end of file, then closes it (sets it to `None`).
///
/// Cancel-safe: dropped mid-way (at the deadline), nothing read is lost, and calling it again
/// continues where it stopped. A read error ends the stream like end of file: the hook's output
/// so far is still worth reporting.
pub(crate) async fn drain<R: AsyncRead + Unpin>(pipe: &mut Option<R>, capture: &mut Capture) {
    let Some(reader) = pipe else { return };
    let mut chunk = [0u8; CHUNK];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => capture.push(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::debug!(error = %e, "reading hook output failed; treating as end of stream");
                break;
            }
        }
    }
    *pipe = None;
}

/// Drops a UTF-8 sequence the cap cut short, so the kept text does not end in U+FFFD.
fn drop_partial_char(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    // A UTF-8 sequence is at most 4 bytes: its lead byte is within the last 3 if it is cut.
    for back in 1..=len.min(3) {
        let byte = bytes[len - back];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: the lead is further back
        }
        let needed = match byte {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        if needed > back {
            bytes.truncate(len - back);
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_flags_the_cut() {
        let mut c = Capture::new(5);
        c.push(b"abc");
        c.push(b"defgh");
        c.push(b"ij");
        assert_eq!(c.finish(), ("abcde".to_owned(), true));
        let mut c = Capture::new(5);
        c.push(b"abcde");
        assert_eq!(c.finish(), ("abcde".to_owned(), false));
    }

    #[test]
    fn a_zero_cap_keeps_nothing() {
        let mut c = Capture::new(0);
        c.push(b"x");
        assert_eq!(c.finish(), (String::new(), true));
    }

    #[test]
    fn a_cut_character_is_dropped_whole() {
        for cap in 1..=7 {
            let mut c = Capture::new(cap);
            c.push("a€é".as_bytes()); // 1 + 3 + 2 bytes
            let (text, truncated) = c.finish();
            let expected = match cap {
                1..=3 => "a",
                4 | 5 => "a€",
                _ => "a€é",
            };
            assert_eq!(text, expected, "cap {cap}");
            assert_eq!(truncated, cap < 6);
        }
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let mut c = Capture::new(10);
        c.push(b"a\xffb");
        assert_eq!(c.finish().0, "a\u{fffd}b");
    }

    #[tokio::test]
    async fn drain_reads_to_the_end_and_closes() {
        let data = vec![b'x'; 100_000];
        let mut pipe = Some(&data[..]);
        let mut c = Capture::new(10);
        drain(&mut pipe, &mut c).await;
        assert!(pipe.is_none());
        assert_eq!(c.finish(), ("x".repeat(10), true));
    }
}
