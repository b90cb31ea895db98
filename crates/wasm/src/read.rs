//! Reading a component file without trusting it, with core's one reader
//! ([`hookbox_core::files`]): a regular file only (a FIFO would block the read forever, a device
//! would never end), at most `max_bytes` (a 20 GB sparse file would abort the host on
//! allocation), checked on the open descriptor so what is checked is what is read. Paths are
//! opened with `O_NONBLOCK`, so even the `open` of a FIFO returns at once. This module only
//! turns the reader's errors into [`WasmError`]s naming `max_component_bytes`.

use std::fs::File;
use std::path::Path;

use hookbox_core::files::{CheckedFile, ReadError, ReadErrorKind, Symlinks, open_path};

use crate::error::WasmError;

/// Reads a whole component from `file` (already opened by the caller without blocking, e.g.
/// beneath a plugin folder): refuses anything but a regular file, and any file larger than
/// `max_bytes`, without reading it. Reads at most `max_bytes + 1` bytes, so a file that grows
/// after the check is refused too. `origin` names the file in errors.
pub fn read_component(file: File, origin: &str, max_bytes: u64) -> Result<Vec<u8>, WasmError> {
    CheckedFile::new(file, Path::new(origin), max_bytes)
        .and_then(CheckedFile::read)
        .map_err(|e| component_error(e, origin))
}

/// Opens `path` for reading without blocking (a FIFO's open would otherwise wait for a writer;
/// a symlink the user named is followed) and reads it with [`read_component`].
pub(crate) fn read_path(path: &Path, max_bytes: u64) -> Result<Vec<u8>, WasmError> {
    let file = open_path(path, Symlinks::Follow).map_err(|e| WasmError::Read {
        path: e.path,
        source: e.kind,
    })?;
    read_component(file, &path.display().to_string(), max_bytes)
}

/// The reader's refusal as a component error: not a file and too large keep their own
/// variants (the limit is `max_component_bytes`), the rest is a read error of the path.
fn component_error(e: ReadError, origin: &str) -> WasmError {
    let origin = origin.to_owned();
    match e.kind {
        ReadErrorKind::NotAFile { kind } => WasmError::NotAFile { origin, kind },
        ReadErrorKind::TooLarge { size, max } => WasmError::TooLarge {
            origin,
            size,
            max_bytes: max,
        },
        source => WasmError::Read {
            path: e.path,
            source,
        },
    }
}
