//! The trust report of a loaded rule set (in place or staged): every subject with its hook
//! files hashed as they are now and its rules' records and verdicts — what
//! [`HookHost::trust_report`](crate::HookHost::trust_report) and a tenant's trust record read.

use std::path::{Path, PathBuf};

use hookbox_core::config::DEFAULT_MAX_FILE_BYTES;
use hookbox_core::files::read_file_beneath;
use hookbox_trust::{Digest, FileState, HookFile};

use crate::inner::Loaded;
use crate::trust::{RuleReport, SubjectReport};

/// The hook files of a subject, hashed as they are now (through the loader's bounded reader).
fn hook_files(root: &Path, files: &[PathBuf]) -> Vec<HookFile> {
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    files
        .iter()
        .map(|f| {
            let state = match read_file_beneath(root, f, DEFAULT_MAX_FILE_BYTES) {
                Ok(text) => FileState::Pinned {
                    sha256: Digest::of(text.as_bytes()),
                    size: text.len() as u64,
                },
                Err(e) => FileState::Unreadable {
                    reason: e.to_string(),
                },
            };
            HookFile {
                path: f
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
                state,
            }
        })
        .collect()
}

/// Every subject of a loaded rule set (in place or staged) with its rules' records and
/// verdicts; empty when the set was loaded without recording.
pub(crate) fn subject_reports(loaded: &Loaded) -> Vec<SubjectReport> {
    let t = &loaded.trust;
    let mut out: Vec<SubjectReport> = loaded
        .set
        .plugins()
        .iter()
        .zip(&t.subjects)
        .map(|(p, s)| SubjectReport {
            subject: s.name.clone(),
            plugin: p.name.clone(),
            root: p.root.clone(),
            bare: s.bare,
            approval: s.approval.clone(),
            approval_error: s.error.clone(),
            hook_files: hook_files(&p.root, &p.files),
            rules: Vec::new(),
        })
        .collect();
    for (pos, (rule, check)) in loaded.set.rules().iter().zip(&t.rules).enumerate() {
        let Some(check) = check else { continue };
        if let Some(s) = out.get_mut(rule.plugin) {
            s.rules.push(RuleReport {
                rule_index: pos,
                record: check.record.clone(),
                trust: check.trust.clone(),
                unpinnable: check.unpinnable.clone(),
            });
        }
    }
    out
}
