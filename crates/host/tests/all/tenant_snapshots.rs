//! A held tenant serves the approved bytes (issue 27 item 6): every load of a tenant is a
//! snapshot its commands run from (`CLAUDE_PLUGIN_ROOT` is the tree, so a script finds its
//! neighbours and `node` starts); a library changed alone is a change, held like any other; a
//! tenant restarted while a load is held serves its approved snapshot, not the held deny; a
//! replica with an empty state folder brings the approved snapshot from the control store; a
//! corrupt snapshot makes the held deny, naming why — never an allow.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hookbox_core::Event;
use hookbox_core::aggregate::Outcome;
use hookbox_host::tenant_control::folder::FolderControl;
use hookbox_host::{HookRuntime, RuntimeSettings, TenantSpec, TenantTrustSettings, Tenants};
use hookbox_trust::Digest;
use serde_json::json;

use crate::tenant_fixture::{id, says, spec};

/// A guard that finds its word list beside it, through `$0`: it cannot find it when run from a
/// per-file copy (`/proc/self/fd/N`), and then fails open (exit 1), as a real plugin would.
const GUARD: &str = "#!/bin/sh\nwords=\"$(dirname \"$0\")/words.sh\"\nif [ ! -r \"$words\" ]; then echo \"no $words\" >&2; exit 1; fi\n. \"$words\"\nif grep -q \"$WORD\"; then echo \"guard: $WORD refused\" >&2; exit 2; fi\nexit 0\n";

const WORDS: &str = "WORD='rm -rf'\n";

struct Fleet {
    root: tempfile::TempDir,
}

