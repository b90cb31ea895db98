//! `hookbox serve` against a client that hoards connections (issue 16): one peer holds at most
//! `limits.max_connections_per_peer` (48 idle sockets from one address used to take every slot
//! and lock other clients out), and a connection with nothing in progress and nothing received
//! for `limits.idle_timeout_secs` is closed — while an event stream or a request whose body is
//! still coming is not. Clients from another peer are real sockets bound to 127.0.0.2.

use std::io::{BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use hookbox_test_artifacts as guests;
use serde_json::json;

use crate::serve_util::{ADMIN, Events, Fixture, PATIENCE, Reply, eventually, metric, read_reply};

/// Another peer than the tests' usual 127.0.0.1 (Linux routes all of 127/8 to loopback).
const OTHER_PEER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

fn noop_tenant(f: &Fixture) {
    f.tenant(
        "a",
        "token-a",
        "",
        &json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/noop.wasm", "matcher": "Bash"}]}}),
        &[("noop.wasm", guests::NOOP)],
    );
}

fn dispatch_body() -> Vec<u8> {
    serde_json::to_vec(&json!({"event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "ls"}}}))
        .expect("json")
}

/// A connection to `addr` from `source` (std cannot bind before connecting; tokio can).
fn connect_from(source: Ipv4Addr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let stream = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from((source, 0)))?;
        socket.connect(addr).await?.into_std()
    })?;
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    Ok(stream)
}

/// One request on `stream`; `close` asks the server to close the connection after it.
fn send(
    stream: &TcpStream,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&[u8]>,
    close: bool,
) -> std::io::Result<Reply> {
    let mut w = stream.try_clone()?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: hookbox\r\n");
    if close {
        head.push_str("Connection: close\r\n");
    }
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    w.write_all(&bytes)?;
    read_reply(&mut BufReader::new(stream.try_clone()?))
}

/// `GET path` from [`OTHER_PEER`] on a fresh connection.
fn get_from_other_peer(addr: SocketAddr, path: &str, token: Option<&str>) -> Reply {
    let stream = connect_from(OTHER_PEER, addr).expect("connect from 127.0.0.2");
    send(&stream, "GET", path, token, None, true)
        .unwrap_or_else(|e| panic!("GET {path} from 127.0.0.2: {e}"))
}

/// Whether the server closed `stream` (EOF or reset) — without waiting for it.
fn closed_by_server(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 512];
    let closed = match (&mut &*stream).read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    };
    stream.set_nonblocking(false).expect("blocking");
    closed
}

