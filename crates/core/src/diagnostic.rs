//! Diagnostics: every problem found while loading, with file, JSON path, line:column and a fix.
//! Loading never drops a rule silently; each skip is one of these.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Something was skipped or looks wrong, but everything else loaded.
    Warning,
    /// The file (or, in the ghast dialect, the plugin) could not be loaded, or a `wasm` rule is
    /// invalid (hookbox's own block is strict).
    Error,
}

/// One problem found while loading hook files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// The file it is about.
    pub file: PathBuf,
    /// JSON path inside the file (`hooks.Stop[0].hooks[1]`), when it is about a part of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_path: Option<String>,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when obvious.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Diagnostic {
    /// A warning about `file`.
    pub fn warning(file: impl Into<PathBuf>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            file: file.into(),
            json_path: None,
            line: None,
            column: None,
            message: message.into(),
            fix: None,
        }
    }

    /// An error about `file`.
    pub fn error(file: impl Into<PathBuf>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            ..Diagnostic::warning(file, message)
        }
    }

    /// Adds the JSON path.
    pub fn at(mut self, json_path: impl Into<String>) -> Diagnostic {
        self.json_path = Some(json_path.into());
        self
    }

    /// Adds line and column.
    pub fn located(mut self, line: u32, column: u32) -> Diagnostic {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Adds a suggested fix.
    pub fn fix(mut self, fix: impl Into<String>) -> Diagnostic {
        self.fix = Some(fix.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    /// `path:line:col: warning: message (at hooks.Stop[0]) — fix: …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, ": {sev}: {}", self.message)?;
        if let Some(p) = &self.json_path {
            write!(f, " (at {p})")?;
        }
        if let Some(fix) = &self.fix {
            write!(f, "\n  fix: {fix}")?;
        }
        Ok(())
    }
}
