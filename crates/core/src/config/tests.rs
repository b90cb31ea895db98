//! Unit tests of document parsing and validation (SPEC §1.1–§1.2): rule shapes and handler
//! fields here; strict wasm blocks and file-level errors in `tests/errors.rs`; the loader on
//! temporary folders in `tests/loading.rs`.

mod agents;
mod duplicates;
mod errors;
mod loading;
mod maxima;
mod regex_cap;

use std::path::Path;

use super::*;
use crate::event::{EventName, HandlerType};
use crate::matcher::Matcher;
use crate::rule::{CommandLine, FailMode, Handler, Shell};

pub(super) fn parse_as(text: &str, file: &str, dialect: Dialect) -> LoadReport {
    parse_hooks_str(text, Path::new(file), dialect)
}

pub(super) fn parse(text: &str) -> LoadReport {
    parse_as(text, "hooks.json", Dialect::Claude)
}

pub(super) fn messages(r: &LoadReport) -> Vec<&str> {
    r.diagnostics.iter().map(|d| d.message.as_str()).collect()
}

pub(super) fn only_diag(r: &LoadReport) -> &Diagnostic {
    assert_eq!(r.diagnostics.len(), 1, "{:#?}", r.diagnostics);
    &r.diagnostics[0]
}

fn command(r: &Rule) -> &crate::rule::CommandSpec {
    match &r.handler {
        Handler::Command(c) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn claude_nested_shape() {
    let text = r#"{
  "description": "example",
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash|Edit", "hooks": [
          { "type": "command", "command": "./guard.sh", "timeout": 5 },
          { "type": "command", "command": "./second.sh", "id": "tolerated" }
      ] }
    ],
    "Stop": [ { "hooks": [ { "type": "command", "command": "stop.sh", "timeout": 2.5 } ] } ]
  }
}"#;
    let r = parse(text);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.rules.len(), 3);
    let (a, b, c) = (&r.rules[0], &r.rules[1], &r.rules[2]);
    assert_eq!((a.index, b.index, c.index), (0, 1, 2));
    assert_eq!(a.event, EventName::PreToolUse);
    assert_eq!(
        a.matcher,
        Matcher::Names(vec!["Bash".into(), "Edit".into()])
    );
    assert_eq!(b.matcher, a.matcher);
    assert_eq!(command(a).timeout_secs, 5.0);
    assert_eq!(
        command(b).timeout_secs,
        600.0,
        "the claude dialect's default: Claude Code's 600 s"
    );
    assert_eq!(command(c).timeout_secs, 2.5);
    assert_eq!(a.source.json_path, "hooks.PreToolUse[0].hooks[0]");
    assert_eq!((a.source.line, a.source.column), (Some(6), Some(11)));
    assert_eq!(c.source.json_path, "hooks.Stop[0].hooks[0]");
    assert_eq!(a.source.plugin, "hooks.json");
    assert_eq!(r.plugins.len(), 1);
    assert_eq!(r.files[0].rules, 3);
}

