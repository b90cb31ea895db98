//! The verdict on one rule: is it approved as it is now? Used by the host when it installs a
//! rule set, once per rule, against its subject's approval.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use crate::diff::{Change, diff_rules};
use crate::digest::Digest;
use crate::record::{Approval, RuleLocation, RuleRecord};
use hookbox_core::rule::FailMode;

/// Where a rule stands against its subject's approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RuleTrust {
    /// Its digest is approved.
    Approved,
    /// Its plugin (or file) was never approved.
    Unapproved,
    /// Its plugin was approved, but not this rule: it is new.
    New,
    /// It differs from the rule approved at its place.
    Changed {
        /// What changed, item by item.
        changes: Vec<Change>,
        /// The approved rule's `on_failure`: a guard approved as fail-closed stays
        /// fail-closed when it is refused, whatever its new text says.
        #[serde(skip_serializing_if = "Option::is_none")]
        approved_on_failure: Option<FailMode>,
    },
    /// An approved rule that is not in its plugin as approved any more: deleted, or changed so
    /// that its digest is no longer approved (its matcher narrowed, its event or command
    /// edited). Not a live rule's verdict: the host reports it for the events the *approved*
    /// event and matcher match, so a guard cannot be removed quietly.
    Missing {
        /// The approved rule's `on_failure`: under `require` it answers with it.
        #[serde(skip_serializing_if = "Option::is_none")]
        approved_on_failure: Option<FailMode>,
    },
}

impl RuleTrust {
    /// Whether the rule is approved as it is.
    pub fn is_approved(&self) -> bool {
        matches!(self, RuleTrust::Approved)
    }

    /// The state's name (`approved`, `unapproved`, `new`, `changed`).
    pub fn as_str(&self) -> &'static str {
        match self {
            RuleTrust::Approved => "approved",
            RuleTrust::Unapproved => "unapproved",
            RuleTrust::New => "new",
            RuleTrust::Changed { .. } => "changed",
            RuleTrust::Missing { .. } => "missing",
        }
    }
}

impl fmt::Display for RuleTrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleTrust::Approved => f.write_str("approved"),
            RuleTrust::Unapproved => f.write_str("not approved: its plugin was never approved"),
            RuleTrust::New => {
                f.write_str("not approved: a rule added since its plugin was approved")
            }
            RuleTrust::Changed { changes, .. } => {
                f.write_str("changed since it was approved: ")?;
                for (i, c) in changes.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{c}")?;
                }
                Ok(())
            }
            RuleTrust::Missing { .. } => f.write_str(
                "changed since approval: the approved rule is gone or no longer fires here as approved",
            ),
        }
    }
}

/// One subject's approval, indexed for checking many rules.
#[derive(Debug, Clone)]
pub struct ApprovalIndex {
    digests: HashSet<Digest>,
    by_location: HashMap<RuleLocation, RuleRecord>,
}

impl ApprovalIndex {
    /// Indexes `approval`.
    pub fn new(approval: &Approval) -> ApprovalIndex {
        ApprovalIndex {
            digests: approval.rules.iter().map(|r| r.digest).collect(),
            by_location: approval
                .rules
                .iter()
                .map(|r| (r.location.clone(), r.clone()))
                .collect(),
        }
    }

    /// The verdict on `current`.
    pub fn check(&self, current: &RuleRecord) -> RuleTrust {
        // A record written before programs were pinned holds the digest without them: the
        // rule is approved, its programs named, not pinned (as they were approved).
        if self.digests.contains(&current.digest)
            || (!current.programs.is_empty()
                && self.digests.contains(&current.digest_without_programs()))
        {
            return RuleTrust::Approved;
        }
        match self.by_location.get(&current.location) {
            Some(old) => RuleTrust::Changed {
                changes: diff_rules(old, current),
                approved_on_failure: old.on_failure(),
            },
            None => RuleTrust::New,
        }
    }
}

