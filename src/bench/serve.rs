//! `hookbox bench --serve`: what HTTP costs, against the HTTP floor. One tenant with the trivial
//! typed wasm hook (the `noop` guest on PreToolUse/Bash, the tenant defaults: replay on, as
//! users run it) in a real `hookbox serve` (hookbox_server, bound to 127.0.0.1:0 in this
//! process); beside it, in the same process and on the same runtime, **bare axum** (the
//! `bare_axum` router that `scripts/bench-http.sh` runs as a binary: the same axum/hyper/tokio
//! serving, no hookbox) answering the same request with an answer of the same size; and the same
//! tenant's in-process dispatch (`Tenants::dispatch`, no HTTP, no JSON).
//!
//! Both servers are driven by the same hyper HTTP/1.1 client from this process the same way —
//! one keep-alive connection per concurrent client, each sending its next request (the same
//! body, the same headers) as soon as the answer is read — at 1, 8 and 64 connections, in
//! [`ROUNDS`] alternating rounds (in-process, serve, bare, …) so that a machine that slows down
//! mid-run slows all three alike. Client and servers share the machine's cores, as a sidecar's
//! client would. The goals of issue 30 are read from the ratios: serve ÷ bare requests per
//! second (≥ 0.5 at 8 connections), and serve's p50 − bare's p50 − the in-process p50 at
//! 1 connection (≤ 15 µs). Run it from a release build.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hookbox_core::{Event, EventName};
use hookbox_host::{TenantId, Tenants};
use hookbox_server::TokenHash;
use hookbox_server::{Server, ServerConfig};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde_json::json;

use crate::cli::BenchArgs;
use crate::guests;
use crate::host_setup::runtime;

/// The bench tenant's bearer token (a scratch server on loopback, gone after the run).
const TOKEN: &str = "bench-token";
const TENANT: &str = "bench";
/// Connections (HTTP) and dispatches in flight (in-process) measured.
const CONCURRENCY: [usize; 3] = [1, 8, 64];
/// Alternating rounds per concurrency; each side runs `throughput_ms ÷ ROUNDS` per round.
const ROUNDS: u32 = 5;
/// How long new connections send before their first round counts (pool, caches, connections).
const WARM_UP: Duration = Duration::from_millis(200);

#[derive(Debug, Serialize)]
struct Row {
    concurrency: usize,
    in_process_p50_us: f64,
    in_process_p99_us: f64,
    in_process_per_s: f64,
    http_p50_us: f64,
    http_p99_us: f64,
    http_per_s: f64,
    /// Bare axum, the same requests the same way.
    bare_p50_us: f64,
    bare_p99_us: f64,
    bare_per_s: f64,
    /// serve ÷ bare axum, requests per second (issue 30: ≥ 0.5 at 8 connections).
    http_over_bare_per_s: f64,
    /// serve's p50 − the in-process p50.
    http_added_p50_us: f64,
    /// serve's p50 − bare axum's p50 − the in-process p50: what serve adds around the dispatch
    /// beyond what HTTP itself costs (issue 30: ≤ 15 µs at 1 connection).
    http_minus_bare_minus_local_p50_us: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    build: &'static str,
    machine: super::machine::Machine,
    client: &'static str,
    seconds_per_measure: f64,
    /// Bytes of serve's answer to the bench request; bare axum answers as many.
    answer_bytes: usize,
    rows: Vec<Row>,
}

/// Runs `hookbox bench --serve`.
pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    super::output::measure_and_print(args, "hookbox-bench-serve", run_in, table)
}

