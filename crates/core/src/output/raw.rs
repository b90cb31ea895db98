//! What a command left behind (a native process or a `wasi:cli` component): exit status and
//! captured, capped output. Runners produce it; `interpret` turns it into an effect per dialect.

use serde::{Deserialize, Serialize};

/// The captured result of running a command-style hook.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RawOutput {
    /// The exit code; `None` when the process was killed (timeout, signal).
    pub exit_code: Option<i32>,
    /// Standard output (lossy UTF-8), at most the runner's cap.
    pub stdout: String,
    /// Standard error (lossy UTF-8), at most the runner's cap.
    pub stderr: String,
    /// True when stdout was cut at the cap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stdout_truncated: bool,
    /// True when stderr was cut at the cap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stderr_truncated: bool,
    /// True when the hook hit its timeout: either the process was killed (`exit_code: None`) or
    /// it exited but left children holding its output open until the deadline (the code is
    /// kept). Either way the run counts as timed out: its answer may be incomplete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

impl RawOutput {
    /// A finished run with `code`, `stdout` and `stderr` (for scripted results and tests).
    pub fn exited(code: i32, stdout: impl Into<String>, stderr: impl Into<String>) -> RawOutput {
        RawOutput {
            exit_code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..RawOutput::default()
        }
    }

    /// A run killed at its timeout, with what it printed so far.
    pub fn timed_out(stdout: impl Into<String>, stderr: impl Into<String>) -> RawOutput {
        RawOutput {
            timed_out: true,
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..RawOutput::default()
        }
    }

    /// The first line of stderr, trimmed (Claude Code's "non-blocking status code" message).
    pub fn first_stderr_line(&self) -> &str {
        self.stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
    }
}
