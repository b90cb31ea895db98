//! `hookbox bench --serve`: what HTTP costs. One tenant with the trivial typed wasm hook (the
//! `noop` guest on PreToolUse/Bash) in a real `hookbox serve` (hookbox_server, bound to
//! 127.0.0.1:0 in this process), driven over loopback by hyper's HTTP/1.1 client from this
//! process — one keep-alive connection per concurrent client, each sending its next dispatch
//! as soon as the answer is read — at 1, 8 and 64 connections; beside the same tenant's
//! in-process dispatch (`Tenants::dispatch`, no HTTP, no JSON) with as many dispatches in
//! flight. Client and server share the machine's cores, as a sidecar's client would. Run it
//! from a release build.

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

#[derive(Debug, Serialize)]
struct Row {
    concurrency: usize,
    in_process_p50_us: f64,
    in_process_p99_us: f64,
    in_process_per_s: f64,
    http_p50_us: f64,
    http_p99_us: f64,
    http_per_s: f64,
    http_added_p50_us: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    build: &'static str,
    machine: super::machine::Machine,
    client: &'static str,
    seconds_per_measure: f64,
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
    let rows = rt.block_on(async move {
        let server = Server::bind(config)
            .await
            .context("cannot start the server")?;
        let addr = server.local_addr().context("bound address")?;
        let handle = server.handle();
        let serving = tokio::spawn(server.run());
        while !handle.is_ready() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let tenants = handle.tenants().clone();
        check_answer(addr).await?;
        let mut rows = Vec::new();
        for c in CONCURRENCY {
            eprintln!("bench --serve: {c} in flight…");
            let local = in_process(&tenants, c, dur).await;
            let http = over_http(addr, c, dur).await?;
            rows.push(Row {
                concurrency: c,
                in_process_p50_us: percentile(&local.0, 0.50),
                in_process_p99_us: percentile(&local.0, 0.99),
                in_process_per_s: local.1,
                http_p50_us: percentile(&http.0, 0.50),
                http_p99_us: percentile(&http.0, 0.99),
                http_per_s: http.1,
                http_added_p50_us: percentile(&http.0, 0.50) - percentile(&local.0, 0.50),
            });
        }
        handle.shutdown().await;
        let _ = serving.await;
        anyhow::Ok(rows)
    })?;
    Ok(Report {
        build: super::machine::build(),
        machine: super::machine::Machine::this(),
        client: "in-process hyper 1 HTTP/1.1 client, one keep-alive connection per concurrent client, same cores as the server",
        seconds_per_measure: dur.as_secs_f64(),
        rows,
    })
}

/// A tenants folder with one tenant (the noop hook, no replay: disk I/O is not what is measured,
/// quotas wide enough for 64 dispatches at once) and the server configuration over it.
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
            "token_sha256 = \"{digest}\"\n[policy]\nreplay = false\nmax_hooks_in_flight = 256\nmax_pool_slots = 256\nmax_dispatches_in_flight = 128\n"
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

fn request(addr: SocketAddr, body: Bytes) -> anyhow::Result<hyper::Request<Full<Bytes>>> {
    hyper::Request::post(format!("/v1/tenants/{TENANT}/dispatch"))
        .header(hyper::header::HOST, addr.to_string())
        .header(hyper::header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body))
        .context("request")
}

async fn connect(addr: SocketAddr) -> anyhow::Result<http1::SendRequest<Full<Bytes>>> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .context("cannot connect to the server")?;
    stream.set_nodelay(true).context("nodelay")?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP handshake")?;
    tokio::spawn(conn);
    Ok(sender)
}

/// One dispatch over HTTP: checks it matched the hook before measuring anything.
async fn check_answer(addr: SocketAddr) -> anyhow::Result<()> {
    let mut sender = connect(addr).await?;
    let res = sender
        .send_request(request(addr, body())?)
        .await
        .context("dispatch")?;
    let status = res.status();
    let bytes = res
        .into_body()
        .collect()
        .await
        .context("answer")?
        .to_bytes();
    let v: serde_json::Value = serde_json::from_slice(&bytes).context("answer JSON")?;
    if status != 200
        || v["matched_rule_count"] != 1
        || v["hooks"][0]["effect"]["failure"].is_object()
    {
        bail!("the bench tenant did not answer as expected ({status}): {v}");
    }
    Ok(())
}

