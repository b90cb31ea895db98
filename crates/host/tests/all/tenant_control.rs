//! Replicas sharing one control store (issue 29): two `Tenants` over the same tenant folder
//! and the same control folder, each with its own state folder, as two `hookbox serve`
//! replicas are. An approval or rejection on one is acted on by the other; two approvals of
//! different loads cannot both win; a replica that starts with an empty state folder reads the
//! store first and never serves a load nobody approved.

use std::path::PathBuf;
use std::sync::Arc;

use hookbox_core::aggregate::Outcome;
use hookbox_host::tenant_control::folder::FolderControl;
use hookbox_host::{
    ControlSync, HookRuntime, RuntimeSettings, TenantError, TenantSpec, TenantTrustSettings,
    Tenants,
};
use serde_json::json;

use crate::tenant_fixture::{event, id, say, says, spec};

struct Shared {
    root: tempfile::TempDir,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn folder(&self) -> PathBuf {
        self.root.path().join("tenants/t")
    }

    fn control(&self) -> PathBuf {
        self.root.path().join("control")
    }

    /// A replica named `name`, with its own (possibly fresh) state folder.
    fn replica(&self, name: &str) -> Tenants {
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let store = FolderControl::open(&self.control()).unwrap();
        Tenants::new(runtime, self.root.path().join("state").join(name))
            .with_trust(TenantTrustSettings {
                hold_changed_reloads: true,
                ..TenantTrustSettings::default()
            })
            .with_control(Arc::new(store))
    }

    /// The tenant's plugin: a UserPromptSubmit command that says `text`, and a PreToolUse
    /// guard that denies every Bash call.
    fn say(&self, text: &str) {
        say(&self.folder(), text, true);
    }

    fn spec(&self) -> TenantSpec {
        spec(self.folder())
    }
}

/// Issue 29: a load held on both replicas and approved on one is put in place on the other
/// when it looks at the store; a load rejected on one is dropped on the other. Each replica's
/// generation follows the store's.
#[tokio::test(flavor = "multi_thread")]
async fn an_approval_or_rejection_on_one_replica_is_acted_on_by_the_other() {
    let s = Shared::new();
    s.say("v1");
    let (a, b) = (s.replica("a"), s.replica("b"));
    assert!(!a.add(s.spec()).unwrap().held);
    assert!(!b.add(s.spec()).unwrap().held);
    assert_eq!(says(&b).await, ["v1"]);
    s.say("v2");
    let held = a.reload(&id(), None).unwrap();
    assert!(held.held);
    let digest = held.pending_approval.unwrap();
    assert_eq!(
        b.reload(&id(), None).unwrap().pending_approval,
        Some(digest)
    );
    let approved = a.approve(&id(), &digest).unwrap();
    assert_eq!(says(&a).await, ["v2"]);
    assert_eq!(says(&b).await, ["v1"], "b has not looked yet");
    assert_eq!(b.sync_control(&id()).unwrap(), ControlSync::Applied);
    assert_eq!(says(&b).await, ["v2"]);
    assert_eq!(b.info(&id()).unwrap().generation, approved.generation);
    assert_eq!(b.sync_control(&id()).unwrap(), ControlSync::Unchanged);

    s.say("v3");
    let digest = a.reload(&id(), None).unwrap().pending_approval.unwrap();
    b.reload(&id(), None).unwrap();
    b.reject(&id(), Some(&digest)).unwrap();
    assert_eq!(a.sync_control(&id()).unwrap(), ControlSync::Applied);
    assert!(a.info(&id()).unwrap().pending_approval.is_none());
    assert_eq!(says(&a).await, ["v2"]);
    // The rejected files loaded again on either replica are dropped, not held again.
    assert!(a.reload(&id(), None).unwrap().pending_approval.is_none());
    assert_eq!(says(&a).await, ["v2"]);
}

