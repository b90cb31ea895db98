//! Loading hook files (SPEC §1): plugin discovery, dialect detection, parsing of every rule
//! shape, and validation with located diagnostics.
//!
//! - [`load_paths`] takes what a user names — plugin folders, manifests, `hooks.json` /
//!   `settings.json` / `.hooks.json` files, folders holding those — and returns one
//!   [`LoadReport`]: plugins, rules in load order, diagnostics, files in other agents' formats.
//! - [`load_plugin`] loads one plugin folder; [`parse_hooks_str`] / [`parse_hooks_bytes`] parse
//!   a document held in memory (tests, the conformance suite, fuzzing).
//! - [`hooks_schema`] is the JSON Schema of a hooks file, generated from the same tables
//!   ([`keys`], the event names, the matcher's keys, the limits) the parser reads with.
//!
//! Loading is pure: no async runtime, no processes. Files are read with a size bound by the
//! reader of [`crate::files::read`], and a plugin's files are opened beneath its folder through
//! `cap_std::fs::Dir`, so a manifest cannot make hookbox read outside the plugin; a file the
//! loader refuses (a symlink out of the plugin, a FIFO) is reported, never skipped quietly. Nothing panics on bad input and no rule is dropped
//! silently: each skipped one is a [`Diagnostic`] with file, JSON
//! path and line:column.

mod command;
mod discover;
mod document;
mod duplicates;
mod foreign;
mod handler;
mod http;
pub mod keys;
mod manifest;
mod plugin;
mod read;
mod regex_cap;
mod schema;
pub(crate) mod span;
mod timeout;
mod wasm;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use foreign::{ForeignFile, ForeignFormat};
pub(crate) use handler::parse_if;
pub use regex_cap::{
    MAX_BACKTRACKING_PATTERNS_PER_FILE, MAX_REGEX_BYTES_PER_FILE, MAX_REGEX_PATTERNS_PER_FILE,
    RegexLimits,
};
pub use schema::{SCHEMA_DRAFT, hooks_schema};
pub use wasm::WASM_KEYS;

use crate::diagnostic::{Diagnostic, Severity};
use crate::dialect::Dialect;
use crate::rule::{PluginInfo, Rule};

/// The default [`LoadOptions::max_file_bytes`]: 8 MiB. Real hook files are a few KiB (the
/// largest in the corpus is 18 KiB); the bound keeps a hostile file from costing memory.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// How to load.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Forces the dialect of every file and plugin (the CLI's `--dialect`), over the layout's
    /// and the manifest's `extensions["dev.hookbox"].dialect`. `None`: decided per plugin.
    pub dialect: Option<Dialect>,
    /// Files larger than this are refused without being read (default
    /// [`DEFAULT_MAX_FILE_BYTES`]); the read itself is bounded too.
    pub max_file_bytes: u64,
    /// Caps on each file's regex matchers (default [`RegexLimits::default`]).
    pub regex_limits: RegexLimits,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            dialect: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            regex_limits: RegexLimits::default(),
        }
    }
}

impl LoadOptions {
    /// Forces a dialect.
    pub fn with_dialect(mut self, dialect: Option<Dialect>) -> Self {
        self.dialect = dialect;
        self
    }

    /// Sets the file size bound.
    pub fn with_max_file_bytes(mut self, max: u64) -> Self {
        self.max_file_bytes = max;
        self
    }

    /// Sets the caps on each file's regex matchers.
    pub fn with_regex_limits(mut self, limits: RegexLimits) -> Self {
        self.regex_limits = limits;
        self
    }
}

/// What became of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FileStatus {
    /// Parsed; its valid rules are loaded (some may have been skipped, see `skipped`).
    Loaded,
    /// `disableAllHooks: true`: nothing loaded.
    Disabled,
    /// Could not be read or parsed at all.
    Failed,
    /// Parsed, but its plugin's registration failed (ghast dialect): nothing loaded.
    Rejected,
    /// Another agent's format: not loaded.
    Foreign {
        /// Which.
        format: ForeignFormat,
    },
}

/// One file hookbox looked at, for per-file summaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSummary {
    /// The file (a manifest, for hooks written inline in it).
    pub path: PathBuf,
    /// Its plugin, an index into [`LoadReport::plugins`].
    pub plugin: Option<usize>,
    /// The dialect it was read in (`None` for a foreign file).
    pub dialect: Option<Dialect>,
    /// What became of it.
    #[serde(flatten)]
    pub status: FileStatus,
    /// Rules loaded from it.
    pub rules: usize,
    /// Handlers skipped in it (each with a diagnostic).
    pub skipped: usize,
}

