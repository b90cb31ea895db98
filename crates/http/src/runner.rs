//! The runner: one `http` hook from URL to classified answer, under its timeout.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hookbox_core::output::{HookFailure, RawOutput};
use hookbox_core::rule::HttpSpec;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, LOCATION, USER_AGENT};
use hyper::{Method, Request, Response, StatusCode};
use tokio_rustls::TlsConnector;
use tracing::Instrument;

use crate::connect::connect;
use crate::error::HttpError;
use crate::headers::{RuleHeaders, rule_headers};
use crate::limits::HttpLimits;
use crate::policy::HttpPolicy;
use crate::pool::{Key, Pool, Sender};
use crate::resolve::{Resolve, SystemResolver};
use crate::target::Target;
use crate::tls::connector;

/// The `User-Agent` of every hook request (a rule's `User-Agent` header replaces it).
pub const USER_AGENT_VALUE: &str = concat!("hookbox/", env!("CARGO_PKG_VERSION"));

/// The timeout when a spec's is negative or NaN (config validation should have refused it):
/// Claude Code's default for `http` hooks, 600 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Characters of a body quoted in a failure message.
const QUOTED_CHARS: usize = 200;

/// What the run was doing, for the timeout message.
const STAGES: [&str; 4] = [
    "resolving the host",
    "connecting",
    "waiting for the answer",
    "reading the answer",
];

/// A last check on every address before a connection is made to it.
type Guard = dyn Fn(SocketAddr) -> bool + Send + Sync;

/// Runs `http` hooks. Cheap to clone, `Send + Sync`; clones share one connection pool.
#[derive(Clone)]
pub struct HttpRunner {
    limits: HttpLimits,
    tls: TlsConnector,
    pool: Arc<Pool>,
    resolver: Arc<dyn Resolve>,
    guard: Option<Arc<Guard>>,
}

/// One `http` hook to run.
#[derive(Clone, Copy)]
pub struct HttpRequest<'a> {
    /// The rule: URL, headers, `allowedEnvVars`, timeout.
    pub spec: &'a HttpSpec,
    /// The payload JSON, sent as the body.
    pub payload: &'a [u8],
    /// The environment `$VAR`s in header values are read from, for names in
    /// `allowedEnvVars` only (the host decides what it holds: its own environment, a
    /// tenant's).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Send + Sync),
}

/// One finished run: the server answered 2xx with an empty body or a JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRun {
    /// The status code (2xx).
    pub status: u16,
    /// For `hookbox-core` to read as a command hook's exit 0: `stdout` is the body (empty
    /// for an empty body), `exit_code` 0.
    pub output: RawOutput,
    /// Human explanations of anything unusual: a header variable sent empty, a header
    /// hookbox would not send, an address the policy skipped.
    pub notes: Vec<String>,
    /// From the start to the body read.
    pub duration: Duration,
}

impl HttpRunner {
    /// A runner with `limits`, the system resolver, and Mozilla's root certificates.
    ///
    /// # Errors
    /// [`HttpError::Tls`] if the TLS configuration cannot be built.
    pub fn new(limits: HttpLimits) -> Result<HttpRunner, HttpError> {
        Ok(HttpRunner {
            pool: Arc::new(Pool::new(
                limits.idle_timeout,
                limits.max_idle_per_destination,
                limits.max_idle_total,
            )),
            limits,
            tls: connector(&[])?,
            resolver: Arc::new(SystemResolver),
            guard: None,
        })
    }

    /// This runner connecting only to addresses `guard` accepts, whatever the policy says: a
    /// host-wide firewall under every tenant's policy (defence in depth), and in tests the
    /// proof that nothing leaves loopback. A refused address fails the hook with `http_error`.
    pub fn with_address_guard(
        mut self,
        guard: impl Fn(SocketAddr) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.guard = Some(Arc::new(guard));
        self
    }

