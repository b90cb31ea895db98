//! `bare-axum`: the HTTP baseline of `scripts/bench-http.sh`, and nothing else — every ratio that
//! script prints is taken against this server. It is `hookbox serve` with hookbox taken out: the
//! same axum router over hyper's HTTP/1.1 `http1::Builder` on a tokio `TcpListener`, the same
//! multi-threaded tokio runtime with its defaults (one worker per core), `TCP_NODELAY`, keep-alive,
//! a header-read timer; but no tenants, no tokens, no admission, no hooks.
//!
//! - `GET /healthz` answers `{"status":"ok"}`, as `hookbox serve` does.
//! - `POST /dispatch` reads the body (at most [`MAX_BODY_BYTES`]), parses it as JSON, and answers
//!   a JSON object shaped like `hookbox serve`'s answer to an allowed event that matched no rule
//!   (~420 bytes, built and serialised per request), echoing the request's `event` and
//!   `payload.session_id`. A body that is not a JSON object with a string `event` gets 400.
//!
//! Usage: `bare-axum [--listen IP:PORT]` (default `127.0.0.1:0`, a free port); the first line on
//! stdout is the address bound, as `hookbox serve` prints it. It runs until killed.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
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
const MAX_BODY_BYTES: usize = 1 << 20;
/// Time to send a request head: `hookbox serve`'s default `limits.header_read_timeout_secs`.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head: `hookbox serve`'s default `limits.max_header_bytes`.
const MAX_HEADER_BYTES: usize = 16 << 10;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bare-axum: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let listen = listen_arg(std::env::args().skip(1))?;
    // `hookbox serve` runs on this runtime (src/host_setup.rs): multi-threaded, default workers.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(serve(listen))
}

/// `--listen IP:PORT`, the only argument.
fn listen_arg(mut args: impl Iterator<Item = String>) -> Result<SocketAddr, String> {
    let mut listen = SocketAddr::from(([127, 0, 0, 1], 0));
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "--listen" => args.next(),
            other => match other.strip_prefix("--listen=") {
                Some(v) => Some(v.to_owned()),
                None => {
                    return Err(format!(
                        "unknown argument `{other}`; usage: bare-axum [--listen IP:PORT]"
                    ));
                }
            },
        };
        let value = value.ok_or("--listen needs an address, IP:PORT")?;
        listen = value
            .parse()
            .map_err(|e| format!("--listen `{value}` is not an IP:PORT address: {e}"))?;
    }
    Ok(listen)
}

/// Binds, prints the address, then serves each connection on a task of its own, as
/// `crates/server/src/listener.rs` does (without its connection bounds and drain).
async fn serve(listen: SocketAddr) -> Result<(), String> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{addr}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))?;
    drop(out);

    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/dispatch", post(dispatch));
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
async fn dispatch(req: Request) -> Response {
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
    json_response(
        StatusCode::OK,
        &json!({
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
        }),
    )
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

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn listen_defaults_to_a_free_loopback_port() {
        assert_eq!(
            listen_arg(args(&[])).unwrap(),
            SocketAddr::from(([127, 0, 0, 1], 0))
        );
    }

    #[test]
    fn listen_takes_an_address_in_either_spelling() {
        let want = SocketAddr::from(([127, 0, 0, 1], 8080));
        assert_eq!(
            listen_arg(args(&["--listen", "127.0.0.1:8080"])).unwrap(),
            want
        );
        assert_eq!(
            listen_arg(args(&["--listen=127.0.0.1:8080"])).unwrap(),
            want
        );
    }

    #[test]
    fn bad_arguments_are_named() {
        let e = listen_arg(args(&["--listen", "localhost"])).unwrap_err();
        assert!(e.contains("`localhost`"), "{e}");
        let e = listen_arg(args(&["--port", "1"])).unwrap_err();
        assert!(e.contains("`--port`"), "{e}");
        let e = listen_arg(args(&["--listen"])).unwrap_err();
        assert!(e.contains("IP:PORT"), "{e}");
    }
}
