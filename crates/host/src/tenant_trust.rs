//! A tenant's rule digests and the operator's approval gate (SPEC §11, issue 19 §5).
//!
//! Every load of a tenant (its first, a `PUT`, a reload, SIGHUP) records each rule of the rule
//! set that serves — its digest over content, grants and the files it runs, what it runs
//! unpinned, when it was first seen and when it last changed — in the tenant's state, never in
//! its folder: `<state_root>/<id>/trust/tenant.json`, through the approval store's private,
//! atomic write path (`0700` folder, `0600` file, temporary file synced and renamed over).
//!
//! With the operator's `hold_changed_reloads`, a load whose rules differ from the approved ones
//! (a rule changed, added or removed, a plugin added or gone) is not put in place: the tenant
//! keeps serving its old generation and the new one waits, staged, for an admin's `approve`
//! (or `reject`). One load waits per tenant; a newer load replaces it (or, when it needs no
//! approval, drops it). An approval names the digest of the load the admin saw, so a load that
//! came in between is never approved unseen.
//!
//! The record is the approval: it always describes the rule set in place (approved by an admin,
//! or put in place because holding was off or nothing changed).
//!
//! Each plugin's approval names the snapshot of its folder taken with the load
//! ([`Approval::snapshot`], in the set digest): the files the generation in place runs from,
//! and what a tenant with nothing approved in place serves (`crate::tenants`' `snapshots`). A
//! load whose files differ from the approved snapshot — a library a script sources, changed
//! alone — is a change like a changed rule.
//!
//! A tenant's policy is part of what is approved: its `tenant.toml`'s every policy value and
//! what the embedder attaches (the server: the token's digest) are recorded as the tenant's
//! [`TenantTerms`], hashed into the set digest and compared like its rules — a `tenant.toml`
//! that only widens the policy or swaps the token is a change, held like any other. A record of
//! version 1 (before terms were recorded) approves no terms: its first load is a change.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use hookbox_core::files::{PathError, path};
use hookbox_trust::{
    Approval, ApprovalDiff, Digest, FileRecord, RECORD_VERSION, RuleLocation, Unpinned,
    diff_approval, digest_of,
};
use serde::{Deserialize, Serialize};

use crate::trust::{ApprovalStore, StoreError, SubjectReport};

/// The record's format version (2: with the tenant's terms; version 1 is still read).
pub const TENANT_RECORD_VERSION: u32 = 2;

/// A tenant's terms as approved, by key: its embedder's attachment (the server:
/// `token_sha256`) and every value of its policy (`max_rules`, `allow_native_commands`, …), as
/// JSON.
pub type TenantTerms = BTreeMap<String, serde_json::Value>;

/// The record's file in the tenant's trust folder.
pub(crate) const RECORD_FILE: &str = "tenant.json";

/// Most plugins (subjects) a tenant record holds.
pub const MAX_RECORD_SUBJECTS: usize = 4096;

const SET_DOMAIN: &str = "hookbox tenant rule set v1";

const SET_WITH_TERMS_DOMAIN: &str = "hookbox tenant rule set v2";

/// The operator's approval settings for every tenant (`[trust]` in `serve.toml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantTrustSettings {
    /// A load of a tenant (`PUT`, reload, SIGHUP, a restart) whose rules differ from the
    /// approved ones does not replace them: the old rules keep serving and the new ones wait
    /// for `approve`. Default **false** (every load that loads is put in place, and recorded).
    pub hold_changed_reloads: bool,
    /// A tenant's first load (no approval recorded yet) waits for `approve` too; until then the
    /// tenant serves no rules. Default **false** (a first load is approved as it is, and
    /// recorded).
    pub hold_first_load: bool,
    /// What a tenant held with nothing approved to serve (its first load held, or a restart
    /// that found its files changed) answers, instead of running no rules — which would be an
    /// allow. Default **`deny`**.
    pub held_answer: HeldAnswer,
}

