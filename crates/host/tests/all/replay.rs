//! Replay files: one redacted record per dispatch that ran hooks; previews cut unless full
//! capture is on; secrets redacted either way.

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

async fn run_and_read(full: bool) -> (String, bool) {
    let p = project_with(Dialect::Claude, leaky_hooks(), |_| {});
    if full {
        std::fs::create_dir_all(p.path().join(".hookbox")).unwrap();
        std::fs::write(
            p.path().join(".hookbox/settings.json"),
            r#"{"replay":{"capture_flags":{"capture_plugin_hook_output_full":true}}}"#,
        )
        .unwrap();
    }
    // Settings are read when the host is built: build a second host on the same project.
    let state = tempfile::tempdir().unwrap();
    let host = hookbox_host::HookHost::new(
        hookbox_host::HostPolicy::for_project(p.path()).with_state_dir(state.path()),
    )
    .unwrap();
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
async fn secrets_are_redacted_in_full_capture_too() {
    let (text, truncated) = run_and_read(true).await;
    assert!(!text.contains(AWS) && !text.contains(GH), "{text}");
    assert!(text.contains("[REDACTED:github_token]"));
    assert!(!truncated);
    assert!(text.matches('x').count() >= 2000, "full output kept");
}

#[tokio::test]
async fn client_chosen_session_ids_cannot_grow_replay_without_bound() {
    // Issue 16: 300 dispatches with 300 session ids made 300 replay files, each record holding
    // the hook's whole block reason. Now the folder keeps at most its quota, the most recent
    // sessions first, and records hold previews.
    use hookbox_core::config::LoadOptions;
    use hookbox_host::replay::ReplayQuota;
    use hookbox_host::{HookHost, HookRuntime, HostPolicy, RuntimeSettings};

    let project = tempfile::tempdir().unwrap();
    let plugin = project.path().join("plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    // Blocks every prompt with a 100 KB reason.
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
        "command": "head -c 100000 /dev/zero | tr '\\0' r >&2; exit 2"}]}]}});
    std::fs::write(plugin.join("hooks/hooks.json"), hooks.to_string()).unwrap();
    let quota = ReplayQuota {
        max_bytes: 64 << 10,
        max_files: 10,
    };
    let runtime = HookRuntime::new(RuntimeSettings {
        replay_quota: quota,
        ..RuntimeSettings::default()
    })
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = HookHost::with_runtime(
        &runtime,
        HostPolicy::for_project(project.path()).with_state_dir(state.path()),
    )
    .unwrap();
    let report = host.load(
        &[plugin],
        &LoadOptions::default().with_dialect(Some(Dialect::Claude)),
    );
    assert!(!report.has_errors(), "{:#?}", report.diagnostics);
    let cwd = project.path().display().to_string();
    for i in 0..300 {
        let event = hookbox_core::Event::from_payload(
            None,
            json!({"hook_event_name": "UserPromptSubmit", "prompt": "go"}),
            &format!("session-{i}"),
            &cwd,
        )
        .unwrap();
        let d = host.dispatch(event).await;
        // The verdict itself keeps the whole reason: only the records are previews.
        assert!(d.verdict.outcome().as_str() == "block");
    }
    runtime.flush_replay();
    let dir = host.replay_dir().unwrap();
    let files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    assert!(files.len() <= quota.max_files, "{} files", files.len());
    let bytes: u64 = files.iter().map(|(_, b)| b).sum();
    assert!(bytes <= quota.max_bytes, "{bytes} bytes");
    // The newest session is there, whole, with a preview of the reason.
    let newest = read_replay(&dir.join("session-299.jsonl")).unwrap();
    assert_eq!(newest.records.len(), 1);
    let reason = newest.records[0].hook_fired.as_ref().unwrap()["blocking_error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        reason.chars().count(),
        hookbox_core::fired::TEXT_PREVIEW_CHARS + 1,
        "a preview, not the 100 KB reason"
    );
    let metrics = runtime.metrics();
    assert!(
        metrics.replay_files_removed >= 290,
        "{}",
        metrics.replay_files_removed
    );
    assert_eq!(metrics.replay_errors, 0);
}

#[tokio::test]
async fn client_chosen_session_ids_cannot_grow_session_data_folders_without_bound() {
    // Issue 16: with a per-session data folder (the Ghast dialect's), 300 session ids made 300
    // folders. A plugin keeps at most `max_session_dirs`, the most recently used.
    use hookbox_core::config::LoadOptions;
    use hookbox_host::{HookHost, HookRuntime, HostPolicy, RuntimeSettings};

    let project = tempfile::tempdir().unwrap();
    let plugin = project.path().join("plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
        "command": "echo data > \"$CLAUDE_PLUGIN_DATA/mark\""}]}]}});
    std::fs::write(plugin.join("hooks/hooks.json"), hooks.to_string()).unwrap();
    let runtime = HookRuntime::new(RuntimeSettings {
        max_session_dirs: 5,
        ..RuntimeSettings::default()
    })
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = HookHost::with_runtime(
        &runtime,
        HostPolicy::for_project(project.path()).with_state_dir(state.path()),
    )
    .unwrap();
    let report = host.load(
        &[plugin],
        &LoadOptions::default().with_dialect(Some(Dialect::Ghast)),
    );
    assert!(!report.has_errors(), "{:#?}", report.diagnostics);
    let cwd = project.path().display().to_string();
    for i in 0..40 {
        let event = hookbox_core::Event::from_payload(
            None,
            json!({"hook_event_name": "UserPromptSubmit", "prompt": "go"}),
            &format!("session-{i}"),
            &cwd,
        )
        .unwrap();
        let d = host.dispatch(event).await;
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }
    let data = state.path().join("data");
    let plugin_dir = std::fs::read_dir(&data)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut sessions: Vec<String> = std::fs::read_dir(&plugin_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    sessions.sort();
    assert_eq!(sessions.len(), 5, "{sessions:?}");
    assert!(sessions.contains(&"session-39".to_owned()), "{sessions:?}");
    assert!(plugin_dir.join("session-39/mark").exists());
}
