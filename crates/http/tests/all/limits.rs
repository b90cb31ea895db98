//! Timeouts, the body cap, redirects, and the connection pool.

use std::time::Duration;

use hookbox_core::output::FailureClass;
use hookbox_http::{HttpLimits, HttpPolicy};

use crate::server::{Server, run, run_with, runner, runner_with, spec};

#[tokio::test]
async fn a_slow_answer_is_a_timeout() {
    let server = Server::start().await;
    let mut spec = spec(&server.url("/slow"));
    spec.timeout_secs = 0.3;
    let err = run_with(&runner(), &spec, &HttpPolicy::developer())
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::Timeout);
    assert!(
        err.message
            .ends_with("timed out after 0.3 s while waiting for the answer"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_body_over_the_cap_is_an_http_error() {
    let server = Server::start().await;
    let err = run(&server.url("/huge")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message
            .contains("body over 1048576 bytes (`max_body_bytes`)"),
        "{}",
        err.message
    );
    // The cap is the runner's: a larger one takes the same body.
    let big = runner_with(HttpLimits {
        max_body_bytes: 4 * 1024 * 1024,
        ..HttpLimits::default()
    });
    let run = run_with(&big, &spec(&server.url("/huge")), &HttpPolicy::developer())
        .await
        .unwrap();
    assert!(run.output.stdout.len() > 2 * 1024 * 1024);
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let server = Server::start().await;
    let err = run(&server.url("/redirect")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message
            .contains("answered 302 Found redirecting to `/json`")
            && err.message.contains("do not follow redirects"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn connections_are_reused_between_hooks() {
    let server = Server::start().await;
    let runner = runner();
    for _ in 0..3 {
        let run = run_with(
            &runner,
            &spec(&server.url("/json")),
            &HttpPolicy::developer(),
        )
        .await
        .unwrap();
        assert_eq!(run.status, 200);
    }
    assert_eq!(runner.idle_connections(), 1);
    assert_eq!(
        server.connections.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    // An answer that was not read to its end (an error) does not go back to the pool.
    let _ = run_with(
        &runner,
        &spec(&server.url("/error")),
        &HttpPolicy::developer(),
    )
    .await;
    assert_eq!(runner.idle_connections(), 0);
}

#[tokio::test]
async fn idle_connections_expire() {
    let server = Server::start().await;
    let runner = runner_with(HttpLimits {
        idle_timeout: Duration::ZERO,
        ..HttpLimits::default()
    });
    for _ in 0..2 {
        run_with(
            &runner,
            &spec(&server.url("/json")),
            &HttpPolicy::developer(),
        )
        .await
        .unwrap();
    }
    assert_eq!(
        server.connections.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
}
