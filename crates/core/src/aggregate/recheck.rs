//! A rewritten tool input checked again (`recheck_updated_input`): the second round's verdict
//! folded into the first by the usual precedence, so a rewrite by one hook cannot slip past
//! another hook's check. The host runs the second round; the rule of the merge lives here, with
//! the other precedence rules, and is tested as a table.

use super::PreToolUseResult;
use crate::output::PermissionDecision;

/// Appended to the reason of a deny that only the re-check gave, so the agent (and the user)
/// see that the call was refused as rewritten, not as asked.
pub const RECHECK_DENY_SUFFIX: &str = " (after another hook rewrote the tool input)";

/// Folds `second` — the verdict of the event's rules on the rewritten input — into `first`,
/// the verdict that rewrote it:
///
/// - a decision of higher precedence (deny > defer > ask > allow; no decision ranks with
///   allow) replaces the first's decision and reason; a deny also drops the rewrite and sets
///   the blocking error to the second round's (or its reason), followed by
///   [`RECHECK_DENY_SUFFIX`]. An equal or lower one changes nothing: rewrites made in the second
///   round are ignored.
/// - a stop (`continue: false`) in the second round stops the agent, with its reason, unless
///   the first round already stopped it.
/// - the second round's attachments follow the first's.
///
/// Contexts and system messages of the second round are not added: the hooks already spoke
/// once for this call.
pub fn merge_recheck(first: &mut PreToolUseResult, second: PreToolUseResult) {
    let rank = |d: Option<PermissionDecision>| d.map_or(0, PermissionDecision::rank);
    if rank(second.decision) > rank(first.decision) {
        first.decision = second.decision;
        first.reason = second.reason.clone();
        if second.decision == Some(PermissionDecision::Deny) {
            first.updated_input = None;
            first.blocking_error = second
                .blocking_error
                .or(second.reason)
                .map(|r| format!("{r}{RECHECK_DENY_SUFFIX}"));
        }
    }
    if second.prevent_continuation && !first.prevent_continuation {
        first.prevent_continuation = true;
        first.stop_reason = second.stop_reason;
    }
    first.messages.extend(second.messages);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventName, HandlerType};
    use crate::report::{Attachment, AttachmentType, HookRef};
    use PermissionDecision::{Allow, Ask, Defer, Deny};
    use serde_json::json;

    const DECISIONS: [Option<PermissionDecision>; 5] =
        [None, Some(Allow), Some(Ask), Some(Defer), Some(Deny)];

    fn attachment(rule_index: usize) -> Attachment {
        Attachment {
            attachment_type: AttachmentType::HookSuccess,
            content: None,
            hook: HookRef {
                rule_index,
                plugin: "p".into(),
                hook_name: format!("h{rule_index}").into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::PreToolUse,
            },
            permission_decision: None,
            updated_input: None,
            force_continue: false,
            system_message: None,
            duration_ms: 1.0,
        }
    }

    /// A first round that rewrote the input (as the host requires before re-checking).
    fn first(decision: Option<PermissionDecision>) -> PreToolUseResult {
        PreToolUseResult {
            decision,
            reason: decision.map(|d| format!("first {}", d.as_str())),
            updated_input: Some(json!({"command": "ls --safe"})),
            additional_contexts: vec!["first context".into()],
            system_messages: vec!["first message".into()],
            messages: vec![attachment(0)],
            ..PreToolUseResult::default()
        }
    }

    fn second(decision: Option<PermissionDecision>) -> PreToolUseResult {
        PreToolUseResult {
            decision,
            reason: decision.map(|d| format!("second {}", d.as_str())),
            blocking_error: (decision == Some(Deny)).then(|| "second blocks".to_owned()),
            updated_input: Some(json!({"command": "rm -rf /"})),
            additional_contexts: vec!["second context".into()],
            system_messages: vec!["second message".into()],
            messages: vec![attachment(1)],
            ..PreToolUseResult::default()
        }
    }

    #[test]
    fn every_decision_pair_follows_precedence() {
        // (first, second) → the decision after the merge, and whether the second one's reason
        // replaced the first's.
        let rank = |d: Option<PermissionDecision>| d.map_or(0, PermissionDecision::rank);
        let mut seen = 0;
        for a in DECISIONS {
            for b in DECISIONS {
                let mut merged = first(a);
                merge_recheck(&mut merged, second(b));
                let wins = rank(b) > rank(a);
                let want = if wins { b } else { a };
                assert_eq!(merged.decision, want, "{a:?} then {b:?}");
                let want_reason = want
                    .map(|d| format!("{} {}", if wins { "second" } else { "first" }, d.as_str()));
                assert_eq!(merged.reason, want_reason, "{a:?} then {b:?}");
                if wins && b == Some(Deny) {
                    assert_eq!(merged.updated_input, None, "a deny drops the rewrite");
                    assert_eq!(
                        merged.blocking_error.as_deref(),
                        Some("second blocks (after another hook rewrote the tool input)")
                    );
                } else {
                    // The second round's rewrite is never taken; the first's stays.
                    assert_eq!(
                        merged.updated_input,
                        Some(json!({"command": "ls --safe"})),
                        "{a:?} then {b:?}"
                    );
                    assert_eq!(merged.blocking_error, None, "{a:?} then {b:?}");
                }
                // Only attachments of the second round are added.
                assert_eq!(merged.additional_contexts, vec!["first context"]);
                assert_eq!(merged.system_messages, vec!["first message"]);
                let rules: Vec<usize> = merged.messages.iter().map(|m| m.hook.rule_index).collect();
                assert_eq!(rules, vec![0, 1]);
                assert!(!merged.prevent_continuation);
                seen += 1;
            }
        }
        assert_eq!(seen, 25);
    }

    #[test]
    fn the_table_by_name() {
        // The pairs that matter most, spelled out.
        for (a, b, want) in [
            (None, Some(Allow), None),
            (None, Some(Deny), Some(Deny)),
            (Some(Allow), Some(Ask), Some(Ask)),
            (Some(Allow), Some(Deny), Some(Deny)),
            (Some(Ask), Some(Allow), Some(Ask)),
            (Some(Ask), Some(Defer), Some(Defer)),
            (Some(Defer), Some(Ask), Some(Defer)),
            (Some(Defer), Some(Deny), Some(Deny)),
            (Some(Allow), None, Some(Allow)),
        ] {
            let mut merged = first(a);
            merge_recheck(&mut merged, second(b));
            assert_eq!(merged.decision, want, "{a:?} then {b:?}");
        }
    }

    #[test]
    fn a_deny_without_blocking_error_quotes_its_reason() {
        let mut merged = first(Some(Allow));
        let mut s = second(Some(Deny));
        s.blocking_error = None;
        merge_recheck(&mut merged, s);
        assert_eq!(
            merged.blocking_error.as_deref(),
            Some("second deny (after another hook rewrote the tool input)")
        );
        // Neither: no blocking error text to carry.
        let mut merged = first(Some(Allow));
        let mut s = second(Some(Deny));
        s.blocking_error = None;
        s.reason = None;
        merge_recheck(&mut merged, s);
        assert_eq!(merged.decision, Some(Deny));
        assert_eq!(merged.blocking_error, None);
        assert_eq!(merged.reason, None);
    }

    #[test]
    fn a_stop_in_the_second_round_stops_unless_the_first_already_did() {
        let mut merged = first(Some(Allow));
        let mut s = second(None);
        s.prevent_continuation = true;
        s.stop_reason = Some("second stops".into());
        merge_recheck(&mut merged, s.clone());
        assert!(merged.prevent_continuation);
        assert_eq!(merged.stop_reason.as_deref(), Some("second stops"));
        assert_eq!(merged.decision, Some(Allow));

        let mut merged = first(Some(Allow));
        merged.prevent_continuation = true;
        merged.stop_reason = Some("first stops".into());
        merge_recheck(&mut merged, s);
        assert_eq!(merged.stop_reason.as_deref(), Some("first stops"));

        // A stop without a reason still stops.
        let mut merged = first(None);
        let mut s = second(None);
        s.prevent_continuation = true;
        merge_recheck(&mut merged, s);
        assert!(merged.prevent_continuation);
        assert_eq!(merged.stop_reason, None);
        // No stop in the second round leaves the first's flag alone.
        let mut merged = first(None);
        merge_recheck(&mut merged, second(Some(Deny)));
        assert!(!merged.prevent_continuation);
    }

    #[test]
    fn messages_of_both_rounds_are_kept_in_order() {
        let mut merged = first(Some(Ask));
        let mut s = second(Some(Allow));
        s.messages = vec![attachment(3), attachment(4)];
        merge_recheck(&mut merged, s);
        let rules: Vec<usize> = merged.messages.iter().map(|m| m.hook.rule_index).collect();
        assert_eq!(rules, vec![0, 3, 4]);
        let mut merged = first(Some(Ask));
        let mut s = second(Some(Allow));
        s.messages.clear();
        merge_recheck(&mut merged, s);
        assert_eq!(merged.messages.len(), 1);
    }
}
