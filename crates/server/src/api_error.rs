//! Every error the API answers, as one JSON shape:
//! `{"error": {"code": "invalid_request", "message": "…", "field": "payload.tool_name"}}`, with
//! the status that goes with the code. `field` names the request field at fault (dotted into the
//! body) whenever one is; a client's mistake is always a 4xx, never a 500.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One error answer (boxed: handlers return it on every path, and a small `Err` keeps their
/// results small).
#[derive(Debug)]
pub(crate) struct ApiError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    status: StatusCode,
    code: &'static str,
    message: String,
    field: Option<String>,
    details: Option<(&'static str, Value)>,
    retry_after_secs: Option<u32>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError(Box::new(Inner {
            status,
            code,
            message: message.into(),
            field: None,
            details: None,
            retry_after_secs: None,
        }))
    }

    /// 400: the request is malformed; `field` says where.
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message);
        e.0.field = Some(field.into());
        e
    }

    /// 400: the body is not JSON.
    pub(crate) fn invalid_json(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", message)
    }

    /// 401: no usable bearer token.
    pub(crate) fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403: the token does not open this route.
    pub(crate) fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404.
    pub(crate) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 405.
    pub(crate) fn method_not_allowed() -> ApiError {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this route does not take this method; see docs/api.md",
        )
    }

    /// 408: the body did not arrive in time.
    pub(crate) fn body_timeout(secs: f64) -> ApiError {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!(
                "the request body did not arrive within {secs} s (limits.body_read_timeout_secs)"
            ),
        )
    }

    /// 413.
    pub(crate) fn too_large(limit: u64) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is over {limit} bytes (limits.max_body_bytes)"),
        )
    }

    /// 409: the tenant exists already, or the operation conflicts with its state.
    pub(crate) fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 422: the tenant's files do not load; `diagnostics` says where and why.
    pub(crate) fn load_failed(message: impl Into<String>, diagnostics: Value) -> ApiError {
        let mut e = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "load_failed", message);
        e.0.details = Some(("diagnostics", diagnostics));
        e
    }

    /// 429: this tenant holds too many of something (event streams).
    pub(crate) fn too_many(message: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too_many_requests", message);
        e.0.retry_after_secs = Some(1);
        e
    }

    /// 503: over a server-wide bound; try again shortly.
    pub(crate) fn overloaded(message: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "overloaded", message);
        e.0.retry_after_secs = Some(1);
        e
    }

    /// 503: not serving this (shutting down, a tenant that failed to load).
    pub(crate) fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// 500: a bug of the server's, never a client's input.
    pub(crate) fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", message)
    }

    /// The status.
    #[cfg(test)]
    pub(crate) fn status(&self) -> StatusCode {
        self.0.status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let Inner {
            status,
            code,
            message,
            field,
            details,
            retry_after_secs,
        } = *self.0;
        let mut error = json!({"code": code, "message": message});
        if let Some(f) = field {
            error["field"] = json!(f);
        }
        if let Some((k, v)) = details {
            error[k] = v;
        }
        let mut res =
            (status, crate::routes::json_body(&json!({ "error": error }))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"hookbox\""),
            );
        }
        if let Some(s) = retry_after_secs {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        res
    }
}