fn run_in(args: &BenchArgs, scratch: &Path) -> anyhow::Result<Report> {
    let config = setup(scratch)?;
    let scale: u32 = if args.quick { 10 } else { 1 };
    let dur = Duration::from_millis(args.throughput_ms) / scale;
    let rt = runtime()?;
    let (rows, answer_bytes) = rt.block_on(async move {
        let servers = Servers::start(config).await?;
        let tenants = servers.handle.tenants().clone();
        let mut rows = Vec::new();
        for c in CONCURRENCY {
            eprintln!("bench --serve: {c} in flight…");
            rows.push(measure(&tenants, &servers.serve, &servers.bare, c, dur).await?);
        }
        let answer_bytes = servers.answer_bytes;
        servers.stop().await;
        anyhow::Ok((rows, answer_bytes))
    })?;
    Ok(Report {
        build: super::machine::build(),
        machine: super::machine::Machine::this(),
        client: "in-process hyper 1 HTTP/1.1 client, one keep-alive connection per concurrent client, same cores as the servers",
        seconds_per_measure: dur.as_secs_f64(),
        answer_bytes,
        rows,
    })
}

/// `hookbox serve` over the bench tenant and bare axum beside it, each checked once.
struct Servers {
    handle: hookbox_server::ServerHandle,
    serving: tokio::task::JoinHandle<hookbox_server::ShutdownReport>,
    serve: Target,
    bare: Target,
    bare_serving: tokio::task::JoinHandle<()>,
    /// Bytes of serve's answer to the bench request; bare axum answers as many.
    answer_bytes: usize,
}

impl Servers {
    async fn start(config: ServerConfig) -> anyhow::Result<Servers> {
        let server = Server::bind(config)
            .await
            .context("cannot start the server")?;
        let addr = server.local_addr().context("bound address")?;
        let handle = server.handle();
        let serving = tokio::spawn(server.run());
        while !handle.is_ready() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let serve = Target {
            addr,
            path: format!("/v1/tenants/{TENANT}/dispatch"),
        };
        let answer_bytes = check_serve(&serve).await?;
        let bare_listener = bare_axum::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(anyhow::Error::msg)?;
        let bare = Target {
            addr: bare_listener.local_addr().context("bare axum's address")?,
            path: "/dispatch".to_owned(),
        };
        let bare_answer = bare_axum::Answer {
            bytes: Some(answer_bytes),
        };
        let bare_serving = tokio::spawn(bare_axum::serve(bare_listener, bare_answer));
        check_bare(&bare, answer_bytes).await?;
        Ok(Servers {
            handle,
            serving,
            serve,
            bare,
            bare_serving,
            answer_bytes,
        })
    }

    /// Stops `hookbox serve` (bare axum keeps running until the runtime ends).
    async fn stop_serve(&self) {
        self.handle.shutdown().await;
    }

    async fn stop(self) {
        self.bare_serving.abort();
        self.handle.shutdown().await;
        let _ = self.serving.await;
    }
}

/// `hookbox bench --count serve` and `--count serve-bare`: one bench request over HTTP to
/// `hookbox serve` (the bench tenant, replay on) or to bare axum (an answer of the same size),
/// each on a keep-alive connection of its own kept between requests. The servers start at the
/// first request (a warm-up one), inside the counting runtime; for `serve-bare` serve is stopped
/// once its answer's size is known, so that only bare axum runs while counting.
pub(crate) struct CountClient {
    bare: bool,
    scratch: std::path::PathBuf,
    servers: tokio::sync::OnceCell<Servers>,
    idle: std::sync::Mutex<Vec<http1::SendRequest<Full<Bytes>>>>,
}