    /// This runner resolving names with `resolver` (a host's own DNS; tests).
    pub fn with_resolver(mut self, resolver: impl Resolve) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }

    /// This runner also trusting the PEM certificates in `pem` (a company's own CA, as
    /// Node.js's `NODE_EXTRA_CA_CERTS`).
    ///
    /// # Errors
    /// [`HttpError::Tls`] when `pem` holds no certificate or a bad one.
    pub fn with_extra_roots(mut self, pem: &[u8]) -> Result<Self, HttpError> {
        self.tls = connector(pem)?;
        Ok(self)
    }

    /// The limits.
    pub fn limits(&self) -> &HttpLimits {
        &self.limits
    }

    /// Idle pooled connections now.
    pub fn idle_connections(&self) -> usize {
        self.pool.idle_count()
    }

    /// Runs one `http` hook: POSTs the payload to the rule's URL if `policy` allows the
    /// destination, and reads the answer as Claude Code does.
    ///
    /// Sent: `POST` with the payload as body, `Content-Type: application/json`,
    /// `Accept: application/json`, `User-Agent: hookbox/<version>`, `Host` from the URL, then
    /// the rule's headers (`$VAR` expanded for `allowedEnvVars` only; a rule header replaces
    /// one of the three above, never `Host` or the framing headers). The name is resolved
    /// once; every address is checked against `policy`; the connection goes to a checked
    /// address (TLS still verifies the URL's host name).
    ///
    /// # Errors
    /// A [`HookFailure`] of class `timeout` when the rule's timeout passed (resolving,
    /// connecting, waiting or reading), else of class `http_error`: `http` hooks disabled or
    /// the destination refused by `policy`, a bad URL or header, no connection, a redirect
    /// (never followed), a status other than 2xx, a 2xx body over the cap or neither empty
    /// nor a JSON object.
    pub async fn run(
        &self,
        req: &HttpRequest<'_>,
        policy: &HttpPolicy,
    ) -> Result<HttpRun, HookFailure> {
        let span = tracing::info_span!("http.run", url = %cut(&req.spec.url, 200));
        let started = Instant::now();
        let timeout = timeout_of(req.spec.timeout_secs);
        let stage = AtomicUsize::new(0);
        let outcome = tokio::time::timeout(timeout, self.exchange(req, policy, &stage))
            .instrument(span)
            .await
            .unwrap_or_else(|_| {
                Err(HttpError::Timeout {
                    url: req.spec.url.clone(),
                    secs: timeout.as_secs_f64(),
                    stage: STAGES[stage.load(Ordering::Relaxed).min(STAGES.len() - 1)],
                })
            });
        match outcome {
            Ok((status, output, notes)) => Ok(HttpRun {
                status,
                output,
                notes,
                duration: started.elapsed(),
            }),
            Err(e) => {
                tracing::debug!(error = %e, "http hook failed");
                Err(HookFailure::from(e))
            }
        }
    }

    async fn exchange(
        &self,
        req: &HttpRequest<'_>,
        policy: &HttpPolicy,
        stage: &AtomicUsize,
    ) -> Result<(u16, RawOutput, Vec<String>), HttpError> {
        let url = &req.spec.url;
        if !policy.enabled {
            return Err(HttpError::Disabled { url: url.clone() });
        }
        let target = Target::parse(url)?;
        let RuleHeaders { headers, mut notes } = rule_headers(
            &req.spec.headers,
            &req.spec.allowed_env_vars,
            &policy.credential_env,
            req.env,
        )?;
        let allowed = self
            .checked_addresses(&target, url, policy, &mut notes)
            .await?;

        stage.store(1, Ordering::Relaxed);
        let (key, mut sender, reused) = self.sender(&target, url, &allowed).await?;
        let request = || {
            let mut request = Request::builder()
                .method(Method::POST)
                .uri(target.path_and_query.as_str())
                .header(HOST, target.authority.as_str())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json")
                .header(USER_AGENT, USER_AGENT_VALUE)
                .body(Full::new(Bytes::copy_from_slice(req.payload)))
                .map_err(|e| HttpError::BadUrl {
                    url: url.clone(),
                    reason: e.to_string(),
                })?;
            for (name, value) in &headers {
                request.headers_mut().insert(name.clone(), value.clone());
            }
            Ok::<_, HttpError>(request)
        };

        stage.store(2, Ordering::Relaxed);
        let response = match sender.send_request(request()?).await {
            Ok(response) => response,
            // A pooled connection the server closed before the request went out: nothing was
            // sent, so a fresh connection is safe (a POST that may have arrived is not retried).
            Err(e) if reused && e.is_canceled() => {
                sender = connect(&key, &self.tls, self.limits.max_header_bytes)
                    .await
                    .map_err(|reason| HttpError::Connect {
                        url: url.clone(),
                        addr: key.addr,
                        reason,
                    })?;
                sender
                    .send_request(request()?)
                    .await
                    .map_err(|e| request_error(url, &e))?
            }
            Err(e) => return Err(request_error(url, &e)),
        };

        stage.store(3, Ordering::Relaxed);
        let status = response.status();
        let (text, complete) = self.read(response, status, url).await?;
        if complete {
            self.pool.put(key, sender);
        }
        let output = answer(url, status, text)?;
        Ok((status.as_u16(), output, notes))
    }

    /// The addresses of the target the policy allows, in resolver order; refused ones are
    /// noted when another is allowed.
    async fn checked_addresses(
        &self,
        target: &Target,
        url: &str,
        policy: &HttpPolicy,
        notes: &mut Vec<String>,
    ) -> Result<Vec<IpAddr>, HttpError> {
        let mut addrs: Vec<IpAddr> = match target.ip {
            Some(ip) => vec![ip],
            None => self
                .resolver
                .resolve(&target.host, target.port)
                .await
                .map_err(|source| HttpError::Resolve {
                    host: target.host.clone(),
                    source,
                })?
                .into_iter()
                .map(|a| a.ip())
                .collect(),
        };
        let mut seen = Vec::new();
        addrs.retain(|a| {
            let new = !seen.contains(a);
            seen.push(*a);
            new
        });
        if addrs.is_empty() {
            return Err(HttpError::NoAddress {
                host: target.host.clone(),
            });
        }
        let mut allowed = Vec::new();
        let mut refusals = Vec::new();
        for addr in addrs {
            match policy.refusal(&target.host, target.port, addr) {
                None => allowed.push(addr),
                Some(reason) => refusals.push(reason),
            }
        }
        if allowed.is_empty() {
            return Err(HttpError::Refused {
                url: url.to_owned(),
                reason: refusals.swap_remove(0),
            });
        }
        notes.extend(
            refusals
                .into_iter()
                .map(|r| format!("an address of the destination was skipped: {r}")),
        );
        Ok(allowed)
    }

    /// A ready connection to the first allowed address that takes one: pooled, else new.
    /// Returns whether it was pooled.
    async fn sender(
        &self,
        target: &Target,
        url: &str,
        allowed: &[IpAddr],
    ) -> Result<(Key, Sender, bool), HttpError> {
        let mut last = None;
        for &ip in allowed {
            let key = Key {
                https: target.https,
                host: target.host.clone(),
                port: target.port,
                addr: SocketAddr::new(ip, target.port),
            };
            if let Some(guard) = &self.guard
                && !guard(key.addr)
            {
                last = Some((key.addr, "refused by the host's address guard".to_owned()));
                continue;
            }
            while let Some(mut pooled) = self.pool.take(&key) {
                if pooled.ready().await.is_ok() {
                    return Ok((key, pooled, true));
                }
            }
            match connect(&key, &self.tls, self.limits.max_header_bytes).await {
                Ok(sender) => return Ok((key, sender, false)),
                Err(reason) => last = Some((key.addr, reason)),
            }
        }
        let (addr, reason) = last.unwrap_or_else(|| {
            (
                SocketAddr::new(IpAddr::from([0, 0, 0, 0]), target.port),
                "no address to connect to".into(),
            )
        });
        Err(HttpError::Connect {
            url: url.to_owned(),
            addr,
            reason,
        })
    }

    /// Reads the body: in full (up to the cap) for a 2xx, its start otherwise. Returns the
    /// bytes and whether the body was read to its end (so the connection can be reused).
    async fn read(
        &self,
        response: Response<Incoming>,
        status: StatusCode,
        url: &str,
    ) -> Result<(Vec<u8>, bool), HttpError> {
        if status.is_redirection() {
            let location = response.headers().get(LOCATION).map_or_else(
                || "(none)".to_owned(),
                |l| cut(&String::from_utf8_lossy(l.as_bytes()), QUOTED_CHARS),
            );
            return Err(HttpError::Redirect {
                url: url.to_owned(),
                status: status_text(status),
                location,
            });
        }
        let success = status.is_success();
        let cap = if success {
            self.limits.max_body_bytes
        } else {
            self.limits.max_error_body_bytes
        };
        let mut body = response.into_body();
        let (bytes, complete) = read_capped(&mut body, cap)
            .await
            .map_err(|e| request_error(url, &e))?;
        if !success {
            return Err(HttpError::Status {
                url: url.to_owned(),
                status: status_text(status),
                body: cut(&String::from_utf8_lossy(&bytes), QUOTED_CHARS),
            });
        }
        if !complete {
            return Err(HttpError::BodyTooLarge {
                url: url.to_owned(),
                limit: cap,
            });
        }
        Ok((bytes, true))
    }
}

