//! The `layout-guards` example plugin — a node guard requiring its rules through `__dirname`, a
//! python guard importing a neighbour module, a bash hook sourcing `$(dirname "$0")/lib.sh` —
//! answers the same under `trust = off`, `warn` and `require` (approved), with and without the
//! private mount namespace (issue 27: the default mode once ran scripts from memfd copies, where
//! node could not start and neighbours were missed, and a guard failed open). Then its
//! neighbours are edited: under `require` the approved bytes still answer, under `warn` the edit
//! does — so the cases pass under `require` only because the snapshot runs.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::util::{Run, copy_tree, repo_root};

/// A copy of the example plugin, a project to run in, a home (user settings), and a state
/// folder (approvals) apart from them all, as hookbox requires.
struct Env {
    tmp: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Env {
    /// `namespace`: the user's `trust.namespace` (`auto` or `off`).
    fn new(namespace: &str) -> Env {
        let e = Env {
            tmp: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(e.tmp.path().join("project")).unwrap();
        copy_tree(
            &repo_root().join("examples/plugins/layout-guards"),
            &e.tmp.path().join("layout-guards"),
        );
        let config = e.tmp.path().join("home/.config/hookbox");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("settings.json"),
            format!(r#"{{"trust": {{"namespace": "{namespace}"}}}}"#),
        )
        .unwrap();
        e
    }

    fn plugin(&self) -> PathBuf {
        self.tmp
            .path()
            .join("layout-guards")
            .canonicalize()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
            .args(args)
            .arg(self.plugin())
            .current_dir(self.tmp.path().join("project"))
            .env("NO_COLOR", "1")
            .env("HOME", self.tmp.path().join("home"))
            .env("HOOKBOX_STATE_DIR", self.state.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("HOOKBOX_LOG")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `hookbox test --trust MODE` on the plugin's own cases.
    fn cases(&self, mode: &str) -> Run {
        self.run(&["test", "--trust", mode])
    }

    fn edit(&self, rel: &str, text: &str) {
        std::fs::write(self.plugin().join(rel), text).unwrap();
    }
}

fn node_and_python() -> bool {
    let has = |p: &str| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has("node") && has("python3") {
        return true;
    }
    assert!(
        std::env::var_os("HOOKBOX_REQUIRE_POLYGLOT").is_none(),
        "node and python3 are required (HOOKBOX_REQUIRE_POLYGLOT is set)"
    );
    eprintln!("SKIPPED: node or python3 is not installed");
    false
}

fn passed(r: &Run) -> bool {
    r.code == Some(0) && r.stdout.contains("4 passed, 0 failed")
}

fn check(namespace: &str) {
    let e = Env::new(namespace);
    for mode in ["off", "warn"] {
        let r = e.cases(mode);
        assert!(passed(&r), "trust = {mode}, namespace {namespace}: {r:?}");
    }
    // Not approved: under require nothing runs, and the guards' cases fail as `untrusted`.
    let r = e.cases("require");
    assert_eq!(r.code, Some(1), "unapproved under require: {r:?}");
    assert!(r.stdout.contains("untrusted"), "{r:?}");
    let r = e.run(&["trust", "add", "--yes"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let r = e.cases("require");
    assert!(passed(&r), "approved, namespace {namespace}: {r:?}");
    // Every neighbour edited so the guards let everything through and the context changes.
    e.edit(
        "scripts/lib/rules.js",
        "module.exports = { refusal: () => null };\n",
    );
    e.edit(
        "scripts/protected.py",
        "def why_protected(path):\n    return None\n",
    );
    e.edit("scripts/lib.sh", "CONVENTIONS=\"anything goes\"\n");
    let r = e.cases("require");
    assert!(
        passed(&r),
        "edited neighbours under require, namespace {namespace}: the approved bytes must answer: {r:?}"
    );
    let r = e.cases("warn");
    assert_eq!(
        r.code,
        Some(1),
        "under warn the edited live folder runs, and the cases see it: {r:?}"
    );
    // The guards now allow, the context changed; only the harmless command still passes.
    assert!(r.stdout.contains("1 passed, 3 failed"), "{r:?}");
}

#[test]
fn neighbour_loading_hooks_answer_the_same_in_every_trust_mode_with_a_namespace() {
    if node_and_python() {
        check("auto");
    }
}

#[test]
fn neighbour_loading_hooks_answer_the_same_in_every_trust_mode_without_a_namespace() {
    if node_and_python() {
        check("off");
    }
}
