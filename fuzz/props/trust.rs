//! The properties of trust records and of command resolution, in one place: the `trust` fuzz
//! target checks them on arbitrary input, and hookbox-trust's `tests/trust_props.rs` on the
//! corpus and on deterministic mutations, both including this file by path. Depends on
//! hookbox-core, hookbox-trust and serde_json only.

use hookbox_core::rule::CommandSpec;
use hookbox_trust::{
    Approval, ApprovalIndex, RuleStatus, RuleTrust, Site, canonical_json, diff_approval,
    resolve_command, rule_digest,
};
use serde_json::Value;

/// Any text as a stored approval record: refused with a message, or read — and then it prints
/// and reads back as itself, every rule's digest is the digest of its content and files, each
/// rule is approved by its own approval, and the approval diffs as unchanged against itself.
pub(crate) fn check_record(text: &str) {
    let a = match Approval::parse(text) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let again = Approval::parse(&a.to_json())
        .unwrap_or_else(|e| panic!("a record that was read does not read back: {e}"));
    assert_eq!(again, a, "a record reads back as another");
    let index = ApprovalIndex::new(&a);
    for r in &a.rules {
        assert_eq!(rule_digest(&r.content, &r.files), r.digest);
        assert_eq!(index.check(r), RuleTrust::Approved);
    }
    let d = diff_approval(&a, &a.rules, &a.hook_files);
    assert!(d.hook_files.is_empty(), "{:?}", d.hook_files);
    assert!(d.rules.iter().all(|r| r.status == RuleStatus::Unchanged));
}

/// Any text as a shell-form command: resolving it never panics; every pinned file's path is
/// normalised (not empty, no `.` or `..`, not absolute); every site is a range of the text on
/// character boundaries, the ranges do not overlap, and replacing them (as the host does to run
/// sealed copies) leaves the text outside them as it was.
pub(crate) fn check_command(text: &str) {
    let r = resolve_command(&CommandSpec::shell(text, 5.0));
    let mut sites = Vec::new();
    for f in &r.files {
        assert!(!f.path.is_empty(), "{text:?}: {f:?}");
        assert!(!f.path.starts_with('/'), "{text:?}: {f:?}");
        assert!(
            f.path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."),
            "{text:?}: {f:?}"
        );
        match f.site {
            Site::Text { start, end } => {
                assert!(start < end && end <= text.len(), "{text:?}: {f:?}");
                assert!(text.is_char_boundary(start) && text.is_char_boundary(end));
                sites.push((start, end));
            }
            ref other => panic!("{text:?}: a shell command's file sits at {other:?}"),
        }
    }
    sites.sort_unstable();
    for w in sites.windows(2) {
        assert!(w[0].1 <= w[1].0, "{text:?}: overlapping sites {sites:?}");
    }
    let mut replaced = text.to_owned();
    for &(start, end) in sites.iter().rev() {
        replaced.replace_range(start..end, "/proc/self/fd/9");
    }
    if let Some(&(start, _)) = sites.first() {
        assert_eq!(&replaced[..start], &text[..start]);
    }
    for u in &r.unpinned {
        assert!(
            !u.what.is_empty() || text.trim().is_empty(),
            "{text:?}: {u:?}"
        );
    }
}

/// Any JSON value: its canonical form reads back as a value with the same canonical form.
pub(crate) fn check_canonical(v: &Value) {
    let c = canonical_json(v);
    let back: Value = serde_json::from_str(&c).unwrap_or_else(|e| panic!("{c}: {e}"));
    assert_eq!(canonical_json(&back), c);
}
