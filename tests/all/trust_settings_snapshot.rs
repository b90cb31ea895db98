//! A settings file's hooks approved as a snapshot: `trust add .claude/settings.json` copies the
//! project hook folder its commands run (`.claude/hooks/`, never the project), and under
//! `require` its approved hooks run from that copy — a bash script sourcing
//! `$(dirname "$0")/lib.sh` and a node script requiring `./lib/name` find the approved
//! neighbours, while `CLAUDE_PROJECT_DIR` stays the project (the user's data).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::sandbox::{Sandbox, hook_answers, write_file};
use crate::util::Run;

/// Sources its neighbour through `$0`, and reads the user's data through `CLAUDE_PROJECT_DIR`.
const G_SH: &str = r#"#!/bin/bash
. "$(dirname "$0")/lib.sh"
echo "bash $LIB_NAME $(cat "$CLAUDE_PROJECT_DIR/data.txt")"
"#;

/// Requires its neighbour module through `__dirname`.
const G_JS: &str = r"const name = require('./lib/name');
console.log('node ' + name);
";

struct Env {
    sandbox: Sandbox,
}

impl Env {
    fn new() -> Env {
        let e = Env {
            sandbox: Sandbox::new(),
        };
        e.write(".claude/hooks/g.sh", G_SH, 0o755);
        e.write(".claude/hooks/lib.sh", "LIB_NAME=lib\n", 0o644);
        e.write(".claude/hooks/g.js", G_JS, 0o644);
        e.write(
            ".claude/hooks/lib/name.js",
            "module.exports = 'module';\n",
            0o644,
        );
        e.write("data.txt", "data\n", 0o644);
        let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/g.sh", "timeout": 20},
            {"type": "command", "command": "node \"$CLAUDE_PROJECT_DIR/.claude/hooks/g.js\"", "timeout": 20},
        ]}]}});
        e.write(
            ".claude/settings.json",
            &serde_json::to_string_pretty(&settings).unwrap(),
            0o644,
        );
        e
    }

    fn settings(&self) -> PathBuf {
        self.sandbox.project().join(".claude/settings.json")
    }

    fn store(&self) -> PathBuf {
        self.sandbox.store()
    }

    fn write(&self, rel: &str, text: &str, mode: u32) {
        write_file(&self.sandbox.project().join(rel), text, mode);
    }

    /// Each hook's output (trimmed) and failure class, for a Bash `PreToolUse` under `mode`.
    fn answers(&self, mode: &str) -> (Vec<(String, Value)>, Run) {
        let r = self
            .sandbox
            .dispatch_bash(&self.settings(), mode, "ls", &[]);
        let got = hook_answers(&r.json())
            .into_iter()
            .map(|(output, class, _)| (output, class))
            .collect();
        (got, r)
    }

    fn trust(&self, sub: &str) -> Run {
        self.sandbox.trust(sub, &self.settings(), false, &[])
    }
}

fn want(bash: &str, node: &str) -> Vec<(String, Value)> {
    vec![
        (bash.to_owned(), Value::Null),
        (node.to_owned(), Value::Null),
    ]
}