/// The approved rules of `approval` that no rule of `live` (the subject's rules as they are
/// now) carries as approved: deleted, or changed. Each is an approved rule out of force — what
/// the host answers for, with its approved fail mode, under `require`.
pub fn missing_rules<'a>(
    approval: &'a Approval,
    live: &[&RuleRecord],
) -> impl Iterator<Item = &'a RuleRecord> + 'a {
    // A rule approved before programs were pinned is carried by its digest without them.
    let live: HashSet<Digest> = live
        .iter()
        .flat_map(|r| [r.digest, r.digest_without_programs()])
        .collect();
    approval
        .rules
        .iter()
        .filter(move |r| !live.contains(&r.digest))
}

/// The verdict on `current` against its subject's approval, if it has one.
pub fn check_rule(current: &RuleRecord, approval: Option<&ApprovalIndex>) -> RuleTrust {
    match approval {
        Some(index) => index.check(current),
        None => RuleTrust::Unapproved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(path: &str, content: serde_json::Value) -> RuleRecord {
        RuleRecord::new(
            RuleLocation {
                file: "hooks.json".into(),
                json_path: path.into(),
            },
            "l".into(),
            content,
            Vec::new(),
            Vec::new(),
        )
    }

    fn approval_of(rules: Vec<RuleRecord>) -> Approval {
        crate::record::approval_for_tests(rules)
    }

    #[test]
    fn each_rule_is_judged_on_its_own_digest() {
        let guard = rule(
            "hooks.PreToolUse[0]",
            json!({"event": "PreToolUse", "on_failure": "block", "handler": {"command": "./g.sh"}}),
        );
        let audit = rule("hooks.PostToolUse[0]", json!({"event": "PostToolUse"}));
        let approval = approval_of(vec![guard.clone(), audit.clone()]);
        let index = ApprovalIndex::new(&approval);
        assert_eq!(check_rule(&audit, Some(&index)), RuleTrust::Approved);
        assert_eq!(check_rule(&audit, None), RuleTrust::Unapproved);
        // The guard's text changed and its fail mode was loosened: still judged by what was
        // approved.
        let tampered = rule(
            "hooks.PreToolUse[0]",
            json!({"event": "PreToolUse", "on_failure": "allow", "handler": {"command": "./g.sh; curl x"}}),
        );
        match check_rule(&tampered, Some(&index)) {
            RuleTrust::Changed {
                changes,
                approved_on_failure,
            } => {
                assert_eq!(approved_on_failure, Some(FailMode::Block));
                let items: Vec<&str> = changes.iter().map(|c| c.item.as_str()).collect();
                assert_eq!(items, ["handler.command", "on_failure"]);
            }
            other => panic!("{other:?}"),
        }
        let new = rule("hooks.SessionStart[0]", json!({"event": "SessionStart"}));
        assert_eq!(check_rule(&new, Some(&index)), RuleTrust::New);
        assert!(RuleTrust::Approved.is_approved() && !RuleTrust::New.is_approved());
        assert_eq!(
            RuleTrust::New.to_string(),
            "not approved: a rule added since its plugin was approved"
        );
    }

    #[test]
    fn approved_rules_no_live_rule_carries_are_missing() {
        let guard = rule(
            "hooks.PreToolUse[0]",
            json!({"event": "PreToolUse", "matcher": {"kind": "names", "names": ["Bash"]}, "on_failure": "block"}),
        );
        let audit = rule("hooks.PostToolUse[0]", json!({"event": "PostToolUse"}));
        let approval = approval_of(vec![guard.clone(), audit.clone()]);
        let missing = |live: &[&RuleRecord]| -> Vec<String> {
            missing_rules(&approval, live)
                .map(|r| r.location.json_path.clone())
                .collect()
        };
        assert!(missing(&[&guard, &audit]).is_empty());
        // Deleted.
        assert_eq!(missing(&[&audit]), ["hooks.PreToolUse[0]"]);
        // Its matcher narrowed at the same place.
        let narrowed = rule(
            "hooks.PreToolUse[0]",
            json!({"event": "PreToolUse", "matcher": {"kind": "names", "names": ["Bashh"]}, "on_failure": "block"}),
        );
        assert_eq!(missing(&[&narrowed, &audit]), ["hooks.PreToolUse[0]"]);
        // Moved, unchanged: still carried.
        let moved = rule("hooks.PreToolUse[7]", guard.content.clone());
        assert!(missing(&[&moved, &audit]).is_empty());
        assert_eq!(
            guard.matcher(),
            Some(&json!({"kind": "names", "names": ["Bash"]}))
        );
        let m = RuleTrust::Missing {
            approved_on_failure: Some(FailMode::Block),
        };
        assert_eq!(m.as_str(), "missing");
        assert!(m.to_string().starts_with("changed since approval"), "{m}");
    }

    #[test]
    fn a_program_found_on_path_is_pinned_by_path_and_digest_and_old_records_still_approve() {
        use crate::record::{FileState, ProgramRecord};
        let node = |path: &str, bytes: &[u8]| ProgramRecord {
            name: "node".into(),
            path: Some(path.into()),
            state: FileState::Pinned {
                sha256: Digest::of(bytes),
                size: bytes.len() as u64,
            },
        };
        let content = json!({"event": "PreToolUse", "handler": {"command": "node g.js"}});
        let approved = rule("hooks.PreToolUse[0]", content.clone())
            .with_programs(vec![node("/usr/bin/node", b"node 22")]);
        let index = ApprovalIndex::new(&approval_of(vec![approved.clone()]));
        let same = rule("hooks.PreToolUse[0]", content.clone())
            .with_programs(vec![node("/usr/bin/node", b"node 22")]);
        assert_eq!(check_rule(&same, Some(&index)), RuleTrust::Approved);
        // Other bytes at that path, or another file first on PATH: a change, naming the
        // program with its old and new path and digest.
        for (now, shown) in [
            (node("/usr/bin/node", b"node 23"), "/usr/bin/node sha256 "),
            (node("/tmp/bin/node", b"node 22"), "/tmp/bin/node sha256 "),
        ] {
            let live = rule("hooks.PreToolUse[0]", content.clone()).with_programs(vec![now]);
            let RuleTrust::Changed { changes, .. } = check_rule(&live, Some(&index)) else {
                panic!("a different node is a change");
            };
            assert_eq!(changes.len(), 1, "{changes:?}");
            let text = changes[0].to_string();
            assert!(
                text.starts_with("program node (found on PATH): /usr/bin/node sha256 ")
                    && text.contains(&format!("→ {shown}")),
                "{text}"
            );
            assert_eq!(
                missing_rules(&approval_of(vec![approved.clone()]), &[&live]).count(),
                1
            );
        }
        // A record written before programs were pinned (none recorded) still approves the
        // rule: its program is named, not pinned.
        let old = rule("hooks.PreToolUse[0]", content.clone());
        let old_index = ApprovalIndex::new(&approval_of(vec![old.clone()]));
        let live = rule("hooks.PreToolUse[0]", content)
            .with_programs(vec![node("/usr/bin/node", b"node 23")]);
        assert_eq!(check_rule(&live, Some(&old_index)), RuleTrust::Approved);
        assert_eq!(missing_rules(&approval_of(vec![old]), &[&live]).count(), 0);
        // A stored record's programs are under its digest: edited, it is refused.
        let mut a = approval_of(vec![approved]);
        let text = a.to_json();
        assert!(crate::Approval::parse(&text).is_ok());
        a.rules[0].programs[0].path = Some("/elsewhere/node".into());
        assert!(matches!(
            crate::Approval::parse(&a.to_json()),
            Err(crate::RecordError::DigestMismatch { .. })
        ));
    }
}
