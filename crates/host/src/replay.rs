//! Replay: an append-only JSONL file per session (`<dir>/<session>.jsonl`), one record per
//! dispatch that ran hooks. Each record is redacted by the secret scanner, hook output is cut to
//! a 500-character preview unless full capture is on, and each record is written with a single
//! `write` of one line on an `O_APPEND` file — so a crash can at worst leave a torn last line,
//! which the reader skips without losing any earlier record.
//!
//! Records are written by one thread per runtime ([`ReplaySink`]) through a bounded queue, off
//! the async workers; files are opened beneath the host's replay folder without following
//! symlinks, created 0600, and closed when idle or when too many are open.
//!
//! Session ids are the client's to choose, so each host's replay folder is held to a
//! [`ReplayQuota`] (bytes and files; one file per session). Over it, the **least recently
//! written files are removed** until the new record fits — replay is a rolling window of the
//! most recent sessions, like rotated logs. Dropping new records instead would leave replay
//! frozen on the oldest sessions for good once a client had filled it (and a hostile client
//! fills it on purpose); removal keeps it useful and bounded, and only ever touches the same
//! host's (tenant's) own files. A record larger than the whole byte quota is dropped and
//! counted. Removals are counted too ([`ReplaySink::files_removed`]).
//!
//! With [`ReplayOutput::Stdout`] the same records, redacted and bounded alike, go to standard
//! output as JSON lines instead, one a line naming its host, for a cluster's log pipeline
//! ([`stream`]); no file is written.
//!
//! [`record`] is the record format (what a line holds, how a session names its file, reading
//! a file back); [`sink`] is the handle a runtime holds, [`writer`] the thread behind it, and
//! [`folder`] one folder's quota and open files.

mod folder;
mod record;
mod sink;
mod stream;
mod writer;

pub(crate) use record::RawRecord;
pub use record::{
    OUTPUT_PREVIEW_CHARS, RecordHead, ReplayHook, ReplayRead, ReplayRecord, read_replay,
    session_file_name,
};
pub(crate) use sink::{ReplayDir, ReplaySink};
pub use sink::{ReplayError, ReplayQuota};
pub use stream::ReplayOutput;
pub(crate) use stream::ReplayStream;
