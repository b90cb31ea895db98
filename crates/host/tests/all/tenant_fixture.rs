//! What the tenant tests (tenant_trust, tenant_control, tenant_snapshots) share: tenant `t`,
//! its spec over a folder (native commands allowed, everything else the tenant defaults), the
//! "say" plugin whose prompt hook prints a word, and what the tenant's rules add to a prompt.
//! Each test file keeps only the layout of folders it is about.

use std::path::{Path, PathBuf};

use hookbox_core::Event;
use hookbox_host::{TenantAttachment, TenantId, TenantPolicy, TenantSpec, Tenants};
use serde_json::{Value, json};

/// The one tenant of these tests.
pub(crate) fn id() -> TenantId {
    TenantId::new("t").unwrap()
}

/// Tenant `t` over `folder`, allowed to run native commands.
pub(crate) fn spec(folder: PathBuf) -> TenantSpec {
    TenantSpec {
        id: id(),
        folder,
        policy: TenantPolicy {
            allow_native_commands: true,
            ..TenantPolicy::default()
        },
        plugins: None,
        attached: (),
    }
}

/// An event of session `s1` from its payload.
pub(crate) fn event(payload: Value) -> Event {
    Event::from_payload(None, payload, "s1", "/").unwrap()
}

/// The prompt `hi`.
pub(crate) fn prompt() -> Event {
    event(json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}))
}

/// Plugin `p` in the tenant `folder`: a UserPromptSubmit command running `hooks/say.sh`, which
/// prints `text` (the prompt's added context); with `guard`, also a PreToolUse hook that
/// denies every Bash call.
pub(crate) fn say(folder: &Path, text: &str, guard: bool) {
    let dir = folder.join("plugins/p/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let mut hooks = json!({
        "UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/say.sh"}]}]});
    if guard {
        hooks["PreToolUse"] = json!([{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "echo guard >&2; exit 2"}]}]);
    }
    std::fs::write(
        dir.join("hooks.json"),
        json!({ "hooks": hooks }).to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("say.sh"), format!("echo {text}\n")).unwrap();
}

/// What the tenant's rules add to a prompt now, each trimmed.
pub(crate) async fn says<A: TenantAttachment>(tenants: &Tenants<A>) -> Vec<String> {
    let d = tenants.dispatch(&id(), prompt()).await.unwrap();
    d.verdict
        .additional_contexts()
        .iter()
        .map(|c| c.trim().to_owned())
        .collect()
}
