//! What `install` and `uninstall` did, said as it happens (text: the change on stdout, notes and
//! warnings on stderr) or, with `--json`, as one JSON object on stdout once everything is done —
//! for the scripts and CI jobs that set agents up. Errors stay what they are in every command:
//! a message on stderr and the exit code.

use std::io::Write as _;

use anyhow::Context;
use serde::Serialize;

use crate::cmd::term::untrusted;

/// One entry as written (or as it would be, on a dry run).
#[derive(Debug, Serialize)]
pub(super) struct EntryReport {
    /// The agent's event.
    pub(super) event: &'static str,
    /// In seconds, whatever unit the agent's file uses.
    pub(super) timeout_secs: u64,
    /// A rule behind the entry fails closed: hookbox's own errors block (`--on-error block`).
    pub(super) fail_closed: bool,
    /// The command the agent runs.
    pub(super) command: String,
}

/// Codex's trust records written beside the entries (`--trust-codex`).
#[derive(Debug, Serialize)]
pub(super) struct CodexTrustReport {
    /// Codex's configuration file.
    pub(super) file: String,
    /// `written`, `unchanged`, `removed` or `dry-run`.
    pub(super) outcome: &'static str,
    /// Each entry's key and Codex's hash of it.
    pub(super) records: Vec<serde_json::Value>,
    /// The diff of the configuration file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) diff: Option<String>,
    /// The old file's copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) backup: Option<String>,
}

/// The whole of what one `install` or `uninstall` did.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    /// `install` or `uninstall`.
    pub(super) command: &'static str,
    /// The agent's name on the command line.
    pub(super) agent: &'static str,
    /// The agent's configuration file.
    pub(super) file: String,
    /// The plugins the entries run, after the change.
    pub(super) plugins: Vec<String>,
    /// hookbox's entries after the change.
    pub(super) entries: Vec<EntryReport>,
    /// `written`, `removed` (nothing was left in a file hookbox created), `unchanged`,
    /// `dry-run`, `nothing-to-install` (none of the plugins' events exists in the agent), or
    /// `nothing-to-remove`.
    pub(super) outcome: &'static str,
    /// The change as a line diff (empty when there is none).
    pub(super) diff: String,
    /// The copy of the old file, when one was written.
    pub(super) backup: Option<String>,
    /// What could not be installed, and what the agent needs besides the file.
    pub(super) notes: Vec<String>,
    /// What went wrong without stopping the command.
    pub(super) warnings: Vec<String>,
    /// Each plugin's trust state (`approved`, `not approved`, `changed since it was approved`).
    pub(super) trust: Vec<serde_json::Value>,
    /// Codex only: its trust records (`--trust-codex`, or kept in step with earlier ones).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) codex_trust: Option<CodexTrustReport>,
}

/// Where what happens is said.
pub(super) struct Out {
    json: bool,
    pub(super) report: Report,
}

impl Out {
    pub(super) fn new(json: bool, command: &'static str, agent: &'static str, file: String) -> Out {
        Out {
            json,
            report: Report {
                command,
                agent,
                file,
                plugins: Vec::new(),
                entries: Vec::new(),
                outcome: "unchanged",
                diff: String::new(),
                backup: None,
                notes: Vec::new(),
                warnings: Vec::new(),
                trust: Vec::new(),
                codex_trust: None,
            },
        }
    }

    /// Whether the report is said as JSON at the end.
    pub(super) fn json(&self) -> bool {
        self.json
    }

    /// A line of the text report on stdout (nothing under `--json`: the report says it).
    pub(super) fn line(&self, text: &str) -> anyhow::Result<()> {
        if !self.json {
            writeln!(anstream::stdout().lock(), "{text}").context("cannot write to stdout")?;
        }
        Ok(())
    }

    /// A note: stderr as text, `notes` in JSON.
    pub(super) fn note(&mut self, text: String) {
        if self.json {
            self.report.notes.push(text);
        } else {
            eprintln!("note: {}", untrusted(&text));
        }
    }

    /// A warning: stderr as text, `warnings` in JSON.
    pub(super) fn warning(&mut self, text: String) {
        if self.json {
            self.report.warnings.push(text);
        } else {
            eprintln!("warning: {}", untrusted(&text));
        }
    }

    /// Prints the JSON report (under `--json`).
    pub(super) fn end(&self) -> anyhow::Result<()> {
        if self.json {
            let text =
                serde_json::to_string_pretty(&self.report).context("cannot encode the report")?;
            writeln!(std::io::stdout().lock(), "{text}").context("cannot write to stdout")?;
        }
        Ok(())
    }
}