impl CountClient {
    pub(crate) fn new(scratch: &Path, bare: bool) -> CountClient {
        CountClient {
            bare,
            scratch: scratch.join(if bare { "serve-bare" } else { "serve" }),
            servers: tokio::sync::OnceCell::new(),
            idle: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// One request, answered 200.
    pub(crate) async fn once(&self) -> anyhow::Result<()> {
        let servers = self
            .servers
            .get_or_try_init(|| async {
                let servers = Servers::start(setup(&self.scratch)?).await?;
                if self.bare {
                    servers.stop_serve().await;
                }
                anyhow::Ok(servers)
            })
            .await?;
        let target = if self.bare {
            &servers.bare
        } else {
            &servers.serve
        };
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let mut sender = match taken {
            Some(sender) => sender,
            None => target.connect().await?,
        };
        sender.ready().await.context("connection")?;
        let res = sender
            .send_request(target.request(body())?)
            .await
            .context("dispatch")?;
        anyhow::ensure!(res.status() == 200, "the server answered {}", res.status());
        res.into_body().collect().await.context("answer")?;
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(sender);
        Ok(())
    }
}

/// One concurrency: connections to both servers opened and warmed, then [`ROUNDS`] rounds of
/// in-process, serve and bare axum.
async fn measure(
    tenants: &Arc<Tenants<TokenHash>>,
    serve: &Target,
    bare: &Target,
    c: usize,
    dur: Duration,
) -> anyhow::Result<Row> {
    let round = dur / ROUNDS;
    let mut serve_conns = Clients::open(serve, c).await?;
    let mut bare_conns = Clients::open(bare, c).await?;
    serve_conns.round(WARM_UP).await?;
    bare_conns.round(WARM_UP).await?;
    let _ = in_process(tenants, c, WARM_UP).await?;
    let (mut local, mut http, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        local.extend(in_process(tenants, c, round).await?);
        http.extend(serve_conns.round(round).await?);
        floor.extend(bare_conns.round(round).await?);
    }
    let total = round * ROUNDS;
    let (local, http, floor) = (
        Sample::of(local, total),
        Sample::of(http, total),
        Sample::of(floor, total),
    );
    Ok(Row {
        concurrency: c,
        in_process_p50_us: local.p50,
        in_process_p99_us: local.p99,
        in_process_per_s: local.per_s,
        http_p50_us: http.p50,
        http_p99_us: http.p99,
        http_per_s: http.per_s,
        bare_p50_us: floor.p50,
        bare_p99_us: floor.p99,
        bare_per_s: floor.per_s,
        http_over_bare_per_s: http.per_s / floor.per_s,
        http_added_p50_us: http.p50 - local.p50,
        http_minus_bare_minus_local_p50_us: http.p50 - floor.p50 - local.p50,
    })
}

/// Latency percentiles (µs) and completions per second of one side's rounds.
struct Sample {
    p50: f64,
    p99: f64,
    per_s: f64,
}

impl Sample {
    fn of(mut lat: Vec<f64>, dur: Duration) -> Sample {
        lat.sort_by(f64::total_cmp);
        Sample {
            p50: percentile(&lat, 0.50),
            p99: percentile(&lat, 0.99),
            per_s: lat.len() as f64 / dur.as_secs_f64(),
        }
    }
}

/// A tenants folder with one tenant (the noop hook; the tenant defaults but quotas wide enough
/// for 64 dispatches at once) and the server configuration over it.
fn setup(scratch: &Path) -> anyhow::Result<ServerConfig> {
    let tenant = scratch.join("tenants").join(TENANT);
    let hooks = tenant.join("plugins/noop/hooks");
    std::fs::create_dir_all(&hooks)
        .with_context(|| format!("cannot create {}", hooks.display()))?;
    std::fs::write(hooks.join("noop.wasm"), guests::wasm("noop")?)
        .context("cannot write the noop guest")?;
    let rules = json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/noop.wasm", "matcher": "Bash"}]}});
    std::fs::write(hooks.join("hooks.json"), rules.to_string()).context("hooks.json")?;
    let digest = hookbox_server::TokenHash::of_token(TOKEN).to_hex();
    std::fs::write(
        tenant.join("tenant.toml"),
        format!(
            "token_sha256 = \"{digest}\"\n[policy]\nmax_hooks_in_flight = 256\nmax_pool_slots = 256\nmax_dispatches_in_flight = 128\n"
        ),
    )
    .context("tenant.toml")?;
    let mut config = ServerConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        tenants_dir: scratch.join("tenants"),
        state_dir: Some(scratch.join("state")),
        cache_dir: Some(scratch.join("cache")),
        ..ServerConfig::default()
    };
    config.limits.max_requests_in_flight = 1024;
    // Every client of the bench is one peer (loopback): the per-peer cap must not count.
    config.limits.max_connections_per_peer = config.limits.max_connections;
    Ok(config)
}

fn body() -> Bytes {
    Bytes::from(
        json!({"event": "PreToolUse", "payload": {"session_id": "bench", "tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_use_id": "toolu_bench"}})
            .to_string(),
    )
}

/// A server and the path the bench posts to.
struct Target {
    addr: SocketAddr,
    path: String,
}

impl Target {
    /// The bench request: the same body and headers (the token included) for either server.
    fn request(&self, body: Bytes) -> anyhow::Result<hyper::Request<Full<Bytes>>> {
        self.request_to(&self.path, body)
    }

