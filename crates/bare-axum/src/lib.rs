//! `bare-axum`: the HTTP baseline every ratio of `hookbox serve` is taken against — `hookbox
//! serve` with hookbox taken out: the same axum router over hyper's HTTP/1.1 `http1::Builder` on
//! a tokio `TcpListener`, `TCP_NODELAY`, keep-alive, a header-read timer and the same head and
//! body bounds; but no tenants, no tokens, no admission, no hooks.
//!
//! Two users, one router: the `bare-axum` binary (`scripts/bench-http.sh` drives it with `wrk`)
//! and `hookbox bench --serve`, which runs [`serve`] in its own process beside `hookbox serve` and
//! drives both with the same client. No hookbox crate may be a dependency of this one
//! (`scripts/check-deps.sh`): the baseline must not move when hookbox does.
//!
//! - `GET /healthz` answers `{"status":"ok"}`, as `hookbox serve` does.
//! - `POST /dispatch` reads the body (at most [`MAX_BODY_BYTES`]), parses it as JSON, and answers
//!   a JSON object shaped like `hookbox serve`'s answer to an allowed event (built and serialised
//!   per request), echoing the request's `event` and `payload.session_id`; with
//!   [`Answer::bytes`] set, a `padding` text makes the answer exactly that long, so that both
//!   servers write as many bytes. A body that is not a JSON object with a string `event` gets 400.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The largest request body read: `hookbox serve`'s default `limits.max_body_bytes`.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// Time to send a request head: `hookbox serve`'s default `limits.header_read_timeout_secs`.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head: `hookbox serve`'s default `limits.max_header_bytes`.
pub const MAX_HEADER_BYTES: usize = 16 << 10;

/// What `POST /dispatch` answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answer {
    /// The answer's length in bytes: the object is padded to it (`"padding": "…"`). `None`, or
    /// a length below the object's own, answers the object as it is (~420 bytes).
    pub bytes: Option<usize>,
}

/// The routes, `GET /healthz` and `POST /dispatch`.
pub fn router(answer: Answer) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/dispatch", post(dispatch))
        .with_state(answer)
}

/// Binds `listen` (a tokio listener; port 0 for a free one).
pub async fn bind(listen: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))
}

/// Serves [`router`] on `listener`, each connection on a task of its own, as
/// `crates/server/src/listener.rs` does (without its connection bounds and drain). Runs until
/// the task running it is dropped or aborted.
pub async fn serve(listener: TcpListener, answer: Answer) {
    let router = router(answer);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_HEADER_BYTES)
        .keep_alive(true);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: pause instead of spinning on the error.
                eprintln!("bare-axum: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Small answers must not wait for Nagle's timer.
        let _ = stream.set_nodelay(true);
        let conn = builder.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        );
        tokio::spawn(async move {
            // A client that goes away mid-request is not this baseline's concern.
            let _ = conn.await;
        });
    }
}

async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// Reads and parses the body, answers an allowed event the shape of `hookbox serve`'s.
async fn dispatch(State(answer): State<Answer>, req: Request) -> Response {
    let bytes = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the body is over {MAX_BODY_BYTES} bytes"),
            );
        }
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the body could not be read: {e}"),
            );
        }
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the body is not JSON: {e}"),
            );
        }
    };
    let Some(event) = body.get("event").and_then(Value::as_str) else {
        return error(StatusCode::BAD_REQUEST, "the body needs a string `event`");
    };
    let session_id = body
        .pointer("/payload/session_id")
        .and_then(Value::as_str)
        .unwrap_or("bare-axum");
    let mut res = Response::new(Body::from(answer_text(event, session_id, answer)));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    res
}

/// The answer's bytes: [`allowed`], padded to `answer.bytes` when that is longer.
fn answer_text(event: &str, session_id: &str, answer: Answer) -> String {
    let mut value = allowed(event, session_id);
    let text = value.to_string();
    // `,"padding":""` costs 13 bytes before its text.
    match answer
        .bytes
        .and_then(|want| want.checked_sub(text.len() + 13))
    {
        Some(room) => {
            value["padding"] = Value::String(" ".repeat(room));
            value.to_string()
        }
        None => text,
    }
}

/// The answer's object: an allowed event that matched no rule.
fn allowed(event: &str, session_id: &str) -> Value {
    json!({
        "event": event,
        "session_id": session_id,
        "matched_rule_count": 0,
        "duration_ms": 0.0,
        "outcome": "allow",
        "verdict": {
            "kind": "pre_tool_use",
            "decision": null,
            "reason": null,
            "updated_input": null,
            "additional_contexts": [],
            "blocking_error": null,
            "prevent_continuation": false,
            "stop_reason": null,
            "system_messages": [],
            "messages": [],
        },
        "rendered": null,
        "hooks": [],
        "rechecked": [],
        "system_messages": [],
        "hook_fired": null,
        "warnings": [],
    })
}

fn error(status: StatusCode, message: &str) -> Response {
    json_response(status, &json!({"error": {"message": message}}))
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut res = Response::new(Body::from(value.to_string()));
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_answer_is_exactly_as_long_as_asked_and_a_short_ask_keeps_the_object() {
        let natural = answer_text("PreToolUse", "s", Answer::default());
        assert!(natural.len() > 300, "{natural}");
        for want in [natural.len() + 13, natural.len() + 14, natural.len() + 500] {
            let text = answer_text("PreToolUse", "s", Answer { bytes: Some(want) });
            assert_eq!(text.len(), want, "{text}");
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                (&v["event"], &v["outcome"]),
                (&json!("PreToolUse"), &json!("allow"))
            );
        }
        for short in [0, natural.len(), natural.len() + 12] {
            let text = answer_text("PreToolUse", "s", Answer { bytes: Some(short) });
            assert_eq!(text, natural);
        }
    }
}