/// Claude Code's reading of a 2xx body: empty (or blank) is success with nothing to add, a
/// JSON object is a command hook's JSON on exit 0, anything else is a failure.
fn answer(url: &str, status: StatusCode, body: Vec<u8>) -> Result<RawOutput, HttpError> {
    let not_json = |body: &[u8]| HttpError::NotJson {
        url: url.to_owned(),
        status: status_text(status),
        body: cut(&String::from_utf8_lossy(body), QUOTED_CHARS),
    };
    let text = match String::from_utf8(body) {
        Ok(text) => text,
        Err(e) => return Err(not_json(e.as_bytes())),
    };
    if text.trim().is_empty() {
        return Ok(RawOutput::exited(0, "", ""));
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) if value.is_object() => Ok(RawOutput::exited(0, text, "")),
        _ => Err(not_json(text.as_bytes())),
    }
}

/// Reads frames until the end or past `cap` bytes: `(first cap bytes, reached the end)`.
async fn read_capped(body: &mut Incoming, cap: usize) -> Result<(Vec<u8>, bool), hyper::Error> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue; // trailers
        };
        if bytes.len() + data.len() > cap {
            bytes.extend_from_slice(&data[..cap - bytes.len()]);
            return Ok((bytes, false));
        }
        bytes.extend_from_slice(&data);
    }
    Ok((bytes, true))
}

