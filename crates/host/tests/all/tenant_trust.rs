//! Tenants' rule digests and the operator's approval gate (issue 19 §5): every load records
//! each rule's digest in the tenant's state; with `hold_changed_reloads` a load whose rules
//! differ from the approved ones waits for `approve` while the old rules — the very bytes that
//! were hashed — keep serving; one load waits per tenant; an approval names what the admin saw.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use hookbox_core::Event;
use hookbox_host::tenant_trust::{ApprovedBy, SubjectStatus};
use hookbox_host::{
    HookRuntime, RuntimeSettings, TenantError, TenantId, TenantPolicy, TenantSpec,
    TenantTrustSettings, Tenants,
};
use hookbox_trust::Digest;
use serde_json::json;

struct Fleet {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
}

fn hold() -> TenantTrustSettings {
    TenantTrustSettings {
        hold_changed_reloads: true,
        hold_first_load: false,
    }
}

impl Fleet {
    fn new() -> Fleet {
        Fleet {
            root: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    /// A fleet over the same folders (a restarted server).
    fn tenants(&self, trust: TenantTrustSettings) -> Tenants {
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        Tenants::new(runtime, self.state.path()).with_trust(trust)
    }

    fn folder(&self) -> PathBuf {
        self.root.path().join("t")
    }

    /// Tenant `t`'s plugin `p`: a UserPromptSubmit command running `hooks/say.sh`, which
    /// prints `text` (the prompt's added context).
    fn say(&self, text: &str) {
        let dir = self.folder().join("plugins/p/hooks");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("hooks.json"),
            json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/say.sh"}]}]}})
            .to_string(),
        )
        .unwrap();
        std::fs::write(dir.join("say.sh"), format!("echo {text}\n")).unwrap();
    }

    fn spec(&self) -> TenantSpec {
        TenantSpec {
            id: id(),
            folder: self.folder(),
            policy: TenantPolicy {
                allow_native_commands: true,
                ..TenantPolicy::default()
            },
            plugins: None,
            attached: (),
        }
    }
}

fn id() -> TenantId {
    TenantId::new("t").unwrap()
}

/// What the tenant's rules add to a prompt now.
async fn says(tenants: &Tenants) -> Vec<String> {
    let event = Event::from_payload(
        None,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
        "s1",
        "/",
    )
    .unwrap();
    let d = tenants.dispatch(&id(), event).await.unwrap();
    d.verdict
        .additional_contexts()
        .iter()
        .map(|c| c.trim().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_script_waits_for_approval_while_the_bytes_approved_keep_serving() {
    let f = Fleet::new();
    f.say("v1");
    let tenants = f.tenants(hold());
    let info = tenants.add(f.spec()).unwrap();
    assert!(!info.held && info.pending_approval.is_none());
    assert_eq!(says(&tenants).await, ["v1"]);
    // The first load is approved as it is and recorded, with the script's digest.
    let view = tenants.trust(&id()).unwrap();
    let approved = view.approved.unwrap();
    assert_eq!(approved.by, ApprovedBy::FirstLoad);
    assert_eq!(view.rules.len(), 1);
    let rule = &view.rules[0];
    assert_eq!(rule.subject, "plugins/p");
    let script = serde_json::to_string(&rule.files).unwrap();
    assert!(
        script.contains("hooks/say.sh") && script.contains(&Digest::of(b"echo v1\n").to_string()),
        "{script}"
    );
    let first_changed = rule.changed_ms.unwrap();

    // The script is edited and the tenant reloaded: held; the old bytes still run (they were
    // pinned at load: the edited file on disk is not what runs).
    f.say("v2");
    let info = tenants.reload(&id(), None).unwrap();
    assert!(info.held, "{info:?}");
    let pending = info.pending_approval.unwrap();
    assert_eq!(says(&tenants).await, ["v1"]);
    let view = tenants.trust(&id()).unwrap();
    assert_eq!(view.approved.unwrap().digest, approved.digest);
    let p = view.pending.as_ref().unwrap();
    assert_eq!(p.digest, pending);
    assert_eq!(p.changes[0].status, SubjectStatus::Changed);
    let diff = serde_json::to_string(&p.changes[0].diff).unwrap();
    assert!(
        diff.contains("hooks/say.sh") && diff.contains(&Digest::of(b"echo v2\n").to_string()),
        "{diff}"
    );

    // An approval naming another load changes nothing; the right one swaps it in.
    let e = tenants.approve(&id(), &approved.digest).unwrap_err();
    assert!(matches!(e, TenantError::StalePending { .. }), "{e}");
    assert_eq!(says(&tenants).await, ["v1"]);
    let info = tenants.approve(&id(), &pending).unwrap();
    assert!(info.pending_approval.is_none());
    assert_eq!(says(&tenants).await, ["v2"]);
    let view = tenants.trust(&id()).unwrap();
    let now = view.approved.unwrap();
    assert_eq!((now.by, now.digest), (ApprovedBy::Admin, pending));
    assert!(view.rules[0].changed_ms.unwrap() >= first_changed);
    assert!(view.pending.is_none());
    // Nothing is left to approve.
    assert!(matches!(
        tenants.approve(&id(), &pending),
        Err(TenantError::NothingPending(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_load_is_dropped_and_a_newer_load_replaces_or_drops_the_one_waiting() {
    let f = Fleet::new();
    f.say("v1");
    let tenants = f.tenants(hold());
    tenants.add(f.spec()).unwrap();
    f.say("v2");
    let first = tenants
        .reload(&id(), None)
        .unwrap()
        .pending_approval
        .unwrap();
    // Many loads later, one waits: the last.
    let mut last = first;
    for i in 3..60 {
        f.say(&format!("v{i}"));
        last = tenants
            .reload(&id(), None)
            .unwrap()
            .pending_approval
            .unwrap();
    }
    assert_ne!(first, last);
    let view = tenants.trust(&id()).unwrap();
    assert_eq!(view.pending.unwrap().digest, last);
    // The admin reviewed the first one: it is not the one waiting any more.
    assert!(matches!(
        tenants.approve(&id(), &first),
        Err(TenantError::StalePending { .. })
    ));
    assert!(matches!(
        tenants.reject(&id(), Some(&first)),
        Err(TenantError::StalePending { .. })
    ));
    let info = tenants.reject(&id(), Some(&last)).unwrap();
    assert!(info.pending_approval.is_none());
    assert_eq!(says(&tenants).await, ["v1"]);
    assert!(matches!(
        tenants.reject(&id(), None),
        Err(TenantError::NothingPending(_))
    ));
    // A load held, then the folder put back as approved: the next load needs no approval and
    // drops the one waiting.
    f.say("v9");
    assert!(tenants.reload(&id(), None).unwrap().held);
    f.say("v1");
    let info = tenants.reload(&id(), None).unwrap();
    assert!(!info.held && info.pending_approval.is_none(), "{info:?}");
    assert_eq!(says(&tenants).await, ["v1"]);
    // A PUT is held the same way.
    f.say("v10");
    let info = tenants.put(f.spec()).unwrap();
    assert!(info.held);
    assert_eq!(says(&tenants).await, ["v1"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_holding_off_a_reload_swaps_and_records_the_new_digest_and_when_it_changed() {
    let f = Fleet::new();
    f.say("v1");
    let tenants = f.tenants(TenantTrustSettings::default());
    tenants.add(f.spec()).unwrap();
    let before = tenants.trust(&id()).unwrap();
    f.say("v2");
    let info = tenants.reload(&id(), None).unwrap();
    assert!(!info.held && info.pending_approval.is_none());
    assert_eq!(says(&tenants).await, ["v2"]);
    let after = tenants.trust(&id()).unwrap();
    let (a, b) = (after.approved.unwrap(), before.approved.unwrap());
    assert_eq!(a.by, ApprovedBy::Load);
    assert_ne!(a.digest, b.digest);
    assert_ne!(after.rules[0].digest, before.rules[0].digest);
    assert_eq!(after.rules[0].first_seen_ms, before.rules[0].first_seen_ms);
    assert!(after.rules[0].changed_ms >= before.rules[0].changed_ms);
    // A reload of the same files changes no time and no approval.
    tenants.reload(&id(), None).unwrap();
    let again = tenants.trust(&id()).unwrap();
    assert_eq!(again.approved, after.approved);
    assert_eq!(again.rules, after.rules);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_record_is_private_in_the_state_root_and_a_restart_holds_what_changed_meanwhile() {
    let f = Fleet::new();
    f.say("v1");
    {
        let tenants = f.tenants(hold());
        tenants.add(f.spec()).unwrap();
    }
    let dir = f.state.path().join("t/trust");
    let record = dir.join("tenant.json");
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        std::fs::metadata(&record).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Nothing of it in the tenant's folder.
    let names: Vec<_> = walk(&f.folder());
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with("tenant.json") && !n.contains("trust")),
        "{names:?}"
    );
    // The folder changed while the server was down: at start, the tenant serves no rules and
    // its load waits (the approved bytes are not there to serve).
    f.say("v2");
    let tenants = f.tenants(hold());
    let info = tenants.add(f.spec()).unwrap();
    assert!(info.held && info.rules.is_empty(), "{info:?}");
    assert!(says(&tenants).await.is_empty());
    let digest = info.pending_approval.unwrap();
    tenants.approve(&id(), &digest).unwrap();
    assert_eq!(says(&tenants).await, ["v2"]);
    drop(tenants);
    // A record edited by hand approves nothing: the next start holds, and says why.
    let text = std::fs::read_to_string(&record).unwrap();
    let forged = text.replace("\"by\": \"admin\"", "\"by\": \"first_load\"");
    let tampered = forged.replacen(&Digest::of(b"echo v2\n").to_string(), &"0".repeat(64), 1);
    assert_ne!(tampered, text);
    std::fs::write(&record, tampered).unwrap();
    let tenants = f.tenants(hold());
    let info = tenants.add(f.spec()).unwrap();
    assert!(info.held);
    let view = tenants.trust(&id()).unwrap();
    assert!(
        view.record_error
            .as_deref()
            .unwrap_or("")
            .contains("tenant.json"),
        "{view:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hold_first_load_starts_a_new_tenant_with_no_rules_until_approved() {
    let f = Fleet::new();
    f.say("v1");
    let tenants = f.tenants(TenantTrustSettings {
        hold_changed_reloads: false,
        hold_first_load: true,
    });
    let info = tenants.add(f.spec()).unwrap();
    assert!(info.held);
    assert!(says(&tenants).await.is_empty());
    let view = tenants.trust(&id()).unwrap();
    assert!(view.approved.is_none() && view.rules.is_empty());
    let p = view.pending.unwrap();
    assert_eq!(p.changes[0].status, SubjectStatus::Added);
    assert_eq!(p.rules.len(), 1);
    tenants.approve(&id(), &p.digest).unwrap();
    assert_eq!(says(&tenants).await, ["v1"]);
    // Changes after that are not held (hold_changed_reloads is off).
    f.say("v2");
    assert!(!tenants.reload(&id(), None).unwrap().held);
    assert_eq!(says(&tenants).await, ["v2"]);
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.display().to_string());
        if p.is_dir() {
            out.extend(walk(&p));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trust_folder_planted_as_a_symlink_is_refused_and_nothing_is_written_through_it() {
    let f = Fleet::new();
    f.say("v1");
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(f.state.path().join("t")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), f.state.path().join("t/trust")).unwrap();
    let tenants = f.tenants(hold());
    let e = tenants.add(f.spec()).unwrap_err();
    assert!(matches!(e, TenantError::Trust { .. }), "{e:?}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    assert!(tenants.tenant(&id()).is_none());
}
