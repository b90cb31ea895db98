//! Under `trust = require`, an approved plugin's hooks run in a private mount namespace in which
//! the plugin folder's own path shows the approved snapshot, read-only (issue 27 item 2): every
//! spelling of a path — the live absolute path, a relative one after `cd`, `$0`, `__dirname`, a
//! python import — reaches the approved bytes after the plugin is edited; a hook that writes into
//! the plugin folder or the approval store gets `EROFS` (as root too: CI runs as root); without
//! the namespace (forced off by the user's `"trust": {"namespace": "off"}`), a command naming the
//! live folder's path is unpinnable, named by `trust add` with the fix. Under `warn` the live
//! folder runs, edits and all. Each runs under both ways of making the namespace (a mount
//! namespace alone as root, inside a user namespace as an ordinary user) where the machine can.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::sandbox::{Sandbox, hook_answers, write_file};
use crate::util::Run;

struct Env {
    sandbox: Sandbox,
}

impl Env {
    /// A plugin whose one rule runs `hooks/run.sh`, with `namespace` as the user's
    /// `trust.namespace`.
    fn new(namespace: &str) -> Env {
        let e = Env {
            sandbox: Sandbox::new(),
        };
        e.sandbox
            .user_settings(&json!({ "trust": { "namespace": namespace } }));
        e.write(
            ".claude-plugin/plugin.json",
            r#"{"name": "real-plugin"}"#,
            0o644,
        );
        e
    }

    /// The plugin folder's own (canonical) path.
    fn plugin(&self) -> PathBuf {
        self.sandbox
            .root()
            .join("real-plugin")
            .canonicalize()
            .unwrap()
    }

    /// The approval store.
    fn store(&self) -> PathBuf {
        self.sandbox.store()
    }

    fn write(&self, rel: &str, text: &str, mode: u32) {
        write_file(
            &self.sandbox.root().join("real-plugin").join(rel),
            text,
            mode,
        );
    }

    /// `hooks.json` with one `PreToolUse` rule per command.
    fn rules(&self, commands: &[&str]) {
        let hooks: Vec<Value> = commands
            .iter()
            .map(|c| json!({"type": "command", "command": c, "timeout": 20}))
            .collect();
        let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}});
        self.write("hooks/hooks.json", &hooks.to_string(), 0o644);
    }

    fn trust(&self, verb: &str, json: bool) -> Run {
        let r = self.sandbox.trust(verb, &self.plugin(), json, &[]);
        assert_eq!(r.code, Some(0), "{r:?}");
        r
    }

    /// Each hook's output (trimmed), failure class and message, dispatching a Bash
    /// `PreToolUse` under `mode`.
    fn dispatch(&self, mode: &str) -> Vec<(String, Value, String)> {
        hook_answers(
            &self
                .sandbox
                .dispatch_bash(&self.plugin(), mode, "ls", &[])
                .json(),
        )
    }

    /// The `trust` section of `dispatch --json` under `mode`.
    fn dispatch_trust(&self, mode: &str) -> Value {
        self.sandbox
            .dispatch_bash(&self.plugin(), mode, "ls", &[])
            .json()["trust"]
            .clone()
    }

    /// Whether the machine makes the namespace under this env's setting (`trust show --json`);
    /// when not, the reason is given.
    fn isolated(&self) -> bool {
        let v = self.trust("show", true).json();
        match v["isolation"].as_str() {
            Some("mount-namespace") => true,
            Some("variable-only") => {
                let why = v["isolation_reason"].as_str().unwrap_or_default();
                assert!(!why.is_empty(), "{v}");
                eprintln!("no private mount namespace here ({why}); skipped");
                false
            }
            other => panic!("isolation {other:?}: {v}"),
        }
    }
}

