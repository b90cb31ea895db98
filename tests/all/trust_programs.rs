//! Programs found on `PATH` pinned by resolved path and digest: a plugin's rule runs
//! `hbtool-pin` from a test `PATH` folder; approved, it runs under `require`; the program's
//! bytes replaced, or another file of that name put first on `PATH`, and `require` refuses the
//! rule, `warn` runs it and names the program, `trust diff` shows its old and new digest.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::sandbox::{Sandbox, hook_answers, write_file};
use crate::util::Run;

const V1: &str = "#!/bin/sh\necho tool v1\n";
const V2: &str = "#!/bin/sh\necho tool v2, replaced\n";

struct Env {
    sandbox: Sandbox,
}

impl Env {
    fn new() -> Env {
        let e = Env {
            sandbox: Sandbox::new(),
        };
        for d in ["bin0", "bin1"] {
            std::fs::create_dir_all(e.sandbox.root().join(d)).unwrap();
        }
        let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "hbtool-pin --check", "timeout": 20},
        ]}]}});
        let plugin = e.plugin();
        write_file(
            &plugin.join(".claude-plugin/plugin.json"),
            r#"{"name": "tool-plugin"}"#,
            0o644,
        );
        write_file(&plugin.join("hooks/hooks.json"), &hooks.to_string(), 0o644);
        e.program("bin1", V1);
        e
    }

    fn plugin(&self) -> PathBuf {
        self.sandbox.root().join("tool-plugin")
    }

    fn bin(&self, d: &str) -> PathBuf {
        self.sandbox.root().join(d).canonicalize().unwrap()
    }

    fn program(&self, dir: &str, body: &str) {
        write_file(
            &self.sandbox.root().join(dir).join("hbtool-pin"),
            body,
            0o755,
        );
    }

    /// `PATH` with the folders `path_first` before the test's own.
    fn path(&self, path_first: &[&str]) -> OsString {
        let mut path = OsString::new();
        for d in path_first {
            path.push(self.bin(d));
            path.push(":");
        }
        path.push(std::env::var_os("PATH").unwrap_or_default());
        path
    }

    /// The hook's output and failure class under `mode`, with `path_first` before `PATH`.
    fn dispatch(&self, path_first: &[&str], mode: &str) -> (String, Value, Run) {
        let path = self.path(path_first);
        let r =
            self.sandbox
                .dispatch_bash(&self.plugin(), mode, "ls", &[("PATH", path.as_os_str())]);
        let (output, class, _) = hook_answers(&r.json())
            .into_iter()
            .next()
            .unwrap_or_default();
        (output, class, r)
    }

    fn trust(&self, path_first: &[&str], sub: &str) -> Run {
        let path = self.path(path_first);
        self.sandbox
            .trust(sub, &self.plugin(), false, &[("PATH", path.as_os_str())])
    }
}

fn short(body: &str) -> String {
    use sha2::Digest as _;
    let d = sha2::Sha256::digest(body.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect::<String>()[..12].to_owned()
}

fn tool(dir: &Path) -> String {
    dir.join("hbtool-pin").display().to_string()
}

#[test]
fn a_program_found_on_path_is_pinned_by_path_and_digest() {
    let e = Env::new();
    let (bin0, bin1) = (tool(&e.bin("bin0")), tool(&e.bin("bin1")));
    // The approval screen shows the program by resolved path and digest.
    let r = e.trust(&["bin1"], "add");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "runs  program hbtool-pin → {bin1}  {} bytes  sha256 {}  (found on PATH)",
            V1.len(),
            short(V1)
        )),
        "{r:?}"
    );
    let (out, class, r) = e.dispatch(&["bin1"], "require");
    assert_eq!((out.as_str(), &class), ("tool v1", &Value::Null), "{r:?}");

    // Its bytes replaced: refused under `require`, named under `warn`, shown by `trust diff`.
    e.program("bin1", V2);
    let (_, class, r) = e.dispatch(&["bin1"], "require");
    assert_eq!(class, json!("untrusted"), "{r:?}");
    let (out, class, r) = e.dispatch(&["bin1"], "warn");
    assert_eq!(
        (out.as_str(), &class),
        ("tool v2, replaced", &Value::Null),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("program hbtool-pin (found on PATH)"),
        "{r:?}"
    );
    let r = e.trust(&["bin1"], "diff");
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "program hbtool-pin (found on PATH): {bin1} sha256 {}… ({} bytes) → {bin1} sha256 {}… ({} bytes)",
            short(V1),
            V1.len(),
            short(V2),
            V2.len()
        )),
        "{r:?}"
    );

    // Put back: approved as it was.
    e.program("bin1", V1);
    let (out, class, r) = e.dispatch(&["bin1"], "require");
    assert_eq!((out.as_str(), &class), ("tool v1", &Value::Null), "{r:?}");

    // The same bytes, but another file first on PATH: a change too.
    e.program("bin0", V1);
    let (_, class, r) = e.dispatch(&["bin0", "bin1"], "require");
    assert_eq!(class, json!("untrusted"), "{r:?}");
    let r = e.trust(&["bin0", "bin1"], "diff");
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "program hbtool-pin (found on PATH): {bin1} sha256 {}… ({} bytes) → {bin0} sha256 {}…",
            short(V1),
            V1.len(),
            short(V1)
        )),
        "{r:?}"
    );
    let (out, _, r) = e.dispatch(&["bin0", "bin1"], "warn");
    assert_eq!(out, "tool v1", "{r:?}");
    assert!(r.stderr.contains(&bin0), "{r:?}");
}
