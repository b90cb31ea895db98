//! The Stop loop through the host: force_continue up to the re-entry cap, `stop_hook_active` on
//! re-entry, and PreCompact staying `allow` even when a hook blocks.

use hookbox_core::Dialect;
use hookbox_core::aggregate::Outcome;
use hookbox_core::stop_loop::StopStep;
use serde_json::json;

use crate::util::{event, project, verdict};

#[tokio::test]
async fn force_continue_until_the_cap() {
    // The hook always asks to continue, and reports whether it saw stop_hook_active.
    let cmd = r#"python3 -c 'import json,sys; e=json.load(sys.stdin); print(json.dumps({"decision":"block","reason":"active=%s" % e["stop_hook_active"]}))'"#;
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": cmd}]}]}}),
    );
    let mut turn = p.host.stop_loop();
    let stop = || {
        event(
            json!({"hook_event_name": "Stop", "last_assistant_message": ""}),
            p.path(),
        )
    };
    let mut outcomes = Vec::new();
    let mut follow_ups = Vec::new();
    loop {
        let (d, step) = p.host.dispatch_stop(stop(), &mut turn).await;
        outcomes.push(d.verdict.outcome());
        match step {
            StopStep::Continue(msg) => follow_ups.push(msg),
            StopStep::Finish => break,
        }
        assert!(outcomes.len() < 10, "the cap must end the loop");
    }
    assert_eq!(
        outcomes,
        vec![
            Outcome::Continue,
            Outcome::Continue,
            Outcome::Continue,
            Outcome::ReentryCapped
        ]
    );
    assert_eq!(
        follow_ups,
        vec!["active=False", "active=True", "active=True"]
    );
    assert_eq!(turn.reentries(), 3);
}

#[tokio::test]
async fn empty_answer_rescue_continues_only_once_it_is_empty() {
    let cmd = r#"python3 -c 'import json,sys; e=json.load(sys.stdin); m=(e.get("last_assistant_message") or "").strip(); print(json.dumps({"decision":"block","reason":"Please give your final answer."}) if not m and not e["stop_hook_active"] else "")'"#;
    let p = project(
        Dialect::Claude,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": cmd}]}]}}),
    );
    let mut turn = p.host.stop_loop();
    let (d, step) = p
        .host
        .dispatch_stop(
            event(
                json!({"hook_event_name": "Stop", "last_assistant_message": "  "}),
                p.path(),
            ),
            &mut turn,
        )
        .await;
    assert_eq!(
        step,
        StopStep::Continue("Please give your final answer.".into())
    );
    assert_eq!(d.hook_fired().unwrap().outcome, Outcome::Continue);
    let (_, step) = p
        .host
        .dispatch_stop(
            event(
                json!({"hook_event_name": "Stop", "last_assistant_message": "Done."}),
                p.path(),
            ),
            &mut turn,
        )
        .await;
    assert_eq!(step, StopStep::Finish);
}

#[tokio::test]
async fn pre_compact_stays_allow_when_a_hook_blocks() {
    let p = project(
        Dialect::Agentao,
        json!({"hooks": {"PreCompact": [
            {"type": "command", "command": "echo 'too often' >&2; exit 2"},
            {"type": "command", "command": "echo '{\"decision\":\"block\",\"reason\":\"no\"}'"}
        ]}}),
    );
    let d = p
        .host
        .dispatch(event(
            json!({"hook_event_name": "PreCompact", "trigger": "auto", "compaction_type": "full"}),
            p.path(),
        ))
        .await;
    assert_eq!(d.verdict.outcome(), Outcome::Allow);
    assert_eq!(verdict(&d)["ignored_block"], "too often");
    let fired = d.hook_fired().unwrap().clone();
    assert_eq!(fired.fields["compaction_type"], "full");
    assert_eq!(fired.fields["trigger"], "auto");
}
