//! Unit tests of strict wasm blocks, file-level errors, foreign files and the ghast rule.

use std::path::Path;

use serde_json::json;

use super::{only_diag, parse, parse_as};
use crate::config::*;
use crate::diagnostic::Severity;
use crate::rule::{Access, Handler};

#[test]
fn wasm_handlers_are_strict() {
    let text = r#"{"hooks": {"PreToolUse": [{"type": "wasm", "component": "./hooks/guard.wasm", "timeout": 2,
        "fuel": 50000000, "memory_mb": 32, "table_elements": 1000, "instances": 4, "output_bytes": 65536, "log_calls": 10,
        "response_bytes": 4096, "write_bytes": 8192, "write_files": 3,
        "mounts": [{"host": "${CLAUDE_PROJECT_DIR}", "guest": "/project"}, {"host": "/tmp/x", "guest": "/out", "access": "rw"},
                   {"host": "/tmp/y", "guest": "/links", "access": "rw", "symlinks": true}],
        "env": {"MODE": "strict"}, "config": {"deny": ["rm -rf /"]}, "on_failure": "block"}]}}"#;
    let r = parse(text);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    let Handler::Wasm(w) = &r.rules[0].handler else {
        panic!()
    };
    assert_eq!(w.component, "hooks/guard.wasm");
    assert_eq!(
        (w.timeout_secs, w.fuel, w.memory_mb),
        (Some(2.0), Some(50_000_000), Some(32))
    );
    assert_eq!(
        (w.table_elements, w.instances, w.output_bytes, w.log_calls),
        (Some(1000), Some(4), Some(65536), Some(10))
    );
    assert_eq!(
        (w.response_bytes, w.write_bytes, w.write_files),
        (Some(4096), Some(8192), Some(3))
    );
    assert_eq!(w.mounts[0].access, Access::Ro);
    assert_eq!(w.mounts[1].access, Access::Rw);
    // Symlinks only when the mount asks for them.
    assert_eq!(
        w.mounts.iter().map(|m| m.symlinks).collect::<Vec<_>>(),
        [false, false, true]
    );
    assert_eq!(w.env["MODE"], "strict");
    assert_eq!(w.config, json!({"deny": ["rm -rf /"]}));

    let cases = [
        (
            r#""component": "g.wasm", "fule": 1"#,
            "unknown key 'fule' in a wasm hook — skipped.",
            Some("did you mean 'fuel'?"),
        ),
        (
            r#""component": "../g.wasm""#,
            "path leaves the plugin folder: 'component' is \"../g.wasm\" — skipped.",
            None,
        ),
        (
            r#""component": "/abs/g.wasm""#,
            "path leaves the plugin folder: 'component' is \"/abs/g.wasm\" — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "fuel": -1"#,
            "'fuel' must be a positive whole number, found a number -1 — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "memory_mb": 1.5"#,
            "'memory_mb' must be a positive whole number, found a number 1.5 — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "mounts": [{"host": "/h", "guest": "rel"}]"#,
            "'guest' must be an absolute path without '..', found a string \"rel\" — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "mounts": [{"host": "/h", "guest": "/a/../b"}]"#,
            "'guest' must be an absolute path without '..', found a string \"/a/../b\" — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "mounts": [{"host": "/h", "guest": "/g", "access": "write"}]"#,
            "'access' must be \"ro\" or \"rw\", found a string \"write\" — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "mounts": [{"host": "/h", "guest": "/g", "mode": "ro"}]"#,
            "unknown key 'mode' in a mount — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "mounts": [{"host": "/h", "guest": "/g", "access": "rw", "symlinks": "yes"}]"#,
            "'symlinks' must be true or false, found a string \"yes\" — skipped.",
            None,
        ),
        (
            r#""component": "g.wasm", "mounts": [{"host": "/h", "guest": "/g", "symlinks": true}]"#,
            "'symlinks': true only applies to an \"rw\" mount (a guest cannot create anything in an \"ro\" one) — skipped.",
            Some("add \"access\": \"rw\", or remove 'symlinks'"),
        ),
        (
            r#""component": "g.wasm", "env": {"A": 1}"#,
            "env 'A' must be a string, found a number 1 — skipped.",
            None,
        ),
    ];
    for (fields, msg, fix) in cases {
        let r = parse(&format!(
            r#"{{"hooks": {{"PreToolUse": [{{"type": "wasm", {fields}}}]}}}}"#
        ));
        let d = only_diag(&r);
        assert_eq!(d.message, msg, "{fields}");
        assert_eq!(d.severity, Severity::Error, "{fields}");
        if let Some(fix) = fix {
            assert_eq!(d.fix.as_deref(), Some(fix));
        }
        assert!(r.rules.is_empty());
    }
}