#[test]
fn spec_example_with_flat_handlers_wasm_and_prompt() {
    let text = r#"{ "hooks": {
    "PreToolUse": [
      { "matcher": "Bash|Edit", "hooks": [ { "type": "command", "command": "./guard.sh", "timeout": 5 } ] },
      { "type": "command", "command": "audit.sh", "matcher": { "tool_name": "run_shell_command" }, "timeout": 30 },
      { "type": "wasm", "component": "${PLUGIN_ROOT}/hooks/guard.wasm", "matcher": { "tool_name": "Bash" } }
    ],
    "UserPromptSubmit": [ { "type": "prompt", "prompt": "Always answer in markdown." } ]
} }"#;
    let r = parse_as(text, "hooks.json", Dialect::Agentao);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    let types: Vec<HandlerType> = r.rules.iter().map(|r| r.handler.handler_type()).collect();
    assert_eq!(
        types,
        [
            HandlerType::Command,
            HandlerType::Command,
            HandlerType::Wasm,
            HandlerType::Prompt
        ]
    );
    assert!(matches!(r.rules[1].matcher, Matcher::Object(_)));
    assert_eq!(r.rules[1].source.json_path, "hooks.PreToolUse[1]");
    match &r.rules[2].handler {
        Handler::Wasm(w) => {
            assert_eq!(w.component, "hooks/guard.wasm");
            assert_eq!(w.timeout_secs, None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        r.rules[3].handler,
        Handler::Prompt {
            prompt: "Always answer in markdown.".into()
        }
    );
    assert!(r.rules.iter().all(|r| r.dialect == Dialect::Agentao));
}

#[test]
fn bare_events_object_and_single_object_values() {
    let r = parse(
        r#"{"description": "not an event", "$schema": "x", "Stop": {"type": "command", "command": "a"}}"#,
    );
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.rules.len(), 1);
    assert_eq!(r.rules[0].source.json_path, "Stop");
    let r = parse(r#"{"hooks": {"Stop": {"hooks": [{"type": "command", "command": "a"}]}}}"#);
    assert_eq!(r.rules[0].source.json_path, "hooks.Stop.hooks[0]");
}

#[test]
fn settings_files_read_only_their_hooks_object() {
    let text = r#"{"permissions": {"allow": ["Bash"]}, "env": {"A": "1"}, "model": "opus",
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "s"}]}]}}"#;
    let r = parse_as(text, ".claude/settings.json", Dialect::Claude);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.rules.len(), 1);
    let r = parse_as(
        r#"{"permissions": {}, "model": "opus"}"#,
        "settings.local.json",
        Dialect::Claude,
    );
    assert_eq!(
        only_diag(&r).message,
        "this settings file has no 'hooks' object: nothing to load"
    );
    assert_eq!(r.diagnostics[0].severity, Severity::Warning);
    let d = &r.diagnostics[0];
    assert_eq!(
        (d.json_path.as_deref(), d.line),
        (None, Some(1)),
        "about the whole file"
    );
}

#[test]
fn simple_dialect_entries_are_command_handlers() {
    let text = r#"{"hooks": {"PreToolUse": [{"matcher": "*", "command": "./log.sh"}, {"matcher": "bash", "command": "./check.sh"}]}}"#;
    let r = parse_as(text, ".hooks.json", Dialect::Simple);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.rules.len(), 2);
    assert!(r.rules[0].matcher.is_all());
    assert_eq!(
        command(&r.rules[1]).command,
        CommandLine::Shell {
            text: "./check.sh".into(),
            shell: Shell::Sh
        }
    );
    assert_eq!(
        command(&r.rules[1]).timeout_secs,
        30.0,
        "the simple dialect's default"
    );
}

#[test]
fn prompt_on_stop_uses_the_source_documents_text() {
    let text = "{\"hooks\": {\"Stop\": [\n  {\"type\": \"prompt\", \"prompt\": \"x\"}]}}";
    let r = parse(text);
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "Hook type 'prompt' is not supported for event 'Stop' — skipped. (Allowed for this event: ['command', 'wasm'])"
    );
    assert_eq!(d.json_path.as_deref(), Some("hooks.Stop[0]"));
    assert_eq!((d.line, d.column), (Some(2), Some(3)));
    assert_eq!(d.severity, Severity::Warning);
    assert!(r.rules.is_empty());
    assert_eq!(r.files[0].skipped, 1);
    assert_eq!(
        d.to_string(),
        "hooks.json:2:3: warning: Hook type 'prompt' is not supported for event 'Stop' — skipped. (Allowed for this event: ['command', 'wasm']) (at hooks.Stop[0])\n  fix: prompt hooks run only on 'UserPromptSubmit'; use a command hook that prints the text"
    );
}

