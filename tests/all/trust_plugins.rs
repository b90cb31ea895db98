//! Real plugins in every trust mode: a node guard, a node script reading a file through
//! `__dirname`, a python script importing a neighbour module, a bash script sourcing
//! `$(dirname "$0")/lib.sh` — the way public plugins are written. Each gives the same answer
//! under `--trust off`, `warn` (not approved, and approved) and `require` (approved), and the
//! node guard blocks `rm -rf ~/` in each: a guard that cannot start is a guard that fails open.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::ffi::OsStr;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::sandbox::{Sandbox, write_file};
use crate::util::Run;

/// The node guard: its patterns come from a neighbour module (`require('./lib/patterns')`).
const GUARD_JS: &str = r#"const patterns = require('./lib/patterns');
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const cmd = (input.tool_input && input.tool_input.command) || '';
for (const p of patterns) {
  if (p.test(cmd)) {
    process.stderr.write('node-guard: blocked ' + cmd + '\n');
    process.exit(2);
  }
}
console.log('node-guard ok');
"#;

const PATTERNS_JS: &str = r"module.exports = [/rm\s+-rf\s+~/, /git\s+checkout\s+--\s+\./];
";

/// A node script reading a file of its plugin through `__dirname`.
const BANNER_JS: &str = r"const fs = require('fs');
const path = require('path');
process.stdout.write(fs.readFileSync(path.join(__dirname, 'banner.txt'), 'utf8'));
";

/// A python script importing its neighbour `policy.py` (its folder is `sys.path[0]`).
const CHECK_PY: &str = r"import policy
print('python ' + policy.NAME)
";

/// A bash script sourcing its neighbour through `$0`.
const CHECK_SH: &str = r#"#!/bin/bash
. "$(dirname "$0")/lib.sh"
echo "bash $LIB_NAME"
"#;

/// The answers of the four hooks to `ls`, in rule order.
const ANSWERS: [&str; 4] = [
    "node-guard ok",
    "banner from __dirname",
    "python policy module",
    "bash lib.sh",
];

/// The sandbox (tests/all/sandbox.rs) with the real plugin beside its project.
struct Env {
    sb: Sandbox,
}

impl Env {
    fn new() -> Env {
        let e = Env { sb: Sandbox::new() };
        e.make_plugin();
        e
    }

    fn plugin(&self) -> PathBuf {
        self.sb.root().join("real-plugin")
    }

    fn write(&self, rel: &str, text: &str, mode: u32) {
        write_file(&self.plugin().join(rel), text, mode);
    }

    fn make_plugin(&self) {
        self.write(
            ".claude-plugin/plugin.json",
            r#"{"name": "real-plugin"}"#,
            0o644,
        );
        self.write("hooks/guard.js", GUARD_JS, 0o644);
        self.write("hooks/lib/patterns.js", PATTERNS_JS, 0o644);
        self.write("hooks/banner.js", BANNER_JS, 0o644);
        self.write("hooks/banner.txt", "banner from __dirname\n", 0o644);
        self.write("hooks/check.py", CHECK_PY, 0o644);
        self.write("hooks/policy.py", "NAME = 'policy module'\n", 0o644);
        self.write("hooks/check.sh", CHECK_SH, 0o755);
        self.write("hooks/lib.sh", "LIB_NAME=lib.sh\n", 0o644);
        let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "node \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.js\"", "timeout": 20},
            {"type": "command", "command": "node ${CLAUDE_PLUGIN_ROOT}/hooks/banner.js", "timeout": 20},
            {"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}\"/hooks/check.py", "timeout": 20},
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/check.sh", "timeout": 20},
        ]}]}});
        self.write(
            "hooks/hooks.json",
            &serde_json::to_string_pretty(&hooks).unwrap(),
            0o644,
        );
    }

    fn run(&self, args: &[&OsStr]) -> Run {
        self.sb.run(args, &[])
    }

    /// `dispatch` of a Bash `PreToolUse` running `command`, under `mode`, as JSON.
    fn dispatch(&self, mode: &str, command: &str) -> (Value, Run) {
        let r = self.sb.dispatch_bash(&self.plugin(), mode, command, &[]);
        (r.json(), r)
    }

    fn approve(&self) {
        let r = self.sb.trust("add", &self.plugin(), false, &[]);
        assert_eq!(r.code, Some(0), "{r:?}");
    }
}

/// Each hook's output (trimmed) and failure class, in rule order.
fn answers(d: &Value) -> Vec<(String, Value)> {
    d["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["output"].as_str().unwrap_or_default().trim().to_owned(),
                h["effect"]["failure"]["class"].clone(),
            )
        })
        .collect()
}