/// `c` connections sending dispatches back to back for `dur`: sorted latencies (µs) and
/// dispatches per second.
async fn over_http(addr: SocketAddr, c: usize, dur: Duration) -> anyhow::Result<(Vec<f64>, f64)> {
    let body = body();
    let mut workers = tokio::task::JoinSet::new();
    let start = Instant::now() + Duration::from_millis(200);
    let end = start + dur;
    for _ in 0..c {
        let mut sender = connect(addr).await?;
        let body = body.clone();
        workers.spawn(async move {
            let mut lat = Vec::new();
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                sender.ready().await.context("connection")?;
                let res = sender
                    .send_request(request(addr, body.clone())?)
                    .await
                    .context("dispatch")?;
                if res.status() != 200 {
                    bail!("the server answered {}", res.status());
                }
                res.into_body().collect().await.context("answer")?;
                // The first 200 ms warm the connections, the pool and the caches.
                if now >= start {
                    lat.push(now.elapsed().as_secs_f64() * 1e6);
                }
            }
            anyhow::Ok(lat)
        });
    }
    collect(workers, dur).await
}

/// `c` tasks dispatching in-process back to back for `dur`.
async fn in_process(tenants: &Arc<Tenants<TokenHash>>, c: usize, dur: Duration) -> (Vec<f64>, f64) {
    let id = TenantId::new(TENANT).unwrap_or_else(|_| unreachable!("a literal valid id"));
    let payload = json!({"tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_use_id": "toolu_bench"});
    let event = Event::from_payload(Some(EventName::PreToolUse), payload, "bench", "/")
        .unwrap_or_else(|_| Event::new(EventName::PreToolUse, "bench", "/"));
    let mut workers = tokio::task::JoinSet::new();
    let start = Instant::now() + Duration::from_millis(200);
    let end = start + dur;
    for _ in 0..c {
        let (tenants, id, event) = (tenants.clone(), id.clone(), event.clone());
        workers.spawn(async move {
            let mut lat = Vec::new();
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                tenants.dispatch(&id, event.clone()).await?;
                if now >= start {
                    lat.push(now.elapsed().as_secs_f64() * 1e6);
                }
            }
            anyhow::Ok(lat)
        });
    }
    collect(workers, dur).await.unwrap_or_default()
}

async fn collect(
    mut workers: tokio::task::JoinSet<anyhow::Result<Vec<f64>>>,
    dur: Duration,
) -> anyhow::Result<(Vec<f64>, f64)> {
    let mut all = Vec::new();
    while let Some(r) = workers.join_next().await {
        all.extend(r.context("a bench task died")??);
    }
    all.sort_by(f64::total_cmp);
    let per_s = all.len() as f64 / dur.as_secs_f64();
    Ok((all, per_s))
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "hookbox bench --serve — {} build, {} CPUs, {:.1} s per measure\nclient: {}",
        r.build, r.machine.cores, r.seconds_per_measure, r.client
    );
    let _ = writeln!(
        s,
        "\ntrivial typed wasm hook (noop), one tenant: in-process Tenants::dispatch vs POST /v1/tenants/{{id}}/dispatch"
    );
    let _ = writeln!(
        s,
        "  {:>9} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14} {:>16}",
        "in flight",
        "local p50 µs",
        "local p99 µs",
        "local /s",
        "HTTP p50 µs",
        "HTTP p99 µs",
        "HTTP /s",
        "HTTP adds p50 µs"
    );
    for row in &r.rows {
        let _ = writeln!(
            s,
            "  {:>9} {:>14.1} {:>14.1} {:>14.0} {:>14.1} {:>14.1} {:>14.0} {:>16.1}",
            row.concurrency,
            row.in_process_p50_us,
            row.in_process_p99_us,
            row.in_process_per_s,
            row.http_p50_us,
            row.http_p99_us,
            row.http_per_s,
            row.http_added_p50_us
        );
    }
    let _ = writeln!(
        s,
        "\ngoals (SPEC §9): HTTP adds ≤ 40 µs at p50 (1 in flight); ≥ 20,000 dispatches/s over HTTP"
    );
    s
}