#[test]
fn known_unsupported_and_unknown_types() {
    for t in ["agent", "mcp_tool"] {
        let r = parse(&format!(
            r#"{{"hooks": {{"PreToolUse": [{{"hooks": [{{"type": "{t}", "url": "u"}}]}}]}}}}"#
        ));
        assert_eq!(
            only_diag(&r).message,
            format!("Hook type '{t}' is not supported yet — skipped.")
        );
    }
    let r = parse(r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "foo"}]}]}}"#);
    assert_eq!(
        only_diag(&r).message,
        "Unknown hook type 'foo' under 'PreToolUse' — skipped."
    );
    let r = parse(r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": 3, "command": "x"}]}]}}"#);
    assert_eq!(
        only_diag(&r).message,
        "'type' must be a string, found a number 3 — skipped."
    );
    assert_eq!(
        r.diagnostics[0].json_path.as_deref(),
        Some("hooks.PreToolUse[0].hooks[0].type")
    );
    let r = parse(r#"{"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}"#);
    assert_eq!(
        only_diag(&r).message,
        "Hook entry under 'PreToolUse' has no 'type' — skipped."
    );
}

#[test]
fn unknown_events_suggest_the_claude_name() {
    let cases = [
        ("Foo", None),
        (
            "preToolUse",
            Some("did you mean 'PreToolUse'? event names are case-sensitive"),
        ),
        (
            "beforeShellExecution",
            Some("did you mean 'PreToolUse'? 'beforeShellExecution' is Cursor's name for it"),
        ),
        (
            "BeforeTool",
            Some("did you mean 'PreToolUse'? 'BeforeTool' is Gemini CLI's name for it"),
        ),
    ];
    for (name, fix) in cases {
        // A real Claude event beside it keeps the file from looking like another agent's.
        let text = format!(
            r#"{{"hooks": {{"Stop": [], "{name}": [{{"hooks": [{{"type": "command", "command": "a"}}, {{"type": "command", "command": "b"}}]}}]}}}}"#
        );
        let r = parse(&text);
        let d = only_diag(&r);
        assert_eq!(
            d.message,
            format!("Unsupported hook event '{name}' — skipped.")
        );
        assert_eq!(
            d.json_path.as_deref(),
            Some(format!("hooks.{name}").as_str())
        );
        if let Some(fix) = fix {
            assert_eq!(d.fix.as_deref(), Some(fix));
        }
        assert_eq!(
            r.files[0].skipped, 2,
            "both handlers under it count as skipped"
        );
    }
}

#[test]
fn timeouts() {
    let r = parse(
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": 30000}]}]}}"#,
    );
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "timeout 30000 looks like milliseconds: hookbox reads seconds, so this hook may run for 8 h 20 min"
    );
    assert_eq!(
        d.fix.as_deref(),
        Some("if you meant 30 s, write \"timeout\": 30")
    );
    assert_eq!(
        d.json_path.as_deref(),
        Some("hooks.Stop[0].hooks[0].timeout")
    );
    assert_eq!(
        command(&r.rules[0]).timeout_secs,
        30000.0,
        "kept as written: Claude Code reads seconds too"
    );

    let r = parse(
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": "30"}]}]}}"#,
    );
    assert_eq!(
        only_diag(&r).message,
        "'timeout' must be a number of seconds, found a string \"30\" — skipped."
    );
    assert!(r.rules.is_empty());
    for bad in ["0", "-5"] {
        let r = parse(&format!(
            r#"{{"hooks": {{"Stop": [{{"type": "command", "command": "a", "timeout": {bad}}}]}}}}"#
        ));
        assert_eq!(
            only_diag(&r).message,
            format!("'timeout' must be a positive number of seconds, found {bad} — skipped.")
        );
    }

    let text = r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "a", "timeout": 45}, {"type": "command", "command": "b"}]}]}}"#;
    let r = parse_as(text, "hooks.json", Dialect::Ghast);
    assert_eq!(
        only_diag(&r).message,
        "timeout 45 s is over the ghast maximum of 30 s — clamped to 30"
    );
    assert_eq!(
        r.diagnostics[0].severity,
        Severity::Warning,
        "a clamp does not fail the plugin"
    );
    assert_eq!(command(&r.rules[0]).timeout_secs, 30.0);
    assert_eq!(
        command(&r.rules[1]).timeout_secs,
        10.0,
        "the ghast dialect's default"
    );
}

