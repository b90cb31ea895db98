//! `https`: the connection goes to the checked address while TLS verifies the URL's name.

use hookbox_core::output::FailureClass;
use hookbox_http::{Destination, HttpPolicy};

use crate::server::{Server, run_with, runner, spec};

const CA: &[u8] = include_bytes!("../data/ca.pem");

#[tokio::test]
async fn https_to_a_name_verifies_the_name_and_connects_to_the_checked_address() {
    let server = Server::start_tls().await;
    let url = format!("https://localhost:{}/json", server.addr.port());
    let runner = runner().with_extra_roots(CA).unwrap();
    let run = run_with(&runner, &spec(&url), &HttpPolicy::developer())
        .await
        .unwrap();
    assert_eq!(run.status, 200);
    assert!(run.output.stdout.contains("denied by the http hook"));
    // A tenant listing the loopback address by IP reaches it by name too.
    let tenant = HttpPolicy::allow_only([Destination::parse("127.0.0.1").unwrap()]);
    let run = run_with(&runner, &spec(&url), &tenant).await.unwrap();
    assert_eq!(run.status, 200);
}

#[tokio::test]
async fn an_untrusted_certificate_is_an_http_error() {
    let server = Server::start_tls().await;
    let url = format!("https://localhost:{}/json", server.addr.port());
    let err = run_with(&runner(), &spec(&url), &HttpPolicy::developer())
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message.contains("TLS handshake failed"),
        "{}",
        err.message
    );
    // The certificate names `localhost`: reaching the same server as 127.0.0.1 fails the
    // name check, even with the CA trusted.
    let url = format!("https://127.0.0.1:{}/json", server.addr.port());
    let trusted = runner().with_extra_roots(CA).unwrap();
    let err = run_with(&trusted, &spec(&url), &HttpPolicy::developer())
        .await
        .unwrap_err();
    assert!(
        err.message.contains("TLS handshake failed"),
        "{}",
        err.message
    );
}

#[test]
fn bad_extra_roots_are_refused() {
    let err = runner().with_extra_roots(b"not a certificate").unwrap_err();
    assert!(
        err.to_string().contains("no `-----BEGIN CERTIFICATE-----`"),
        "{err}"
    );
}
