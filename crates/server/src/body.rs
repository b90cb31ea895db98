//! Reading a request body: at most `limits.max_body_bytes` (a declared length over it is refused
//! before a byte is read), within `limits.body_read_timeout_secs` of the head (a client that
//! trickles its body gets 408 instead of holding a task), then parsed as JSON (serde_json's
//! recursion limit bounds nesting).

use axum::body::Body;
use axum::http::{HeaderMap, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::Value;

use crate::api_error::ApiError;
use crate::config::Limits;

/// The body's bytes, capped and timed.
pub(crate) async fn read_bytes(
    body: Body,
    headers: &HeaderMap,
    limits: &Limits,
) -> Result<axum::body::Bytes, ApiError> {
    let cap = limits.max_body_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap) {
        return Err(ApiError::too_large(cap));
    }
    let limited = Limited::new(body, usize::try_from(cap).unwrap_or(usize::MAX));
    match tokio::time::timeout(limits.body_read_timeout, limited.collect()).await {
        Err(_) => Err(ApiError::body_timeout(
            limits.body_read_timeout.as_secs_f64(),
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(ApiError::too_large(cap))
        }
        Ok(Err(e)) => Err(ApiError::invalid_json(format!(
            "the request body could not be read: {e}"
        ))),
    }
}

/// The body as JSON.
pub(crate) async fn read_json(
    body: Body,
    headers: &HeaderMap,
    limits: &Limits,
) -> Result<Value, ApiError> {
    let bytes = read_bytes(body, headers, limits).await?;
    parse_json(&bytes)
}

/// Parses a body as JSON, saying where it is not.
pub(crate) fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid_json(
            "the request body is empty: send a JSON object",
        ));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid_json(format!("the request body is not valid JSON: {e}")))
}
