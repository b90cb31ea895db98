//! Loading one plugin folder: its name and dialect, the default `hooks/hooks.json` and the
//! files (or inline objects) its manifest names, each opened beneath the folder through cap-std
//! and loaded once. A file named twice is a warning, as in Claude Code; a missing or escaping one
//! is reported at the manifest field that names it.

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use super::FileSummary;
use super::discover::{Loader, ManifestDoc, status_of};
use super::document::{Ctx, DocKind, Outcome, parse_document, parse_text};
use super::manifest::{self, DEFAULT_HOOKS, HookSource, Layout};
use super::read::{Entry, display_path, entry_in_dir, read_in_dir};
use super::span::JsonPath;
use crate::diagnostic::Severity;
use crate::dialect::Dialect;
use crate::files::ReadErrorKind;
use crate::rule::{PluginInfo, Rule};

/// One plugin being loaded.
struct PluginLoad<'a> {
    dir: &'a Dir,
    root: &'a Path,
    plugin: usize,
    name: &'a str,
    dialect: Dialect,
    /// A `.codex-plugin` plugin: its files are Codex's (Codex's timeout caps apply).
    codex: bool,
    rules: Vec<Rule>,
    invalid: usize,
}

/// Who named a file: the manifest (its context, the field, the path as written).
struct NamedBy<'m, 'c> {
    mctx: &'m mut Ctx<'c>,
    field: &'m JsonPath,
    raw: &'m str,
}

