//! What a host says about trust: per dispatch, the matched rules that are not approved
//! ([`TrustFinding`]); per loaded rule set, every subject with its rules' records and verdicts
//! ([`SubjectReport`]) — what `hookbox trust add/show/diff` print and record, and what an
//! admin view of a tenant's digests reads.

use std::path::PathBuf;

use hookbox_trust::{
    Approval, ApprovalDiff, HookFile, RECORD_VERSION, RuleLocation, RuleRecord, RuleTrust,
    diff_approval,
};
use serde::Serialize;

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
            snapshot: None,
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
