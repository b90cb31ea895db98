//! A user's world for the end-to-end tests of trust: a temporary folder with `home/` (`HOME`:
//! the user's settings, and hookbox's state and approval store under `~/.local/state/hookbox`)
//! and `project/` (the working folder), and hookbox run inside it with none of the test
//! machine's own hookbox settings, state, log level or project variables — so an approval one
//! test makes is never seen by another, nor by the person running the tests.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::Run;

/// A temporary home and project (see the module).
pub(crate) struct Sandbox {
    tmp: tempfile::TempDir,
}

impl Sandbox {
    pub(crate) fn new() -> Sandbox {
        let s = Sandbox {
            tmp: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(s.home()).unwrap();
        std::fs::create_dir_all(s.project()).unwrap();
        s
    }

    /// The temporary folder holding `home/` and `project/` (and what a test puts beside them).
    pub(crate) fn root(&self) -> &Path {
        self.tmp.path()
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.root().join("project")
    }

    /// The approval store hookbox uses here.
    pub(crate) fn store(&self) -> PathBuf {
        self.home().join(".local/state/hookbox/trust")
    }

    /// Writes the user's `~/.config/hookbox/settings.json`.
    pub(crate) fn user_settings(&self, settings: &Value) {
        write_file(
            &self.home().join(".config/hookbox/settings.json"),
            &settings.to_string(),
            0o644,
        );
    }

    /// Runs `hookbox ARGS…` in the project, with `env` on top of the sandbox's environment.
    pub(crate) fn run(&self, args: &[&OsStr], env: &[(&str, &OsStr)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookbox"));
        cmd.args(args)
            .current_dir(self.project())
            .env("NO_COLOR", "1")
            .env("HOME", self.home());
        for var in [
            "HOOKBOX_STATE_DIR",
            "XDG_STATE_HOME",
            "XDG_CONFIG_HOME",
            "HOOKBOX_LOG",
            "CLAUDE_PROJECT_DIR",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `hookbox trust VERB [--yes] [--json] SUBJECT`.
    pub(crate) fn trust(
        &self,
        verb: &str,
        subject: &Path,
        json: bool,
        env: &[(&str, &OsStr)],
    ) -> Run {
        let mut args = vec![OsStr::new("trust"), OsStr::new(verb)];
        if verb == "add" {
            args.push(OsStr::new("--yes"));
        }
        if json {
            args.push(OsStr::new("--json"));
        }
        args.push(subject.as_os_str());
        self.run(&args, env)
    }

    /// `hookbox dispatch --json` of a Bash `PreToolUse` running `command`, through the hooks
    /// of `plugin` under `trust = MODE`; it must dispatch (exit 0).
    pub(crate) fn dispatch_bash(
        &self,
        plugin: &Path,
        mode: &str,
        command: &str,
        env: &[(&str, &OsStr)],
    ) -> Run {
        let input = serde_json::json!({ "command": command }).to_string();
        let r = self.run(
            &[
                OsStr::new("dispatch"),
                OsStr::new("--event"),
                OsStr::new("PreToolUse"),
                OsStr::new("--tool"),
                OsStr::new("Bash"),
                OsStr::new("--tool-input"),
                OsStr::new(&input),
                OsStr::new("--plugin"),
                plugin.as_os_str(),
                OsStr::new("--no-replay"),
                OsStr::new("--trust"),
                OsStr::new(mode),
                OsStr::new("--json"),
            ],
            env,
        );
        assert_eq!(r.code, Some(0), "{r:?}");
        r
    }
}

/// Each hook's output (trimmed), failure class and failure message in a `dispatch --json`
/// answer.
pub(crate) fn hook_answers(dispatched: &Value) -> Vec<(String, Value, String)> {
    dispatched["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let f = &h["effect"]["failure"];
            (
                h["output"].as_str().unwrap_or_default().trim().to_owned(),
                f["class"].clone(),
                f["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Writes `text` at `path` (making its folders) with the permission bits `mode`.
pub(crate) fn write_file(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
