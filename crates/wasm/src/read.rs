//! Reading a component file without trusting it: a regular file only (a FIFO would block the
//! read forever, a device would never end), at most `max_bytes` (a 20 GB sparse file would
//! abort the host on allocation), checked on the open descriptor so what is checked is what is
//! read. Paths are opened with `O_NONBLOCK`, so even the `open` of a FIFO returns at once.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::WasmError;

/// Reads a whole component from `file` (already opened by the caller, e.g. beneath a plugin
/// folder): refuses anything but a regular file, and any file larger than `max_bytes`, without
/// reading it. Reads at most `max_bytes + 1` bytes, so a file that grows after the check is
/// refused too. `origin` names the file in errors.
pub fn read_component(file: File, origin: &str, max_bytes: u64) -> Result<Vec<u8>, WasmError> {
    let read_err = |source| WasmError::Read {
        path: origin.into(),
        source,
    };
    let meta = file.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(WasmError::NotAFile {
            origin: origin.to_owned(),
            kind: file_kind(&meta.file_type()),
        });
    }
    let too_large = |size: u64| WasmError::TooLarge {
        origin: origin.to_owned(),
        size,
        max_bytes,
    };
    if meta.len() > max_bytes {
        return Err(too_large(meta.len()));
    }
    // The size is only a hint for the allocation: the file may change between fstat and read.
    let hint = usize::try_from(meta.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(hint);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Opens `path` for reading without blocking (a FIFO's open would otherwise wait for a writer)
/// and reads it with [`read_component`].
pub(crate) fn read_path(path: &Path, max_bytes: u64) -> Result<Vec<u8>, WasmError> {
    let file = open_nonblocking(path).map_err(|source| WasmError::Read {
        path: path.to_owned(),
        source,
    })?;
    read_component(file, &path.display().to_string(), max_bytes)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// What a non-regular file is, for messages.
fn file_kind(ty: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ty.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ty.is_socket() {
            return "a socket";
        }
        if ty.is_char_device() || ty.is_block_device() {
            return "a device file";
        }
    }
    if ty.is_dir() {
        "a folder"
    } else if ty.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}