/// What a tenant with nothing approved to serve answers its dispatches with: never an allow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldAnswer {
    /// A deny naming the held load for every event a hook could block (a tool call, a
    /// permission request, a prompt, …; not `Stop`, whose block keeps the agent going), and
    /// "unavailable" for the others (`hookbox serve`: 503). The default.
    #[default]
    Deny,
    /// "Unavailable" for every event (`hookbox serve`: 503 `unavailable`), for agents set to
    /// fail closed on an error (Claude Code's `"onFailure": "block"`).
    Unavailable,
}

/// Who put the recorded rule set in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovedBy {
    /// The tenant's first load, with nothing recorded before (and `hold_first_load` off).
    FirstLoad,
    /// A load put in place as loaded: holding was off, or its rules were the approved ones.
    Load,
    /// An admin's `approve` of a held load.
    Admin,
}

/// The approved rule set: its digest, when and by whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedSet {
    /// The digest of the rule set ([`set_digest`]).
    pub digest: Digest,
    /// When, in ms since the Unix epoch.
    pub at_ms: u64,
    /// How.
    pub by: ApprovedBy,
}

/// When one rule (by plugin and place) was first seen and last changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSeen {
    /// Its plugin, as a tenant subject (the plugin folder relative to the tenant's folder).
    pub subject: String,
    /// Where it sits.
    #[serde(flatten)]
    pub location: RuleLocation,
    /// Its digest now.
    pub digest: Digest,
    /// When a rule was first recorded at this place (ms since the Unix epoch).
    pub first_seen_ms: u64,
    /// When the rule at this place last got another digest (ms since the Unix epoch).
    pub changed_ms: u64,
}

/// What is recorded about a tenant: the approved rule set in place, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TenantRecord {
    /// [`TENANT_RECORD_VERSION`].
    pub version: u32,
    /// The tenant's id.
    pub tenant: String,
    /// The approved set.
    pub approved: ApprovedSet,
    /// Each plugin's approval (its rules' records, its hook files).
    pub subjects: Vec<Approval>,
    /// The tenant's terms (its policy and its token's digest); `None` in a version 1 record,
    /// which approves none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<TenantTerms>,
    /// Each rule's first-seen and changed times.
    pub rules: Vec<RuleSeen>,
}

impl TenantRecord {
    /// Reads a record of tenant `tenant`: its shape, version, tenant, bounds, and every
    /// subject's rule digests (a record edited by hand approves nothing).
    pub fn parse(text: &str, tenant: &str) -> Result<TenantRecord, String> {
        let r: TenantRecord =
            serde_json::from_str(text).map_err(|e| format!("not a tenant record: {e}"))?;
        match (r.version, &r.terms) {
            (TENANT_RECORD_VERSION, Some(_)) | (1, None) => {}
            (TENANT_RECORD_VERSION | 1, _) => {
                return Err(format!(
                    "a version {} tenant record {} terms",
                    r.version,
                    if r.version == 1 { "with" } else { "without" }
                ));
            }
            (v, _) => {
                return Err(format!(
                    "tenant record version {v}; this hookbox reads versions 1 and {TENANT_RECORD_VERSION}"
                ));
            }
        }
        if r.tenant != tenant {
            return Err(format!(
                "it records tenant `{}`, not `{tenant}` (a file copied from another tenant)",
                r.tenant
            ));
        }
        if r.subjects.len() > MAX_RECORD_SUBJECTS {
            return Err(format!(
                "{} plugins, over the limit of {MAX_RECORD_SUBJECTS}",
                r.subjects.len()
            ));
        }
        for s in &r.subjects {
            Approval::parse(&s.to_json()).map_err(|e| format!("plugin `{}`: {e}", s.subject))?;
        }
        if set_digest(&r.subjects, r.terms.as_ref()) != r.approved.digest {
            return Err(
                "its rule set digest does not match its rules (the record was edited)".into(),
            );
        }
        Ok(r)
    }

