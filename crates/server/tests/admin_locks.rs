//! The server's admin routes hold each tenant's own admin lock (issue 32): an operation held on
//! one tenant — a reload compiling, here held at a barrier by the test holding that tenant's lock —
//! never delays an operation on another tenant, and the same tenant's operations wait for it.
//! The server runs in this process (the barrier is its tenants' own lock) and is spoken to over
//! loopback with plain HTTP/1.1. Ordering, not timing: every wait is bounded only against a hang.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hookbox_host::TenantId;
use hookbox_server::{Server, ServerConfig, TokenHash};

/// Longest any wait may take before it is a failure (a hang guard, not a measurement).
const PATIENCE: Duration = Duration::from_secs(120);

const ADMIN: &str = "admin-secret";

/// `method path` with the admin token, over a fresh connection; the answer's status.
fn call(addr: SocketAddr, method: &str, path: &str) -> u16 {
    let answer = exchange(addr, method, path);
    answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"))
}

/// The whole answer (head and body) to `method path` with the admin token.
fn exchange(addr: SocketAddr, method: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: hookbox\r\nAuthorization: Bearer {ADMIN}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
}

/// Waits until the server is handling `n` admin requests (`/metrics` is not one of them).
fn wait_for_admin_requests(addr: SocketAddr, n: usize) {
    let want = format!("hookbox_http_requests_in_flight {n}");
    let until = Instant::now() + PATIENCE;
    while !exchange(addr, "GET", "/metrics").contains(&want) {
        assert!(Instant::now() < until, "never {n} admin requests in flight");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_operation_held_on_one_tenant_does_not_delay_another_tenants_disable() {
    let dir = tempfile::tempdir().unwrap();
    let tenants_dir = dir.path().join("tenants");
    for id in ["a", "b"] {
        let folder = tenants_dir.join(id);
        // No plugins folder: a tenant with no rules (its default `plugins/` may be missing).
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("tenant.toml"),
            format!(
                "token_sha256 = \"{}\"\n",
                TokenHash::of_token(&format!("token-{id}")).to_hex()
            ),
        )
        .unwrap();
    }
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        tenants_dir,
        state_dir: Some(dir.path().join("state")),
        cache_dir: Some(dir.path().join("cache")),
        admin_token_sha256: Some(TokenHash::of_token(ADMIN)),
        ..ServerConfig::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(Server::bind(config)).unwrap();
    let addr = server.local_addr().unwrap();
    let handle = server.handle();
    let running = rt.spawn(server.run());
    let until = Instant::now() + PATIENCE;
    while !handle.is_ready() {
        assert!(Instant::now() < until, "the server never became ready");
        std::thread::sleep(Duration::from_millis(10));
    }

    // The barrier: tenant a's admin lock, held as a reload compiling would hold it.
    let tenants = handle.tenants().clone();
    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _held = tenants.admin(&TenantId::new("a").unwrap());
        held_tx.send(()).unwrap();
        let _ = release_rx.recv_timeout(PATIENCE);
    });
    held_rx.recv().unwrap();

    // a's reload waits for a's lock…
    let (reloaded_tx, reloaded_rx) = mpsc::channel();
    let reload = std::thread::spawn(move || {
        reloaded_tx
            .send(call(addr, "POST", "/v1/tenants/a/reload"))
            .unwrap();
    });
    // …while b's disable is answered (sent once a's reload is being handled).
    wait_for_admin_requests(addr, 1);
    assert_eq!(call(addr, "POST", "/v1/tenants/b/disable"), 200);
    assert!(
        reloaded_rx.try_recv().is_err(),
        "a's reload was answered while a's lock was held"
    );
    release_tx.send(()).unwrap();
    assert_eq!(reloaded_rx.recv_timeout(PATIENCE).unwrap(), 200);
    holder.join().unwrap();
    reload.join().unwrap();

    rt.block_on(handle.shutdown());
    rt.block_on(running).unwrap();
}
