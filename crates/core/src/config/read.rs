//! Reading hook files safely: bounded in size, regular files only, UTF-8 checked with a located
//! error, JSON syntax errors located in characters. Plugin contents are opened beneath the plugin
//! folder through `cap_std::fs::Dir`, so no path written in a manifest can reach outside it.
//!
//! A file is opened first — without blocking (`O_NONBLOCK`, and `O_NOCTTY`) — and it is the
//! *opened* file's metadata that is checked, never a `stat` of the path before opening: a FIFO
//! swapped in between would otherwise block the loader in `open` until a writer came.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde_json::Value;

use super::span::Locator;

/// Why a hook file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Nothing at that path.
    #[error("no such file")]
    NotFound,
    /// A directory, FIFO, device…: reading it could block or mean nothing.
    #[error("not a regular file ({kind})")]
    NotAFile {
        /// What it is instead: `a directory`, `a FIFO`, `a character device`, …
        kind: &'static str,
    },
    /// The path resolves outside the plugin folder (through `..`, an absolute path or a symlink).
    #[error("path leaves the plugin folder")]
    Escapes,
    /// Larger than [`LoadOptions::max_file_bytes`](super::LoadOptions::max_file_bytes).
    #[error("file is {size} bytes, over the limit of {max} bytes")]
    TooLarge {
        /// Its size (or the bytes read before stopping, if it grew while being read).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Not UTF-8.
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// Its 1-based line.
        line: u32,
        /// Its 1-based column, in characters.
        column: u32,
    },
    /// Any other I/O failure.
    #[error("cannot read: {0}")]
    Io(#[source] io::Error),
}

impl ReadError {
    /// Line and column, when the error is about a place in the file.
    pub fn location(&self) -> Option<(u32, u32)> {
        match self {
            ReadError::InvalidUtf8 { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }

    fn from_io(e: io::Error) -> ReadError {
        match e.kind() {
            io::ErrorKind::NotFound => ReadError::NotFound,
            // cap-std reports an escape attempt (`..`, absolute path, symlink out) this way.
            io::ErrorKind::PermissionDenied
                if e.to_string().contains("outside of the filesystem") =>
            {
                ReadError::Escapes
            }
            _ => ReadError::Io(e),
        }
    }
}

/// Reads the regular file `rel` beneath the folder `root`, as hook files are read: `rel` may
/// not leave `root` (through `..`, an absolute path or a symlink), the file is opened without
/// blocking and refused unless the opened file is a regular file of at most `max_bytes` bytes,
/// and it must be UTF-8. For host files that a repository controls, such as
/// `.hookbox/settings.json`: a symlink to `/dev/zero` or a FIFO is refused, never read or
/// waited on.
pub fn read_file_beneath(root: &Path, rel: &Path, max_bytes: u64) -> Result<String, ReadError> {
    let dir =
        Dir::open_ambient_dir(root, cap_std::ambient_authority()).map_err(ReadError::from_io)?;
    read_in_dir(&dir, rel, max_bytes)
}

/// Reads a file the user named directly (a bare hooks or settings file, a server's
/// configuration) as hook files are read: opened without blocking, refused unless the opened
/// file is a regular file of at most `max` bytes, and UTF-8.
pub fn read_ambient(path: &Path, max: u64) -> Result<String, ReadError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, nonblocking_flags());
    let file = opts.open(path).map_err(ReadError::from_io)?;
    check_opened(&file, max)?;
    read_bounded(file, max)
}

/// Reads `rel` beneath a plugin folder.
pub(crate) fn read_in_dir(dir: &Dir, rel: &Path, max: u64) -> Result<String, ReadError> {
    let file = open_in_dir(dir, rel)?;
    check_opened(&file, max)?;
    read_bounded(file, max)
}

/// Opens `rel` beneath `dir` for reading, without blocking whatever it turns out to be.
fn open_in_dir(dir: &Dir, rel: &Path) -> Result<std::fs::File, ReadError> {
    let mut opts = cap_std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut opts, nonblocking_flags());
    dir.open_with(rel, &opts)
        .map(cap_std::fs::File::into_std)
        .map_err(ReadError::from_io)
}