#[test]
fn disable_all_hooks_loads_nothing() {
    let r = parse_as(
        r#"{"disableAllHooks": true, "hooks": {"Stop": [{"type": "command", "command": "a"}]}}"#,
        "settings.json",
        Dialect::Claude,
    );
    assert_eq!(
        only_diag(&r).message,
        "disableAllHooks is true: no hook in this file is loaded"
    );
    assert!(r.rules.is_empty());
    assert_eq!(r.files[0].status, FileStatus::Disabled);
}

#[test]
fn events_beside_the_hooks_object_are_reported() {
    let r = parse(r#"{"hooks": {}, "Stop": [{"type": "command", "command": "a"}]}"#);
    assert_eq!(
        only_diag(&r).message,
        "'Stop' at the top level is ignored: this file has a 'hooks' object, and only its content is read — skipped."
    );
}

#[test]
fn file_level_errors() {
    let r = parse("[1, 2]");
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        "a hooks file must be a JSON object, found an array"
    );
    assert_eq!(
        (d.severity, d.line, d.column),
        (Severity::Error, Some(1), Some(1))
    );
    assert_eq!(r.files[0].status, FileStatus::Failed);

    let r = parse("{\n  \"hooks\": {\"Stop\": [],}\n}");
    let d = only_diag(&r);
    assert_eq!(d.message, "invalid JSON: trailing comma");
    assert_eq!(
        (d.severity, d.line, d.column),
        (Severity::Error, Some(2), Some(24))
    );

    let r = parse(r#"{"hooks": ["Stop"]}"#);
    assert_eq!(
        only_diag(&r).message,
        "'hooks' must be an object mapping event names to rules, found an array"
    );
    assert!(r.has_errors());

    let deep = format!("{{\"hooks\": {}", "[".repeat(10_000));
    let d = &parse(&deep).diagnostics[0];
    assert_eq!(d.message, "invalid JSON: recursion limit exceeded");
    assert_eq!((d.line, d.column), (Some(1), Some(137)));

    let r = parse_hooks_bytes(
        b"{\"hooks\":\n {\"Stop\xff\": []}}",
        Path::new("h.json"),
        Dialect::Claude,
    );
    let d = only_diag(&r);
    assert_eq!(d.message, "invalid UTF-8 at byte 17");
    assert_eq!((d.line, d.column), (Some(2), Some(8)));
}

#[test]
fn foreign_files_get_one_diagnostic() {
    let text = r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "a"}], "stop": [{"command": "b"}]}}"#;
    let r = parse(text);
    let d = only_diag(&r);
    assert_eq!(d.message, ForeignFormat::Cursor.message());
    assert_eq!(d.severity, Severity::Warning);
    assert!(r.rules.is_empty() && r.plugins.is_empty());
    assert_eq!(
        r.foreign,
        vec![ForeignFile {
            path: "hooks.json".into(),
            format: ForeignFormat::Cursor
        }]
    );
}

#[test]
fn ghast_fails_the_whole_plugin() {
    let text = r#"{"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "ok"}]}],
        "UserPromptSubmit": [{"matcher": "(", "hooks": [{"type": "command", "command": "bad"}]}]}}"#;
    let claude = parse(text);
    assert_eq!(
        claude.rules.len(),
        1,
        "elsewhere only the bad rule is skipped"
    );
    // A matcher that does not compile is an error in every dialect (SPEC §1.2): the guard it
    // governs would never run.
    assert_eq!(claude.with_severity(Severity::Error).count(), 1);
    let ghast = parse_as(text, "hooks.json", Dialect::Ghast);
    assert!(ghast.rules.is_empty());
    assert_eq!(
        ghast.with_severity(Severity::Error).count(),
        2,
        "{:#?}",
        ghast.diagnostics
    );
    assert!(
        ghast.diagnostics[1]
            .message
            .starts_with("plugin 'hooks.json' not registered")
    );
    assert_eq!(ghast.files[0].status, FileStatus::Rejected);
    let empty = parse_as(
        r#"{"hooks": {"SessionStart": []}}"#,
        "hooks.json",
        Dialect::Ghast,
    );
    assert!(empty.has_errors());
}
