//! Hooks run concurrently and the verdict is aggregated in rule order, whatever order they
//! finish in.

use hookbox_core::Dialect;
use serde_json::json;

use crate::util::{dispatch, plugin_data, project, project_with, read_number, verdict};

fn decide(decision: &str, reason: &str) -> String {
    format!(
        r#"echo '{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"{decision}","permissionDecisionReason":"{reason}","additionalContext":"{decision}-ctx"}}}}'"#
    )
}

#[tokio::test]
async fn deny_wins_even_when_it_finishes_last() {
    // The deny hook is the slow one: it finishes after the others.
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("sleep 0.4; {}", decide("deny", "slow deny"))},
        {"type": "command", "command": decide("allow", "fast allow")},
        {"type": "command", "command": format!("sleep 0.1; {}", decide("ask", "ask"))},
        {"type": "command", "command": decide("defer", "defer")}
    ]}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(&p, json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})).await;
    let v = verdict(&d);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["reason"], "slow deny");
    assert_eq!(
        v["additional_contexts"],
        json!(["deny-ctx", "allow-ctx", "ask-ctx", "defer-ctx"]),
        "rule order, not finish order"
    );
    let order: Vec<usize> = d.reports.iter().map(|r| r.hook.rule_index).collect();
    assert_eq!(order, vec![0, 1, 2, 3]);
}

#[tokio::test]
async fn hooks_overlap_in_time() {
    // Four hooks that each sleep 0.5 s: run one after another they would take 2 s. We check
    // overlap through the hooks' own start/end stamps rather than the wall clock.
    let hooks = json!({"hooks": {"PostToolUse": [{"hooks": (0..4).map(|i| json!({
        "type": "command",
        "command": format!("date +%s%N > \"$CLAUDE_PLUGIN_DATA/start{i}\"; sleep 0.5; date +%s%N > \"$CLAUDE_PLUGIN_DATA/end{i}\"")
    })).collect::<Vec<_>>()}]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(&p, json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}, "tool_response": {}})).await;
    assert_eq!(d.reports.len(), 4);
    let data = plugin_data(&p);
    let read = |n: String| read_number(&data.join(n));
    let latest_start = (0..4).map(|i| read(format!("start{i}"))).max().unwrap();
    let earliest_end = (0..4).map(|i| read(format!("end{i}"))).min().unwrap();
    assert!(
        latest_start < earliest_end,
        "every hook started before any finished: they ran concurrently"
    );
}

#[tokio::test]
async fn hooks_over_the_hosts_quota_are_refused_at_once_not_queued() {
    // A quota of one hook in flight: one of three runs; the other two fail at once with
    // `overloaded` (fail open by default), and never start later.
    let hooks = json!({"hooks": {"PostToolUse": [{"hooks": (0..3).map(|i| json!({
        "type": "command",
        "command": format!("touch \"$CLAUDE_PLUGIN_DATA/ran{i}\"; sleep 0.2")
    })).collect::<Vec<_>>()}]}});
    let p = project_with(Dialect::Claude, hooks, |pol| pol.max_hooks_in_flight = 1);
    let d = dispatch(&p, json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}, "tool_response": {}})).await;
    let classes: Vec<Option<&str>> = d
        .reports
        .iter()
        .map(|r| r.effect.failure.as_ref().map(|f| f.class.as_str()))
        .collect();
    assert_eq!(
        classes.iter().filter(|c| c.is_none()).count(),
        1,
        "{classes:?}"
    );
    assert_eq!(
        classes.iter().filter(|c| **c == Some("overloaded")).count(),
        2,
        "{classes:?}"
    );
    let ran = std::fs::read_dir(plugin_data(&p)).unwrap().count();
    assert_eq!(ran, 1, "the refused hooks never ran");
    let f = d
        .reports
        .iter()
        .find_map(|r| r.effect.failure.as_ref())
        .unwrap();
    assert!(f.message.contains("max_hooks_in_flight"), "{}", f.message);
}

#[tokio::test]
async fn identical_handlers_run_once() {
    let cmd = r#"echo x >> "$CLAUDE_PLUGIN_DATA/count"; echo ctx"#;
    let hooks = json!({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": cmd}]},
        {"hooks": [{"type": "command", "command": cmd}]}
    ]}});
    let p = project(Dialect::Claude, hooks);
    let d = dispatch(
        &p,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
    )
    .await;
    assert_eq!(d.matched_rule_count, 2);
    assert_eq!(d.reports.len(), 1);
    assert_eq!(verdict(&d)["additional_contexts"], json!(["ctx"]));
}

/// A caller dispatching in a loop whose dispatches never wait (nothing matches) still lets the
/// runtime run its timers and other tasks: on a one-thread runtime a 1 ms sleep in another task
/// ends while the loop is still going. Without the cooperative budget the loop kept the thread
/// until it ended (the bench's tenant floods kept both workers and starved the quiet tenant).
#[test]
fn a_loop_of_dispatches_that_never_wait_lets_other_tasks_and_timers_run() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host =
        hookbox_host::HookHost::new(hookbox_host::HostPolicy::for_project(dir.path())).unwrap();
    let woke = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen_at = rt.block_on(async {
        let flag = woke.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let event = hookbox_core::Event::new(hookbox_core::EventName::Notification, "s", "/");
        for i in 0..200_000 {
            host.dispatch(event.clone()).await;
            if woke.load(std::sync::atomic::Ordering::SeqCst) {
                return Some(i);
            }
        }
        None
    });
    assert!(
        seen_at.is_some(),
        "the sleeping task never ran during 200,000 dispatches"
    );
}