impl Fleet {
    fn new() -> Fleet {
        Fleet {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn folder(&self) -> PathBuf {
        self.root.path().join("tenants/t")
    }

    fn state(&self, name: &str) -> PathBuf {
        self.root.path().join("state").join(name)
    }

    fn control(&self) -> PathBuf {
        self.root.path().join("control")
    }

    /// A server (or replica) with state folder `name`, holding changed loads, sharing the
    /// control store when `shared`.
    fn tenants(&self, name: &str, shared: bool) -> Tenants {
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let t = Tenants::new(runtime, self.state(name)).with_trust(TenantTrustSettings {
            hold_changed_reloads: true,
            ..TenantTrustSettings::default()
        });
        if shared {
            t.with_control(Arc::new(FolderControl::open(&self.control()).unwrap()))
        } else {
            t
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.folder().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Plugin `p`: a Bash guard run by `command`, its files beside it.
    fn plugin(&self, command: &str) {
        self.write(
            "plugins/p/hooks/hooks.json",
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": command}]}]}})
            .to_string(),
        );
    }

    fn guard(&self) {
        self.plugin("${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh");
        self.write("plugins/p/hooks/guard.sh", GUARD);
        self.write("plugins/p/hooks/words.sh", WORDS);
    }

    fn spec(&self) -> TenantSpec {
        spec(self.folder())
    }
}

/// The tenant's answer to a Bash call running `rm -rf /`: its outcome and verdict as JSON.
async fn rm_rf(tenants: &Tenants) -> (Outcome, String) {
    let event = Event::from_payload(
        None,
        json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /"}}),
        "s1",
        "/",
    )
    .unwrap();
    let d = tenants.dispatch(&id(), event).await.unwrap();
    (
        d.verdict.outcome(),
        serde_json::to_string(&d.verdict).unwrap(),
    )
}

/// Replaces the stored file `p` (read-only in a store) with `text`.
fn tamper(p: &Path, text: &str) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(p, text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_tenant_keeps_serving_the_approved_bytes_across_a_restart_and_never_a_corrupt_copy()
{
    let f = Fleet::new();
    f.guard();
    let a = f.tenants("s", false);
    assert!(!a.add(f.spec()).unwrap().held);
    // Its command runs from the snapshot: the guard finds its word list through `$0`.
    let (outcome, text) = rm_rf(&a).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    assert!(text.contains("guard: rm -rf refused"), "{text}");
    // Only the word list changes: the rules are the same, the files are not — held.
    f.write("plugins/p/hooks/words.sh", "WORD='never-said'\n");
    let info = a.reload(&id(), None).unwrap();
    assert!(info.held, "{info:?}");
    let view = serde_json::to_value(a.trust(&id()).unwrap()).unwrap();
    assert_eq!(
        view["pending"]["changes"][0]["files_changed"],
        json!(true),
        "{view:#}"
    );
    let (outcome, text) = rm_rf(&a).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    drop(a);
    // Restarted with the load held: the approved guard serves, not the held deny.
    let b = f.tenants("s", false);
    let info = b.add(f.spec()).unwrap();
    assert!(info.held && info.pending_approval.is_some(), "{info:?}");
    let (outcome, text) = rm_rf(&b).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    assert!(
        text.contains("guard: rm -rf refused") && !text.contains("no approved rules"),
        "{text}"
    );
    drop(b);
    // The approved word list's copy in the store swapped: the tenant answers the held deny,
    // naming the corrupt file — never the swapped bytes, never an allow.
    let object = f
        .state("s")
        .join("t/trust/snapshots/objects")
        .join(format!("{}.x", Digest::of(WORDS.as_bytes())));
    tamper(&object, "WORD='other'\n");
    let c = f.tenants("s", false);
    let info = c.add(f.spec()).unwrap();
    assert!(info.held, "{info:?}");
    let (outcome, text) = rm_rf(&c).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    assert!(
        text.contains("no approved rules") && text.contains("corrupt"),
        "{text}"
    );
    // Approved: the new word list serves.
    c.approve(&id(), &info.pending_approval.unwrap()).unwrap();
    let (outcome, text) = rm_rf(&c).await;
    assert_eq!(outcome, Outcome::Allow, "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_with_an_empty_state_folder_serves_the_approved_snapshot_from_the_control_store()
{
    let f = Fleet::new();
    f.guard();
    let a = f.tenants("a", true);
    a.add(f.spec()).unwrap();
    f.write("plugins/p/hooks/words.sh", "WORD='never-said'\n");
    let fresh = f.tenants("fresh", true);
    let info = fresh.add(f.spec()).unwrap();
    assert!(info.held, "{info:?}");
    let (outcome, text) = rm_rf(&fresh).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    assert!(
        text.contains("guard: rm -rf refused") && !text.contains("no approved rules"),
        "{text}"
    );
    // The control store's copy of the word list swapped by another writer: a replica that
    // must bring it from there refuses it, and answers the held deny naming why.
    let object = f
        .control()
        .join(".snapshots/objects")
        .join(Digest::of(WORDS.as_bytes()).to_string());
    tamper(&object, "WORD='nothing'\n");
    let other = f.tenants("other", true);
    assert!(other.add(f.spec()).unwrap().held);
    let (outcome, text) = rm_rf(&other).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    assert!(
        text.contains("no approved rules") && text.contains("corrupt"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_hook_requiring_its_neighbour_works_in_a_tenant() {
    let f = Fleet::new();
    f.plugin("node ${CLAUDE_PLUGIN_ROOT}/hooks/guard.js");
    f.write(
        "plugins/p/hooks/guard.js",
        "const words = require(__dirname + '/words.js');\nlet input = '';\nprocess.stdin.on('data', (d) => { input += d; });\nprocess.stdin.on('end', () => {\n  if (words.some((w) => input.includes(w))) { console.error('node guard: refused'); process.exit(2); }\n});\n",
    );
    f.write("plugins/p/hooks/words.js", "module.exports = ['rm -rf'];\n");
    let t = f.tenants("s", false);
    t.add(f.spec()).unwrap();
    let (outcome, text) = rm_rf(&t).await;
    assert_eq!(outcome, Outcome::Block, "{text}");
    assert!(text.contains("node guard: refused"), "{text}");
}

/// While the approved snapshots serve under the approved policy (a restart found a narrower
/// `max_matched_rules` held), a reload is loaded under the tenant's own policy: approved, it
/// runs under the policy approved with it — not the one the snapshots served under.
#[tokio::test(flavor = "multi_thread")]
async fn a_reload_while_the_approved_snapshots_serve_is_loaded_under_the_tenants_own_policy() {
    let f = Fleet::new();
    f.write(
        "plugins/p/hooks/hooks.json",
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "echo a"},
            {"type": "command", "command": "echo b"}]}]}})
        .to_string(),
    );
    drop(f.tenants("s", false).add(f.spec()).unwrap());
    let mut narrow = f.spec();
    narrow.policy.max_matched_rules = 1;
    let t = f.tenants("s", false);
    assert!(t.add(narrow).unwrap().held);
    assert_eq!(says(&t).await, ["a", "b"], "the approved policy serves");
    let info = t.reload(&id(), None).unwrap();
    assert!(info.held, "{info:?}");
    t.approve(&id(), &info.pending_approval.unwrap()).unwrap();
    assert_eq!(
        says(&t).await.len(),
        1,
        "its own policy: one rule per dispatch"
    );
}
