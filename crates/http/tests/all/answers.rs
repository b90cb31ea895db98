//! How answers are read (Claude Code's rules): 2xx + JSON object = the hook's JSON, 2xx empty =
//! nothing to add, anything else = `http_error`.

use hookbox_core::output::{FailureClass, RawOutput};

use crate::server::{Server, run};

#[tokio::test]
async fn a_2xx_json_object_is_the_hook_s_answer() {
    let server = Server::start().await;
    let run = run(&server.url("/json")).await.unwrap();
    assert_eq!(run.status, 200);
    assert_eq!(
        run.output,
        RawOutput::exited(
            0,
            r#"{"decision":"block","reason":"denied by the http hook"}"#,
            ""
        )
    );
    assert!(run.notes.is_empty(), "{:?}", run.notes);
}

#[tokio::test]
async fn a_2xx_without_a_body_is_success_with_nothing_to_add() {
    let server = Server::start().await;
    for (path, status) in [("/empty", 200), ("/no-content", 204)] {
        let run = run(&server.url(path)).await.unwrap();
        assert_eq!(run.status, status);
        assert_eq!(run.output, RawOutput::exited(0, "", ""));
    }
}

#[tokio::test]
async fn a_2xx_body_that_is_not_a_json_object_is_an_http_error() {
    let server = Server::start().await;
    for path in ["/text", "/array"] {
        let err = run(&server.url(path)).await.unwrap_err();
        assert_eq!(err.class, FailureClass::HttpError);
        assert!(
            err.message
                .contains("answered 200 OK with a body that is neither empty nor a JSON object"),
            "{}",
            err.message
        );
    }
}

#[tokio::test]
async fn other_statuses_are_http_errors_quoting_the_body() {
    let server = Server::start().await;
    let err = run(&server.url("/bad-request")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert_eq!(
        err.message,
        format!(
            "`{}` answered 400 Bad Request: \"missing field `x`\"",
            server.url("/bad-request")
        )
    );
    let err = run(&server.url("/error")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message.contains("500 Internal Server Error: \"boom\""),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn no_server_is_an_http_error() {
    // Bind then drop: a loopback port with (almost certainly) nobody listening.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = run(&format!("http://127.0.0.1:{port}/")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::HttpError);
    assert!(
        err.message.starts_with("cannot connect to"),
        "{}",
        err.message
    );
}
