//! The JSON Schema of hooks files (`config::hooks_schema`, printed by `hookbox schema`) against
//! the parser it is generated from:
//!
//! - `schema/hooks.schema.json` in the repository is exactly what the code generates
//!   (`HOOKBOX_BLESS=1` rewrites it);
//! - every file of the real-world corpus and every conformance case is accepted by the schema
//!   exactly when hookbox loads it cleanly — no error, no skipped handler, no unknown key, not
//!   another agent's format — and refused otherwise (Cursor, Copilot and Windsurf files, a key
//!   hookbox does not know), save what a schema cannot see (a regex that does not compile);
//! - hand-written documents of every shape are accepted, and typical mistakes refused.
//!
//! Validation is by `boon`, a draft-07 validator, as an editor would.

use std::path::{Path, PathBuf};

use hookbox_core::Dialect;
use hookbox_core::config::{LoadReport, hooks_schema, parse_hooks_str};
use hookbox_core::diagnostic::Severity;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&hooks_schema()).expect("the schema encodes");
    s.push('\n');
    s
}

/// A validator of the generated schema.
struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl Validator {
    fn new() -> Validator {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        let url = "file:///hooks.schema.json";
        compiler
            .add_resource(url, hooks_schema())
            .expect("the schema is a resource");
        let index = compiler
            .compile(url, &mut schemas)
            .unwrap_or_else(|e| panic!("the schema does not compile: {e:#}"));
        Validator { schemas, index }
    }

    fn check(&self, v: &Value) -> Result<(), String> {
        self.schemas
            .validate(v, self.index)
            .map_err(|e| format!("{e:#}"))
    }
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    let path = repo_root().join("schema/hooks.schema.json");
    let want = schema_text();
    if std::env::var_os("HOOKBOX_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is not what `hookbox schema` prints; regenerate it with HOOKBOX_BLESS=1 cargo test -p hookbox-core --test schema",
        path.display()
    );
}

/// Whether hookbox loads `report` cleanly: the schema's promise.
fn clean(report: &LoadReport) -> bool {
    !report.has_errors()
        && report.foreign.is_empty()
        && report.files.iter().all(|f| f.skipped == 0)
        && !report.diagnostics.iter().any(|d| {
            d.message.starts_with("unknown key ") || d.message.starts_with("Empty matcher group")
        })
}

/// Whether what hookbox refused is something a schema cannot see: a regex that does not
/// compile (or is over a cap), a prompt's `{userMessage}` count or size.
fn refused_for_what_a_schema_cannot_see(report: &LoadReport) -> bool {
    let unseen = |m: &str| {
        m.contains("matcher")
            || m.contains("regex")
            || m.contains("{userMessage}")
            || m.contains("the prompt is")
    };
    report.has_errors()
        && report
            .with_severity(Severity::Error)
            .all(|d| unseen(&d.message))
}

/// Checks one document against the schema and the parser: whether the schema accepted it, or
/// where the two disagree.
fn agree(v: &Validator, text: &str, as_path: &Path) -> Result<bool, String> {
    let report = parse_hooks_str(text, as_path, Dialect::Claude);
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return if report.has_errors() {
            Ok(false)
        } else {
            Err(format!("{}: not JSON, yet loaded", as_path.display()))
        };
    };
    let verdict = v.check(&doc);
    let messages = || -> Vec<&str> {
        report
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect()
    };
    match (&verdict, clean(&report)) {
        (Ok(()), true) | (Err(_), false) => Ok(verdict.is_ok()),
        (Ok(()), false) if refused_for_what_a_schema_cannot_see(&report) => Ok(true),
        (Ok(()), false) => Err(format!(
            "{}: the schema accepts what hookbox does not load cleanly: {:?}",
            as_path.display(),
            messages()
        )),
        (Err(e), true) => Err(format!(
            "{}: the schema refuses what hookbox loads cleanly: {e}",
            as_path.display()
        )),
    }
}

