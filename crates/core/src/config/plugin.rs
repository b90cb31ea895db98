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
use super::read::{ReadError, display_path, is_file_in_dir, read_in_dir};
use super::span::JsonPath;
use crate::diagnostic::Severity;
use crate::dialect::Dialect;
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
        let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
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
        let default_exists = is_file_in_dir(plan.dir, &default);
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
                    if let Some(p) = self.report.plugins.get_mut(plan.plugin)
                        && !p.files.contains(&doc.rel)
                    {
                        p.files.push(doc.rel.clone());
                    }
                    plan.rules.extend(rules);
                }
            }
            self.report.diagnostics.append(&mut mctx.diagnostics);
        }
        plan.invalid += mctx.invalid;
    }

    /// Reads and parses one file beneath the plugin folder.
    fn load_plugin_file(
        &mut self,
        plan: &mut PluginLoad<'_>,
        rel: &Path,
        named_by: Option<NamedBy<'_, '_>>,
    ) {
        let shown = display_path(plan.root, rel);
        let text = match (
            read_in_dir(plan.dir, rel, self.opts.max_file_bytes),
            named_by,
        ) {
            (Ok(t), by) => (t, by),
            (Err(ReadError::NotFound), Some(by)) => {
                by.mctx.invalid(
                    by.field,
                    format!(
                        "hooks file {} named by manifest field '{}' does not exist — not loaded",
                        serde_json::Value::String(by.raw.to_owned()),
                        by.field
                    ),
                    None,
                );
                return;
            }
            (Err(ReadError::Escapes), Some(by)) => {
                by.mctx.invalid(
                    by.field,
                    format!(
                        "path leaves the plugin folder: manifest field '{}' names {} (through a symlink) — not loaded",
                        by.field,
                        serde_json::Value::String(by.raw.to_owned())
                    ),
                    Some("name a file inside the plugin, relative to its root (e.g. \"./hooks/hooks.json\")".to_owned()),
                );
                return;
            }
            (Err(e), _) => {
                plan.invalid += 1;
                self.read_failure(&shown, &e, plan.dialect, Some(plan.plugin));
                return;
            }
        };
        let (text, named_by) = text;
        let canonical = std::fs::canonicalize(plan.root.join(rel)).ok();
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
            p.files.push(rel.to_path_buf());
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
