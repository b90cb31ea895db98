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

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::sandbox::Sandbox;
use crate::util::{Run, copy_tree, repo_root};

/// A copy of the example plugin beside a sandbox's home and project.
struct Env {
    sandbox: Sandbox,
}

impl Env {
    /// `namespace`: the user's `trust.namespace` (`auto` or `off`).
    fn new(namespace: &str) -> Env {
        let e = Env {
            sandbox: Sandbox::new(),
        };
        copy_tree(
            &repo_root().join("examples/plugins/layout-guards"),
            &e.sandbox.root().join("layout-guards"),
        );
        e.sandbox
            .user_settings(&json!({"trust": {"namespace": namespace}}));
        e
    }

    fn plugin(&self) -> PathBuf {
        self.sandbox
            .root()
            .join("layout-guards")
            .canonicalize()
            .unwrap()
    }

    /// `hookbox test --trust MODE` on the plugin's own cases.
    fn cases(&self, mode: &str) -> Run {
        let plugin = self.plugin();
        self.sandbox.run(
            &[
                OsStr::new("test"),
                OsStr::new("--trust"),
                OsStr::new(mode),
                plugin.as_os_str(),
            ],
            &[],
        )
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
    let r = e.sandbox.trust("add", &e.plugin(), false, &[]);
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