impl Loader<'_> {
    /// Loads a plugin folder; `false` when it is not one (nothing is reported then).
    pub(crate) fn load_plugin(&mut self, root: &Path, hint: Option<Layout>) -> bool {
        let Ok(dir) = Dir::open_ambient_dir(root, cap_std::ambient_authority()) else {
            return false;
        };
        // The folder opened, so it resolves; if it no longer does (removed meanwhile), say so.
        let canonical_root = match crate::files::path::canonical(root) {
            Ok(c) => c,
            Err(e) => {
                self.report
                    .diagnostics
                    .push(crate::diagnostic::Diagnostic::error(root, e.to_string()));
                return true;
            }
        };
        if self.seen_roots.contains(&canonical_root) {
            self.report.diagnostics.push(
                crate::diagnostic::Diagnostic::warning(
                    root,
                    "plugin folder named twice — loaded once",
                )
                .fix("name each plugin once"),
            );
            return true;
        }
        let diags_before = self.report.diagnostics.len();
        let Some((layout, doc)) = self.probe(root, &dir, hint) else {
            return false;
        };
        self.seen_roots.insert(canonical_root.clone());
        if layout == Layout::CursorPlugin {
            let shown = display_path(root, Path::new(layout.manifest()));
            self.foreign(&shown, super::ForeignFormat::CursorPlugin, None);
            return true;
        }
        let manifest_failed = self.report.diagnostics[diags_before..]
            .iter()
            .any(|d| d.severity == Severity::Error);
        let folder_name = canonical_root
            .file_name()
            .or_else(|| root.file_name())
            .map_or_else(
                || root.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
        let name = doc
            .as_ref()
            .and_then(|d| manifest::name(&d.map))
            .unwrap_or(folder_name);
        let (override_dialect, dialect_problem) =
            match doc.as_ref().map(|d| manifest::dialect_override(&d.map)) {
                Some(Ok(d)) => (d, None),
                Some(Err(problem)) => (None, Some(problem)),
                None => (None, None),
            };
        let dialect = self
            .opts
            .dialect
            .or(override_dialect)
            .unwrap_or(layout.dialect());
        let plugin = self.report.plugins.len();
        self.report.plugins.push(PluginInfo {
            name: name.clone(),
            root: root.to_path_buf(),
            dialect,
            files: Vec::new(),
            parsed: Vec::new(),
        });
        let mut plan = PluginLoad {
            dir: &dir,
            root,
            plugin,
            name: &name,
            dialect,
            codex: layout == Layout::Codex,
            rules: Vec::new(),
            invalid: 0,
        };
        if manifest_failed {
            // An unreadable manifest fails the plugin, as in Claude Code: nothing is loaded.
            plan.invalid += 1;
            self.report
                .diagnostics
                .push(crate::diagnostic::Diagnostic::error(
                    root,
                    format!("plugin '{name}' not loaded: its manifest could not be read"),
                ));
        } else {
            self.load_plugin_files(&mut plan, layout, doc.as_ref(), dialect_problem);
        }
        let PluginLoad { rules, invalid, .. } = plan;
        self.commit(plugin, rules, invalid);
        true
    }

    fn load_plugin_files(
        &mut self,
        plan: &mut PluginLoad<'_>,
        layout: Layout,
        doc: Option<&ManifestDoc>,
        dialect_problem: Option<(JsonPath, String)>,
    ) {
        let default = PathBuf::from(DEFAULT_HOOKS);
        // Present but refused (a symlink out of the plugin, a FIFO) counts: loading it reports
        // why, where skipping it would load the plugin with no rules and no word.
        let default_exists = entry_in_dir(plan.dir, &default) != Entry::Absent;
        let Some(doc) = doc else {
            if default_exists {
                self.load_plugin_file(plan, &default, None);
            }
            return;
        };
        let shown = display_path(plan.root, &doc.rel);
        let mut mctx = Ctx::new(&doc.text, &shown, plan.dialect, plan.name, plan.plugin)
            .with_regex_limits(self.opts.regex_limits)
            .with_codex(plan.codex);
        mctx.warn_duplicates(&doc.text);
        if let Some((path, msg)) = dialect_problem {
            mctx.warn(
                &path,
                msg,
                Some("use one of claude, agentao, ghast, simple".to_owned()),
            );
        }
        let sources = manifest::hook_sources(&mut mctx, &doc.map, layout);
        let names_hooks =
            layout == Layout::Ghast || doc.map.get("hooks").is_some_and(|v| !v.is_null());
        let load_default = layout.default_always() || (!names_hooks && layout != Layout::Ghast);
        self.report.diagnostics.append(&mut mctx.diagnostics);
        let mut loaded: Vec<PathBuf> = Vec::new();
        if load_default && default_exists {
            self.load_plugin_file(plan, &default, None);
            loaded.push(default.clone());
        }
        for source in sources {
            match source {
                HookSource::File { rel, raw, field } => {
                    if loaded.contains(&rel) {
                        let fix = if rel == default && layout.default_always() {
                            "The standard hooks/hooks.json is loaded automatically, so manifest.hooks should only reference additional hook files"
                        } else {
                            "name each hooks file once"
                        };
                        mctx.warn(
                            &field,
                            format!(
                                "Duplicate hooks file detected: {raw} resolves to already-loaded file {} — loaded once",
                                rel.display()
                            ),
                            Some(fix.to_owned()),
                        );
                    } else {
                        loaded.push(rel.clone());
                        let by = NamedBy {
                            mctx: &mut mctx,
                            field: &field,
                            raw: &raw,
                        };
                        self.load_plugin_file(plan, &rel, Some(by));
                    }
                }
                HookSource::Inline { value, field } => {
                    let skipped_before = mctx.skipped;
                    let outcome = parse_document(&mut mctx, &value, &field, DocKind::Hooks);
                    let rules = std::mem::take(&mut mctx.rules);
                    self.report.files.push(FileSummary {
                        path: shown.clone(),
                        plugin: Some(plan.plugin),
                        dialect: Some(plan.dialect),
                        status: status_of(outcome),
                        rules: rules.len(),
                        skipped: mctx.skipped - skipped_before,
                    });
                    if let Some(p) = self.report.plugins.get_mut(plan.plugin) {
                        p.add_parsed(doc.rel.clone(), &doc.text);
                    }
                    plan.rules.extend(rules);
                }
            }
            self.report.diagnostics.append(&mut mctx.diagnostics);
        }
        plan.invalid += mctx.invalid;
    }

    /// Reports a plugin file that could not be read: at the manifest field that named it, or
    /// as a file of its own; a symlink that leads out of the plugin, dangles or loops is named
    /// as such.
    fn refused_plugin_file(
        &mut self,
        plan: &mut PluginLoad<'_>,
        rel: &Path,
        shown: &Path,
        e: &ReadErrorKind,
        named_by: Option<NamedBy<'_, '_>>,
    ) {
        let link = match entry_in_dir(plan.dir, rel) {
            Entry::Refused { link_target } => link_target,
            Entry::Absent | Entry::File => None,
        };
        let Some(by) = named_by else {
            plan.invalid += 1;
            self.read_failure(shown, e, link.as_deref(), plan.dialect, Some(plan.plugin));
            return;
        };
        let raw = serde_json::Value::String(by.raw.to_owned());
        let (message, fix) = match (e, link) {
            (ReadErrorKind::Escapes, _) => (
                format!(
                    "path leaves the plugin folder: manifest field '{}' names {raw} (through a symlink) — not loaded",
                    by.field
                ),
                Some(
                    "name a file inside the plugin, relative to its root (e.g. \"./hooks/hooks.json\")",
                ),
            ),
            (ReadErrorKind::NotFound, None) => (
                format!(
                    "hooks file {raw} named by manifest field '{}' does not exist — not loaded",
                    by.field
                ),
                None,
            ),
            // A dangling or looping link: say it is one, not that nothing is there.
            (e, Some(target)) => (
                format!(
                    "hooks file {raw} named by manifest field '{}' is a symbolic link to {}, {} — not loaded",
                    by.field,
                    serde_json::Value::String(target.display().to_string()),
                    super::discover::link_problem(e)
                ),
                Some(
                    "replace the link with a copy of the file it points to, or point it at a file inside the plugin folder",
                ),
            ),
            (e, None) => {
                plan.invalid += 1;
                self.read_failure(shown, e, None, plan.dialect, Some(plan.plugin));
                return;
            }
        };
        by.mctx.invalid(by.field, message, fix.map(str::to_owned));
    }

    /// Reads and parses one file beneath the plugin folder.
    fn load_plugin_file(
        &mut self,
        plan: &mut PluginLoad<'_>,
        rel: &Path,
        named_by: Option<NamedBy<'_, '_>>,
    ) {
        let shown = display_path(plan.root, rel);
        let text = match read_in_dir(plan.dir, rel, self.opts.max_file_bytes) {
            Ok(t) => (t, named_by),
            Err(e) => {
                self.refused_plugin_file(plan, rel, &shown, &e, named_by);
                return;
            }
        };
        let (text, named_by) = text;
        // Only to recognise a file named twice: a file just read resolves.
        let canonical = crate::files::path::canonical(&plan.root.join(rel)).ok();
        if let Err(msg) = self.first_load(&shown, canonical) {
            let fix = Some("name each hooks file once".to_owned());
            match named_by {
                Some(by) => {
                    by.mctx.warn(by.field, msg, fix);
                    self.report.diagnostics.append(&mut by.mctx.diagnostics);
                }
                None => self.report.diagnostics.push(crate::diagnostic::Diagnostic {
                    fix,
                    ..crate::diagnostic::Diagnostic::warning(&shown, msg)
                }),
            }
            return;
        }
        let mut ctx = Ctx::new(&text, &shown, plan.dialect, plan.name, plan.plugin)
            .with_regex_limits(self.opts.regex_limits)
            .with_codex(plan.codex);
        let outcome = parse_text(&mut ctx, &text, DocKind::of(rel), &shown);
        self.report.diagnostics.append(&mut ctx.diagnostics);
        plan.invalid += ctx.invalid;
        if let Outcome::Foreign(format) = outcome {
            // Not a hookbox file: for the ghast dialect that is invalid config.
            plan.invalid += 1;
            self.foreign(&shown, format, Some(plan.plugin));
            return;
        }
        if let Some(p) = self.report.plugins.get_mut(plan.plugin) {
            p.add_parsed(rel.to_path_buf(), &text);
        }
        let summary = FileSummary {
            path: shown.clone(),
            plugin: Some(plan.plugin),
            dialect: Some(plan.dialect),
            status: status_of(outcome),
            rules: ctx.rules.len(),
            skipped: ctx.skipped,
        };
        plan.rules.append(&mut ctx.rules);
        self.report.files.push(summary);
    }
}