/// Every file beneath `dir` with its bytes (symlinks as their target), to compare a folder
/// before and after.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
                out.insert(path, Vec::new());
            } else if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(path, target.into_os_string().into_encoded_bytes());
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// The neighbours an approved script loads, each saying which version it is.
fn write_neighbours(e: &Env, version: &str) {
    e.write(
        "hooks/g.sh",
        &format!("#!/bin/sh\necho g-{version}\n"),
        0o755,
    );
    e.write("hooks/lib.sh", &format!("LIB=lib-{version}\n"), 0o644);
    e.write(
        "hooks/lib.js",
        &format!("module.exports = 'js-{version}';\n"),
        0o644,
    );
    e.write(
        "hooks/neighbour.py",
        &format!("NAME = 'py-{version}'\n"),
        0o644,
    );
}

#[test]
fn under_require_every_spelling_of_the_plugin_s_path_runs_the_approved_bytes() {
    for namespace in ["auto", "user-namespace"] {
        let e = Env::new(namespace);
        if !e.isolated() {
            continue;
        }
        let live = e.plugin();
        let live = live.display();
        // One approved script, unchanged, reaching its neighbours by every spelling: the live
        // absolute path, a relative path after `cd` into the variable, `$0`, a variable.
        e.write(
            "hooks/run.sh",
            &format!(
                "#!/bin/sh\n\
                 {live}/hooks/g.sh\n\
                 (cd \"$CLAUDE_PLUGIN_ROOT\" && ./hooks/g.sh)\n\
                 . \"$(dirname \"$0\")/lib.sh\"; echo \"$LIB\"\n\
                 D={live}/hooks; . \"$D/lib.sh\"; echo \"$LIB via a variable\"\n\
                 echo \"root $CLAUDE_PLUGIN_ROOT\"\n"
            ),
            0o755,
        );
        // A node script requiring its neighbour by `__dirname`, a python script importing one.
        e.write(
            "hooks/n.js",
            "console.log(require(require('path').join(__dirname, 'lib.js')));\n",
            0o644,
        );
        e.write(
            "hooks/check.py",
            "import neighbour\nprint(neighbour.NAME)\n",
            0o644,
        );
        write_neighbours(&e, "v1");
        e.rules(&[
            "\"${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\"",
            "node \"${CLAUDE_PLUGIN_ROOT}/hooks/n.js\"",
            "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/check.py\"",
        ]);
        e.trust("add", false);
        let approved = vec![
            (
                format!("g-v1\ng-v1\nlib-v1\nlib-v1 via a variable\nroot {live}"),
                Value::Null,
                String::new(),
            ),
            ("js-v1".to_owned(), Value::Null, String::new()),
            ("py-v1".to_owned(), Value::Null, String::new()),
        ];
        assert_eq!(e.dispatch("require"), approved, "{namespace}");
        // Every neighbour edited after approval: no rule changed, so each stays approved, and
        // under `require` every spelling still reaches the approved bytes.
        write_neighbours(&e, "v2");
        assert_eq!(e.dispatch("require"), approved, "{namespace}");
        // `warn` runs the live folder as the agent would: the edits show.
        let warned = e.dispatch("warn");
        assert_eq!(
            warned.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
            [
                format!("g-v2\ng-v2\nlib-v2\nlib-v2 via a variable\nroot {live}").as_str(),
                "js-v2",
                "py-v2"
            ],
            "{namespace}"
        );
    }
}

