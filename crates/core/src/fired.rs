//! The `HookFired` record (SPEC §6; the main source's `PLUGIN_HOOK_FIRED`): one per dispatch with
//! its outcome and the event's own fields — and **none when no rule matched**, so a session
//! without hooks is not flooded with noise.
//!
//! A record is observability, kept and streamed long after the dispatch (replay files, the
//! server's `/fired` streams), while its texts — a block reason, a stop reason — are a hook's
//! or a client's to make as long as they like: each text field holds a preview of at most
//! [`TEXT_PREVIEW_CHARS`] characters, cut with a trailing `…`. The verdict keeps the whole text.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::aggregate::{Outcome, Verdict};
use crate::event::wire::cut_chars;
use crate::event::{Event, EventData, EventName};

/// Characters of each text field a record keeps (as replay keeps of hook output): enough to
/// say why, never a hook's whole output.
pub const TEXT_PREVIEW_CHARS: usize = 500;

/// One dispatch's observability record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookFired {
    /// The event (`UserPromptSubmit`, `Stop`, …).
    pub hook_name: EventName,
    /// `allow`, `block`, and for Stop `continue`, `continue_at_max_iter`, `reentry_capped`.
    pub outcome: Outcome,
    /// Rules dispatched (not rules that succeeded); always ≥ 1.
    pub matched_rule_count: usize,
    /// The event's own fields (`blocking_error`, `turn_end_reason`, `compaction_type`, …).
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl HookFired {
    /// The record for a dispatch, or `None` when `matched_rule_count == 0`.
    pub fn for_dispatch(
        event: &Event,
        verdict: &Verdict,
        matched_rule_count: usize,
    ) -> Option<HookFired> {
        if matched_rule_count == 0 {
            return None;
        }
        let mut f = Map::new();
        let added = verdict.additional_contexts().len();
        match verdict {
            Verdict::UserPromptSubmit(r) => {
                f.insert("blocking_error".into(), json!(r.blocking_error));
                f.insert("stop_reason".into(), json!(r.stop_reason));
                f.insert("added_context_count".into(), json!(added));
            }
            Verdict::Stop(r) => {
                let s = event.stop_data().cloned().unwrap_or_default();
                f.insert("turn_end_reason".into(), json!(s.turn_end_reason.as_str()));
                f.insert("at_max_iter".into(), json!(s.at_max_iter()));
                f.insert("added_context_count".into(), json!(added));
                f.insert("suppress_output".into(), json!(r.suppress_output));
            }
            Verdict::PreCompact(_) => {
                if let EventData::PreCompact {
                    trigger,
                    compaction_type,
                    ..
                } = &event.data
                {
                    f.insert(
                        "compaction_type".into(),
                        json!(compaction_type.map(|c| c.as_str())),
                    );
                    f.insert("trigger".into(), json!(trigger));
                }
            }
            Verdict::PreToolUse(r) => {
                if event.name == EventName::PreModelSwitch {
                    f.insert("to_model".into(), json!(event.field_str("to_model")));
                } else {
                    f.insert("tool".into(), json!(event.tool_name()));
                }
                f.insert("decision".into(), json!(r.decision.map(|d| d.as_str())));
                f.insert("added_context_count".into(), json!(added));
            }
            Verdict::Event(_) => {
                f.insert("added_context_count".into(), json!(added));
            }
        }
        for v in f.values_mut() {
            if let Value::String(text) = v
                && text.chars().nth(TEXT_PREVIEW_CHARS).is_some()
            {
                *text = format!("{}…", cut_chars(text, TEXT_PREVIEW_CHARS));
            }
        }
        Some(HookFired {
            hook_name: event.name,
            outcome: verdict.outcome(),
            matched_rule_count,
            fields: f,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::UserPromptSubmitResult;

    fn prompt_event() -> Event {
        Event::from_payload(
            Some(EventName::UserPromptSubmit),
            json!({"prompt": "hi"}),
            "s",
            "/tmp",
        )
        .unwrap()
    }

    #[test]
    fn long_block_reasons_are_kept_as_previews() {
        // Issue 16: HookFired kept 1,000 KiB block reasons whole, in every replay record and
        // every queued `/fired` event.
        let long = "é".repeat(1_000_000);
        let verdict = Verdict::UserPromptSubmit(UserPromptSubmitResult {
            blocking_error: Some(long.clone()),
            stop_reason: Some("short".into()),
            ..Default::default()
        });
        let fired = HookFired::for_dispatch(&prompt_event(), &verdict, 1).unwrap();
        let reason = fired.fields["blocking_error"].as_str().unwrap();
        assert_eq!(reason.chars().count(), TEXT_PREVIEW_CHARS + 1);
        assert!(reason.ends_with('…') && long.starts_with(reason.trim_end_matches('…')));
        assert_eq!(fired.fields["stop_reason"], "short");
        // A text of exactly the preview's length is whole, without the mark.
        let exact = "x".repeat(TEXT_PREVIEW_CHARS);
        let verdict = Verdict::UserPromptSubmit(UserPromptSubmitResult {
            blocking_error: Some(exact.clone()),
            ..Default::default()
        });
        let fired = HookFired::for_dispatch(&prompt_event(), &verdict, 1).unwrap();
        assert_eq!(fired.fields["blocking_error"], exact.as_str());
    }
}
