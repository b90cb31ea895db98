//! Why an `http` hook failed, or why the runner or a policy could not be built. Each message
//! quotes the URL, entry or header it is about.

use std::io;
use std::net::SocketAddr;

use hookbox_core::output::{FailureClass, HookFailure};

/// Everything that can go wrong, from a bad allow-list entry to a 500.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// An allow-list entry that is not a host name, `host:port`, IP address or CIDR block.
    #[error("bad http destination `{entry}`: {reason}")]
    BadDestination {
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The TLS configuration cannot be built (extra root certificates that cannot be used).
    #[error("cannot set up TLS for http hooks: {0}")]
    Tls(String),
    /// The policy has `http` hooks off.
    #[error(
        "http hooks are disabled by this host's policy (`enabled = false`); the hook to `{url}` did not run"
    )]
    Disabled {
        /// The hook's URL.
        url: String,
    },
    /// The URL cannot be used.
    #[error("bad http hook URL `{url}`: {reason}")]
    BadUrl {
        /// The URL as written.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header cannot be sent.
    #[error("bad header `{name}` of the http hook: {reason}")]
    BadHeader {
        /// The header's name as written.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The policy refuses every address of the destination.
    #[error("the http hook to `{url}` is refused by this host's policy: {reason}")]
    Refused {
        /// The hook's URL.
        url: String,
        /// Why (the first refused address).
        reason: String,
    },
    /// DNS resolution failed.
    #[error("cannot resolve `{host}` for the http hook: {source}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// Resolution gave no address.
    #[error("`{host}` resolved to no address")]
    NoAddress {
        /// The host name.
        host: String,
    },
    /// No allowed address accepted a connection (or a TLS handshake).
    #[error("cannot connect to `{url}` ({addr}): {reason}")]
    Connect {
        /// The hook's URL.
        url: String,
        /// The last address tried.
        addr: SocketAddr,
        /// The error.
        reason: String,
    },
    /// The request failed after the connection was made.
    #[error("the http hook request to `{url}` failed: {reason}")]
    Request {
        /// The hook's URL.
        url: String,
        /// The error.
        reason: String,
    },
    /// A 3xx answer: redirects are not followed.
    #[error(
        "`{url}` answered {status} redirecting to `{location}`; http hooks do not follow redirects, so point the hook at the final URL"
    )]
    Redirect {
        /// The hook's URL.
        url: String,
        /// The status line's code and reason.
        status: String,
        /// The `Location` header, or `(none)`.
        location: String,
    },
    /// A status other than 2xx and 3xx.
    #[error("`{url}` answered {status}{body}", body = quoted_body(body))]
    Status {
        /// The hook's URL.
        url: String,
        /// The status line's code and reason.
        status: String,
        /// The start of the body, for the message.
        body: String,
    },
    /// The 2xx body is over the cap.
    #[error(
        "`{url}` answered with a body over {limit} bytes (`max_body_bytes`); the answer is not used"
    )]
    BodyTooLarge {
        /// The hook's URL.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// The 2xx body is neither empty nor a JSON object.
    #[error("`{url}` answered {status} with a body that is neither empty nor a JSON object{body}", body = quoted_body(body))]
    NotJson {
        /// The hook's URL.
        url: String,
        /// The status line's code and reason.
        status: String,
        /// The start of the body.
        body: String,
    },
    /// The hook's timeout passed. The only error of class `timeout`.
    #[error("the http hook to `{url}` timed out after {secs} s while {stage}")]
    Timeout {
        /// The hook's URL.
        url: String,
        /// The timeout.
        secs: f64,
        /// What it was doing: resolving, connecting, waiting for the answer, reading the body.
        stage: &'static str,
    },
}

/// `: "text"` with the body's start, or nothing for an empty body.
fn quoted_body(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body:?}")
    }
}

impl From<HttpError> for HookFailure {
    fn from(e: HttpError) -> HookFailure {
        let class = match e {
            HttpError::Timeout { .. } => FailureClass::Timeout,
            _ => FailureClass::HttpError,
        };
        HookFailure::new(class, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_timeout_is_of_class_timeout() {
        let t = HookFailure::from(HttpError::Timeout {
            url: "http://x/".into(),
            secs: 1.5,
            stage: "waiting for the answer",
        });
        assert_eq!(t.class, FailureClass::Timeout);
        assert_eq!(
            t.message,
            "the http hook to `http://x/` timed out after 1.5 s while waiting for the answer"
        );
        let s = HookFailure::from(HttpError::Status {
            url: "http://x/".into(),
            status: "500 Internal Server Error".into(),
            body: "oops\n".into(),
        });
        assert_eq!(s.class, FailureClass::HttpError);
        assert_eq!(
            s.message,
            "`http://x/` answered 500 Internal Server Error: \"oops\\n\""
        );
    }
}