    fn request_to(&self, path: &str, body: Bytes) -> anyhow::Result<hyper::Request<Full<Bytes>>> {
        hyper::Request::post(path)
            .header(hyper::header::HOST, self.addr.to_string())
            .header(hyper::header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body))
            .context("request")
    }

    async fn connect(&self) -> anyhow::Result<http1::SendRequest<Full<Bytes>>> {
        let stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .context("cannot connect to the server")?;
        stream.set_nodelay(true).context("nodelay")?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream))
            .await
            .context("HTTP handshake")?;
        tokio::spawn(conn);
        Ok(sender)
    }

    /// One request to `path`: its status and answer.
    async fn once(&self, path: &str) -> anyhow::Result<(hyper::StatusCode, Bytes)> {
        let mut sender = self.connect().await?;
        let res = sender
            .send_request(self.request_to(path, body())?)
            .await
            .context("dispatch")?;
        let status = res.status();
        let bytes = res.into_body().collect().await.context("answer")?;
        Ok((status, bytes.to_bytes()))
    }
}

/// One dispatch to serve: it matched the hook and the hook ran, before anything is measured.
/// Its answer's length.
async fn check_serve(serve: &Target) -> anyhow::Result<usize> {
    // The full report says whether the hook ran cleanly (a failing hook is cheaper).
    let (status, full) = serve.once(&format!("{}?report=full", serve.path)).await?;
    let v: serde_json::Value = serde_json::from_slice(&full).context("answer JSON")?;
    if status != 200
        || v["matched_rule_count"] != 1
        || v["hooks"].as_array().map(Vec::len) != Some(1)
        || !v["hooks"][0]["effect"]["failure"].is_null()
    {
        bail!("the bench tenant did not answer as expected ({status}): {v}");
    }
    let (status, bytes) = serve.once(&serve.path).await?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).context("answer JSON")?;
    if status != 200 || v["matched_rule_count"] != 1 || v["outcome"] != "allow" {
        bail!("the bench tenant did not answer as expected ({status}): {v}");
    }
    Ok(bytes.len())
}

/// One request to bare axum: allowed, as long as serve's answer.
async fn check_bare(bare: &Target, answer_bytes: usize) -> anyhow::Result<()> {
    let (status, bytes) = bare.once(&bare.path).await?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).context("bare answer JSON")?;
    if status != 200 || v["outcome"] != "allow" || bytes.len() != answer_bytes {
        bail!(
            "bare axum did not answer as expected ({status}, {} bytes, serve's {answer_bytes}): {v}",
            bytes.len()
        );
    }
    Ok(())
}

/// `c` keep-alive connections to one server, kept open across rounds.
struct Clients<'a> {
    target: &'a Target,
    senders: Vec<http1::SendRequest<Full<Bytes>>>,
}

