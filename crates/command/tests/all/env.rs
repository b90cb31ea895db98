//! The hook's environment per dialect, `${VAR}` placeholders, the deny-list, the working dir.

use std::sync::Arc;

use hookbox_command::{CommandRequest, CommandRunner, EnvPolicy, HookContext};
use hookbox_core::Dialect;
use hookbox_core::event::{Event, EventData, EventName, ToolCall};
use serde_json::json;

use crate::util::{Fixture, exec, request, shell};

/// Prints each variable the tests look at as `NAME=value`, or `NAME unset`.
const SHOW_ENV: &str = r#"for v in CLAUDE_PROJECT_DIR CLAUDE_PLUGIN_ROOT CLAUDE_PLUGIN_DATA PLUGIN_ROOT PLUGIN_DATA GHAST_HOOK HOOK_EVENT HOOK_TOOL_NAME HOOK_TOOL_INPUT HOOK_TOOL_OUTPUT OPENAI_API_KEY ANTHROPIC_API_KEY AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN GITHUB_TOKEN GH_TOKEN AWS_PROFILE MY_TOKEN TEAM_SECRET; do
  eval "if [ \"\${$v+set}\" = set ]; then echo \"$v=\$$v\"; else echo \"$v unset\"; fi"
done"#;

fn pre_tool_use() -> Arc<Event> {
    let mut ev = Event::new(EventName::PreToolUse, "sess", "/w");
    ev.data = EventData::PreToolUse(ToolCall {
        tool_name: "Bash".into(),
        tool_input: json!({"command": "rm -rf /"}),
        tool_use_id: None,
    });
    Arc::new(ev)
}

/// A runner whose host environment holds stale hook variables and provider keys.
fn runner(fx: &Fixture) -> CommandRunner {
    fx.runner().with_host_env([
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("GHAST_HOOK", "stale".to_owned()),
        ("PLUGIN_ROOT", "/stale/root".to_owned()),
        ("HOOK_EVENT", "Stale".to_owned()),
        ("OPENAI_API_KEY", "sk-openai-secret".to_owned()),
        ("anthropic_api_key", "sk-ant-secret".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "sk-aws-secret".to_owned()),
        ("AWS_SESSION_TOKEN", "sk-aws-session".to_owned()),
        ("GITHUB_TOKEN", "sk-ghp-secret".to_owned()),
        ("GH_TOKEN", "sk-gh-secret".to_owned()),
        ("AWS_PROFILE", "dev".to_owned()),
        ("MY_TOKEN", "kept".to_owned()),
        ("TEAM_SECRET", "s3".to_owned()),
    ])
}

fn context(fx: &Fixture, dialect: Dialect) -> HookContext {
    HookContext::new(dialect)
        .with_project_dir(fx.path().join("project"))
        .with_plugin_root(fx.path().join("plugin"))
        .with_plugin_data(fx.path())
        .with_event(pre_tool_use())
}

async fn env_lines(dialect: Dialect) -> (Fixture, Vec<String>) {
    let fx = Fixture::new();
    let req = CommandRequest::new(shell(SHOW_ENV), context(&fx, dialect));
    let run = runner(&fx).run(&req).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    let lines = run.output.stdout.lines().map(str::to_owned).collect();
    (fx, lines)
}

fn has(lines: &[String], line: &str) {
    assert!(
        lines.iter().any(|l| l == line),
        "missing `{line}` in {lines:#?}"
    );
}

#[tokio::test]
async fn claude_and_agentao_get_the_paths_but_not_ghast_or_simple_variables() {
    for dialect in [Dialect::Claude, Dialect::Agentao] {
        let (fx, lines) = env_lines(dialect).await;
        let p = fx.path().display().to_string();
        has(&lines, &format!("CLAUDE_PROJECT_DIR={p}/project"));
        has(&lines, &format!("CLAUDE_PLUGIN_ROOT={p}/plugin"));
        has(&lines, &format!("PLUGIN_ROOT={p}/plugin"));
        has(&lines, &format!("CLAUDE_PLUGIN_DATA={p}"));
        has(&lines, &format!("PLUGIN_DATA={p}"));
        has(&lines, "GHAST_HOOK unset");
        has(&lines, "HOOK_EVENT unset");
        has(&lines, "HOOK_TOOL_INPUT unset");
    }
}

#[tokio::test]
async fn ghast_gets_ghast_hook_true() {
    let (fx, lines) = env_lines(Dialect::Ghast).await;
    has(&lines, "GHAST_HOOK=true");
    has(
        &lines,
        &format!("PLUGIN_ROOT={}/plugin", fx.path().display()),
    );
    has(&lines, "HOOK_EVENT unset");
}

