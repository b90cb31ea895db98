//! Unit tests of what Claude Code (≈ 2.1.317) and Codex added (issue 12): `http` handlers,
//! `onFailure`, `shell`, `asyncRewake`, the model-switch and `Interrupt` events, top-level keys
//! hookbox does not run, and each dialect's default timeouts and caps.

use std::path::Path;

use super::{only_diag, parse, parse_as};
use crate::config::*;
use crate::diagnostic::Severity;
use crate::event::EventName;
use crate::rule::{CommandLine, CommandSpec, FailMode, Handler, Shell};

fn one_rule(event: &str, handler: &str) -> LoadReport {
    parse(&format!(
        r#"{{"hooks": {{"{event}": [{{"hooks": [{handler}]}}]}}}}"#
    ))
}

#[test]
fn http_handlers_parse() {
    let r = one_rule(
        "PreToolUse",
        r#"{"type": "http", "url": "https://hooks.example.com/pre", "headers": {"Authorization": "Bearer $TOKEN"},
            "allowedEnvVars": ["TOKEN"], "onFailure": "block", "if": "Bash(rm *)", "statusMessage": "asking…"}"#,
    );
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    let rule = &r.rules[0];
    let Handler::Http(h) = &rule.handler else {
        panic!("{:?}", rule.handler)
    };
    assert_eq!(h.url, "https://hooks.example.com/pre");
    assert_eq!(h.headers["Authorization"], "Bearer $TOKEN");
    assert_eq!(h.allowed_env_vars, vec!["TOKEN"]);
    assert_eq!(h.timeout_secs, 600.0, "Claude Code's http default");
    assert_eq!(rule.on_failure, Some(FailMode::Block));
    assert_eq!(rule.status_message.as_deref(), Some("asking…"));
    assert!(rule.if_condition.is_some());
    for (event, secs) in [
        ("UserPromptSubmit", 30.0),
        ("PreModelSwitch", 30.0),
        ("PostModelSwitch", 30.0),
        ("Stop", 600.0),
    ] {
        let r = one_rule(
            event,
            r#"{"type": "http", "url": "http://127.0.0.1:8080/h"}"#,
        );
        let Handler::Http(h) = &r.rules[0].handler else {
            panic!()
        };
        assert_eq!(h.timeout_secs, secs, "{event}");
    }
}

#[test]
fn bad_http_handlers_are_located_errors() {
    let cases = [
        (
            r#"{"type": "http"}"#,
            "Hook type 'http' under 'Stop' has no 'url' — skipped.",
            "hooks.Stop[0].hooks[0]",
        ),
        (
            r#"{"type": "http", "url": "ftp://example.com/x"}"#,
            "'url' \"ftp://example.com/x\" cannot be used: its scheme is 'ftp'; http hooks POST to http:// or https:// URLs — skipped.",
            "hooks.Stop[0].hooks[0].url",
        ),
        (
            r#"{"type": "http", "url": "example.com/x"}"#,
            "'url' \"example.com/x\" cannot be used: it does not parse as a URL (relative URL without a base) — skipped.",
            "hooks.Stop[0].hooks[0].url",
        ),
        (
            r#"{"type": "http", "url": "https://x.test", "headers": {"A": 1}}"#,
            "header 'A' must be a string, found a number 1 — skipped.",
            "hooks.Stop[0].hooks[0].headers.A",
        ),
        (
            r#"{"type": "http", "url": "https://x.test", "allowedEnvVars": "TOKEN"}"#,
            "'allowedEnvVars' must be a list of variable names, found a string \"TOKEN\" — skipped.",
            "hooks.Stop[0].hooks[0].allowedEnvVars",
        ),
    ];
    for (handler, msg, at) in cases {
        let r = one_rule("Stop", handler);
        let d = only_diag(&r);
        assert_eq!(d.message, msg);
        assert_eq!(d.severity, Severity::Error, "{handler}");
        assert_eq!(d.json_path.as_deref(), Some(at));
        assert!(d.line.is_some(), "{d}");
        assert!(r.rules.is_empty());
    }
}

