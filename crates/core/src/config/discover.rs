//! The loader: turns paths (plugin folders, manifests, hooks and settings files, folders of
//! those) into one rule set in load order. It decides each folder's layout, reads the manifest,
//! opens every plugin file beneath the plugin folder through cap-std, loads each file once
//! however many times it is named, and applies the ghast rule that invalid config fails the
//! whole plugin.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde_json::{Map, Value};

use super::document::{Ctx, DocKind, Outcome, parse_text};
use super::foreign::{ForeignFile, ForeignFormat};
use super::manifest::{self, DEFAULT_HOOKS, Layout};
use super::read::{Entry, display_path, entry_in_dir, parse_json, read_ambient, read_in_dir};
use super::{FileStatus, FileSummary, LoadOptions, LoadReport};
use crate::diagnostic::Diagnostic;
use crate::dialect::Dialect;
use crate::files::ReadErrorKind;
use crate::rule::{ParsedFile, PluginInfo, Rule};

/// Bare files looked for in a folder that is not a plugin (a project, a settings folder).
const BARE_CANDIDATES: &[&str] = &[
    "hooks.json",
    ".hooks.json",
    "settings.json",
    "settings.local.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".cursor/hooks.json",
    ".windsurf/hooks.json",
    ".gemini/settings.json",
];

/// How deep below a named folder plugins are searched for (`examples/plugins/<name>/`).
const PLUGIN_SEARCH_DEPTH: usize = 2;

pub(crate) struct Loader<'o> {
    pub(super) opts: &'o LoadOptions,
    pub(super) report: LoadReport,
    /// Canonical path of every hooks file loaded → how it was first shown.
    seen_files: HashMap<PathBuf, PathBuf>,
    pub(super) seen_roots: HashSet<PathBuf>,
}

/// What a plugin's manifest said, once read.
pub(super) struct ManifestDoc {
    pub(super) rel: PathBuf,
    pub(super) text: String,
    pub(super) map: Map<String, Value>,
}

impl<'o> Loader<'o> {
    pub(crate) fn new(opts: &'o LoadOptions) -> Self {
        Loader {
            opts,
            report: LoadReport::default(),
            seen_files: HashMap::new(),
            seen_roots: HashSet::new(),
        }
    }

    pub(crate) fn finish(self) -> LoadReport {
        self.report
    }