#[test]
fn matchers() {
    let r = parse(
        r#"{"hooks": {"Stop": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}]}}"#,
    );
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "matcher \"Bash\" is ignored: 'Stop' has no matcher, so every 'Stop' runs this hook"
    );
    assert_eq!(d.json_path.as_deref(), Some("hooks.Stop[0].matcher"));
    assert!(r.rules[0].matcher.is_all());
    for all in [r#""""#, r#""*""#, "null"] {
        let r = parse(&format!(
            r#"{{"hooks": {{"Stop": [{{"matcher": {all}, "hooks": [{{"type": "command", "command": "a"}}]}}]}}}}"#
        ));
        assert!(r.diagnostics.is_empty(), "{all}: {:#?}", r.diagnostics);
    }
    let r = parse(
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}]}}"#,
    );
    let d = only_diag(&r);
    assert_eq!(
        d.severity,
        Severity::Error,
        "a guard that never runs fails validation"
    );
    assert_eq!(
        d.fix.as_deref(),
        Some(
            "a matcher names tools; the argument pattern goes in the hook's \"if\": write \"matcher\": \"Bash\" and, on the handler, \"if\": \"Bash(<pattern>)\""
        )
    );
    assert!(
        d.message
            .starts_with("Invalid matcher under 'PreToolUse': invalid JavaScript regex `Bash(`"),
        "{}",
        d.message
    );
    assert!(
        d.message.ends_with(" — skipped (2 hooks)."),
        "{}",
        d.message
    );
    assert_eq!(r.files[0].skipped, 2);
    let r = parse(
        r#"{"hooks": {"PreToolUse": [{"type": "command", "command": "a", "matcher": {"tool": "Bash"}}]}}"#,
    );
    assert!(only_diag(&r).message.contains("unknown matcher key `tool`"));
    let r = parse(
        r#"{"hooks": {"PreToolUse": [{"type": "command", "command": "a", "matcher": ["Bash"]}]}}"#,
    );
    assert_eq!(
        only_diag(&r).message,
        "Invalid matcher under 'PreToolUse': a matcher must be a string or an object, found an array — skipped."
    );
    // Built to backtrack, but it compiles: the matcher module bounds it at dispatch.
    let r = parse(
        r#"{"hooks": {"PreToolUse": [{"matcher": "(B+)+ash$", "hooks": [{"type": "command", "command": "a"}]}]}}"#,
    );
    assert!(r.diagnostics.is_empty());
    assert!(matches!(r.rules[0].matcher, Matcher::Regex(_)));
}

#[test]
fn missing_fields_and_wrong_types() {
    let cases = [
        (
            r#"{"type": "command"}"#,
            "Hook type 'command' under 'UserPromptSubmit' has no 'command' — skipped.",
        ),
        (
            r#"{"type": "prompt"}"#,
            "Hook type 'prompt' under 'UserPromptSubmit' has no 'prompt' — skipped.",
        ),
        (
            r#"{"type": "wasm"}"#,
            "Hook type 'wasm' under 'UserPromptSubmit' has no 'component' — skipped.",
        ),
        (
            r#"{"type": "command", "command": 42}"#,
            "'command' must be a string, found a number 42 — skipped.",
        ),
        (
            r#"{"type": "command", "command": ""}"#,
            "'command' is empty — skipped.",
        ),
        (
            r#"{"type": "command", "command": "a", "args": ["x", 1]}"#,
            "'args' must be a list of strings, found a number 1 — skipped.",
        ),
        (
            r#"{"type": "command", "command": "a", "async": "yes"}"#,
            "'async' must be a boolean, found a string \"yes\" — skipped.",
        ),
        (
            r#"{"type": "prompt", "prompt": ["a"]}"#,
            "'prompt' must be a string, found an array — skipped.",
        ),
        (
            r#"{"type": "command", "command": "a", "statusMessage": 1}"#,
            "'statusMessage' must be a string, found a number 1 — skipped.",
        ),
        (
            r#"{"type": "command", "command": "a", "on_failure": "deny"}"#,
            "'on_failure' must be \"allow\" or \"block\", found a string \"deny\" — skipped.",
        ),
        (
            r#"{"type": "command", "command": "a", "if": "Bash("}"#,
            "'if' must look like Tool or Tool(pattern), found \"Bash(\" — skipped.",
        ),
        (
            "7",
            "Hook entry under 'UserPromptSubmit' must be an object, found a number 7 — skipped.",
        ),
    ];
    for (entry, msg) in cases {
        let r = parse(&format!(
            r#"{{"hooks": {{"UserPromptSubmit": [{entry}]}}}}"#
        ));
        assert_eq!(only_diag(&r).message, msg, "{entry}");
        assert!(r.rules.is_empty(), "{entry}");
    }
    let r = parse(r#"{"hooks": {"Stop": "run.sh"}}"#);
    assert_eq!(
        only_diag(&r).message,
        "rules under 'Stop' must be a list, found a string \"run.sh\" — skipped."
    );
}

#[test]
fn command_fields() {
    let text = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "bun", "args": ["${CLAUDE_PLUGIN_ROOT}/gate.ts"], "async": true,
         "if": "Bash(git push *)", "on_failure": "block", "statusMessage": "Checking…", "shell": "bash"},
        {"type": "command", "command": "x", "shell": "powershell"}
    ]}]}}"#;
    let r = parse(text);
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "'shell' is ignored in exec form: 'args' runs the program without a shell"
    );
    assert_eq!(
        r.rules.len(),
        2,
        "a shell beside args is a warning, the rule stays"
    );
    assert!(matches!(
        command(&r.rules[1]).command,
        CommandLine::Shell {
            shell: Shell::Powershell,
            ..
        }
    ));
    let a = &r.rules[0];
    let c = command(a);
    assert_eq!(
        c.command,
        CommandLine::Exec {
            argv: vec!["bun".to_owned(), "${CLAUDE_PLUGIN_ROOT}/gate.ts".to_owned()]
        }
    );
    assert!(c.run_async);
    assert_eq!(a.on_failure, Some(FailMode::Block));
    assert_eq!(a.status_message.as_deref(), Some("Checking…"));
    let cond = a.if_condition.as_ref().unwrap();
    assert_eq!(
        (cond.tool.as_str(), cond.pattern.as_deref()),
        ("Bash", Some("git push *"))
    );
}