#[test]
fn under_require_a_hook_cannot_write_the_plugin_folder_or_the_store() {
    for namespace in ["auto", "user-namespace"] {
        let e = Env::new(namespace);
        if !e.isolated() {
            continue;
        }
        let store = e.store();
        // Into the plugin folder by the variable and by the live path, into the snapshot's
        // files and the store's records: each write is refused.
        e.write(
            "hooks/w.sh",
            &format!(
                "#!/bin/sh\n\
                 echo x > \"$CLAUDE_PLUGIN_ROOT/hooks/w.sh\" || echo plugin-refused\n\
                 echo x > {live}/new || echo live-refused\n\
                 for f in $(find {store} -type f); do echo x > \"$f\" && echo \"wrote $f\"; done\n\
                 touch {store}/new || echo store-refused\n\
                 rm -rf {store}/snapshots || echo snapshots-refused\n",
                live = e.plugin().display(),
                store = store.display()
            ),
            0o755,
        );
        e.rules(&["\"${CLAUDE_PLUGIN_ROOT}/hooks/w.sh\""]);
        e.trust("add", false);
        let before_store = contents(&store);
        let before_plugin = contents(&e.plugin());
        let out = e.dispatch("require");
        let (stdout, class, msg) = &out[0];
        assert!(class.is_null(), "{namespace}: {class} {msg}");
        for refused in [
            "plugin-refused",
            "live-refused",
            "store-refused",
            "snapshots-refused",
        ] {
            assert!(stdout.contains(refused), "{namespace}: {stdout}");
        }
        assert!(!stdout.contains("wrote"), "{namespace}: {stdout}");
        assert!(
            stdout.contains("Read-only file system"),
            "{namespace}: {stdout}"
        );
        assert_eq!(contents(&store), before_store, "{namespace}");
        assert_eq!(contents(&e.plugin()), before_plugin, "{namespace}");
    }
}

#[test]
fn without_a_namespace_a_command_naming_the_live_folder_is_unpinnable() {
    let e = Env::new("off");
    assert!(!e.isolated());
    let live = e.plugin();
    e.write("hooks/g.sh", "#!/bin/sh\necho g-v1\n", 0o755);
    let by_path = format!("{}/hooks/g.sh", live.display());
    e.rules(&[&by_path, "\"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\""]);
    // `trust add` says how approved hooks run here, and names the rule with the fix.
    let add = e.trust("add", false);
    assert!(
        add.stdout
            .contains("no private mount namespace: turned off by this host's policy"),
        "{add:?}"
    );
    assert!(
        add.stdout.lines().any(|l| l.contains("not pinnable")
            && l.contains("its own path")
            && l.contains("use ${CLAUDE_PLUGIN_ROOT}")),
        "{add:?}"
    );
    let show = e.trust("show", true).json();
    assert_eq!(show["isolation"], "variable-only", "{show}");
    assert_eq!(e.dispatch_trust("require")["isolation"], "variable-only");
    // Under `require` it is refused; the rule through the variable runs from the snapshot.
    let out = e.dispatch("require");
    assert_eq!(out[0].1, json!("untrusted"), "{out:?}");
    assert!(
        out[0].2.contains("its own path") && out[0].2.contains("use ${CLAUDE_PLUGIN_ROOT}"),
        "{out:?}"
    );
    assert_eq!(out[1].0, "g-v1", "{out:?}");
    assert!(out[1].1.is_null(), "{out:?}");
    // Under `warn` it runs from the live folder, as the agent would (and is named).
    let out = e.dispatch("warn");
    assert_eq!(out[0].0, "g-v1", "{out:?}");
}

#[test]
fn with_a_namespace_the_live_path_runs_the_approved_snapshot() {
    let e = Env::new("auto");
    if !e.isolated() {
        return;
    }
    let show = e.trust("show", false);
    assert!(
        show.stdout.contains("isolation: under trust = require")
            && show.stdout.contains("private mount namespace"),
        "{show:?}"
    );
    let live = e.plugin();
    e.write("hooks/g.sh", "#!/bin/sh\necho g-v1\n", 0o755);
    let by_path = format!("{}/hooks/g.sh", live.display());
    e.rules(&[&by_path]);
    let add = e.trust("add", true);
    assert_eq!(add.json()["isolation"], "mount-namespace", "{add:?}");
    let trust = e.dispatch_trust("require");
    assert_eq!(trust["isolation"], "mount-namespace", "{trust}");
    assert!(e.dispatch_trust("warn").get("isolation").is_none());
    let out = e.dispatch("require");
    assert_eq!(out[0].0, "g-v1", "{out:?}");
    assert!(out[0].1.is_null(), "{out:?}");
}
