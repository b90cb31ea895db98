//! Turning a request body into an [`Event`]: the dispatch body `{"event", "payload",
//! "stop_reentries"}` and Claude Code's flat payload. Every refusal names the field at fault —
//! `event`, `payload`, `payload.tool_input`, `hook_event_name` — so a client can fix it without
//! reading the server's code.

use hookbox_core::event::{PayloadError, json_type};
use hookbox_core::{Event, EventName};
use serde_json::{Map, Value};

use crate::answer::Report;
use crate::api_error::ApiError;

/// Keys the dispatch body takes.
const DISPATCH_KEYS: &str = "`event`, `payload`, `stop_reentries`";

/// A parsed `POST /v1/tenants/{id}/dispatch` body.
#[derive(Debug)]
pub(crate) struct DispatchRequest {
    /// The event.
    pub(crate) event: Event,
    /// Stop only: re-entries this turn already made (the re-entry cap applies).
    pub(crate) stop_reentries: u32,
}

/// The query of `POST /v1/tenants/{id}/dispatch`: nothing (the lean answer), `report=lean` or
/// `report=full`. Anything else is refused naming the parameter, so a misspelt request for the
/// full report is not silently answered lean, nor `report` given twice (`report=lean&report=full`)
/// answered by whichever came last. Values are compared as sent, not percent-decoded.
pub(crate) fn report(query: Option<&str>) -> Result<Report, ApiError> {
    let mut report = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == "report" && report.is_some() {
            return Err(ApiError::invalid(
                "query.report",
                "`report` is given more than once: give it once, `full` or `lean`",
            ));
        }
        if key != "report" {
            return Err(ApiError::invalid(
                format!("query.{key}"),
                format!(
                    "unknown query parameter `{key}`; the dispatch takes only `report` (`full` or `lean`)"
                ),
            ));
        }
        report = Some(match value {
            "lean" => Report::Lean,
            "full" => Report::Full,
            other => {
                return Err(ApiError::invalid(
                    "query.report",
                    format!(
                        "`report={other}`: it must be `full` (every hook's report, the HookFired record) or `lean` (the default: the verdict)"
                    ),
                ));
            }
        });
    }
    Ok(report.unwrap_or(Report::Lean))
}

/// Parses a dispatch body; `session`/`cwd` fill a payload that has none.
pub(crate) fn dispatch_request(
    body: Value,
    session: &str,
    cwd: &str,
) -> Result<DispatchRequest, ApiError> {
    let Value::Object(mut map) = body else {
        return Err(ApiError::invalid(
            "body",
            format!(
                "the body must be a JSON object with {DISPATCH_KEYS}, found {}",
                json_type(&body)
            ),
        ));
    };
    if let Some(k) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "event" | "payload" | "stop_reentries"))
    {
        return Err(ApiError::invalid(
            k.clone(),
            format!("unknown field `{k}`; the body takes {DISPATCH_KEYS}"),
        ));
    }
    let name = match map.remove("event") {
        None | Some(Value::Null) => {
            return Err(ApiError::invalid(
                "event",
                "missing: name the event, e.g. \"PreToolUse\"",
            ));
        }
        Some(Value::String(s)) => event_name(&s, "event")?,
        Some(other) => {
            return Err(ApiError::invalid(
                "event",
                format!("must be a string, found {}", json_type(&other)),
            ));
        }
    };
    let payload = match map.remove("payload") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(p @ Value::Object(_)) => p,
        Some(other) => {
            return Err(ApiError::invalid(
                "payload",
                format!(
                    "must be a JSON object (the hook input, in any dialect), found {}",
                    json_type(&other)
                ),
            ));
        }
    };
    let stop_reentries = match map.remove("stop_reentries") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                ApiError::invalid(
                    "stop_reentries",
                    format!("must be a whole number from 0, found {v}"),
                )
            })?,
    };
    let event = Event::from_payload(Some(name), payload, session, cwd)
        .map_err(|e| payload_error(e, "payload."))?;
    Ok(DispatchRequest {
        event,
        stop_reentries,
    })
}

/// Parses Claude Code's http-hook body: its flat payload, `hook_event_name` naming the event.
pub(crate) fn claude_code_event(body: Value, session: &str, cwd: &str) -> Result<Event, ApiError> {
    if let Value::Object(map) = &body
        && let Some(Value::String(name)) = map.get("hook_event_name")
    {
        event_name(name, "hook_event_name")?;
    }
    Event::from_payload(None, body, session, cwd).map_err(|e| payload_error(e, ""))
}

fn event_name(s: &str, field: &str) -> Result<EventName, ApiError> {
    s.parse().map_err(|_| {
        ApiError::invalid(
            field,
            format!(
                "unknown event `{}`; use a Claude Code event name such as PreToolUse, UserPromptSubmit or Stop (case-sensitive)",
                s.escape_default()
            ),
        )
    })
}