#[test]
fn if_on_a_non_tool_event_is_a_warning() {
    let r = parse(r#"{"hooks": {"Stop": [{"type": "command", "command": "a", "if": "Bash(x)"}]}}"#);
    assert_eq!(
        only_diag(&r).message,
        "'if' only applies to tool events; on 'Stop' a hook with 'if' never runs (as in Claude Code)"
    );
    assert_eq!(r.rules.len(), 1);
}

#[test]
fn empty_group_and_group_handler_matcher() {
    let r = parse(r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}}"#);
    assert_eq!(
        only_diag(&r).message,
        "Empty matcher group under 'PreToolUse' (\"hooks\": []) — nothing to run."
    );
    let r = parse(
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "matcher": "Edit"}]}]}}"#,
    );
    assert_eq!(
        only_diag(&r).message,
        "a handler's own matcher inside a matcher group is ignored; the group's matcher applies"
    );
    assert_eq!(r.rules[0].matcher, Matcher::Names(vec!["Bash".into()]));
}

#[test]
fn unknown_keys_are_named_and_misspellings_are_errors() {
    let r = parse(
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "profile": "strict", "hooks": [
            {"type": "command", "command": "a", "timout": 5, "onfailure": "block", "description": "a note", "commandWindows": "a.cmd"},
            {"type": "http", "url": "https://example.com/h", "header": {}}
        ]}]}}"#,
    );
    let got: Vec<(&str, &str, Option<&str>)> = r
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.message.as_str(),
                d.json_path.as_deref().unwrap_or(""),
                d.fix.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "unknown key 'profile' in a matcher group — ignored, so it changes nothing",
                "hooks.PreToolUse[0].profile",
                Some(
                    "a matcher group reads matcher, hooks; remove 'profile', or rename it to one of them"
                ),
            ),
            (
                "unknown key 'timout' in a command hook — ignored, so it changes nothing",
                "hooks.PreToolUse[0].hooks[0].timout",
                Some("did you mean 'timeout'?"),
            ),
            (
                "unknown key 'onfailure' in a command hook — ignored, so it changes nothing",
                "hooks.PreToolUse[0].hooks[0].onfailure",
                Some("did you mean 'onFailure'?"),
            ),
            (
                "unknown key 'header' in an http hook — ignored, so it changes nothing",
                "hooks.PreToolUse[0].hooks[1].header",
                Some("did you mean 'headers'?"),
            ),
        ]
    );
    // A misspelling of a key the handler reads is an error (the setting it meant is not
    // applied); a key near none of them is a warning.
    let severities: Vec<Severity> = r.diagnostics.iter().map(|d| d.severity).collect();
    assert_eq!(
        severities,
        [
            Severity::Warning,
            Severity::Error,
            Severity::Error,
            Severity::Error
        ]
    );
    assert_eq!(r.rules.len(), 2, "an unknown key skips nothing");
    // The rule is read as if the key were not there: no timeout of 5, fail-open.
    assert_eq!(r.rules[0].on_failure, None);
}