/// Issue 29: a replica that saw the files at one moment and another that saw them later hold
/// different loads; the store holds the later one. The earlier one's approval is refused
/// (naming the load held) and nothing changes on either replica.
#[tokio::test(flavor = "multi_thread")]
async fn an_approval_of_a_load_another_replica_superseded_is_refused() {
    let s = Shared::new();
    s.say("v1");
    let (a, b) = (s.replica("a"), s.replica("b"));
    a.add(s.spec()).unwrap();
    b.add(s.spec()).unwrap();
    s.say("v2");
    let stale = a.reload(&id(), None).unwrap().pending_approval.unwrap();
    s.say("v3");
    let newer = b.reload(&id(), None).unwrap().pending_approval.unwrap();
    assert_ne!(stale, newer);
    let e = a.approve(&id(), &stale).unwrap_err();
    let TenantError::StalePending { pending, .. } = e else {
        panic!("{e}");
    };
    assert_eq!(pending, newer);
    assert_eq!(says(&a).await, ["v1"]);
    assert_eq!(a.info(&id()).unwrap().pending_approval, Some(stale));
    assert_eq!(b.sync_control(&id()).unwrap(), ControlSync::Unchanged);
    assert_eq!(says(&b).await, ["v1"]);
    // The load the store holds is approved on b; a, which holds another, reloads.
    b.approve(&id(), &newer).unwrap();
    assert_eq!(a.sync_control(&id()).unwrap(), ControlSync::Reload);
    a.reload(&id(), None).unwrap();
    assert_eq!(says(&a).await, ["v3"]);
}

/// Issue 29: a replica that starts with an empty state folder while the tenant's files differ
/// from the approved ones reads the store first: the load is held, and the tenant answers as
/// a held tenant does (a deny for a guarded tool call), never with the unapproved rules. The
/// same start without the store would take it for a first load and serve it.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_started_with_an_empty_state_folder_serves_no_unapproved_rules() {
    let s = Shared::new();
    s.say("v1");
    let a = s.replica("a");
    a.add(s.spec()).unwrap();
    s.say("unapproved");
    let fresh = s.replica("fresh");
    let info = fresh.add(s.spec()).unwrap();
    assert!(info.held && info.pending_approval.is_some(), "{info:?}");
    // What serves meanwhile is the approved rule set, brought from the store (issue 27
    // item 6), never the unapproved one.
    assert_eq!(says(&fresh).await, ["v1"]);
    let bash = event(json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}}));
    let d = fresh.dispatch(&id(), bash).await.unwrap();
    assert_eq!(d.verdict.outcome(), Outcome::Block);
    // Approved on the other replica: the fresh one serves it at its next look.
    a.reload(&id(), None).unwrap();
    a.approve(&id(), &info.pending_approval.unwrap()).unwrap();
    assert_eq!(fresh.sync_control(&id()).unwrap(), ControlSync::Applied);
    assert_eq!(says(&fresh).await, ["unapproved"]);
}

/// Issue 29: a tenant (even one allowed rw mounts) cannot load a hook that mounts the control
/// store: the load is refused naming the folder (tenants mount only inside their own folder;
/// the store is also on every tenant's protected list, a second line should that widen).
#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_cannot_mount_the_control_store_read_write() {
    let s = Shared::new();
    let dir = s.folder().join("plugins/p/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let a = s.replica("a");
    let control = s.control();
    std::fs::write(
        dir.join("hooks.json"),
        json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/chaos.wasm",
            "mounts": [{"host": control, "guest": "/c", "access": "rw"}]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::copy(hookbox_test_artifacts::CHAOS, dir.join("chaos.wasm")).unwrap();
    let mut spec = s.spec();
    spec.policy.allow_rw_mounts = true;
    let e = a.add(spec).unwrap_err();
    let TenantError::Load { diagnostics, .. } = &e else {
        panic!("{e}");
    };
    let text = format!("{diagnostics:?}");
    assert!(
        text.contains("mount") && text.contains(&s.control().display().to_string()),
        "{text}"
    );
}
