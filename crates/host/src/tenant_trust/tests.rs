//! Tests of the tenant record: changes, digests, times, terms, snapshots.

use super::*;
use hookbox_trust::{Base, FileRole, FileState, RuleRecord};
use serde_json::json;

fn rule(file: &str, path: &str, script: &[u8]) -> RuleRecord {
    RuleRecord::new(
        RuleLocation {
            file: file.into(),
            json_path: path.into(),
        },
        "guard.sh".into(),
        json!({"event": "PreToolUse", "type": "command"}),
        vec![FileRecord {
            role: FileRole::Program,
            base: Base::Plugin,
            path: "hooks/guard.sh".into(),
            state: FileState::Pinned {
                sha256: Digest::of(script),
                size: script.len() as u64,
            },
        }],
        Vec::new(),
    )
}

fn terms() -> TenantTerms {
    TenantTerms::from([
        ("token_sha256".to_owned(), json!("ab".repeat(32))),
        ("max_rules".to_owned(), json!(64)),
    ])
}

fn subject(name: &str, rules: Vec<RuleRecord>) -> Approval {
    Approval {
        version: RECORD_VERSION,
        subject: name.into(),
        plugin: name.rsplit('/').next().unwrap().into(),
        approved_at: 0,
        hook_files: Vec::new(),
        rules,
        snapshot: None,
    }
}

#[test]
fn a_changed_script_an_added_rule_and_a_plugin_gone_each_need_approval() {
    let v1 = vec![
        subject("plugins/p", vec![rule("hooks/hooks.json", "a", b"deny")]),
        subject("plugins/q", vec![rule("hooks/hooks.json", "a", b"q")]),
    ];
    assert!(!any_change(&changes(&v1, &v1)));
    // The same rules under another approved_at: unchanged, same set digest.
    let mut later = v1.clone();
    later[0].approved_at = 99;
    assert_eq!(set_digest(&v1, None), set_digest(&later, None));
    assert!(!any_change(&changes(&v1, &later)));
    // The script behind a rule changed: `changed`, naming the file.
    let edited = vec![
        subject("plugins/p", vec![rule("hooks/hooks.json", "a", b"allow")]),
        v1[1].clone(),
    ];
    let c = changes(&v1, &edited);
    assert!(any_change(&c));
    assert_eq!(c[0].status, SubjectStatus::Changed);
    let text = serde_json::to_string(&c[0].diff).unwrap();
    assert!(text.contains("hooks/guard.sh"), "{text}");
    assert_ne!(set_digest(&v1, None), set_digest(&edited, None));
    // A rule added; a plugin gone; a plugin added.
    let added = vec![
        subject(
            "plugins/p",
            vec![
                rule("hooks/hooks.json", "a", b"deny"),
                rule("hooks/hooks.json", "b", b"x"),
            ],
        ),
        v1[1].clone(),
    ];
    assert_eq!(changes(&v1, &added)[0].status, SubjectStatus::Changed);
    let gone = vec![v1[0].clone()];
    let c = changes(&v1, &gone);
    assert_eq!((c.len(), c[1].status), (2, SubjectStatus::Removed), "{c:?}");
    let new = vec![v1[0].clone(), v1[1].clone(), subject("plugins/r", vec![])];
    assert_eq!(changes(&v1, &new)[2].status, SubjectStatus::Added);
}

#[test]
fn times_carry_over_per_place_and_a_new_digest_there_is_a_change() {
    let v1 = vec![subject(
        "plugins/p",
        vec![
            rule("hooks/hooks.json", "a", b"1"),
            rule("hooks/hooks.json", "b", b"2"),
        ],
    )];
    let r1 = next_record("t", None, v1.clone(), terms(), ApprovedBy::FirstLoad, 100);
    assert_eq!(r1.approved.by, ApprovedBy::FirstLoad);
    assert!(
        r1.rules
            .iter()
            .all(|s| s.first_seen_ms == 100 && s.changed_ms == 100)
    );
    // Reloaded unchanged: the approved set and every time stay.
    let r2 = next_record("t", Some(&r1), v1.clone(), terms(), ApprovedBy::Load, 200);
    assert_eq!(r2.approved, r1.approved);
    assert_eq!(r2.rules, r1.rules);
    // Rule `b` changed: only its changed time moves; the set is approved anew.
    let v3 = vec![subject(
        "plugins/p",
        vec![
            rule("hooks/hooks.json", "a", b"1"),
            rule("hooks/hooks.json", "b", b"3"),
        ],
    )];
    let r3 = next_record("t", Some(&r2), v3.clone(), terms(), ApprovedBy::Admin, 300);
    assert_eq!(
        (r3.approved.by, r3.approved.at_ms),
        (ApprovedBy::Admin, 300)
    );
    assert_eq!(
        (r3.rules[0].first_seen_ms, r3.rules[0].changed_ms),
        (100, 100)
    );
    assert_eq!(
        (r3.rules[1].first_seen_ms, r3.rules[1].changed_ms),
        (100, 300)
    );
    let views = rule_views(&r3.subjects, &r3.rules);
    assert_eq!(views[1].changed_ms, Some(300));
    assert_eq!(views[1].digest, r3.subjects[0].rules[1].digest);
    // The record reads back; edited, for another tenant or of another version, it does not.
    let text = r3.to_json();
    assert_eq!(TenantRecord::parse(&text, "t").unwrap(), r3);
    let e = TenantRecord::parse(&text, "other").unwrap_err();
    assert!(e.contains("not `other`"), "{e}");
    let forged = text.replacen(
        &r3.subjects[0].rules[1].digest.to_string(),
        &r3.subjects[0].rules[0].digest.to_string(),
        1,
    );
    assert!(TenantRecord::parse(&forged, "t").is_err());
    let mut swapped = r3.clone();
    swapped.subjects = v1;
    let e = TenantRecord::parse(&swapped.to_json(), "t").unwrap_err();
    assert!(e.contains("edited"), "{e}");
    let e = TenantRecord::parse(&text.replacen("\"version\": 2", "\"version\": 7", 1), "t")
        .unwrap_err();
    assert!(e.contains("version 7"), "{e}");
}