#[test]
fn the_schema_agrees_with_the_parser_on_the_corpus() {
    let v = Validator::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/hooks-real");
    let (mut accepted, mut refused, mut disagree) = (Vec::new(), Vec::new(), Vec::new());
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Manifests are plugin.json files: the schema is of hook files.
        if !name.ends_with(".json") || name.ends_with("plugin.json") {
            continue;
        }
        // `owner__repo__path__to__file` → where the file lives in its repository.
        let rel: PathBuf = name.split("__").skip(2).collect();
        let text = std::fs::read_to_string(&path).unwrap();
        match agree(&v, &text, &rel) {
            Ok(true) => accepted.push(name),
            Ok(false) => refused.push(name),
            Err(e) => disagree.push(e),
        }
    }
    assert!(disagree.is_empty(), "{disagree:#?}");
    assert!(accepted.len() >= 30, "accepted: {accepted:?}");
    for other_agents in [
        "1Password__agent-hooks__.cursor__hooks.json",
        "1Password__agent-hooks__.github__hooks__hooks.json",
        "1Password__agent-hooks__.windsurf__hooks.json",
        "obra__superpowers__hooks__hooks-cursor.json",
    ] {
        assert!(
            refused.iter().any(|n| n == other_agents),
            "{other_agents} accepted; refused: {refused:?}"
        );
    }
}

#[test]
fn the_schema_agrees_with_the_parser_on_the_conformance_cases() {
    let v = Validator::new();
    let dir = repo_root().join("tests/conformance");
    let mut n = 0;
    let mut disagree = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let case = entry.unwrap().path();
        for name in ["hooks.json", ".hooks.json", "settings.json"] {
            let file = case.join(name);
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if let Err(e) = agree(&v, &text, Path::new(name)) {
                disagree.push(format!("{}: {e}", case.display()));
            }
            n += 1;
        }
    }
    assert!(disagree.is_empty(), "{disagree:#?}");
    assert!(n >= 50, "{n} conformance files");
}

#[test]
fn every_shape_is_accepted_and_mistakes_are_refused() {
    let v = Validator::new();
    let good = [
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5, "onFailure": "block"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"type": "command", "command": "audit.sh", "matcher": {"tool_name": "run_shell_command"}, "timeout": 30}]}}),
        json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/guard.wasm", "matcher": {"tool_name": "Bash"}, "fuel": 1000000, "memory_mb": 32, "mounts": [{"host": "${CLAUDE_PROJECT_DIR}", "guest": "/project"}]}]}}),
        json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "Always answer in markdown."}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": "https://hooks.example.com/pre", "headers": {"Authorization": "Bearer $TOKEN"}, "allowedEnvVars": ["TOKEN"]}]}]}}),
        json!({"PreToolUse": [{"command": "guard.sh", "matcher": "bash"}], "description": "bare events, simple dialect"}),
        json!({"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "async": true}]}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "if": "Bash(git push:*)", "description": "a note", "statusMessage": "checking"}]}]}}),
        json!({"$schema": "./schema/hooks.schema.json", "hooks": {}}),
    ];
    for doc in good {
        assert_eq!(v.check(&doc), Ok(()), "{doc}");
        let report = parse_hooks_str(&doc.to_string(), Path::new("hooks.json"), Dialect::Claude);
        assert!(clean(&report), "{doc}: {:#?}", report.diagnostics);
    }
    let bad = [
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timout": 5}]}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "onfailure": "block"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "onFailure": "deny"}]}]}}),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "no"}]}]}}),
        json!({"hooks": {"beforeShellExecution": [{"command": "x"}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hook": [{"type": "command", "command": "x"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"type": "wasm", "component": "g.wasm", "fule": 10}]}}),
        json!({"hooks": {"PreToolUse": [{"type": "agent", "prompt": "x"}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": {"tool": "Bash"}, "hooks": [{"type": "command", "command": "x"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}}),
    ];
    for doc in bad {
        assert!(v.check(&doc).is_err(), "accepted: {doc}");
        let report = parse_hooks_str(&doc.to_string(), Path::new("hooks.json"), Dialect::Claude);
        assert!(!clean(&report), "{doc}");
    }
}
