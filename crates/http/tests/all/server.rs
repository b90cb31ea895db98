//! A tiny hook server on 127.0.0.1, plain or TLS, with one route per behaviour under test,
//! and helpers to run a hook against it.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hookbox_core::output::HookFailure;
use hookbox_core::rule::HttpSpec;
use hookbox_http::{HttpLimits, HttpPolicy, HttpRequest, HttpRun, HttpRunner};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A running server. It stops when the test's runtime ends.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    /// Connections accepted so far.
    pub(crate) connections: Arc<AtomicUsize>,
}

impl Server {
    /// A plain HTTP server.
    pub(crate) async fn start() -> Server {
        Self::start_with("127.0.0.1:0".parse().unwrap(), None).await
    }

    /// A plain HTTP server on `addr` (a loopback address).
    pub(crate) async fn start_on(addr: SocketAddr) -> Server {
        Self::start_with(addr, None).await
    }

    /// An HTTPS server for `localhost` (tests/data).
    pub(crate) async fn start_tls() -> Server {
        let certs = CertificateDer::pem_slice_iter(include_bytes!("../data/localhost.pem"))
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(include_bytes!("../data/localhost.key")).unwrap();
        let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        Self::start_with(
            "127.0.0.1:0".parse().unwrap(),
            Some(TlsAcceptor::from(Arc::new(config))),
        )
        .await
    }

    async fn start_with(addr: SocketAddr, tls: Option<TlsAcceptor>) -> Server {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&connections);
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = service_fn(route);
                    let builder = http1::Builder::new();
                    let _ = match tls {
                        None => builder.serve_connection(TokioIo::new(tcp), service).await,
                        Some(acceptor) => {
                            let Ok(stream) = acceptor.accept(tcp).await else {
                                return;
                            };
                            builder
                                .serve_connection(TokioIo::new(stream), service)
                                .await
                        }
                    };
                });
            }
        });
        Server { addr, connections }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

fn reply(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response
}

/// One route per behaviour; `/echo` answers a JSON object describing the request.
async fn route(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    use http_body_util::BodyExt;
    Ok(match req.uri().path() {
        "/json" => reply(
            StatusCode::OK,
            r#"{"decision":"block","reason":"denied by the http hook"}"#,
        ),
        "/empty" => reply(StatusCode::OK, ""),
        "/no-content" => reply(StatusCode::NO_CONTENT, ""),
        "/text" => reply(StatusCode::OK, "plain text, not JSON"),
        "/array" => reply(StatusCode::OK, "[1,2]"),
        "/bad-request" => reply(StatusCode::BAD_REQUEST, "missing field `x`"),
        "/error" => reply(StatusCode::INTERNAL_SERVER_ERROR, "boom"),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            reply(StatusCode::OK, "{}")
        }
        "/huge" => {
            // A JSON object padded past 1 MiB.
            let body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(2 * 1024 * 1024));
            reply(StatusCode::OK, body)
        }
        "/redirect" => {
            let mut response = reply(StatusCode::FOUND, "");
            response
                .headers_mut()
                .insert("location", "/json".parse().unwrap());
            response
        }
        "/echo" => {
            let method = req.method().to_string();
            let target = req.uri().to_string();
            let headers: BTreeMap<String, String> = req
                .headers()
                .iter()
                .map(|(n, v)| (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
                .collect();
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let answer = serde_json::json!({
                "method": method,
                "target": target,
                "headers": headers,
                "body": String::from_utf8_lossy(&body),
            });
            reply(StatusCode::OK, answer.to_string())
        }
        _ => reply(StatusCode::NOT_FOUND, ""),
    })
}

/// A spec POSTing to `url` with a 10 s timeout.
pub(crate) fn spec(url: &str) -> HttpSpec {
    HttpSpec {
        url: url.to_owned(),
        headers: BTreeMap::new(),
        allowed_env_vars: Vec::new(),
        timeout_secs: 10.0,
    }
}

/// A runner that can only ever connect to loopback: if a policy check regressed, a test
/// fails on the guard instead of sending a packet to a private or metadata address.
pub(crate) fn runner() -> HttpRunner {
    runner_with(HttpLimits::default())
}

pub(crate) fn runner_with(limits: HttpLimits) -> HttpRunner {
    HttpRunner::new(limits)
        .unwrap()
        .with_address_guard(|addr| addr.ip().is_loopback())
}

/// Runs `spec` with payload `{"hook_event_name":"PreToolUse"}`, no environment.
pub(crate) async fn run_with(
    runner: &HttpRunner,
    spec: &HttpSpec,
    policy: &HttpPolicy,
) -> Result<HttpRun, HookFailure> {
    let env = |_: &str| None;
    let req = HttpRequest {
        spec,
        payload: br#"{"hook_event_name":"PreToolUse"}"#,
        env: &env,
    };
    runner.run(&req, policy).await
}

/// Runs a hook to `url` with a fresh runner and the developer policy.
pub(crate) async fn run(url: &str) -> Result<HttpRun, HookFailure> {
    run_with(&runner(), &spec(url), &HttpPolicy::developer()).await
}
