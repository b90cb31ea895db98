//! Reading hook files: plugin contents are opened beneath the plugin folder through
//! `cap_std::fs::Dir`, so no path written in a manifest can reach outside it; a file the user
//! named directly is opened as named. Either way the checks and the bounded read are the ones of
//! [`crate::files::read`] (open without blocking, fstat the opened file, regular files only,
//! bounded, UTF-8 located). JSON syntax errors are located in characters.
//!
//! Symlinks inside a plugin folder that stay inside it are followed (cap-std resolves them
//! beneath the folder); one that leads out, dangles or loops is refused, and the loader says so
//! ([`entry_in_dir`] tells a refused link from a missing file).

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde_json::Value;

use super::span::Locator;
use crate::files::read::{CheckedFile, ReadErrorKind, Symlinks, open_within_kind};

/// Reads a file the user named directly (a bare hooks or settings file): a symlink they named
/// is followed (a `~/.claude/settings.json` may link into a dotfiles repository).
pub(crate) fn read_ambient(path: &Path, max: u64) -> Result<String, ReadErrorKind> {
    crate::files::read_file(path, max, Symlinks::Follow).map_err(|e| e.kind)
}

/// Reads `rel` beneath a plugin folder.
pub(crate) fn read_in_dir(dir: &Dir, rel: &Path, max: u64) -> Result<String, ReadErrorKind> {
    let file = open_within_kind(dir, rel)?;
    CheckedFile::new(file, rel, max)
        .and_then(CheckedFile::read_text)
        .map_err(|e| e.kind)
}

/// What is at a path beneath a plugin folder, before reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Nothing.
    Absent,
    /// A regular file (possibly through a symlink that stays inside the folder).
    File,
    /// Something the loader will not read: a symlink that leads out of the folder, dangles or
    /// loops, a folder, a FIFO, a device. Reading it gives the reason.
    Refused {
        /// The symlink's target as written, when the entry is a symlink.
        link_target: Option<PathBuf>,
    },
}

/// What is at `rel` beneath the plugin folder.
pub(crate) fn entry_in_dir(dir: &Dir, rel: &Path) -> Entry {
    if dir.metadata(rel).is_ok_and(|m| m.is_file()) {
        return Entry::File;
    }
    match dir.symlink_metadata(rel) {
        Err(_) => Entry::Absent,
        Ok(m) => Entry::Refused {
            link_target: m
                .file_type()
                .is_symlink()
                .then(|| dir.read_link_contents(rel).ok())
                .flatten(),
        },
    }
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

    #[cfg(unix)]
    #[test]
    fn cap_std_refuses_escapes_and_entries_say_why() {
        let outer = tempfile::tempdir().unwrap();
        std::fs::write(outer.path().join("secret.json"), "{}").unwrap();
        let root = outer.path().join("plugin");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("inside.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outer.path().join("secret.json"), root.join("link.json"))
            .unwrap();
        std::os::unix::fs::symlink("inside.json", root.join("alias.json")).unwrap();
        std::os::unix::fs::symlink("gone.json", root.join("dangling.json")).unwrap();
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).unwrap();
        for rel in ["link.json", "../secret.json"] {
            let e = read_in_dir(&dir, Path::new(rel), 100).unwrap_err();
            assert!(matches!(e, ReadErrorKind::Escapes), "{rel}: {e:?}");
        }
        assert_eq!(
            entry_in_dir(&dir, Path::new("link.json")),
            Entry::Refused {
                link_target: Some(outer.path().join("secret.json"))
            }
        );
        assert_eq!(
            entry_in_dir(&dir, Path::new("dangling.json")),
            Entry::Refused {
                link_target: Some(PathBuf::from("gone.json"))
            }
        );
        assert_eq!(entry_in_dir(&dir, Path::new("alias.json")), Entry::File);
        assert_eq!(
            read_in_dir(&dir, Path::new("alias.json"), 100).unwrap(),
            "{}"
        );
        assert_eq!(entry_in_dir(&dir, Path::new("none.json")), Entry::Absent);
        std::fs::create_dir(root.join("folder.json")).unwrap();
        assert_eq!(
            entry_in_dir(&dir, Path::new("folder.json")),
            Entry::Refused { link_target: None }
        );
    }

    #[test]
    fn named_files_are_read_through_the_one_reader() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        std::fs::write(&p, vec![b' '; 2048]).unwrap();
        assert!(matches!(
            read_ambient(&p, 1024),
            Err(ReadErrorKind::TooLarge {
                size: 2048,
                max: 1024
            })
        ));
        assert!(matches!(
            read_ambient(dir.path(), 4096),
            Err(ReadErrorKind::NotAFile {
                kind: "a directory"
            })
        ));
    }
}