#[test]
fn http_is_not_allowed_where_claude_code_refuses_it() {
    for event in ["SessionStart", "Setup"] {
        let r = one_rule(event, r#"{"type": "http", "url": "https://x.test"}"#);
        assert_eq!(
            only_diag(&r).message,
            format!(
                "Hook type 'http' is not supported for event '{event}' — skipped. (Allowed for this event: ['command', 'wasm'])"
            )
        );
    }
    // The source document's verbatim text is unchanged.
    let r = one_rule("Stop", r#"{"type": "prompt", "prompt": "x"}"#);
    assert_eq!(
        only_diag(&r).message,
        "Hook type 'prompt' is not supported for event 'Stop' — skipped. (Allowed for this event: ['command', 'wasm'])"
    );
}

#[test]
fn on_failure_has_two_spellings() {
    for (fields, want) in [
        (r#""onFailure": "block""#, Some(FailMode::Block)),
        (r#""on_failure": "block""#, Some(FailMode::Block)),
        (
            r#""onFailure": "allow", "on_failure": "allow""#,
            Some(FailMode::Allow),
        ),
        ("", None),
    ] {
        for handler in [
            format!(
                r#"{{"type": "command", "command": "x" {}{fields}}}"#,
                if fields.is_empty() { "" } else { "," }
            ),
            format!(
                r#"{{"type": "http", "url": "https://x.test" {}{fields}}}"#,
                if fields.is_empty() { "" } else { "," }
            ),
            format!(
                r#"{{"type": "wasm", "component": "g.wasm" {}{fields}}}"#,
                if fields.is_empty() { "" } else { "," }
            ),
        ] {
            let r = one_rule("PreToolUse", &handler);
            assert!(r.diagnostics.is_empty(), "{handler}: {:#?}", r.diagnostics);
            assert_eq!(r.rules[0].on_failure, want, "{handler}");
        }
    }
    let r = one_rule(
        "PreToolUse",
        r#"{"type": "command", "command": "x", "on_failure": "allow",
            "onFailure": "block"}"#,
    );
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "'on_failure' and 'onFailure' disagree (\"allow\" and \"block\"): they are two spellings of one setting — skipped."
    );
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(
        d.json_path.as_deref(),
        Some("hooks.PreToolUse[0].hooks[0].onFailure")
    );
    assert_eq!((d.line, d.column), (Some(2), Some(13)));
    assert!(r.rules.is_empty());
    let r = one_rule(
        "PreToolUse",
        r#"{"type": "command", "command": "x", "onFailure": "deny"}"#,
    );
    assert_eq!(
        only_diag(&r).message,
        "'onFailure' must be \"allow\" or \"block\", found a string \"deny\" — skipped."
    );
}

#[test]
fn shell_and_async_rewake() {
    let text = r#"{"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "a"},
        {"type": "command", "command": "a", "shell": "sh"},
        {"type": "command", "command": "a", "shell": "bash"},
        {"type": "command", "command": "a", "shell": "powershell"},
        {"type": "command", "command": "a", "shell": "pwsh", "asyncRewake": true},
        {"type": "command", "command": "a", "shell": "zsh"},
        {"type": "command", "command": "a", "shell": 3},
        {"type": "command", "command": "a", "asyncRewake": "yes"}
    ]}]}}"#;
    let r = parse(text);
    let specs: Vec<_> = r
        .rules
        .iter()
        .map(|x| match &x.handler {
            Handler::Command(CommandSpec {
                command: CommandLine::Shell { shell, .. },
                run_async,
                async_rewake,
                ..
            }) => (*shell, *run_async, *async_rewake),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        specs,
        vec![
            (Shell::Sh, false, false),
            (Shell::Sh, false, false),
            (Shell::Bash, false, false),
            (Shell::Powershell, false, false),
            (Shell::Powershell, true, true),
        ]
    );
    let got: Vec<(&str, Severity)> = r
        .diagnostics
        .iter()
        .map(|d| (d.message.as_str(), d.severity))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "unknown shell \"zsh\" — skipped. (Allowed: \"sh\", \"bash\", \"powershell\", \"pwsh\")",
                Severity::Error
            ),
            (
                "'shell' must be a string, found a number 3 — skipped. (Allowed: \"sh\", \"bash\", \"powershell\", \"pwsh\")",
                Severity::Error
            ),
            (
                "'asyncRewake' must be a boolean, found a string \"yes\" — skipped.",
                Severity::Warning
            ),
        ]
    );
    assert_eq!(
        r.diagnostics[0].json_path.as_deref(),
        Some("hooks.Stop[0].hooks[5].shell")
    );
}

#[test]
fn keys_hookbox_does_not_run_are_named() {
    let r = parse(
        r#"{"modules": ["./register.ts"],
 "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}"#,
    );
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "'modules' is Claude Code's mods: JavaScript/TypeScript modules that Claude Code runs inside its own process; hookbox does not run them — ignored"
    );
    assert_eq!(
        (d.json_path.as_deref(), d.line, d.column),
        (Some("modules"), Some(1), Some(2))
    );
    assert_eq!(r.rules.len(), 1, "the hooks beside it load");
    // A mod's hooks.json may have no hooks at all: not an unknown event.
    let r = parse(r#"{"modules": ["./register.ts"]}"#);
    assert_eq!(only_diag(&r).json_path.as_deref(), Some("modules"));
    // Admin settings in a settings file.
    let r = parse_as(
        r#"{"allowedHttpHookUrls": ["https://*.example.com/*"], "httpHookAllowedEnvVars": ["T"], "allowManagedHooksOnly": true,
            "hooks": {}}"#,
        "settings.json",
        Dialect::Claude,
    );
    let keys: Vec<&str> = r
        .diagnostics
        .iter()
        .filter_map(|d| d.json_path.as_deref())
        .collect();
    assert_eq!(
        keys,
        vec![
            "allowedHttpHookUrls",
            "httpHookAllowedEnvVars",
            "allowManagedHooksOnly"
        ]
    );
    assert!(
        r.diagnostics
            .iter()
            .all(|d| d.message.contains("hookbox does not honour it"))
    );
}