/// The four hooks answer `ls` as they do in the agent, and the guard blocks `rm -rf ~/`.
fn assert_plugin_works(e: &Env, mode: &str) {
    let (d, r) = e.dispatch(mode, "ls");
    let got = answers(&d);
    let want: Vec<(String, Value)> = ANSWERS
        .iter()
        .map(|a| ((*a).to_owned(), Value::Null))
        .collect();
    assert_eq!(got, want, "--trust {mode}: {r:?}");
    assert_eq!(d["outcome"], json!("allow"), "--trust {mode}: {r:?}");

    let (d, r) = e.dispatch(mode, "rm -rf ~/");
    assert_eq!(d["outcome"], json!("block"), "--trust {mode}: {r:?}");
    assert!(
        d["hooks"][0]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("node-guard: blocked rm -rf ~/"),
        "--trust {mode}: {r:?}"
    );
}

#[test]
fn real_plugins_give_the_same_answers_under_off_and_warn() {
    let e = Env::new();
    assert_plugin_works(&e, "off");
    // Not approved: `warn` runs them from the live folder, as the agent would, and says so.
    assert_plugin_works(&e, "warn");
    let (_, r) = e.dispatch("warn", "ls");
    assert!(r.stderr.contains("it ran anyway (trust = warn)"), "{r:?}");
    // Approved: the same.
    e.approve();
    assert_plugin_works(&e, "warn");
    // Changed after approval: `warn` runs the live folder, names the change, and the guard
    // still guards.
    e.write(
        "hooks/guard.js",
        &format!("{GUARD_JS}// edited after approval\n"),
        0o644,
    );
    assert_plugin_works(&e, "warn");
    let (_, r) = e.dispatch("warn", "ls");
    assert!(r.stderr.contains("changed since it was approved"), "{r:?}");
}

#[test]
fn under_require_approved_plugins_run_from_their_snapshot_with_the_same_answers() {
    let e = Env::new();
    e.approve();
    assert_plugin_works(&e, "require");
    // What the scripts load at run time edited after approval: a neighbour module, a sourced
    // library, a file read through `__dirname`, the guard's patterns. No rule changed, so each
    // stays approved — and under `require` each still runs the approved bytes.
    e.write("hooks/lib/patterns.js", "module.exports = [];\n", 0o644);
    e.write("hooks/banner.txt", "banner edited\n", 0o644);
    e.write("hooks/policy.py", "NAME = 'edited'\n", 0o644);
    e.write("hooks/lib.sh", "LIB_NAME=edited\n", 0o644);
    assert_plugin_works(&e, "require");
    // `warn` runs the live folder: the edits show, and the emptied guard lets it through.
    let (d, r) = e.dispatch("warn", "rm -rf ~/");
    assert_eq!(d["outcome"], json!("allow"), "{r:?}");
    assert_eq!(
        answers(&d)[1..]
            .iter()
            .map(|(o, _)| o.as_str())
            .collect::<Vec<_>>(),
        ["banner edited", "python edited", "bash edited"],
        "{r:?}"
    );
    // Approved again, `require` runs the new snapshot.
    e.approve();
    let (d, r) = e.dispatch("require", "ls");
    assert_eq!(answers(&d)[3].0, "bash edited", "{r:?}");
}