/// Issue 27 item 6: a plugin whose folder's snapshot differs from the approved one is
/// changed even when its rules are not (a library a script sources, edited alone), and the
/// snapshot is in the set digest; an approval without a snapshot (an older record) compares
/// rules only, and keeps the digest it was written with.
#[test]
fn a_file_changed_alone_is_a_change_and_records_without_snapshots_keep_their_digest() {
    use hookbox_trust::SnapshotRef;
    let snap = |b: &[u8]| {
        Some(SnapshotRef {
            id: Digest::of(b),
            files: 2,
            bytes: 10,
        })
    };
    let mut v1 = vec![subject(
        "plugins/p",
        vec![rule("hooks/hooks.json", "a", b"1")],
    )];
    let old = v1.clone();
    v1[0].snapshot = snap(b"lib v1");
    let mut v2 = v1.clone();
    v2[0].snapshot = snap(b"lib v2");
    let c = changes(&v1, &v2);
    assert_eq!(
        (c[0].status, c[0].files_changed),
        (SubjectStatus::Changed, true)
    );
    assert!(!c[0].diff.rules_changed());
    assert_ne!(set_digest(&v1, None), set_digest(&v2, None));
    assert!(!any_change(&changes(&v1, &v1.clone())));
    // Approved before snapshots were taken: the same rules are not a change.
    assert!(!any_change(&changes(&old, &v2)));
    assert_eq!(
        set_digest(&old, None),
        set_digest(
            &[subject(
                "plugins/p",
                vec![rule("hooks/hooks.json", "a", b"1")]
            )],
            None
        )
    );
}

/// Issue 27 item 6: the terms (token digest, every policy value) are part of what is
/// approved: the same rules under a wider policy or another token have another digest and
/// show what changed; a version 1 record (no terms) still reads and approves none.
#[test]
fn a_policy_or_token_change_alone_is_a_change_and_version_1_records_still_read() {
    let rules = vec![subject(
        "plugins/p",
        vec![rule("hooks/hooks.json", "a", b"1")],
    )];
    let approved = terms();
    let mut wider = terms();
    wider.insert("allow_native_commands".into(), json!(true));
    let mut other_token = terms();
    other_token.insert("token_sha256".into(), json!("cd".repeat(32)));
    let d = set_digest(&rules, Some(&approved));
    assert_ne!(d, set_digest(&rules, Some(&wider)));
    assert_ne!(d, set_digest(&rules, Some(&other_token)));
    assert_ne!(d, set_digest(&rules, None));
    assert_eq!(term_changes(Some(&approved), &approved), []);
    assert_eq!(
        term_changes(Some(&approved), &wider),
        [TermChange {
            key: "allow_native_commands".into(),
            before: None,
            after: Some(json!(true)),
        }]
    );
    assert_eq!(
        term_changes(Some(&approved), &other_token)[0].key,
        "token_sha256"
    );
    assert_eq!(
        term_changes(None, &approved).len(),
        2,
        "nothing approved them"
    );
    // A record written before terms were recorded: version 1, its digest as it wrote it.
    let r = next_record("t", None, rules.clone(), terms(), ApprovedBy::FirstLoad, 1);
    let mut v1 = r.clone();
    v1.version = 1;
    v1.terms = None;
    v1.approved.digest = set_digest(&rules, None);
    let read = TenantRecord::parse(&v1.to_json(), "t").unwrap();
    assert_eq!(read.terms, None);
    // Terms edited into a record (or taken out of one) break its digest.
    let mut edited = r.clone();
    edited.terms = Some(wider);
    assert!(TenantRecord::parse(&edited.to_json(), "t").is_err());
    let mut stripped = r;
    stripped.terms = None;
    assert!(TenantRecord::parse(&stripped.to_json(), "t").is_err());
}
