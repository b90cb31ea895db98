//! What a host says about trust: per dispatch, the matched rules that are not approved
//! ([`TrustFinding`]); per loaded rule set, every subject with its rules' records and verdicts
//! ([`SubjectReport`]) — what `hookbox trust add/show/diff` print and record, and what an
//! admin view of a tenant's digests reads.

use std::path::PathBuf;

use hookbox_trust::{
    Approval, ApprovalDiff, HookFile, RECORD_VERSION, RuleLocation, RuleRecord, RuleTrust,
    diff_approval, escape_shown,
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
    /// Why its plugin's approval (or the whole approval store) could not be used, when that is
    /// why it is not approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_error: Option<String>,
    /// An *approved* rule out of force (deleted, or changed so that it no longer fires here as
    /// approved) whose approved event and matcher match this event: under `require` it
    /// answered with its approved fail mode (its report has `rule_index`, after the rule
    /// set's), under `warn` it is only named. `location` and `label` are the approved ones.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// Whether the live rules ran as they are (`warn`) or trust answered instead (`require`).
    pub ran: bool,
    /// Under `require`: the rule differs from its approval only in files its approval's
    /// snapshot holds, so the approved rule ran — from the snapshot, not the live folder.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub snapshot_ran: bool,
}

impl std::fmt::Display for TrustFinding {
    /// One line naming the rule and its standing; what the plugin wrote in it (its label, a
    /// changed command) has its control and format characters escaped (`escape_shown`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&escape_shown(&self.line()))
    }
}

impl TrustFinding {
    fn line(&self) -> String {
        let mut s = format!(
            "rule {} of {} ({}): ",
            self.location, self.plugin, self.label
        );
        if self.missing {
            s.push_str(&format!("an approved rule, {}", self.trust));
            if self.ran {
                s.push_str(&format!(
                    " — it does not guard this event any more (trust = warn); run `hookbox trust diff {}`",
                    self.subject
                ));
            } else {
                s.push_str(" — it answered with its approved fail mode (trust = require)");
            }
            return s;
        }
        match (&self.trust, &self.unpinnable, &self.approval_error) {
            (RuleTrust::Approved, Some(why), _) => {
                s.push_str(&format!("approved, but cannot be pinned: {why}"));
            }
            (RuleTrust::Unapproved, _, Some(e)) => s.push_str(&format!("not approved: {e}")),
            (t, _, _) => s.push_str(&t.to_string()),
        }
        if self.ran {
            s.push_str(" — it ran anyway (trust = warn)");
        } else if self.snapshot_ran {
            s.push_str(" — the approved rule ran from its snapshot instead (trust = require)");
        } else {
            s.push_str(" — it did not run (trust = require)");
        }
        s
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