    /// Loads whatever `path` is.
    pub(crate) fn load_path(&mut self, path: &Path) {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => self.load_dir(path),
            Ok(_) => self.load_file(path),
            Err(e) => {
                let msg = if e.kind() == std::io::ErrorKind::NotFound {
                    "no such file or directory".to_owned()
                } else {
                    format!("cannot read: {e}")
                };
                self.report.diagnostics.push(Diagnostic::error(path, msg));
            }
        }
    }

    /// A folder: a plugin, or a folder holding hook files and plugins.
    fn load_dir(&mut self, path: &Path) {
        if self.load_plugin(path, None) {
            return;
        }
        let before = self.report.files.len() + self.report.plugins.len();
        self.load_collection(path, 0);
        if self.report.files.len() + self.report.plugins.len() == before {
            self.report.diagnostics.push(
                Diagnostic::error(path, "no plugin or hooks file found in this folder").fix(
                    "a plugin has .claude-plugin/plugin.json, plugin.json or hooks/hooks.json; a bare file is hooks.json, settings.json or .hooks.json",
                ),
            );
        }
    }

    fn load_collection(&mut self, path: &Path, depth: usize) {
        // A folder holding only a `.hooks.json` (or a project's `.claude/settings.json`) is
        // found at any searched depth, like a plugin.
        // A symlink that cannot be followed (dangling, looping, to a FIFO) is loaded too, so
        // that it is reported instead of skipped.
        for name in BARE_CANDIDATES {
            let p = path.join(name);
            if p.is_file() || p.is_symlink() {
                self.load_file(&p);
            }
        }
        let gh = path.join(".github").join("hooks");
        for p in sorted_entries(&gh) {
            if p.extension().is_some_and(|e| e == "json") && (p.is_file() || p.is_symlink()) {
                self.load_file(&p);
            }
        }
        if depth >= PLUGIN_SEARCH_DEPTH {
            return;
        }
        for sub in sorted_entries(path) {
            let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || matches!(name, "node_modules" | "target") || !sub.is_dir() {
                continue;
            }
            if !self.load_plugin(&sub, None) {
                self.load_collection(&sub, depth + 1);
            }
        }
    }

    /// A file named directly: a manifest loads its plugin; anything else is a bare hooks file.
    fn load_file(&mut self, path: &Path) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "plugin.json" {
            let parent = path.parent().unwrap_or(Path::new("."));
            let parent_name = parent.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let (root, layout) = match parent_name {
                ".claude-plugin" => (parent.parent(), Some(Layout::Claude)),
                ".codex-plugin" => (parent.parent(), Some(Layout::Codex)),
                ".cursor-plugin" => (parent.parent(), Some(Layout::CursorPlugin)),
                _ => (Some(parent), None),
            };
            let root = root.unwrap_or(Path::new("."));
            let root = if root.as_os_str().is_empty() {
                Path::new(".")
            } else {
                root
            };
            if layout == Some(Layout::CursorPlugin) {
                self.foreign(path, ForeignFormat::CursorPlugin, None);
            } else if !self.load_plugin(root, Some(layout.unwrap_or(Layout::Agentao))) {
                self.report.diagnostics.push(Diagnostic::error(
                    path,
                    "cannot load this manifest's plugin",
                ));
            }
            return;
        }
        self.load_bare(path);
    }

    pub(super) fn foreign(&mut self, path: &Path, format: ForeignFormat, plugin: Option<usize>) {
        if plugin.is_none() && format == ForeignFormat::CursorPlugin {
            self.report.diagnostics.push(Diagnostic::warning(path, format.message()).fix(
                "its hooks file is Cursor's too; write a Claude Code plugin (.claude-plugin/plugin.json + hooks/hooks.json) to use it with hookbox",
            ));
        }
        self.report.foreign.push(ForeignFile {
            path: path.to_path_buf(),
            format,
        });
        self.report.files.push(FileSummary {
            path: path.to_path_buf(),
            plugin,
            dialect: None,
            status: FileStatus::Foreign { format },
            rules: 0,
            skipped: 0,
        });
    }

    /// Whether the file was already loaded; warns if so.
    /// Records a file as loaded; if it already was, returns the duplicate warning's text
    /// instead (the caller decides where to point it).
    pub(super) fn first_load(
        &mut self,
        shown: &Path,
        canonical: Option<PathBuf>,
    ) -> Result<(), String> {
        let Some(c) = canonical else { return Ok(()) };
        if let Some(first) = self.seen_files.get(&c) {
            return Err(format!(
                "Duplicate hooks file detected: {} resolves to already-loaded file {} — loaded once",
                shown.display(),
                first.display()
            ));
        }
        self.seen_files.insert(c, shown.to_path_buf());
        Ok(())
    }

    fn load_bare(&mut self, path: &Path) {
        // Only to recognise a file named twice; one that does not resolve fails to read next.
        let canonical = crate::files::path::canonical(path).ok();
        if let Err(msg) = self.first_load(path, canonical) {
            self.report
                .diagnostics
                .push(Diagnostic::warning(path, msg).fix("name each hooks file once"));
            return;
        }
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let dialect = self.opts.dialect.unwrap_or(if name == ".hooks.json" {
            Dialect::Simple
        } else {
            Dialect::Claude
        });
        let text = match read_ambient(path, self.opts.max_file_bytes) {
            Ok(t) => t,
            Err(e) => {
                let link = std::fs::read_link(path).ok();
                self.read_failure(path, &e, link.as_deref(), dialect, None);
                return;
            }
        };
        let plugin = self.report.plugins.len();
        let mut ctx =
            Ctx::new(&text, path, dialect, &name, plugin).with_regex_limits(self.opts.regex_limits);
        let outcome = parse_text(&mut ctx, &text, DocKind::of(path), path);
        if let Outcome::Foreign(format) = outcome {
            self.report.diagnostics.append(&mut ctx.diagnostics);
            self.foreign(path, format, None);
            return;
        }
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.report.plugins.push(PluginInfo {
            name: name.clone(),
            root,
            dialect,
            files: vec![PathBuf::from(&name)],
            parsed: vec![ParsedFile::of(PathBuf::from(&name), text.as_bytes())],
        });
        let (rules, diagnostics, skipped, invalid) =
            (ctx.rules, ctx.diagnostics, ctx.skipped, ctx.invalid);
        self.report.diagnostics.extend(diagnostics);
        let summary = FileSummary {
            path: path.to_path_buf(),
            plugin: Some(plugin),
            dialect: Some(dialect),
            status: status_of(outcome),
            rules: rules.len(),
            skipped,
        };
        self.report.files.push(summary);
        self.commit(plugin, rules, invalid);
    }

    /// A file that could not be read: an error naming it, and a failed file in the summary.
    /// `link` is the target of the symlink the file is, when it is one (a plugin's files may
    /// be links that stay inside the plugin; one that leads out, dangles or loops is refused,
    /// and said so — never a plugin that silently loads nothing).
    pub(super) fn read_failure(
        &mut self,
        file: &Path,
        e: &ReadErrorKind,
        link: Option<&Path>,
        dialect: Dialect,
        plugin: Option<usize>,
    ) {
        let mut d = match link {
            Some(target) => Diagnostic::error(file, refused_link_message(target, e)).fix(
                "replace the link with a copy of the file it points to, or point it at a file inside the plugin folder",
            ),
            None if matches!(e, ReadErrorKind::Escapes) => Diagnostic::error(
                file,
                "path leaves the plugin folder (through `..`, an absolute path or a symlink)",
            ),
            None => Diagnostic::error(file, e.to_string()),
        };
        if let Some((l, c)) = e.location() {
            d = d.located(l, c);
        }
        if let ReadErrorKind::TooLarge { .. } = e {
            d = d.fix("hook files are small; raise LoadOptions::max_file_bytes only if this one really is that large");
        }
        self.report.diagnostics.push(d);
        self.report.files.push(FileSummary {
            path: file.to_path_buf(),
            plugin,
            dialect: Some(dialect),
            status: FileStatus::Failed,
            rules: 0,
            skipped: 0,
        });
    }

    /// Appends a plugin's rules in load order, or drops them all when the plugin's dialect
    /// fails registration on invalid config (ghast).
    pub(super) fn commit(&mut self, plugin: usize, rules: Vec<Rule>, invalid: usize) {
        let Some(info) = self.report.plugins.get(plugin) else {
            return;
        };
        if info.dialect.invalid_rule_fails_plugin() && invalid > 0 {
            let name = info.name.clone();
            let root = info.root.clone();
            let dropped = rules.len();
            self.report.diagnostics.push(Diagnostic::error(
                if root.as_os_str().is_empty() { PathBuf::from(&name) } else { root },
                format!(
                    "plugin '{name}' not registered: its hook config has {invalid} problem{} and the ghast dialect fails the whole plugin on invalid config ({dropped} rule{} not loaded)",
                    plural(invalid),
                    plural(dropped),
                ),
            ));
            for f in self
                .report
                .files
                .iter_mut()
                .filter(|f| f.plugin == Some(plugin))
            {
                if f.status == FileStatus::Loaded {
                    f.status = FileStatus::Rejected;
                    f.rules = 0;
                }
            }
            return;
        }
        for mut r in rules {
            r.index = self.report.rules.len();
            self.report.rules.push(r);
        }
    }

    /// Which layout a folder has, and its manifest if it has one.
    pub(super) fn probe(
        &mut self,
        root: &Path,
        dir: &Dir,
        hint: Option<Layout>,
    ) -> Option<(Layout, Option<ManifestDoc>)> {
        let read = |this: &mut Self, rel: &str| -> Option<Result<ManifestDoc, ()>> {
            let rel = PathBuf::from(rel);
            let link = match entry_in_dir(dir, &rel) {
                Entry::Absent => return None,
                Entry::File => None,
                Entry::Refused { link_target } => link_target,
            };
            let shown = display_path(root, &rel);
            let text = match read_in_dir(dir, &rel, this.opts.max_file_bytes) {
                Ok(t) => t,
                Err(e) => {
                    this.read_failure(&shown, &e, link.as_deref(), Dialect::Claude, None);
                    return Some(Err(()));
                }
            };
            match parse_json(&text) {
                Ok(Value::Object(map)) => Some(Ok(ManifestDoc { rel, text, map })),
                Ok(other) => {
                    this.report.diagnostics.push(
                        Diagnostic::error(
                            &shown,
                            format!(
                                "a plugin manifest must be a JSON object, found {}",
                                super::document::describe(&other)
                            ),
                        )
                        .located(1, 1),
                    );
                    Some(Err(()))
                }
                Err(e) => {
                    this.report.diagnostics.push(
                        Diagnostic::error(
                            &shown,
                            format!("invalid JSON in plugin manifest: {}", e.message),
                        )
                        .located(e.line, e.column),
                    );
                    Some(Err(()))
                }
            }
        };
        let manifest_of =
            |this: &mut Self, layout: Layout| -> Option<(Layout, Option<ManifestDoc>)> {
                match read(this, layout.manifest()) {
                    Some(Ok(doc)) => Some((layout, Some(doc))),
                    // A broken manifest is reported; the plugin is still "found", with no hooks.
                    Some(Err(())) => Some((layout, None)),
                    None => None,
                }
            };
        match hint {
            Some(Layout::Agentao | Layout::Ghast) => {
                let (layout, doc) = manifest_of(self, Layout::Agentao)?;
                let layout = match &doc {
                    Some(d) if manifest::is_ghast(&d.map) => Layout::Ghast,
                    _ => layout,
                };
                return Some((layout, doc));
            }
            Some(layout) => return manifest_of(self, layout),
            None => {}
        }
        // A file that is there but refused (a symlink out of the folder, a FIFO) still makes
        // the folder a plugin, so that the refusal is reported instead of the folder skipped.
        let present = |rel: &str| entry_in_dir(dir, Path::new(rel)) != Entry::Absent;
        if present("plugin.json") {
            let doc = match read(self, "plugin.json") {
                Some(Ok(doc)) => doc,
                _ => return Some((Layout::Agentao, None)),
            };
            if manifest::is_ghast(&doc.map) {
                return Some((Layout::Ghast, Some(doc)));
            }
            if !present(Layout::Claude.manifest()) && !present(Layout::Codex.manifest()) {
                return Some((Layout::Agentao, Some(doc)));
            }
        }
        for layout in [Layout::Claude, Layout::Codex] {
            if present(layout.manifest()) {
                return manifest_of(self, layout);
            }
        }
        if present(DEFAULT_HOOKS) {
            return Some((Layout::Claude, None));
        }
        if present(Layout::CursorPlugin.manifest()) {
            return Some((Layout::CursorPlugin, None));
        }
        None
    }
}

/// What a symlink that could not be read is, for its diagnostic.
pub(super) fn refused_link_message(target: &Path, e: &ReadErrorKind) -> String {
    let target = serde_json::Value::String(target.display().to_string());
    match e {
        ReadErrorKind::Escapes => format!(
            "this file is a symbolic link to {target}, which leads out of the plugin folder: hookbox does not follow it, so no rules are loaded from it"
        ),
        other => format!(
            "this file is a symbolic link to {target}, {}: no rules are loaded from it",
            link_problem(other)
        ),
    }
}

/// Why a symlink's target could not be read.
pub(super) fn link_problem(e: &ReadErrorKind) -> String {
    match e {
        ReadErrorKind::Escapes => "which leads out of the plugin folder".to_owned(),
        ReadErrorKind::NotFound => "which does not exist".to_owned(),
        other => format!("which cannot be read ({other})"),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub(super) fn status_of(outcome: Outcome) -> FileStatus {
    match outcome {
        Outcome::Loaded => FileStatus::Loaded,
        Outcome::Disabled => FileStatus::Disabled,
        Outcome::Failed => FileStatus::Failed,
        Outcome::Foreign(format) => FileStatus::Foreign { format },
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}