/// Every file beneath `dir`, relative to it.
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_settings_files_hooks_run_from_a_snapshot_of_their_folder_under_require() {
    let e = Env::new();
    let (got, r) = e.answers("off");
    assert_eq!(got, want("bash lib data", "node module"), "{r:?}");
    let r = e.trust("add");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("its hooks run from snapshot"), "{r:?}");
    // The snapshot holds the hook folder, in the project's layout — nothing else of the project.
    let trees: Vec<PathBuf> = std::fs::read_dir(e.store().join("snapshots/trees"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert_eq!(
        files(&trees[0]),
        [
            "project/.claude/hooks/g.js",
            "project/.claude/hooks/g.sh",
            "project/.claude/hooks/lib.sh",
            "project/.claude/hooks/lib/name.js",
        ]
    );
    let (got, r) = e.answers("require");
    assert_eq!(got, want("bash lib data", "node module"), "{r:?}");

    // The neighbours the scripts load are edited, and the user's data: under `require` the
    // approved neighbours run (the data is the project's, read live); `warn` runs the live
    // folder, as the agent would.
    e.write(".claude/hooks/lib.sh", "LIB_NAME=edited\n", 0o644);
    e.write(
        ".claude/hooks/lib/name.js",
        "module.exports = 'edited';\n",
        0o644,
    );
    e.write("data.txt", "new data\n", 0o644);
    let (got, r) = e.answers("require");
    assert_eq!(got, want("bash lib new data", "node module"), "{r:?}");
    let (got, r) = e.answers("warn");
    assert_eq!(got, want("bash edited new data", "node edited"), "{r:?}");

    // `trust diff` shows the edited neighbours against the snapshot.
    let r = e.trust("diff");
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains("--- approved/.claude/hooks/lib.sh")
            && r.stdout.contains("+LIB_NAME=edited")
            && r.stdout.contains("+module.exports = 'edited';"),
        "{r:?}"
    );
    assert!(!r.stdout.contains("data.txt"), "{r:?}");

    // Approved again: a new snapshot, and `require` runs the edited neighbours.
    let r = e.trust("add");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("changed since the snapshot"), "{r:?}");
    let (got, r) = e.answers("require");
    assert_eq!(got, want("bash edited new data", "node edited"), "{r:?}");
    let r = e.trust("diff");
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn a_settings_file_running_no_project_file_keeps_no_snapshot() {
    let e = Env::new();
    e.write(
        ".claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]}}"#,
        0o644,
    );
    let r = e.trust("add");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!r.stdout.contains("snapshot"), "{r:?}");
    assert!(
        !e.store().join("snapshots/trees").exists()
            || files(&e.store().join("snapshots/trees")).is_empty()
    );
    let r = e.trust("add");
    assert!(r.stderr.contains("already approved"), "{r:?}");
}

#[test]
fn a_lowered_snapshot_limit_is_refused_by_trust_add_naming_it_and_the_largest_files() {
    let e = Env::new();
    e.write(".claude/hooks/big.dat", &"x".repeat(5000), 0o644);
    let config = e.sandbox.home().join(".config/hookbox/settings.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, r#"{"trust": {"max_snapshot_bytes": 4096}}"#).unwrap();
    let r = e.trust("add");
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("nothing approved: cannot snapshot")
            && r.stderr.contains("over trust.max_snapshot_bytes (4096)")
            && r.stderr.contains(".claude/hooks/big.dat (5000 bytes)")
            && r.stderr.contains(r#"raise the limit (`"trust": {"max_snapshot_bytes": N}` in ~/.config/hookbox/settings.json)"#),
        "{r:?}"
    );
    assert!(
        !e.store().join("snapshots/trees").exists()
            || files(&e.store().join("snapshots/trees")).is_empty()
    );
    let r = e.trust("diff");
    assert_eq!(r.code, Some(1), "not approved: {r:?}");
    // Too few files allowed: the same, naming that limit.
    std::fs::write(&config, r#"{"trust": {"max_snapshot_files": 2}}"#).unwrap();
    let r = e.trust("add");
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("over trust.max_snapshot_files (2)"),
        "{r:?}"
    );
    // A bad value is an error naming the file, the field and the fix.
    std::fs::write(&config, r#"{"trust": {"max_snapshot_files": 0}}"#).unwrap();
    let r = e.trust("add");
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("hookbox/settings.json")
            && r.stderr
                .contains("trust.max_snapshot_files: 0 is not a limit")
            && r.stderr.contains("of at least 1"),
        "{r:?}"
    );
    // Raised: approved.
    std::fs::write(&config, r#"{"trust": {"max_snapshot_bytes": 1000000}}"#).unwrap();
    let r = e.trust("add");
    assert_eq!(r.code, Some(0), "{r:?}");
}