/// `O_NONBLOCK | O_NOCTTY`: opening a FIFO returns at once instead of waiting for a writer,
/// and opening a terminal never makes it ours. A regular file reads the same either way.
#[cfg(unix)]
fn nonblocking_flags() -> i32 {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    // The flags are small positive constants (0o4000 | 0o400 on Linux).
    i32::try_from(flags.bits()).unwrap_or(0)
}

/// Whether `rel` exists beneath the plugin folder as a regular file.
pub(crate) fn is_file_in_dir(dir: &Dir, rel: &Path) -> bool {
    dir.metadata(rel).is_ok_and(|m| m.is_file())
}

/// Checks the opened file: a regular file, at most `max` bytes by its metadata.
fn check_opened(file: &std::fs::File, max: u64) -> Result<(), ReadError> {
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            kind: kind_of(meta.file_type()),
        });
    }
    // Refuse before reading: a 100 MB file is never pulled into memory.
    if meta.len() > max {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            max,
        });
    }
    Ok(())
}

/// What a file that is not a regular file is, for messages.
fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

fn read_bounded(file: std::fs::File, max: u64) -> Result<String, ReadError> {
    // The metadata may lie (procfs, a file growing meanwhile): bound the read itself too.
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > max {
        return Err(ReadError::TooLarge { size: read, max });
    }
    decode_utf8(bytes)
}

/// Bytes to text, locating the first invalid byte.
pub(crate) fn decode_utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..offset]).unwrap_or("");
        let (line, column) = Locator::new(valid).line_col(offset);
        ReadError::InvalidUtf8 {
            offset,
            line,
            column,
        }
    })
}

/// A JSON syntax error, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) message: String,
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) too_deep: bool,
}

/// Parses JSON text. serde_json's recursion limit (128) turns absurd nesting into an error
/// instead of a stack overflow; its column counts bytes, which is converted to characters.
pub(crate) fn parse_json(text: &str) -> Result<Value, SyntaxError> {
    serde_json::from_str::<Value>(text).map_err(|e| {
        let loc = Locator::new(text);
        let (line, column) = if e.line() == 0 {
            (1, 1)
        } else {
            loc.line_col(loc.offset_of_line_byte_col(e.line(), e.column().max(1)))
        };
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
        let too_deep = message.contains("recursion limit");
        SyntaxError {
            message,
            line,
            column,
            too_deep,
        }
    })
}

