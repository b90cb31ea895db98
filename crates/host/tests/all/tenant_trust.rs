//! Tenants' rule digests and the operator's approval gate (issue 19 §5): every load records
//! each rule's digest in the tenant's state; with `hold_changed_reloads` a load whose rules
//! differ from the approved ones waits for `approve` while the old rules — the very bytes that
//! were hashed — keep serving; one load waits per tenant; an approval names what the admin saw.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use hookbox_core::aggregate::Outcome;
use hookbox_host::tenant_trust::TenantTerms;
use hookbox_host::tenant_trust::{ApprovedBy, SubjectStatus};
use hookbox_host::{
    HeldAnswer, HookRuntime, RuntimeSettings, TenantAttachment, TenantError, TenantPolicy,
    TenantSpec, TenantTrustSettings, Tenants,
};
use hookbox_trust::Digest;
use serde_json::json;

use crate::tenant_fixture::{event, id, prompt, say, says, spec};

struct Fleet {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
}

fn hold() -> TenantTrustSettings {
    TenantTrustSettings {
        hold_changed_reloads: true,
        hold_first_load: false,
        ..TenantTrustSettings::default()
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

    /// Tenant `t`'s plugin `p`: its prompt hook prints `text`.
    fn say(&self, text: &str) {
        say(&self.folder(), text, false);
    }

    fn spec(&self) -> TenantSpec {
        spec(self.folder())
    }
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
    // The folder changed while the server was down: at start, its load waits and the
    // tenant serves the approved bytes, from the snapshot its approval names.
    f.say("v2");
    let tenants = f.tenants(hold());
    let info = tenants.add(f.spec()).unwrap();
    assert!(info.held && !info.rules.is_empty(), "{info:?}");
    assert_eq!(says(&tenants).await, ["v1"]);
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
        ..TenantTrustSettings::default()
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

/// An embedder's attachment whose approval covers its token (as the server's does).
#[derive(Clone)]
struct Token(&'static str);

impl TenantAttachment for Token {
    fn approval_terms(&self) -> TenantTerms {
        TenantTerms::from([("token_sha256".to_owned(), json!(self.0))])
    }
}

/// Issue 27 item 6: with holding on, a `tenant.toml` that changes nothing but a policy value or
/// the token is held like a changed rule (the held load names the term), and the old token and
/// policy keep serving until it is approved. Before, it went live at the next load unseen.
#[tokio::test(flavor = "multi_thread")]
async fn a_policy_or_token_change_alone_is_held_for_approval() {
    let f = Fleet::new();
    f.say("v1");
    let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
    let tenants: Tenants<Token> = Tenants::new(runtime, f.state.path()).with_trust(hold());
    let spec = |token, max_rules| TenantSpec {
        id: id(),
        folder: f.folder(),
        policy: TenantPolicy {
            allow_native_commands: true,
            max_rules,
            ..TenantPolicy::default()
        },
        plugins: None,
        attached: Token(token),
    };
    assert!(!tenants.put(spec("old", 64)).unwrap().held);
    let view = tenants.trust(&id()).unwrap();
    let terms = view.terms.unwrap();
    assert_eq!(terms["token_sha256"], json!("old"));
    assert_eq!(terms["max_rules"], json!(64));
    assert_eq!(terms["allow_native_commands"], json!(true));
    // The same rules under a wider policy: held, naming the key.
    let info = tenants.put(spec("old", 65)).unwrap();
    assert!(info.held, "{info:?}");
    let pending = tenants.trust(&id()).unwrap().pending.unwrap();
    assert!(
        pending
            .changes
            .iter()
            .all(|c| c.status == SubjectStatus::Unchanged)
    );
    assert_eq!(pending.term_changes.len(), 1);
    assert_eq!(pending.term_changes[0].key, "max_rules");
    assert_eq!(pending.term_changes[0].before, Some(json!(64)));
    assert_eq!(pending.term_changes[0].after, Some(json!(65)));
    tenants.reject(&id(), Some(&pending.digest)).unwrap();
    // Another token: held; the old one keeps opening the tenant until it is approved.
    let info = tenants.put(spec("new", 64)).unwrap();
    assert!(info.held);
    let serving = tenants.tenant(&id()).unwrap();
    assert_eq!(serving.attached().0, "old");
    let pending = tenants.trust(&id()).unwrap().pending.unwrap();
    assert_eq!(pending.term_changes[0].key, "token_sha256");
    tenants.approve(&id(), &pending.digest).unwrap();
    assert_eq!(tenants.tenant(&id()).unwrap().attached().0, "new");
    assert_eq!(says(&tenants).await, ["v1"]);
}

/// Issue 27 item 6: a tenant held with nothing approved to serve never answers a guarded event
/// with an allow. By default a tool call, a permission request and a prompt are denied naming
/// the held load, and an event no hook could block is "unavailable"; with `held_answer =
/// unavailable` every event is. Before, it ran no rules: every event was an allow.
#[tokio::test(flavor = "multi_thread")]
async fn a_held_tenant_with_nothing_approved_never_answers_an_allow() {
    let f = Fleet::new();
    f.say("v1");
    let first = TenantTrustSettings {
        hold_first_load: true,
        ..TenantTrustSettings::default()
    };
    let tenants = f.tenants(first);
    let digest = tenants.add(f.spec()).unwrap().pending_approval.unwrap();
    let bash = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}});
    let d = tenants.dispatch(&id(), event(bash.clone())).await.unwrap();
    assert_eq!(d.verdict.outcome(), Outcome::Block);
    let text = serde_json::to_string(&d.verdict).unwrap();
    assert!(
        text.contains("\"deny\"") && text.contains(&digest.to_string()),
        "{text}"
    );
    let d = tenants.dispatch(&id(), prompt()).await.unwrap();
    assert_eq!(d.verdict.outcome(), Outcome::Block);
    let permission = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "ls"}});
    let d = tenants.dispatch(&id(), event(permission)).await.unwrap();
    assert_eq!(d.verdict.outcome(), Outcome::Block);
    for name in ["SessionStart", "PostToolUse", "Stop"] {
        let e = tenants
            .dispatch(
                &id(),
                event(json!({"hook_event_name": name, "tool_name": "Bash"})),
            )
            .await
            .unwrap_err();
        assert!(matches!(e, TenantError::Held(_)), "{name}: {e}");
        assert!(
            e.to_string().contains("held for an admin's approval"),
            "{e}"
        );
    }
    // Approved: its rules serve.
    tenants.approve(&id(), &digest).unwrap();
    assert_eq!(says(&tenants).await, ["v1"]);
    assert!(tenants.tenant(&id()).unwrap().held().is_none());
    // `unavailable`: even a tool call is refused rather than decided.
    let g = Fleet::new();
    g.say("v1");
    let tenants = g.tenants(TenantTrustSettings {
        held_answer: HeldAnswer::Unavailable,
        ..first
    });
    tenants.add(g.spec()).unwrap();
    let e = tenants.dispatch(&id(), event(bash)).await.unwrap_err();
    assert!(matches!(e, TenantError::Held(_)), "{e}");
}