/// Everything one load produced.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Plugins (and bare files, one "plugin" each), in load order.
    pub plugins: Vec<PluginInfo>,
    /// Rules in load order: `rules[i].index == i`, `rules[i].plugin` indexes `plugins`.
    pub rules: Vec<Rule>,
    /// Every problem found, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// Files in another agent's format (also reported as a warning each).
    pub foreign: Vec<ForeignFile>,
    /// Every file looked at, with what became of it.
    pub files: Vec<FileSummary>,
}

impl LoadReport {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// Diagnostics of one severity.
    pub fn with_severity(&self, severity: Severity) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(move |d| d.severity == severity)
    }
}

/// Loads plugin folders, manifests, hooks files, settings files and folders holding them, in
/// the order given, into one rule set. A folder that is no plugin is searched for bare files
/// (`hooks.json`, `.hooks.json`, `settings.json`, `.claude/settings.json`, …) and for plugins
/// up to two levels below it (`examples/plugins/<name>/`).
pub fn load_paths<P: AsRef<Path>>(paths: &[P], opts: &LoadOptions) -> LoadReport {
    let mut loader = discover::Loader::new(opts);
    for p in paths {
        loader.load_path(p.as_ref());
    }
    loader.finish()
}

/// Loads one plugin folder. A folder that is not a plugin yields an error diagnostic.
pub fn load_plugin(root: &Path, opts: &LoadOptions) -> LoadReport {
    let mut loader = discover::Loader::new(opts);
    if !loader.load_plugin(root, None) {
        let mut report = loader.finish();
        report.diagnostics.push(
            Diagnostic::error(
                root,
                "not a plugin folder: no manifest and no hooks/hooks.json",
            )
            .fix("add .claude-plugin/plugin.json or hooks/hooks.json"),
        );
        return report;
    }
    loader.finish()
}

/// Parses a hooks document held in memory, as if it were the bare file `file` (whose name
/// decides settings-file handling and foreign-format hints; nothing is read from disk). The
/// report has one plugin, named after the file, unless the text is another agent's format.
pub fn parse_hooks_str(text: &str, file: &Path, dialect: Dialect) -> LoadReport {
    let mut report = LoadReport::default();
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut ctx = document::Ctx::new(text, file, dialect, &name, 0);
    let outcome = document::parse_text(&mut ctx, text, document::DocKind::of(file), file);
    report.diagnostics.append(&mut ctx.diagnostics);
    if let document::Outcome::Foreign(format) = outcome {
        report.foreign.push(ForeignFile {
            path: file.to_path_buf(),
            format,
        });
        report.files.push(FileSummary {
            path: file.to_path_buf(),
            plugin: None,
            dialect: None,
            status: FileStatus::Foreign { format },
            rules: 0,
            skipped: 0,
        });
        return report;
    }
    report.plugins.push(PluginInfo {
        name: name.clone(),
        root: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        dialect,
        files: vec![PathBuf::from(&name)],
        parsed: vec![crate::rule::ParsedFile::of(
            PathBuf::from(&name),
            text.as_bytes(),
        )],
    });
    let mut status = discover::status_of(outcome);
    let rejected = dialect.invalid_rule_fails_plugin() && ctx.invalid > 0;
    if rejected {
        report.diagnostics.push(Diagnostic::error(
            file,
            format!(
                "plugin '{name}' not registered: its hook config is invalid and the ghast dialect fails the whole plugin on invalid config"
            ),
        ));
        if status == FileStatus::Loaded {
            status = FileStatus::Rejected;
        }
    } else {
        for (i, mut r) in ctx.rules.drain(..).enumerate() {
            r.index = i;
            report.rules.push(r);
        }
    }
    report.files.push(FileSummary {
        path: file.to_path_buf(),
        plugin: Some(0),
        dialect: Some(dialect),
        status,
        rules: report.rules.len(),
        skipped: ctx.skipped,
    });
    report
}

/// Like [`parse_hooks_str`], from bytes: invalid UTF-8 is an error located at its byte.
pub fn parse_hooks_bytes(bytes: &[u8], file: &Path, dialect: Dialect) -> LoadReport {
    match crate::files::read::decode_utf8(bytes.to_vec()) {
        Ok(text) => parse_hooks_str(&text, file, dialect),
        Err(e) => {
            let mut d = Diagnostic::error(file, e.to_string());
            if let Some((l, c)) = e.location() {
                d = d.located(l, c);
            }
            LoadReport {
                diagnostics: vec![d],
                ..LoadReport::default()
            }
        }
    }
}

#[cfg(test)]
mod tests;
