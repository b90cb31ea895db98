//! The `HookFired` record (SPEC §6; the main source's `PLUGIN_HOOK_FIRED`): one per dispatch with
//! its outcome and the event's own fields — and **none when no rule matched**, so a session
//! without hooks is not flooded with noise.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::aggregate::{Outcome, Verdict};
use crate::event::{Event, EventData, EventName};

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
        Some(HookFired {
            hook_name: event.name,
            outcome: verdict.outcome(),
            matched_rule_count,
            fields: f,
        })
    }
}
