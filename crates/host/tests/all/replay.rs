//! Replay files: one redacted record per dispatch that ran hooks; previews cut unless full
//! capture is on (a policy field, which the CLI sets from `.hookbox/settings.json`: a host never
//! reads the project's settings by itself); secrets redacted either way.

use hookbox_core::Dialect;
use hookbox_host::replay::{OUTPUT_PREVIEW_CHARS, read_replay};
use serde_json::json;

use crate::util::{dispatch, project_with};

const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
const GH: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

fn leaky_hooks() -> serde_json::Value {
    json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command",
        "command": format!("echo 'aws={AWS} token={GH}'; head -c 2000 /dev/zero | tr '\\0' x")}]}]}})
}

/// Dispatches the leaky hook on a project whose settings ask for full capture; `apply`: whether
/// the caller applies those settings to the policy (as the CLI does) or not (a library host,
/// a tenant).
async fn run_and_read(apply: bool) -> (String, bool) {
    let p = project_with(Dialect::Claude, leaky_hooks(), |_| {});
    std::fs::create_dir_all(p.path().join(".hookbox")).unwrap();
    std::fs::write(
        p.path().join(".hookbox/settings.json"),
        r#"{"replay":{"capture_flags":{"capture_plugin_hook_output_full":true}},"stop":{"reentry_cap":100}}"#,
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut policy = hookbox_host::HostPolicy::for_project(p.path()).with_state_dir(state.path());
    if apply {
        hookbox_host::Settings::load(p.path())
            .unwrap()
            .apply(&mut policy);
    }
    let host = hookbox_host::HookHost::new(policy).unwrap();
    assert_eq!(
        host.stop_reentry_cap(),
        if apply { 100 } else { 3 },
        "the settings' Stop re-entry cap reaches the host only through its policy"
    );
    host.load(&[p.path().join("plugin")], &Default::default());
    host.dispatch(crate::util::event(json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "env"}, "tool_response": {}}), p.path())).await;
    // A dispatch nothing matched writes no record.
    dispatch(&p, json!({"hook_event_name": "Stop"})).await;
    host.runtime().flush_replay();
    let file = host.replay_dir().unwrap().join("sess-1.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let read = read_replay(&file).unwrap();
    assert_eq!(read.records.len(), 1);
    assert!(read.skipped_lines.is_empty());
    (text, read.records[0].hooks[0].output_truncated)
}

#[tokio::test]
async fn secrets_are_redacted_in_previews() {
    let (text, truncated) = run_and_read(false).await;
    assert!(!text.contains(AWS) && !text.contains(GH), "{text}");
    assert!(
        text.contains("[REDACTED:aws_access_key_id]") && text.contains("[REDACTED:github_token]")
    );
    assert!(truncated);
    let rec: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        rec["hooks"][0]["output_preview"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        OUTPUT_PREVIEW_CHARS
    );
}

#[tokio::test]
async fn a_host_reads_no_settings_from_its_project_by_itself() {
    // The project asks for full capture and a Stop cap of 100; nobody applied them.
    let (_, truncated) = run_and_read(false).await;
    assert!(truncated, "previews, as the policy says");
}

#[tokio::test]
async fn secrets_are_redacted_in_full_capture_too() {
    let (text, truncated) = run_and_read(true).await;
    assert!(!text.contains(AWS) && !text.contains(GH), "{text}");
    assert!(text.contains("[REDACTED:github_token]"));
    assert!(!truncated);
    assert!(text.matches('x').count() >= 2000, "full output kept");
}