    /// Pretty JSON, as stored.
    pub fn to_json(&self) -> String {
        // Plain data: serialising it cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// What became of one plugin of a tenant since its approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubjectChange {
    /// The plugin, as a tenant subject.
    pub subject: String,
    /// Its name.
    pub plugin: String,
    /// `unchanged`, `changed`, `added` (not approved before) or `removed` (approved, gone).
    pub status: SubjectStatus,
    /// Its folder's files differ from its approved snapshot (a library a script sources, a
    /// config it reads, …), whether or not its rules changed: then it is `changed`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub files_changed: bool,
    /// File by file, grant by grant.
    pub diff: ApprovalDiff,
}

/// What became of a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubjectStatus {
    /// Its rules are the approved ones (its hook files may differ in bytes that make no rule).
    Unchanged,
    /// A rule changed, was added or removed.
    Changed,
    /// A plugin not approved before.
    Added,
    /// An approved plugin no longer loaded.
    Removed,
}

/// A tenant's subjects as approvals: each plugin named by its folder relative to the tenant's
/// folder (so moving the tenants folder changes no approval), `approved_at` in seconds. A
/// tenant folder that cannot be resolved is an error (it was loaded from a moment ago).
pub(crate) fn tenant_subjects(
    reports: &[SubjectReport],
    folder: &Path,
    approved_at: u64,
) -> Result<Vec<Approval>, PathError> {
    let folder = path::canonical(folder)?;
    Ok(reports
        .iter()
        .map(|r| {
            let subject = Path::new(&r.subject)
                .strip_prefix(&folder)
                .ok()
                .filter(|rel| !rel.as_os_str().is_empty())
                .map_or_else(|| r.plugin.clone(), |rel| rel.display().to_string());
            let mut a = r.to_approval(approved_at);
            a.subject = subject;
            a
        })
        .collect())
}

/// The digest of a tenant's rule set: every plugin, its hook files, its snapshot (every file of
/// its folder) and each rule's place and digest, and the tenant's terms. Two loads with the same digest load the same rules from the
/// same bytes under the same policy and token. Without terms (a version 1 record) it is the
/// digest version 1 wrote.
pub fn set_digest(subjects: &[Approval], terms: Option<&TenantTerms>) -> Digest {
    let v: Vec<serde_json::Value> = subjects
        .iter()
        .map(|s| {
            let mut v = serde_json::json!({
                "subject": s.subject,
                "plugin": s.plugin,
                "hook_files": s.hook_files,
                "rules": s.rules.iter().map(|r| serde_json::json!({
                    "location": r.location, "digest": r.digest,
                })).collect::<Vec<_>>(),
            });
            // A record without snapshots (written before they were taken) keeps its digest.
            if let Some(r) = s.snapshot {
                v["snapshot"] = serde_json::json!(r.id);
            }
            v
        })
        .collect();
    match terms {
        None => digest_of(SET_DOMAIN, &serde_json::Value::Array(v)),
        Some(terms) => digest_of(
            SET_WITH_TERMS_DOMAIN,
            &serde_json::json!({"subjects": v, "terms": terms}),
        ),
    }
}

/// One term of a tenant (a policy value, its token's digest) that differs from the approved
/// one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermChange {
    /// The key (`token_sha256`, `max_rules`, …).
    pub key: String,
    /// As approved; `null` when it was not (a record of version 1 approves no terms).
    pub before: Option<serde_json::Value>,
    /// As loaded now; `null` when the key is gone.
    pub after: Option<serde_json::Value>,
}

/// Each term of `now` that differs from `approved` (every one when nothing approved them).
pub fn term_changes(approved: Option<&TenantTerms>, now: &TenantTerms) -> Vec<TermChange> {
    let empty = TenantTerms::new();
    let approved = approved.unwrap_or(&empty);
    let keys: std::collections::BTreeSet<&String> = approved.keys().chain(now.keys()).collect();
    keys.into_iter()
        .filter(|k| approved.get(*k) != now.get(*k))
        .map(|k| TermChange {
            key: k.clone(),
            before: approved.get(k).cloned(),
            after: now.get(k).cloned(),
        })
        .collect()
}

