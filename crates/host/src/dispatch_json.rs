//! A dispatch as JSON — the object `hookbox dispatch --json` prints and
//! `POST /v1/tenants/{id}/dispatch` answers (the CLI and the server both call this function, so
//! the two cannot drift): the event, the verdict and its outcome, the rendered turn
//! (UserPromptSubmit), every hook's report with its attachments, the HookFired record and the
//! warnings. It lives with [`Dispatch`], the host's answer, so printing one needs no server.

use crate::dispatch::Dispatch;
use serde_json::{Value, json};

/// The dispatch as JSON.
pub fn dispatch_json(d: &Dispatch) -> Value {
    let reports: Vec<Value> = d
        .reports
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            v["attachments"] = serde_json::to_value(r.attachments()).unwrap_or(Value::Null);
            v
        })
        .collect();
    json!({
        "event": d.event.name,
        "session_id": d.event.session_id,
        "matched_rule_count": d.matched_rule_count,
        "duration_ms": d.duration.as_secs_f64() * 1000.0,
        "outcome": d.verdict.outcome(),
        "verdict": d.verdict,
        "rendered": d.user_turn(),
        "hooks": reports,
        "rechecked": d.rechecked,
        "system_messages": d.verdict.system_messages(),
        "hook_fired": d.hook_fired(),
        "warnings": d.warnings,
    })
}
