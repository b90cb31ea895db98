//! What a host says about trust: per dispatch, the matched rules that are not approved
//! ([`TrustFinding`]); per loaded rule set, every subject with its rules' records and verdicts
//! ([`SubjectReport`]) — what `hookbox trust add/show/diff` print and record, and what an
//! admin view of a tenant's digests reads.

use std::path::{Path, PathBuf};

use hookbox_core::config::DEFAULT_MAX_FILE_BYTES;
use hookbox_core::files::read_file_beneath;
use hookbox_core::trust::{
    Approval, ApprovalDiff, Digest, FileState, HookFile, RECORD_VERSION, RuleLocation, RuleRecord,
    RuleTrust, TrustMode, diff_approval,
};
use serde::Serialize;

use super::ApprovalStore;
use crate::host::HookHost;
use crate::inner::Loaded;

/// A matched rule that is not approved as it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrustFinding {
    /// Its position in the rule set.
    pub rule_index: usize,
    /// Its plugin's name.
    pub plugin: String,
    /// What approves it: the plugin folder or bare file (`hookbox trust add <subject>`).
    pub subject: String,
    /// Where it sits.
    #[serde(flatten)]
    pub location: RuleLocation,
    /// Its label.
    pub label: String,
    /// Its standing: `unapproved`, `new`, `changed` (with `changes`), or `approved` with a file
    /// that could not be pinned.
    #[serde(flatten)]
    pub trust: RuleTrust,
    /// A file it runs that could not be pinned, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpinnable: Option<String>,
    /// Whether it ran (`warn`) or was refused (`require`).
    pub ran: bool,
}

impl std::fmt::Display for TrustFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rule {} of {} ({}): ",
            self.location, self.plugin, self.label
        )?;
        match (&self.trust, &self.unpinnable) {
            (RuleTrust::Approved, Some(why)) => write!(f, "approved, but cannot be pinned: {why}")?,
            (t, _) => write!(f, "{t}")?,
        }
        if self.ran {
            write!(f, " — it ran anyway (trust = warn)")
        } else {
            write!(f, " — it did not run (trust = require)")
        }
    }
}

/// One rule of a [`SubjectReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleReport {
    /// Its position in the rule set.
    pub rule_index: usize,
    /// Its record as it is now.
    pub record: RuleRecord,
    /// Its standing against the subject's approval.
    pub trust: RuleTrust,
    /// A file it runs that could not be pinned, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpinnable: Option<String>,
}

/// A plugin or bare file of the loaded rule set, as an approval subject.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubjectReport {
    /// Its name in the approval store (the canonical path).
    pub subject: String,
    /// The plugin's name.
    pub plugin: String,
    /// Its folder.
    pub root: PathBuf,
    /// Whether it is a bare hooks or settings file.
    pub bare: bool,
    /// Its approval, as stored.
    pub approval: Option<Approval>,
    /// Why the stored approval could not be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_error: Option<String>,
    /// Its hook files now.
    pub hook_files: Vec<HookFile>,
    /// Its rules now.
    pub rules: Vec<RuleReport>,
}

impl SubjectReport {
    /// The approval of the subject as it is now, dated `approved_at` (seconds since the epoch).
    pub fn to_approval(&self, approved_at: u64) -> Approval {
        Approval {
            version: RECORD_VERSION,
            subject: self.subject.clone(),
            plugin: self.plugin.clone(),
            approved_at,
            hook_files: self.hook_files.clone(),
            rules: self.rules.iter().map(|r| r.record.clone()).collect(),
        }
    }

    /// What changed since the approval; `None` when it was never approved.
    pub fn diff(&self) -> Option<ApprovalDiff> {
        let records: Vec<RuleRecord> = self.rules.iter().map(|r| r.record.clone()).collect();
        self.approval
            .as_ref()
            .map(|a| diff_approval(a, &records, &self.hook_files))
    }

    /// Whether it is approved exactly as it is: every rule approved, none removed.
    pub fn is_approved(&self) -> bool {
        self.diff().is_some_and(|d| !d.rules_changed())
    }
}

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

impl HookHost {
    /// The trust mode in force: the policy's, made stricter by the project's settings.
    pub fn trust_mode(&self) -> TrustMode {
        self.current().trust.mode
    }

    /// The approval store this host reads, if it has one.
    pub fn trust_store(&self) -> Option<ApprovalStore> {
        self.current().trust.store.clone()
    }

    /// Every subject of the current rule set with its rules' records and verdicts; empty when
    /// trust is `off` (unless the policy `record`s). Reads the hook files to report their
    /// digests.
    pub fn trust_report(&self) -> Vec<SubjectReport> {
        subject_reports(&self.current().loaded())
    }
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
