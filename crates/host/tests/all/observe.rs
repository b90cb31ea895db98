//! HookFired to subscribers (never without a match) and the metrics snapshot.

use hookbox_core::Dialect;
use serde_json::json;

use crate::util::{dispatch, event, project, verdict};

#[tokio::test]
async fn hook_fired_only_when_a_rule_matched() {
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "true"}]}]}}),
    );
    let mut rx = p.host.subscribe();
    let d = dispatch(
        &p,
        json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}),
    )
    .await;
    assert_eq!(d.matched_rule_count, 0);
    assert!(d.hook_fired().is_none());
    assert!(
        rx.try_recv().is_err(),
        "no HookFired for a dispatch nothing matched"
    );
    let d = dispatch(
        &p,
        json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}}),
    )
    .await;
    let got = rx.try_recv().unwrap();
    assert_eq!(Some(&got), d.hook_fired());
    assert_eq!(got.matched_rule_count, 1);
    let m = p.host.metrics();
    assert_eq!((m.dispatches, m.dispatches_with_hooks), (2, 1));
    assert_eq!(m.hooks_run["command"], 1);
}

/// The record is made only when someone asks (issue 30): a dispatch nobody subscribes to still
/// answers it to its caller, and a subscriber that comes after the host was built, and after
/// dispatches without one, receives the very record its dispatch answers.
#[tokio::test]
async fn hook_fired_is_made_for_the_caller_and_a_late_subscriber() {
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "true"}]}]}}),
    );
    let write = json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "a"}});
    let d = dispatch(&p, write.clone()).await;
    let unwatched = d
        .hook_fired()
        .expect("the caller gets the record without a subscriber");
    assert_eq!(
        (
            unwatched.matched_rule_count,
            unwatched.fields["tool"].as_str()
        ),
        (1, Some("Write"))
    );
    let mut rx = p.host.subscribe();
    let d = dispatch(&p, write.clone()).await;
    let got = rx
        .try_recv()
        .expect("a late subscriber receives the record");
    assert_eq!(Some(&got), d.hook_fired());
    assert!(rx.try_recv().is_err(), "one record per dispatch");
    drop(rx);
    let d = dispatch(&p, write).await;
    assert!(d.hook_fired().is_some());
    let mut again = p.host.subscribe();
    assert!(
        again.try_recv().is_err(),
        "no record sent before it subscribed"
    );
}

/// A rule's names are made once, when its host loads it: every report and attachment of the
/// rule, on every event, shares them (they were copied twice per report and twice more per
/// attachment on every event; docs/performance.md, issue 30's sixth round).
#[tokio::test]
async fn a_rules_reports_share_its_names_across_events_and_attachments() {
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}),
    );
    let bash = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}});
    let (a, b) = (dispatch(&p, bash.clone()).await, dispatch(&p, bash).await);
    let (ra, rb) = (&a.reports[0].hook, &b.reports[0].hook);
    assert_eq!(&*ra.hook_name, "true");
    assert_eq!(&*ra.plugin, "plugin");
    assert!(std::sync::Arc::ptr_eq(&ra.hook_name, &rb.hook_name));
    assert!(std::sync::Arc::ptr_eq(&ra.plugin, &rb.plugin));
    let attached = &a.verdict.messages()[0].hook;
    assert!(std::sync::Arc::ptr_eq(&ra.hook_name, &attached.hook_name));
    assert!(std::sync::Arc::ptr_eq(&ra.plugin, &attached.plugin));
}

/// A project whose one guard blocks `Bash` with `reason`, and a `Bash` call.
fn bash_blocked_with(reason: &str) -> (crate::util::Project, hookbox_core::Event) {
    let block = json!({"decision": "block", "reason": reason}).to_string();
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("echo '{block}'")}]}]}}),
    );
    let call = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let event = event(call, p.path());
    (p, event)
}

/// An event a caller keeps (a replay, a bench, a test harness) is dispatched as an `Arc<Event>`
/// and shared, not copied (issue 30: the bench copied its event deeply on every run, ~2,000 of
/// the typed figure's instructions, which neither a server nor the floor pays); the verdict
/// and the hooks are the same as for the `Event` itself.
#[tokio::test]
async fn a_kept_event_is_dispatched_shared_not_copied() {
    let (p, event) = bash_blocked_with("no");
    let event = std::sync::Arc::new(event);
    let shared = p.host.dispatch(event.clone()).await;
    assert!(
        std::sync::Arc::ptr_eq(&shared.event, &event),
        "the caller's event, not a copy"
    );
    let owned = p.host.dispatch((*event).clone()).await;
    for d in [&shared, &owned] {
        assert_eq!(verdict(d)["reason"], "no", "{:?}", d.verdict);
        assert_eq!(d.reports.len(), 1);
    }
}

/// A dispatch's future holds what it needs — the host's rules as they were when it was made, the
/// event — and no borrow of the host: it can be handed to `tokio::spawn` as it is (it was an
/// `async fn` of `&self` around the dispatch's own future; issue 30, seventh round).
#[tokio::test]
async fn a_dispatch_future_can_be_spawned_as_it_is() {
    let (p, event) = bash_blocked_with("spawned");
    let d = tokio::spawn(p.host.dispatch(event)).await.unwrap();
    assert_eq!(verdict(&d)["reason"], "spawned", "{:?}", d.verdict);
}