#[test]
fn one_peer_cannot_hold_every_connection_slot() {
    let f = Fixture::new();
    noop_tenant(&f);
    // The numbers: 48 connections in all. Idle and head timers far away, so only the
    // caps decide what stays open.
    let s = f.start(
        "[limits]\nmax_connections = 48\nmax_connections_per_peer = 8\nidle_timeout_secs = 600\nheader_read_timeout_secs = 600\n",
    );
    let open_now = |addr| {
        let m = get_from_other_peer(addr, "/metrics", Some(ADMIN)).text();
        metric(&m, "hookbox_http_connections_open").unwrap_or(-1.0)
    };
    // The readiness polls have closed: only the metrics request itself is open.
    eventually("only the metrics request is open", || {
        (open_now(s.addr) == 1.0).then_some(())
    });
    // One client opens every slot there is, and sends nothing.
    let hoard: Vec<TcpStream> = (0..48)
        .map(|_| TcpStream::connect(s.addr).expect("connect"))
        .collect();
    let closed = eventually("the server closes what is over the peer's cap", || {
        let n = hoard.iter().filter(|c| closed_by_server(c)).count();
        (n >= 40).then_some(n)
    });
    assert_eq!(
        closed, 40,
        "8 of the hoarder's connections stay open, the rest are closed"
    );
    // Another client is still served: a probe, and a tenant's dispatch.
    assert_eq!(get_from_other_peer(s.addr, "/healthz", None).status, 200);
    let other = connect_from(OTHER_PEER, s.addr).unwrap();
    let r = send(
        &other,
        "POST",
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        Some(&dispatch_body()),
        true,
    )
    .expect("a dispatch from another peer");
    assert_eq!(r.status, 200, "{}", r.text());
    // The hoarder's next connection is closed at accept, and counted.
    let one_more = TcpStream::connect(s.addr).unwrap();
    eventually("a ninth connection from the same peer is closed", || {
        closed_by_server(&one_more).then_some(())
    });
    let m = get_from_other_peer(s.addr, "/metrics", Some(ADMIN)).text();
    assert!(
        metric(
            &m,
            "hookbox_http_connections_refused_total{limit=\"max_connections_per_peer\"}"
        )
        .unwrap_or(0.0)
            >= 41.0,
        "{m}"
    );
    // The eight it kept still work.
    let kept = hoard
        .iter()
        .find(|c| !closed_by_server(c))
        .expect("an open connection");
    kept.set_read_timeout(Some(PATIENCE)).unwrap();
    let r = send(kept, "GET", "/healthz", None, None, false).expect("a kept connection");
    assert_eq!(r.status, 200);
    // Once the hoarder lets go, it is served again.
    drop(hoard);
    drop(one_more);
    eventually("the first peer is served again", || {
        let c = TcpStream::connect(s.addr).ok()?;
        c.set_read_timeout(Some(PATIENCE)).ok()?;
        let r = send(&c, "GET", "/healthz", None, None, true).ok()?;
        (r.status == 200).then_some(())
    });
}

#[test]
fn an_idle_connection_is_closed_and_one_with_a_request_in_progress_is_not() {
    let f = Fixture::new();
    noop_tenant(&f);
    // Without the idle timeout, only the head timer (here 600 s) would close a silent socket.
    let s = f.start(
        "[limits]\nidle_timeout_secs = 0.5\nheader_read_timeout_secs = 600\nsse_keepalive_secs = 0.2\n",
    );
    // A fresh connection that never sends a byte.
    let silent = TcpStream::connect(s.addr).unwrap();
    eventually("a silent connection is closed", || {
        closed_by_server(&silent).then_some(())
    });
    // A keep-alive connection left idle after its answer.
    let kept = TcpStream::connect(s.addr).unwrap();
    kept.set_read_timeout(Some(PATIENCE)).unwrap();
    let r = send(&kept, "GET", "/healthz", None, None, false).unwrap();
    assert_eq!(r.status, 200);
    assert_ne!(r.header("connection"), Some("close"));
    eventually("an idle keep-alive connection is closed", || {
        closed_by_server(&kept).then_some(())
    });
    // An event stream receives nothing from its client for far longer than the idle timeout,
    // and stays open: its request is in progress until the stream ends.
    let (status, _, mut events) = Events::open(s.addr, "/v1/tenants/a/fired", "token-a").unwrap();
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(2000));
    let r = s.call(
        "POST",
        "/v1/tenants/a/dispatch",
        Some("token-a"),
        Some(&dispatch_body()),
    );
    assert_eq!(r.status, 200);
    let e = events.next().expect("the stream is still open");
    assert_eq!(e.name, "hook_fired");
    // A request whose body comes later than the idle timeout is still answered.
    let slow = TcpStream::connect(s.addr).unwrap();
    slow.set_read_timeout(Some(PATIENCE)).unwrap();
    let body = dispatch_body();
    let mut w = slow.try_clone().unwrap();
    write!(
        w,
        "POST /v1/tenants/a/dispatch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    w.write_all(&body).unwrap();
    let r = read_reply(&mut BufReader::new(slow)).unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let m = s.get("/metrics", Some(ADMIN)).text();
    assert!(
        metric(&m, "hookbox_http_connections_idle_closed_total").unwrap_or(0.0) >= 2.0,
        "{m}"
    );
}
