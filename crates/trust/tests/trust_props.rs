//! The trust fuzz target's properties (`fuzz/props/trust.rs`) on every `cargo test`: every
//! command of the real hook files in the corpus and the conformance cases resolves cleanly;
//! a real approval record, and thousands of deterministic mutations of it (cut, bytes changed,
//! fields swapped), is either refused with a message or read back exactly.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::path::Path;

use hookbox_core::Dialect;
use hookbox_core::config::parse_hooks_str;
use hookbox_core::rule::{CommandLine, CommandSpec, Handler};
use hookbox_trust::{
    Approval, Base, Digest, FileRecord, FileRole, FileState, HookFile, RECORD_VERSION,
    RuleLocation, RuleRecord, resolve_command, rule_content,
};
use serde_json::Value;

#[path = "../../../fuzz/props/trust.rs"]
mod props;

/// Every command text in the corpus and the conformance cases.
fn commands() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["../core/tests/corpus/hooks-real", "../../tests/conformance"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "json") {
                    files.push(p);
                }
            }
        }
    }
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let report = parse_hooks_str(&text, Path::new("hooks.json"), Dialect::Claude);
        for r in &report.rules {
            if let Handler::Command(CommandSpec {
                command: CommandLine::Shell { text, .. },
                ..
            }) = &r.handler
            {
                out.push(text.clone());
            }
        }
    }
    out
}

#[test]
fn every_real_command_resolves_cleanly() {
    let cmds = commands();
    assert!(
        cmds.len() > 50,
        "the corpus has real commands: {}",
        cmds.len()
    );
    let mut pinned = 0;
    for c in &cmds {
        props::check_command(c);
        pinned += resolve_command(&CommandSpec::shell(c.as_str(), 5.0))
            .files
            .len();
    }
    assert!(
        pinned > 10,
        "real plugins name their scripts: {pinned} pinned"
    );
}

/// A real record: every rule of one corpus file, with a file each.
fn record() -> Approval {
    let text = r#"{"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"", "timeout": 5, "onFailure": "block"}]}],
        "Stop": [{"hooks": [{"type": "wasm", "component": "hooks/x.wasm", "mounts": [{"host": "${CLAUDE_PROJECT_DIR}", "guest": "/p", "access": "ro"}], "env": {"A": "é\u0001"}}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "http", "url": "https://x.example/h", "headers": {"X": "$T"}, "allowedEnvVars": ["T"]}]}]
    }}"#;
    let report = parse_hooks_str(text, Path::new("hooks.json"), Dialect::Claude);
    assert_eq!(report.rules.len(), 3, "{:#?}", report.diagnostics);
    let rules = report
        .rules
        .iter()
        .map(|r| {
            RuleRecord::new(
                RuleLocation {
                    file: "hooks/hooks.json".into(),
                    json_path: r.source.json_path.clone(),
                },
                r.handler.label(),
                rule_content(r),
                vec![FileRecord {
                    role: FileRole::Program,
                    base: Base::Plugin,
                    path: "hooks/g.sh".into(),
                    state: FileState::Pinned {
                        sha256: Digest::of(r.source.json_path.as_bytes()),
                        size: 3,
                    },
                }],
                Vec::new(),
            )
        })
        .collect();
    Approval {
        version: RECORD_VERSION,
        subject: "/home/u/p".into(),
        plugin: "p".into(),
        approved_at: 1_700_000_000,
        hook_files: vec![HookFile {
            path: "hooks/hooks.json".into(),
            state: FileState::Unreadable {
                reason: "gone".into(),
            },
        }],
        rules,
        snapshot: None,
    }
}

#[test]
fn records_and_their_mutations_are_read_back_exactly_or_refused() {
    let text = record().to_json();
    props::check_record(&text);
    assert!(Approval::parse(&text).is_ok());
    // A small LCG: the same mutations on every run.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    let bytes = text.as_bytes();
    for _ in 0..3000 {
        let mut b = bytes.to_vec();
        match next() % 3 {
            0 => b.truncate(next() % bytes.len()),
            1 => {
                for _ in 0..(1 + next() % 4) {
                    let i = next() % b.len();
                    b[i] = b"{}[]\",:0123456789abcdef \\nul"[next() % 28];
                }
            }
            _ => {
                let i = next() % b.len();
                let j = next() % b.len();
                b.swap(i, j);
            }
        }
        if let Ok(t) = std::str::from_utf8(&b) {
            props::check_record(t);
        }
    }
    for v in [
        serde_json::json!({"b": [1.5, {"z": null, "a": "\u{7f}"}], "a": -0.0}),
        Value::String("\u{2028}".into()),
        serde_json::from_str("1e300").unwrap(),
    ] {
        props::check_canonical(&v);
    }
}