/// Each plugin of `now` against `approved` (by subject), then the approved plugins gone.
pub fn changes(approved: &[Approval], now: &[Approval]) -> Vec<SubjectChange> {
    let by_subject: HashMap<&str, &Approval> =
        approved.iter().map(|a| (a.subject.as_str(), a)).collect();
    let mut out: Vec<SubjectChange> = now
        .iter()
        .map(|n| {
            let status = match by_subject.get(n.subject.as_str()) {
                Some(old) => {
                    let diff = diff_approval(old, &n.rules, &n.hook_files);
                    // An approval without a snapshot (an older record) compares rules only.
                    let files = old.snapshot.is_some()
                        && old.snapshot.map(|r| r.id) != n.snapshot.map(|r| r.id);
                    let status = if diff.rules_changed() || files {
                        SubjectStatus::Changed
                    } else {
                        SubjectStatus::Unchanged
                    };
                    (status, diff, files)
                }
                None => (
                    SubjectStatus::Added,
                    diff_approval(&empty_like(n), &n.rules, &n.hook_files),
                    false,
                ),
            };
            let (status, diff, files_changed) = status;
            SubjectChange {
                subject: n.subject.clone(),
                plugin: n.plugin.clone(),
                status,
                files_changed,
                diff,
            }
        })
        .collect();
    for old in approved {
        if !now.iter().any(|n| n.subject == old.subject) {
            out.push(SubjectChange {
                subject: old.subject.clone(),
                plugin: old.plugin.clone(),
                status: SubjectStatus::Removed,
                files_changed: false,
                diff: diff_approval(old, &[], &[]),
            });
        }
    }
    out
}

fn empty_like(a: &Approval) -> Approval {
    Approval {
        version: RECORD_VERSION,
        subject: a.subject.clone(),
        plugin: a.plugin.clone(),
        approved_at: 0,
        hook_files: Vec::new(),
        rules: Vec::new(),
        snapshot: None,
    }
}

/// Whether any plugin's rules differ from the approved ones.
pub fn any_change(changes: &[SubjectChange]) -> bool {
    changes.iter().any(|c| c.status != SubjectStatus::Unchanged)
}

/// The first-seen and changed times of `now`'s rules, carried over from `before` where a rule
/// sits at the same place (a new digest there: changed at `now_ms`).
pub fn seen(before: &[RuleSeen], now: &[Approval], now_ms: u64) -> Vec<RuleSeen> {
    let prev: HashMap<(&str, &RuleLocation), &RuleSeen> = before
        .iter()
        .map(|s| ((s.subject.as_str(), &s.location), s))
        .collect();
    now.iter()
        .flat_map(|s| s.rules.iter().map(move |r| (s, r)))
        .map(|(s, r)| {
            let (first_seen_ms, changed_ms) = match prev.get(&(s.subject.as_str(), &r.location)) {
                Some(p) if p.digest == r.digest => (p.first_seen_ms, p.changed_ms),
                Some(p) => (p.first_seen_ms, now_ms),
                None => (now_ms, now_ms),
            };
            RuleSeen {
                subject: s.subject.clone(),
                location: r.location.clone(),
                digest: r.digest,
                first_seen_ms,
                changed_ms,
            }
        })
        .collect()
}

/// The record after `now` (with `terms`) is put in place by `by` at `now_ms`: the approved set
/// kept as it was when its digest did not change.
pub fn next_record(
    tenant: &str,
    before: Option<&TenantRecord>,
    now: Vec<Approval>,
    terms: TenantTerms,
    by: ApprovedBy,
    now_ms: u64,
) -> TenantRecord {
    let digest = set_digest(&now, Some(&terms));
    let approved = match before {
        Some(b) if b.approved.digest == digest => b.approved,
        _ => ApprovedSet {
            digest,
            at_ms: now_ms,
            by,
        },
    };
    let rules = seen(before.map_or(&[][..], |b| &b.rules), &now, now_ms);
    TenantRecord {
        version: TENANT_RECORD_VERSION,
        tenant: tenant.to_owned(),
        approved,
        subjects: now,
        terms: Some(terms),
        rules,
    }
}