#[test]
fn new_events_are_recognised() {
    for event in [
        "PreModelSwitch",
        "PostModelSwitch",
        "Interrupt",
        "StopFailure",
        "SessionEnd",
    ] {
        let r = one_rule(event, r#"{"type": "command", "command": "a"}"#);
        assert!(r.diagnostics.is_empty(), "{event}: {:#?}", r.diagnostics);
        assert_eq!(r.rules[0].event, event.parse::<EventName>().unwrap());
    }
    let r = parse(
        r#"{"hooks": {"PreModelSwitch": [{"matcher": "claude-haiku-4-5", "hooks": [{"type": "command", "command": "a"}]}]}}"#,
    );
    assert!(
        r.diagnostics.is_empty(),
        "a model-switch matcher is tested against to_model"
    );
}

/// The timeout of the one command rule of `event` in a file of `dialect` named `file`.
fn default_timeout(
    event: &str,
    dialect: Dialect,
    file: &str,
    timeout: Option<u32>,
) -> (f64, Vec<String>) {
    let t = timeout
        .map(|t| format!(r#", "timeout": {t}"#))
        .unwrap_or_default();
    let r = parse_as(
        &format!(
            r#"{{"hooks": {{"{event}": [{{"hooks": [{{"type": "command", "command": "a"{t}}}]}}]}}}}"#
        ),
        file,
        dialect,
    );
    let Handler::Command(c) = &r.rules[0].handler else {
        panic!()
    };
    (
        c.timeout_secs,
        r.diagnostics.iter().map(|d| d.message.clone()).collect(),
    )
}

#[test]
fn default_timeouts_follow_each_agent() {
    let claude = |e| default_timeout(e, Dialect::Claude, "hooks.json", None).0;
    assert_eq!(claude("PreToolUse"), 600.0);
    assert_eq!(claude("Stop"), 600.0);
    assert_eq!(claude("UserPromptSubmit"), 30.0);
    assert_eq!(claude("PreModelSwitch"), 30.0);
    assert_eq!(claude("PostModelSwitch"), 30.0);
    assert_eq!(claude("MessageDisplay"), 10.0);
    assert_eq!(claude("SessionEnd"), 1.5);
    assert_eq!(claude("Interrupt"), 3.0);
    for (dialect, secs) in [
        (Dialect::Agentao, 60.0),
        (Dialect::Simple, 30.0),
        (Dialect::Ghast, 10.0),
    ] {
        for event in ["PreToolUse", "UserPromptSubmit", "SessionEnd"] {
            assert_eq!(
                default_timeout(event, dialect, "hooks.json", None).0,
                secs,
                "{dialect} {event}"
            );
        }
    }
}

#[test]
fn timeout_caps_per_agent() {
    // Claude Code raises SessionEnd's budget to a rule's own timeout, up to 60 s.
    let (t, d) = default_timeout("SessionEnd", Dialect::Claude, "hooks.json", Some(20));
    assert_eq!((t, d.len()), (20.0, 0));
    let (t, d) = default_timeout("SessionEnd", Dialect::Claude, "hooks.json", Some(90));
    assert_eq!(t, 60.0);
    assert_eq!(
        d,
        vec!["timeout 90 s is over the Claude Code maximum for SessionEnd of 60 s — clamped to 60"]
    );
    // Codex caps SessionEnd and Interrupt at 3 s: its files are told apart by their folder.
    for event in ["SessionEnd", "Interrupt"] {
        let (t, d) = default_timeout(event, Dialect::Claude, ".codex/hooks.json", Some(10));
        assert_eq!(t, 3.0, "{event}");
        assert_eq!(
            d,
            vec!["timeout 10 s is over the Codex maximum for this event of 3 s — clamped to 3"]
        );
    }
    assert_eq!(
        default_timeout("SessionEnd", Dialect::Claude, ".codex/hooks.json", None).0,
        1.5
    );
    assert_eq!(
        default_timeout("Stop", Dialect::Claude, ".codex/hooks.json", Some(100)).0,
        100.0
    );
    // ghast's own maximum is unchanged.
    let (t, d) = default_timeout("SessionStart", Dialect::Ghast, "hooks.json", Some(45));
    assert_eq!(t, 30.0);
    assert_eq!(
        d,
        vec!["timeout 45 s is over the ghast maximum of 30 s — clamped to 30"]
    );
}

#[test]
fn a_codex_plugin_is_codex_whatever_its_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(root.join(".codex-plugin")).unwrap();
    std::fs::create_dir_all(root.join("hooks")).unwrap();
    std::fs::write(
        root.join(".codex-plugin/plugin.json"),
        r#"{"name": "p", "hooks": "./hooks/codex-hooks.json"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("hooks/codex-hooks.json"),
        r#"{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "a", "timeout": 10}]}]}}"#,
    )
    .unwrap();
    let r = load_plugin(Path::new(&root), &LoadOptions::default());
    let Handler::Command(c) = &r.rules[0].handler else {
        panic!()
    };
    assert_eq!(c.timeout_secs, 3.0, "{:#?}", r.diagnostics);
}