/// How `require` keeps an edited script from running, by spelling.
#[derive(Debug, Clone, Copy)]
enum Held {
    /// The resolver pins the script: the edit makes the rule changed, refused until approved
    /// again (before the edit it runs, from the snapshot).
    Pinned,
    /// The resolver does not model the construct: refused under `require` with it named,
    /// before and after the edit, and named `unpinnable:` by `trust add`.
    Unpinnable(&'static str),
}

/// Issue 27's seventeen spellings that ran an edited `hooks/g.sh` (or `g.js`) under
/// `require`: (command, shell, how `require` holds).
const SPELLINGS: [(&str, &str, Held); 18] = [
    (
        ": ${X:-$(${CLAUDE_PLUGIN_ROOT}/hooks/g.sh)}",
        "sh",
        Held::Unpinnable("a parameter expansion with an operator `${X:-$("),
    ),
    (
        "MODE=\"strict\" \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"",
        "sh",
        Held::Pinned,
    ),
    (
        "bash +e ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "sh",
        Held::Pinned,
    ),
    (
        "sh -c '${CLAUDE_PLUGIN_ROOT}/hooks/g.sh'",
        "sh",
        Held::Unpinnable("`sh -c` with a string"),
    ),
    (
        "sh < ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "sh",
        Held::Unpinnable("`sh` reading its program from standard input"),
    ),
    (
        "cat ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh | sh",
        "sh",
        Held::Unpinnable("`sh` reading its program from standard input"),
    ),
    (
        "trap \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\" EXIT",
        "sh",
        Held::Unpinnable("`trap`"),
    ),
    (
        ": ${X:-\"}\"}; \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"",
        "sh",
        Held::Unpinnable("a parameter expansion with an operator `${X:-\"}\"}`"),
    ),
    (
        "echo $'it\\'s' >&2; \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"",
        "bash",
        Held::Pinned,
    ),
    (
        "NODE_ENV=\"production\" node ${CLAUDE_PLUGIN_ROOT}/hooks/g.js",
        "sh",
        Held::Pinned,
    ),
    (
        "node -r ${CLAUDE_PLUGIN_ROOT}/hooks/pre.js ${CLAUDE_PLUGIN_ROOT}/hooks/g.js",
        "sh",
        Held::Unpinnable("`node -r "),
    ),
    (
        "exec 3< ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh; sh /dev/fd/3",
        "sh",
        Held::Unpinnable("`/dev/fd/3`"),
    ),
    (
        "stdbuf -o0 ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "sh",
        Held::Pinned,
    ),
    (
        "setsid -w ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "sh",
        Held::Pinned,
    ),
    (
        "echo ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh | xargs sh",
        "sh",
        Held::Unpinnable("`xargs`"),
    ),
    (
        "env -u FOO ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "sh",
        Held::Pinned,
    ),
    (
        "timeout infinity ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "sh",
        Held::Pinned,
    ),
    (
        "exec -a name ${CLAUDE_PLUGIN_ROOT}/hooks/g.sh",
        "bash",
        Held::Pinned,
    ),
];

/// Each hook's output, failure class and failure message, in rule order.
fn outcomes(d: &Value) -> Vec<(String, Value, String)> {
    d["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let f = &h["effect"]["failure"];
            (
                h["output"].as_str().unwrap_or_default().to_owned(),
                f["class"].clone(),
                f["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn under_require_an_edited_script_does_not_run_whatever_the_spelling() {
    let e = Env::new();
    e.write("hooks/g.sh", "#!/bin/sh\necho ran-g-v1 >&2\n", 0o755);
    e.write(
        "hooks/g.js",
        "process.stderr.write('ran-g-v1\\n');\n",
        0o644,
    );
    e.write("hooks/pre.js", "// loaded first\n", 0o644);
    let rules: Vec<Value> = SPELLINGS
        .iter()
        .map(
            |(c, shell, _)| json!({"type": "command", "command": c, "shell": shell, "timeout": 20}),
        )
        .collect();
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": rules}]}});
    e.write(
        "hooks/hooks.json",
        &serde_json::to_string_pretty(&hooks).unwrap(),
        0o644,
    );
    // `trust add` names every unpinnable construct before the person approves, with the fix.
    let plugin = e.plugin();
    let r = e.run(&[
        OsStr::new("trust"),
        OsStr::new("add"),
        OsStr::new("--yes"),
        plugin.as_os_str(),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    for (c, _, held) in SPELLINGS {
        if let Held::Unpinnable(what) = held {
            assert!(
                r.stdout
                    .lines()
                    .chain(r.stderr.lines())
                    .any(|l| l.contains("unpinnable:")
                        && l.contains(what)
                        && l.contains("move it into a script in the plugin")),
                "{c}: {r:?}"
            );
        }
    }
    let show = e.run(&[
        OsStr::new("trust"),
        OsStr::new("show"),
        OsStr::new("--json"),
        plugin.as_os_str(),
    ]);
    assert!(
        show.stdout.matches("\"unpinnable\": true").count()
            + show.stdout.matches("\"unpinnable\":true").count()
            >= SPELLINGS
                .iter()
                .filter(|s| matches!(s.2, Held::Unpinnable(_)))
                .count(),
        "{show:?}"
    );
    let outputs = |mode: &str| outcomes(&e.dispatch(mode, "ls").0);
    let check_require = |edited: bool| {
        for (i, (out, class, msg)) in outputs("require").iter().enumerate() {
            let (c, _, held) = SPELLINGS[i];
            assert!(!out.contains("ran-g-v2"), "{c}: {out}");
            match held {
                // Approved, or edited since: the approved bytes run (the rule's only change
                // is in files its snapshot holds, so the approved rule runs from it).
                Held::Pinned => {
                    assert!(
                        out.contains("ran-g-v1") && class.is_null(),
                        "{c} (edited: {edited}): {out} {class} {msg}"
                    );
                }
                Held::Unpinnable(what) => {
                    assert_eq!(*class, json!("untrusted"), "{c}: {out} {msg}");
                    assert!(
                        msg.contains("unpinnable: ") && msg.contains(what),
                        "{c}: {msg}"
                    );
                    assert!(!out.contains("ran-g"), "{c}: {out}");
                }
            }
        }
    };
    check_require(false);
    e.write("hooks/g.sh", "#!/bin/sh\necho ran-g-v2 >&2\n", 0o755);
    e.write(
        "hooks/g.js",
        "process.stderr.write('ran-g-v2\\n');\n",
        0o644,
    );
    // The edit is live: `warn` runs it in every spelling (an unpinnable rule too: warn only
    // warns).
    for (i, (out, _, _)) in outputs("warn").iter().enumerate() {
        assert!(out.contains("ran-g-v2"), "{}: {out}", SPELLINGS[i].0);
    }
    // Under `require` no spelling reaches it.
    check_require(true);
}
