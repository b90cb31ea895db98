//! HookFired to subscribers (never without a match) and the metrics snapshot.

use hookbox_core::Dialect;
use serde_json::json;

use crate::util::{dispatch, project};

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
    assert!(d.hook_fired.is_none());
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
    assert_eq!(Some(&got), d.hook_fired.as_ref());
    assert_eq!(got.matched_rule_count, 1);
    let m = p.host.metrics();
    assert_eq!((m.dispatches, m.dispatches_with_hooks), (2, 1));
    assert_eq!(m.hooks_run["command"], 1);
}
