//! What is sent: the payload, hookbox's headers, and the rule's with `$VAR`s expanded for
//! `allowedEnvVars` only.

use std::collections::BTreeMap;

use hookbox_http::{HttpPolicy, HttpRequest, USER_AGENT_VALUE};
use serde_json::Value;

use crate::server::{Server, runner, spec};

fn env(name: &str) -> Option<String> {
    match name {
        "HOOK_TOKEN" => Some("s3cret".into()),
        "OTHER_SECRET" => Some("must-not-leak".into()),
        "ANTHROPIC_API_KEY" => Some("sk-ant-api03-leak".into()),
        "AWS_SECRET_ACCESS_KEY" => Some("wJalrXUtnFEMI-leak".into()),
        _ => None,
    }
}

#[tokio::test]
async fn the_payload_and_headers_are_sent_with_listed_variables_only() {
    let server = Server::start().await;
    let mut spec = spec(&server.url("/echo?x=1"));
    spec.headers = BTreeMap::from([
        ("Authorization".to_owned(), "Bearer $HOOK_TOKEN".to_owned()),
        ("X-Leak".to_owned(), "[${OTHER_SECRET}]".to_owned()),
        ("Host".to_owned(), "evil.example".to_owned()),
    ]);
    spec.allowed_env_vars = vec!["HOOK_TOKEN".to_owned()];
    let req = HttpRequest {
        spec: &spec,
        payload: br#"{"hook_event_name":"Stop"}"#,
        env: &env,
    };
    let run = runner().run(&req, &HttpPolicy::developer()).await.unwrap();
    let echo: Value = serde_json::from_str(&run.output.stdout).unwrap();
    assert_eq!(echo["method"], "POST");
    assert_eq!(echo["target"], "/echo?x=1");
    assert_eq!(echo["body"], r#"{"hook_event_name":"Stop"}"#);
    let headers = &echo["headers"];
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["accept"], "application/json");
    assert_eq!(headers["user-agent"], USER_AGENT_VALUE);
    assert_eq!(headers["host"], server.addr.to_string());
    assert_eq!(headers["content-length"], "26");
    assert_eq!(headers["authorization"], "Bearer s3cret");
    assert_eq!(headers["x-leak"], "[]");
    assert!(!run.output.stdout.contains("must-not-leak"));
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("`$OTHER_SECRET` is not in allowedEnvVars")),
        "{:?}",
        run.notes
    );
    assert!(
        run.notes.iter().any(|n| n.contains("`Host` was not sent")),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn provider_and_cloud_credentials_reach_the_server_only_when_the_policy_names_them() {
    // Issue 16: a plugin's http hook listing these in allowedEnvVars received them.
    let server = Server::start().await;
    let mut spec = spec(&server.url("/echo"));
    spec.headers = BTreeMap::from([
        ("X-Api-Key".to_owned(), "$ANTHROPIC_API_KEY".to_owned()),
        ("X-Aws".to_owned(), "$AWS_SECRET_ACCESS_KEY".to_owned()),
        ("Authorization".to_owned(), "Bearer $HOOK_TOKEN".to_owned()),
    ]);
    spec.allowed_env_vars = ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "HOOK_TOKEN"]
        .map(str::to_owned)
        .into();
    let req = HttpRequest {
        spec: &spec,
        payload: b"{}",
        env: &env,
    };
    let run = runner().run(&req, &HttpPolicy::developer()).await.unwrap();
    assert!(!run.output.stdout.contains("leak"), "{}", run.output.stdout);
    let echo: Value = serde_json::from_str(&run.output.stdout).unwrap();
    assert_eq!(echo["headers"]["x-api-key"], "");
    assert_eq!(echo["headers"]["x-aws"], "");
    assert_eq!(echo["headers"]["authorization"], "Bearer s3cret");
    assert_eq!(
        run.notes
            .iter()
            .filter(|n| n.contains("provider or cloud credential"))
            .count(),
        2,
        "{:?}",
        run.notes
    );
    // The user's own policy consents to one of them.
    let mut policy = HttpPolicy::developer();
    policy.credential_env = vec!["ANTHROPIC_API_KEY".to_owned()];
    let run = runner().run(&req, &policy).await.unwrap();
    let echo: Value = serde_json::from_str(&run.output.stdout).unwrap();
    assert_eq!(echo["headers"]["x-api-key"], "sk-ant-api03-leak");
    assert_eq!(echo["headers"]["x-aws"], "");
}

#[tokio::test]
async fn a_rule_header_replaces_hookbox_s_defaults() {
    let server = Server::start().await;
    let mut spec = spec(&server.url("/echo"));
    spec.headers = BTreeMap::from([("User-Agent".to_owned(), "my-hook/1".to_owned())]);
    let no_env = |_: &str| None;
    let req = HttpRequest {
        spec: &spec,
        payload: b"{}",
        env: &no_env,
    };
    let run = runner().run(&req, &HttpPolicy::developer()).await.unwrap();
    let echo: Value = serde_json::from_str(&run.output.stdout).unwrap();
    assert_eq!(echo["headers"]["user-agent"], "my-hook/1");
}