/// A path as shown in messages: `root` joined with `rel`, without a redundant `./`.
pub(crate) fn display_path(root: &Path, rel: &Path) -> PathBuf {
    if root.as_os_str().is_empty() || root == Path::new(".") {
        rel.to_path_buf()
    } else {
        root.join(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_located() {
        let mut bytes = b"{\n  \"a\": \"\xc3\xa9".to_vec();
        bytes.extend_from_slice(b"\xff\"}");
        match decode_utf8(bytes) {
            Err(ReadError::InvalidUtf8 {
                offset,
                line,
                column,
            }) => {
                // `  "a": "é` is 9 characters: the bad byte is the 10th.
                assert_eq!((offset, line, column), (12, 2, 10));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn syntax_errors_are_located_in_characters() {
        let e = parse_json("{\n  \"é\": [1,]\n}").unwrap_err();
        // serde_json points at the `]` after the comma: byte column 12, character column 11.
        assert_eq!((e.line, e.column), (2, 11), "{e:?}");
        assert_eq!(e.message, "trailing comma");
        let e = parse_json("").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(10_000);
        let e = parse_json(&text).unwrap_err();
        assert!(e.too_deep, "{e:?}");
        assert_eq!((e.line, e.column), (1, 128));
        let text = "{\"a\":".repeat(10_000);
        assert!(parse_json(&text).unwrap_err().too_deep);
    }

    #[test]
    fn size_is_checked_before_and_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        std::fs::write(&p, vec![b' '; 2048]).unwrap();
        assert!(matches!(
            read_ambient(&p, 1024),
            Err(ReadError::TooLarge {
                size: 2048,
                max: 1024
            })
        ));
        assert!(read_ambient(&p, 4096).is_ok());
        assert!(matches!(
            read_ambient(dir.path(), 4096),
            Err(ReadError::NotAFile {
                kind: "a directory"
            })
        ));
        assert!(matches!(
            read_ambient(&dir.path().join("nope"), 1),
            Err(ReadError::NotFound)
        ));
        let f = std::fs::File::open(&p).unwrap();
        assert!(matches!(
            read_bounded(f, 100),
            Err(ReadError::TooLarge {
                size: 101,
                max: 100
            })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn cap_std_refuses_escapes() {
        let outer = tempfile::tempdir().unwrap();
        std::fs::write(outer.path().join("secret.json"), "{}").unwrap();
        let root = outer.path().join("plugin");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(outer.path().join("secret.json"), root.join("link.json"))
            .unwrap();
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).unwrap();
        for rel in ["link.json", "../secret.json"] {
            let e = read_in_dir(&dir, Path::new(rel), 100).unwrap_err();
            assert!(matches!(e, ReadError::Escapes), "{rel}: {e:?}");
        }
        assert!(!is_file_in_dir(&dir, Path::new("link.json")));
    }

    #[cfg(unix)]
    fn fifo(path: &Path) {
        use rustix::fs::{FileType, Mode, mknodat};
        mknodat(
            rustix::fs::CWD,
            path,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn files_are_opened_without_blocking() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("settings.json"), "{}").unwrap();
        let dir = Dir::open_ambient_dir(root.path(), cap_std::ambient_authority()).unwrap();
        let file = open_in_dir(&dir, Path::new("settings.json")).unwrap();
        let flags = rustix::fs::fcntl_getfl(&file).unwrap();
        assert!(flags.contains(rustix::fs::OFlags::NONBLOCK), "{flags:?}");
        // So a FIFO with no writer opens at once, and the opened file's type refuses it.
        fifo(&root.path().join("pipe"));
        let file = open_in_dir(&dir, Path::new("pipe")).unwrap();
        assert!(matches!(
            check_opened(&file, 100),
            Err(ReadError::NotAFile { kind: "a FIFO" })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn read_file_beneath_refuses_fifos_devices_escapes_and_oversize() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("project");
        std::fs::create_dir_all(root.join(".hookbox")).unwrap();
        std::fs::write(outer.path().join("outside.json"), "{}").unwrap();
        std::fs::write(root.join(".hookbox/ok.json"), "{\"replay\": {}}").unwrap();
        std::fs::write(root.join(".hookbox/big.json"), vec![b' '; 2048]).unwrap();
        fifo(&root.join(".hookbox/settings.json"));
        std::os::unix::fs::symlink("/dev/zero", root.join(".hookbox/zero.json")).unwrap();
        std::os::unix::fs::symlink("../../outside.json", root.join(".hookbox/out.json")).unwrap();
        let read = |rel: &str| read_file_beneath(&root, Path::new(rel), 1024);
        assert_eq!(read(".hookbox/ok.json").unwrap(), "{\"replay\": {}}");
        let e = read(".hookbox/settings.json").unwrap_err();
        assert!(matches!(e, ReadError::NotAFile { kind: "a FIFO" }), "{e:?}");
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        for rel in [
            ".hookbox/zero.json",
            ".hookbox/out.json",
            "../outside.json",
            "/etc/passwd",
        ] {
            assert!(
                matches!(read(rel), Err(ReadError::Escapes)),
                "{rel}: {:?}",
                read(rel)
            );
        }
        assert!(matches!(
            read(".hookbox/big.json"),
            Err(ReadError::TooLarge {
                size: 2048,
                max: 1024
            })
        ));
        assert!(matches!(
            read(".hookbox/none.json"),
            Err(ReadError::NotFound)
        ));
        // A file named directly may be anywhere, but it must still be a regular file.
        let e = read_ambient(&root.join(".hookbox/zero.json"), 1024).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotAFile {
                    kind: "a character device"
                }
            ),
            "{e:?}"
        );
        let e = read_ambient(&root.join(".hookbox/settings.json"), 1024).unwrap_err();
        assert!(matches!(e, ReadError::NotAFile { kind: "a FIFO" }), "{e:?}");
    }
}
