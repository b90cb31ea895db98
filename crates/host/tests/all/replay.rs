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
    let files: Vec<(String, u64)> = std::fs::read_dir(&dir)
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

/// A record's HookFired is the one its dispatch answers and a subscriber receives: made for the
/// record and moved there when nobody asked for it first, copied when a subscriber did (issue
/// 30) — and the caller still gets it after the record took its own.
#[tokio::test]
async fn the_records_hook_fired_is_the_dispatchs_with_or_without_a_subscriber() {
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().to_owned();
    let p = project_with(
        Dialect::Claude,
        json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "true"}]}]}}),
        move |policy| *policy = policy.clone().with_state_dir(&state_dir),
    );
    let write = json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "a"}});
    let unwatched = dispatch(&p, write.clone()).await;
    let mut rx = p.host.subscribe();
    let watched = dispatch(&p, write).await;
    let received = rx.try_recv().expect("the subscriber receives the record");
    assert_eq!(Some(&received), watched.hook_fired());
    p.host.runtime().flush_replay();
    let read = read_replay(&p.host.replay_dir().unwrap().join("sess-1.jsonl")).unwrap();
    assert_eq!(read.records.len(), 2);
    for (record, d) in read.records.iter().zip([&unwatched, &watched]) {
        let answered = d.hook_fired().expect("the caller gets the record too");
        assert_eq!(answered.fields["tool"], "Write");
        assert_eq!(
            record.hook_fired.as_ref(),
            Some(&serde_json::to_value(answered).unwrap())
        );
    }
}
