//! The destination policy, checked after resolution, on the address actually connected to.

use std::net::SocketAddr;

use hookbox_core::output::FailureClass;
use hookbox_http::{Destination, HttpPolicy, Resolve, Resolving};

use crate::server::{Server, run_with, runner, spec};

/// Resolves every name to fixed addresses: a name pointing at a private network or the
/// metadata service, without any DNS or traffic.
struct Fixed(Vec<&'static str>);

impl Resolve for Fixed {
    fn resolve<'a>(&'a self, _host: &'a str, port: u16) -> Resolving<'a> {
        let addrs: Vec<SocketAddr> = self
            .0
            .iter()
            .map(|ip| SocketAddr::new(ip.parse().unwrap(), port))
            .collect();
        Box::pin(async move { Ok(addrs) })
    }
}

fn tenant(entries: &[&str]) -> HttpPolicy {
    HttpPolicy::allow_only(entries.iter().map(|e| Destination::parse(e).unwrap()))
}

#[tokio::test]
async fn a_tenant_s_http_hooks_are_off_by_default() {
    let server = Server::start().await;
    let err = run_with(
        &runner(),
        &spec(&server.url("/json")),
        &HttpPolicy::tenant(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message.contains("disabled by this host's policy"),
        "{}",
        err.message
    );
    assert_eq!(
        server.connections.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn loopback_is_refused_to_a_tenant_unless_listed_by_address() {
    let server = Server::start().await;
    let port = server.addr.port();
    // Listed by name: the name matches, but it resolves to loopback, which a name never unlocks.
    for (url, policy) in [
        (server.url("/json"), tenant(&["hooks.example.com"])),
        (
            format!("http://localhost:{port}/json"),
            tenant(&[&format!("localhost:{port}")]),
        ),
    ] {
        let err = run_with(&runner(), &spec(&url), &policy).await.unwrap_err();
        assert_eq!(err.class, FailureClass::HttpError, "{url}");
        assert!(
            err.message.contains("refused by this host's policy"),
            "{}",
            err.message
        );
    }
    assert_eq!(
        server.connections.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn an_allow_listed_loopback_destination_is_accepted() {
    let server = Server::start().await;
    let port = server.addr.port();
    for entry in [format!("127.0.0.1:{port}"), "127.0.0.0/8".to_owned()] {
        let run = run_with(&runner(), &spec(&server.url("/json")), &tenant(&[&entry]))
            .await
            .unwrap();
        assert_eq!(run.status, 200, "{entry}");
    }
    // The port is part of the entry.
    let err = run_with(
        &runner(),
        &spec(&server.url("/json")),
        &tenant(&[&format!("127.0.0.1:{}", port.wrapping_add(1).max(1))]),
    )
    .await
    .unwrap_err();
    assert!(
        err.message.contains("not in the policy's allow-list"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn anywhere_public_does_not_open_loopback_or_the_metadata_service() {
    // Issue 16: `http_allow = ["0.0.0.0/0"]` reached a server on loopback and the metadata
    // address. The block holds them, but it is not inside their special ranges.
    let server = Server::start().await;
    let port = server.addr.port();
    let anywhere = tenant(&["0.0.0.0/0", "::/0"]);
    let err = run_with(&runner(), &spec(&server.url("/json")), &anywhere)
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message.contains("loopback") && err.message.contains("0.0.0.0/0"),
        "{}",
        err.message
    );
    for ip in ["169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254"] {
        let runner = runner().with_resolver(Fixed(vec![ip]));
        let err = run_with(&runner, &spec("http://hooks.example.com/h"), &anywhere)
            .await
            .unwrap_err();
        assert!(
            err.message.contains(&format!("resolves to {ip}")),
            "{ip}: {}",
            err.message
        );
    }
    assert_eq!(
        server.connections.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    // Named by address, the same server is reached.
    let run = run_with(
        &runner(),
        &spec(&server.url("/json")),
        &tenant(&["0.0.0.0/0", &format!("127.0.0.1:{port}")]),
    )
    .await
    .unwrap();
    assert_eq!(run.status, 200);
}

#[tokio::test]
async fn a_listed_name_resolving_to_a_private_address_is_refused_after_resolution() {
    for (ip, what) in [
        ("10.20.30.40", "private"),
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "unique local"),
        ("::ffff:192.168.1.1", "private"),
    ] {
        let runner = runner().with_resolver(Fixed(vec![ip]));
        let err = run_with(
            &runner,
            &spec("http://hooks.example.com/hook"),
            &tenant(&["hooks.example.com"]),
        )
        .await
        .unwrap_err();
        assert_eq!(err.class, FailureClass::HttpError);
        assert!(
            err.message.contains(&format!("resolves to {ip}")) && err.message.contains(what),
            "{ip}: {}",
            err.message
        );
    }
}

#[tokio::test]
async fn only_checked_addresses_are_connected_to() {
    // A name resolving to two loopback addresses, each with a server on the same port; the
    // tenant lists only the second. The first is refused, noted, and never connected to.
    let listed = Server::start().await;
    let port = listed.addr.port();
    let unlisted = Server::start_on(SocketAddr::from(([127, 0, 0, 2], port))).await;
    let runner = runner().with_resolver(Fixed(vec!["127.0.0.2", "127.0.0.1"]));
    let url = format!("http://hooks.example.com:{port}/json");
    let run = run_with(&runner, &spec(&url), &tenant(&["127.0.0.1"]))
        .await
        .unwrap();
    assert_eq!(run.status, 200);
    assert!(
        run.notes.iter().any(|n| n.contains("127.0.0.2")),
        "{:?}",
        run.notes
    );
    assert_eq!(
        unlisted
            .connections
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    assert_eq!(
        listed.connections.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}

#[tokio::test]
async fn the_host_s_address_guard_has_the_last_word() {
    let server = Server::start().await;
    let runner = runner().with_address_guard(|addr| addr.port() != 0 && !addr.ip().is_loopback());
    let err = run_with(
        &runner,
        &spec(&server.url("/json")),
        &HttpPolicy::developer(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message.contains("refused by the host's address guard"),
        "{}",
        err.message
    );
    assert_eq!(
        server.connections.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn a_developer_reaches_loopback() {
    let server = Server::start().await;
    let run = run_with(
        &runner(),
        &spec(&server.url("/json")),
        &HttpPolicy::developer(),
    )
    .await
    .unwrap();
    assert_eq!(run.status, 200);
}