/// The payload's refusal, with the field it names prefixed by where the payload sits.
fn payload_error(e: PayloadError, prefix: &str) -> ApiError {
    let message = e.to_string();
    let field = match &e {
        PayloadError::NotAnObject { .. } => {
            let f = prefix.trim_end_matches('.');
            if f.is_empty() { "body" } else { f }.to_owned()
        }
        PayloadError::MissingEventName
        | PayloadError::UnknownEvent(_)
        | PayloadError::EventMismatch { .. } => format!("{prefix}hook_event_name"),
        PayloadError::WrongType { field, .. } => format!("{prefix}{field}"),
        PayloadError::MissingField { field, .. } => format!("{prefix}{field}"),
    };
    let message = match e {
        PayloadError::MissingEventName => {
            "missing: Claude Code's payload names its event in `hook_event_name`".to_owned()
        }
        _ => message,
    };
    ApiError::invalid(field, message)
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;
    use serde_json::json;

    use super::*;

    /// The refusal's status and JSON body.
    fn refusal(e: ApiError) -> (u16, Value) {
        let res = e.into_response();
        let status = res.status().as_u16();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt.block_on(async {
            http_body_util::BodyExt::collect(res.into_body())
                .await
                .unwrap()
                .to_bytes()
        });
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    fn field_of(body: Value) -> String {
        match dispatch_request(body, "s", "/") {
            Ok(r) => panic!("accepted: {r:?}"),
            Err(e) => {
                let (status, v) = refusal(e);
                assert_eq!(status, 400, "{v}");
                v["error"]["field"].as_str().unwrap().to_owned()
            }
        }
    }

    #[test]
    fn the_report_query_is_lean_full_or_refused_naming_it_and_never_given_twice() {
        for (query, want) in [
            (None, Report::Lean),
            (Some(""), Report::Lean),
            (Some("report=lean"), Report::Lean),
            (Some("report=full"), Report::Full),
            (Some("report=full&"), Report::Full),
        ] {
            assert_eq!(report(query).ok(), Some(want), "{query:?}");
        }
        for (query, field) in [
            // Whichever came last used to win: a client asking both ways gets neither.
            ("report=lean&report=full", "query.report"),
            ("report=full&report=full", "query.report"),
            ("report=FULL", "query.report"),
            ("report", "query.report"),
            ("report=%66ull", "query.report"),
            ("reprot=full", "query.reprot"),
        ] {
            let (status, v) = refusal(report(Some(query)).unwrap_err());
            assert_eq!(
                (status, v["error"]["field"].as_str()),
                (400, Some(field)),
                "{query}: {v}"
            );
        }
    }

    #[test]
    fn every_refusal_names_its_field() {
        let cases = [
            (json!([1]), "body"),
            (json!({"payload": {}}), "event"),
            (json!({"event": 3}), "event"),
            (json!({"event": "PreToolUze"}), "event"),
            (json!({"event": "PreToolUse", "payload": "x"}), "payload"),
            (
                json!({"event": "PreToolUse", "payload": {}, "extra": 1}),
                "extra",
            ),
            (
                json!({"event": "PreToolUse", "payload": {"tool_name": 5}}),
                "payload.tool_name",
            ),
            (
                json!({"event": "PreToolUse", "payload": {}}),
                "payload.tool_name",
            ),
            (
                json!({"event": "Stop", "payload": {"hook_event_name": "PreToolUse"}}),
                "payload.hook_event_name",
            ),
            (
                json!({"event": "Stop", "stop_reentries": -1}),
                "stop_reentries",
            ),
        ];
        for (body, field) in cases {
            assert_eq!(field_of(body.clone()), field, "{body}");
        }
    }

    #[test]
    fn a_good_body_becomes_the_event() {
        let r = dispatch_request(
            json!({"event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "ls"}}}),
            "default-session",
            "/t",
        )
        .unwrap();
        assert_eq!(r.event.name, EventName::PreToolUse);
        assert_eq!(r.event.session_id, "default-session");
        assert_eq!(r.event.cwd, "/t");
        let r = dispatch_request(json!({"event": "Stop", "stop_reentries": 2}), "s", "/").unwrap();
        assert_eq!(r.stop_reentries, 2);
    }

    #[test]
    fn claude_code_bodies_name_hook_event_name() {
        for (body, field) in [
            (json!({"prompt": "hi"}), "hook_event_name"),
            (json!({"hook_event_name": "Nope"}), "hook_event_name"),
            (json!({"hook_event_name": 1}), "hook_event_name"),
            (json!("text"), "body"),
            (
                json!({"hook_event_name": "UserPromptSubmit", "prompt": []}),
                "prompt",
            ),
        ] {
            let (status, v) = refusal(claude_code_event(body.clone(), "s", "/").unwrap_err());
            assert_eq!(
                (status, v["error"]["field"].as_str()),
                (400, Some(field)),
                "{body}: {v}"
            );
        }
        let e = claude_code_event(
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "abc", "prompt": "hi"}),
            "s",
            "/",
        )
        .unwrap();
        assert_eq!(
            (e.name, e.session_id.as_str()),
            (EventName::UserPromptSubmit, "abc")
        );
    }
}