impl<'a> Clients<'a> {
    async fn open(target: &'a Target, c: usize) -> anyhow::Result<Clients<'a>> {
        let mut senders = Vec::with_capacity(c);
        for _ in 0..c {
            senders.push(target.connect().await?);
        }
        Ok(Clients { target, senders })
    }

    /// Every connection sends requests back to back for `dur`: their latencies (µs). Any
    /// answer but 200 fails the run.
    async fn round(&mut self, dur: Duration) -> anyhow::Result<Vec<f64>> {
        let body = body();
        let end = Instant::now() + dur;
        let mut workers = tokio::task::JoinSet::new();
        for mut sender in self.senders.drain(..) {
            let request = self.target.request(body.clone())?;
            let (head, _) = request.into_parts();
            let body = body.clone();
            workers.spawn(async move {
                let mut lat = Vec::new();
                loop {
                    let now = Instant::now();
                    if now >= end {
                        break;
                    }
                    sender.ready().await.context("connection")?;
                    let mut req = hyper::Request::new(Full::new(body.clone()));
                    *req.method_mut() = head.method.clone();
                    *req.uri_mut() = head.uri.clone();
                    *req.headers_mut() = head.headers.clone();
                    let res = sender.send_request(req).await.context("dispatch")?;
                    if res.status() != 200 {
                        bail!("the server answered {}", res.status());
                    }
                    res.into_body().collect().await.context("answer")?;
                    lat.push(now.elapsed().as_secs_f64() * 1e6);
                }
                anyhow::Ok((sender, lat))
            });
        }
        let mut all = Vec::new();
        while let Some(r) = workers.join_next().await {
            let (sender, lat) = r.context("a bench task died")??;
            self.senders.push(sender);
            all.extend(lat);
        }
        Ok(all)
    }
}

/// `c` tasks dispatching in-process back to back for `dur`: their latencies (µs).
async fn in_process(
    tenants: &Arc<Tenants<TokenHash>>,
    c: usize,
    dur: Duration,
) -> anyhow::Result<Vec<f64>> {
    let id = TenantId::new(TENANT).context("tenant id")?;
    let payload = json!({"tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_use_id": "toolu_bench"});
    let event = Event::from_payload(Some(EventName::PreToolUse), payload, "bench", "/")
        .context("the bench event")?;
    let end = Instant::now() + dur;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..c {
        let (tenants, id, event) = (tenants.clone(), id.clone(), event.clone());
        workers.spawn(async move {
            let mut lat = Vec::new();
            loop {
                // The caller's copy of the event is made before the clock starts (an agent
                // builds its event and hands it over), as in the other sections.
                let event = event.clone();
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let d = tenants
                    .dispatch(&id, event)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                lat.push(now.elapsed().as_secs_f64() * 1e6);
                anyhow::ensure!(d.reports.len() == 1, "{} hooks ran, not 1", d.reports.len());
                if let Some(f) = &d.reports[0].effect.failure {
                    bail!("the hook failed: {f}");
                }
            }
            anyhow::Ok(lat)
        });
    }
    let mut all = Vec::new();
    while let Some(r) = workers.join_next().await {
        all.extend(r.context("a bench task died")??);
    }
    Ok(all)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "hookbox bench --serve — {} build, {} CPUs, {:.1} s per measure ({ROUNDS} alternating rounds)\nclient: {}",
        r.build, r.machine.cores, r.seconds_per_measure, r.client
    );
    let _ = writeln!(
        s,
        "\ntrivial typed wasm hook (noop), one tenant (replay on): in-process Tenants::dispatch, POST /v1/tenants/{{id}}/dispatch,\nand bare axum's POST /dispatch (same client, same request, an answer of the same {} bytes)",
        r.answer_bytes
    );
    let _ = writeln!(
        s,
        "  {:>9} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>11} {:>14}",
        "in flight",
        "local p50 µs",
        "local /s",
        "serve p50 µs",
        "serve p99 µs",
        "serve /s",
        "bare p50 µs",
        "bare p99 µs",
        "bare /s",
        "serve÷bare",
        "serve−bare−local"
    );
    for row in &r.rows {
        let _ = writeln!(
            s,
            "  {:>9} {:>12.1} {:>12.0} {:>12.1} {:>12.1} {:>12.0} {:>12.1} {:>12.1} {:>12.0} {:>10.2}x {:>11.1} µs",
            row.concurrency,
            row.in_process_p50_us,
            row.in_process_per_s,
            row.http_p50_us,
            row.http_p99_us,
            row.http_per_s,
            row.bare_p50_us,
            row.bare_p99_us,
            row.bare_per_s,
            row.http_over_bare_per_s,
            row.http_minus_bare_minus_local_p50_us
        );
    }
    let _ = writeln!(
        s,
        "\ngoals (issue 30): serve ÷ bare axum req/s ≥ 0.5x at 8 connections; serve p50 − bare p50 − local p50 ≤ 15 µs at 1 connection"
    );
    s
}