fn request_error(url: &str, e: &hyper::Error) -> HttpError {
    // hyper's Display is terse ("connection closed before message completed"); the source
    // adds the I/O error when there is one.
    let reason = match std::error::Error::source(e) {
        Some(source) => format!("{e}: {source}"),
        None => e.to_string(),
    };
    HttpError::Request {
        url: url.to_owned(),
        reason,
    }
}

/// `404 Not Found`.
fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The first `max` characters of `text`, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn timeout_of(secs: f64) -> Duration {
    if secs.is_nan() || secs < 0.0 {
        return DEFAULT_TIMEOUT;
    }
    // Too large for a Duration: thirty years is no limit in practice.
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::from_secs(30 * 365 * 24 * 3600))
}

impl fmt::Debug for HttpRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRunner")
            .field("limits", &self.limits)
            .field("idle_connections", &self.pool.idle_count())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_read_as_claude_code_does() {
        let ok = StatusCode::OK;
        assert_eq!(
            answer("u", ok, Vec::new()).unwrap(),
            RawOutput::exited(0, "", "")
        );
        assert_eq!(
            answer("u", ok, b" \n".to_vec()).unwrap(),
            RawOutput::exited(0, "", "")
        );
        let json = br#"{"decision":"block","reason":"no"}"#.to_vec();
        assert_eq!(
            answer("u", ok, json.clone()).unwrap().stdout.as_bytes(),
            &json[..]
        );
        for bad in [
            &b"[1]"[..],
            b"\"text\"",
            b"plain text",
            b"{broken",
            b"\xff\xfe",
        ] {
            let err = answer("http://h/", ok, bad.to_vec())
                .unwrap_err()
                .to_string();
            assert!(err.contains("neither empty nor a JSON object"), "{err}");
        }
    }

    #[test]
    fn timeouts_from_the_spec() {
        assert_eq!(timeout_of(1.5), Duration::from_millis(1500));
        assert_eq!(timeout_of(-1.0), DEFAULT_TIMEOUT);
        assert_eq!(timeout_of(f64::NAN), DEFAULT_TIMEOUT);
        assert!(timeout_of(f64::INFINITY) > Duration::from_secs(1_000_000));
    }

    #[test]
    fn quotes_are_cut_on_a_character() {
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("hé", 2), "hé");
    }

    #[test]
    fn runner_is_shareable_and_its_future_sendable() {
        fn assert_send_sync<T: Send + Sync>() {}
        fn assert_send<T: Send>(_: &T) {}
        assert_send_sync::<HttpRunner>();
        let runner = HttpRunner::new(HttpLimits::default()).unwrap();
        let spec = HttpSpec {
            url: "http://127.0.0.1:9/".into(),
            headers: Default::default(),
            allowed_env_vars: Vec::new(),
            timeout_secs: 1.0,
        };
        let env = |_: &str| None;
        let req = HttpRequest {
            spec: &spec,
            payload: b"{}",
            env: &env,
        };
        let policy = HttpPolicy::developer();
        assert_send(&runner.run(&req, &policy));
    }
}