/// The tenant's record as read from its store: none yet, or one that cannot be used (which
/// approves nothing).
pub(crate) fn read_record(
    store: &ApprovalStore,
    tenant: &str,
) -> Result<Option<TenantRecord>, String> {
    match store.read_text(RECORD_FILE) {
        Ok(None) => Ok(None),
        Ok(Some(text)) => TenantRecord::parse(&text, tenant).map(Some).map_err(|e| {
            format!(
                "tenant record {}: {e}",
                store.path().join(RECORD_FILE).display()
            )
        }),
        Err(e) => Err(e.to_string()),
    }
}

/// Writes the tenant's record (atomically, private).
pub(crate) fn write_record(store: &ApprovalStore, record: &TenantRecord) -> Result<(), StoreError> {
    store.write_text(RECORD_FILE, &record.to_json()).map(|_| ())
}

/// One recorded rule, as the admin view shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleView {
    /// Its plugin, as a tenant subject.
    pub subject: String,
    /// The plugin's name.
    pub plugin: String,
    /// Where it sits.
    #[serde(flatten)]
    pub location: RuleLocation,
    /// Its event.
    pub event: String,
    /// Its label.
    pub label: String,
    /// Its digest.
    pub digest: Digest,
    /// The files it runs, with their digests.
    pub files: Vec<FileRecord>,
    /// What it runs that could not be pinned, and why.
    pub unpinned: Vec<Unpinned>,
    /// When a rule was first recorded at its place (ms since the Unix epoch).
    pub first_seen_ms: Option<u64>,
    /// When the rule at its place last changed (ms since the Unix epoch).
    pub changed_ms: Option<u64>,
}

/// The rules of `subjects` with the times of `seen`.
pub fn rule_views(subjects: &[Approval], seen: &[RuleSeen]) -> Vec<RuleView> {
    let times: HashMap<(&str, &RuleLocation), &RuleSeen> = seen
        .iter()
        .map(|s| ((s.subject.as_str(), &s.location), s))
        .collect();
    subjects
        .iter()
        .flat_map(|s| s.rules.iter().map(move |r| (s, r)))
        .map(|(s, r)| {
            let t = times
                .get(&(s.subject.as_str(), &r.location))
                .filter(|t| t.digest == r.digest);
            RuleView {
                subject: s.subject.clone(),
                plugin: s.plugin.clone(),
                location: r.location.clone(),
                event: r.event().to_owned(),
                label: r.label.clone(),
                digest: r.digest,
                files: r.files.clone(),
                unpinned: r.unpinned.clone(),
                first_seen_ms: t.map(|t| t.first_seen_ms),
                changed_ms: t.map(|t| t.changed_ms),
            }
        })
        .collect()
}

/// What started a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadCause {
    /// The tenant was added (at start, or the first `PUT` of its id).
    Add,
    /// A `PUT` (or SIGHUP) of a tenant being served: its `tenant.toml` and plugins again.
    Put,
    /// A reload of its plugins.
    Reload,
}

/// A load waiting for an admin, as the admin view shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingView {
    /// Its rule set digest: what `approve` must name.
    pub digest: Digest,
    /// When it was held (ms since the Unix epoch).
    pub held_at_ms: u64,
    /// What loaded it.
    pub cause: LoadCause,
    /// Each plugin against the approved rules: file by file, grant by grant.
    pub changes: Vec<SubjectChange>,
    /// Each term (policy value, token digest) that differs from the approved one.
    pub term_changes: Vec<TermChange>,
    /// Its rules, with their digests.
    pub rules: Vec<RuleView>,
}

/// A tenant's trust, as `GET /v1/tenants/{id}/trust` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TenantTrustView {
    /// The tenant.
    pub tenant: String,
    /// The operator's settings in force.
    pub settings: TenantTrustSettings,
    /// The approved rule set in place, if one is recorded.
    pub approved: Option<ApprovedSet>,
    /// Why the recorded approval cannot be used (it then approves nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_error: Option<String>,
    /// The rules in place, with their digests and times.
    pub rules: Vec<RuleView>,
    /// The terms in place (the policy's values, the token's digest), when recorded.
    pub terms: Option<TenantTerms>,
    /// The load waiting for an admin, if any.
    pub pending: Option<PendingView>,
}

#[cfg(test)]
mod tests;