#[tokio::test]
async fn simple_gets_the_hook_variables() {
    let (_fx, lines) = env_lines(Dialect::Simple).await;
    has(&lines, "HOOK_EVENT=PreToolUse");
    has(&lines, "HOOK_TOOL_NAME=Bash");
    has(&lines, r#"HOOK_TOOL_INPUT={"command":"rm -rf /"}"#);
    has(&lines, "HOOK_TOOL_OUTPUT unset");
    has(&lines, "GHAST_HOOK unset");
}

#[tokio::test]
async fn provider_keys_and_account_credentials_are_not_visible_and_other_variables_are() {
    let (_fx, lines) = env_lines(Dialect::Claude).await;
    has(&lines, "OPENAI_API_KEY unset");
    has(&lines, "ANTHROPIC_API_KEY unset");
    has(&lines, "AWS_SECRET_ACCESS_KEY unset");
    has(&lines, "AWS_SESSION_TOKEN unset");
    has(&lines, "GITHUB_TOKEN unset");
    has(&lines, "GH_TOKEN unset");
    has(&lines, "AWS_PROFILE=dev");
    has(&lines, "MY_TOKEN=kept");
    has(&lines, "TEAM_SECRET=s3");
    assert!(!lines.iter().any(|l| l.contains("sk-")), "{lines:#?}");
}

#[tokio::test]
async fn the_deny_list_takes_globs() {
    let fx = Fixture::new();
    let runner = runner(&fx).with_env_policy(EnvPolicy::default().with_deny("*_SECRET"));
    let run = runner
        .run(&CommandRequest::new(
            shell(SHOW_ENV),
            context(&fx, Dialect::Claude),
        ))
        .await
        .unwrap();
    let lines: Vec<String> = run.output.stdout.lines().map(str::to_owned).collect();
    has(&lines, "TEAM_SECRET unset");
    has(&lines, "MY_TOKEN=kept");
    has(&lines, "OPENAI_API_KEY unset");
}

#[tokio::test]
async fn placeholders_are_substituted_in_the_command_text() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path().join("plugin")).unwrap();
    std::fs::write(
        fx.path().join("plugin/hook.sh"),
        "echo \"hook ran with $1\"\n",
    )
    .unwrap();
    // Single quotes keep the shell from expanding anything: what is printed was substituted by
    // hookbox. `${HOME}` is not one of its names, so it stays as written.
    let command = "echo '${CLAUDE_PLUGIN_ROOT}|${PLUGIN_DATA}|${HOME}|$PLUGIN_ROOT'; \
                   sh \"${CLAUDE_PLUGIN_ROOT}/hook.sh\" \"${CLAUDE_PROJECT_DIR}\"";
    let req = CommandRequest::new(shell(command), context(&fx, Dialect::Claude));
    let run = runner(&fx).run(&req).await.unwrap();
    let p = fx.path().display();
    assert_eq!(
        run.output.stdout,
        format!("{p}/plugin|{p}|${{HOME}}|$PLUGIN_ROOT\nhook ran with {p}/project\n")
    );
    assert_eq!(run.output.exit_code, Some(0));
}

#[tokio::test]
async fn unknown_placeholders_are_left_for_the_shell() {
    let fx = Fixture::new();
    // No plugin root in this context: the shell expands `${CLAUDE_PLUGIN_ROOT}` itself, and the
    // stale inherited value was removed, so it is empty.
    let req = CommandRequest::new(
        shell("echo \"[${CLAUDE_PLUGIN_ROOT}][${MY_TOKEN}]\""),
        HookContext::new(Dialect::Claude),
    );
    let run = runner(&fx).run(&req).await.unwrap();
    assert_eq!(run.output.stdout, "[][kept]\n");
}

#[tokio::test]
async fn exec_form_substitutes_each_argument_without_a_shell() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path().join("plugin")).unwrap();
    let script = fx.script(
        "plugin/show-args.sh",
        "for a in \"$@\"; do echo \"<$a>\"; done",
    );
    assert!(script.exists());
    let spec = exec(&[
        "${CLAUDE_PLUGIN_ROOT}/show-args.sh",
        "${PLUGIN_DATA}/x",
        "${UNKNOWN_VAR}",
        "$PLUGIN_ROOT",
        "a b",
    ]);
    let run = runner(&fx)
        .run(&CommandRequest::new(spec, context(&fx, Dialect::Claude)))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    assert_eq!(
        run.output.stdout,
        format!(
            "<{}/x>\n<${{UNKNOWN_VAR}}>\n<$PLUGIN_ROOT>\n<a b>\n",
            fx.path().display()
        )
    );
}

#[tokio::test]
async fn the_hook_runs_in_the_requested_directory() {
    let fx = Fixture::new();
    let run = fx
        .runner()
        .run(&request(shell("pwd -P")).with_cwd(fx.path()))
        .await
        .unwrap();
    assert_eq!(
        run.output.stdout.trim_end(),
        fx.path().canonicalize().unwrap().display().to_string()
    );
}

#[tokio::test]
async fn without_a_cwd_the_hook_runs_in_the_plugin_data_folder() {
    let fx = Fixture::new();
    let data = fx.data_dir("plug", "sess");
    let ctx = HookContext::new(Dialect::Ghast).with_plugin_data(&data);
    let run = fx
        .runner()
        .run(&CommandRequest::new(shell("pwd -P"), ctx))
        .await
        .unwrap();
    assert_eq!(run.output.stdout.trim_end(), data.display().to_string());
}

#[tokio::test]
async fn no_deny_listed_value_reaches_the_hook_in_any_spelling() {
    let fx = Fixture::new();
    let run = runner(&fx).run(&request(shell("env"))).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert!(
        run.output.stdout.contains("MY_TOKEN=kept"),
        "{}",
        run.output.stdout
    );
    assert!(!run.output.stdout.contains("sk-"), "{}", run.output.stdout);
    assert!(
        !run.output.stdout.contains("stale"),
        "{}",
        run.output.stdout
    );
}
