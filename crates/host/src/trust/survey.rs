//! At load, once per rule set: each rule's record (its content and grants, the digests of the
//! files it runs, what it runs unpinned), its verdict against its subject's approval, and — for
//! a command — the bytes of each file it runs, kept so that what runs later is what was hashed.
//! A wasm rule's component digest is the one of the bytes that were compiled (the host read
//! them once, in `prepare`), never a second read of the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::event::EventName;
use hookbox_core::matcher::{JsRegex, Matcher};
use hookbox_core::rule::{Handler, PluginInfo, Rule};
use hookbox_trust::{
    Approval, ApprovalIndex, Base, Digest, EntryKind, FileRecord, FileRole, FileState,
    ProgramRecord, RuleLocation, RuleRecord, RuleTrust, Site, SnapshotEntry, Unpinned, UnpinnedWhy,
    check_rule, resolve_command, rule_content,
};
use hookbox_wasm::{MountDir, PreparedHook};

use super::pin::{PinError, PinnedFile, read_beneath};
use super::program::{load_cache, program_record, save_cache};
use super::snapshot::{Snapshot, SnapshotBind};
use super::store::ApprovalStore;
use super::{HostTrust, TrustMode};

/// A pinned file of a command rule and where its name sits in the command.
#[derive(Debug)]
pub(crate) struct Pin {
    pub(crate) site: Site,
    pub(crate) file: Arc<PinnedFile>,
    /// The path as written in messages.
    pub(crate) shown: String,
    /// The folder it is beneath, and its path there.
    pub(crate) base: Base,
    pub(crate) path: String,
}

/// One rule's standing.
#[derive(Debug)]
pub(crate) struct RuleCheck {
    pub(crate) record: RuleRecord,
    pub(crate) trust: RuleTrust,
    /// The files a command runs, read at load.
    pub(crate) pins: Vec<Pin>,
    /// The first file the rule runs that could not be read, and why.
    pub(crate) unpinnable: Option<String>,
    /// Under `require`: a changed command rule whose every difference from its approval is a
    /// file inside its approval's snapshot — the rule as it stands, run over the snapshot's
    /// files, *is* the approved rule, so it runs from the snapshot instead of being refused
    /// (`crate::trust_gate`). The live folder is only compared.
    pub(crate) snapshot_approves: bool,
}

/// `files` with each one beneath a root of `snap` as the snapshot holds it (its digest and
/// size there); `None` when the snapshot does not hold one of them as a file.
fn files_in_snapshot(files: &[FileRecord], snap: &Snapshot) -> Option<Vec<FileRecord>> {
    files
        .iter()
        .map(|f| {
            if snap.manifest.root_of(f.base, &f.path).is_none() {
                return Some(f.clone());
            }
            match snap.manifest.find(f.base, &f.path) {
                Some((
                    _,
                    SnapshotEntry {
                        kind: EntryKind::File { sha256, size, .. },
                        ..
                    },
                )) => Some(FileRecord {
                    state: FileState::Pinned {
                        sha256: *sha256,
                        size: *size,
                    },
                    ..f.clone()
                }),
                _ => None,
            }
        })
        .collect()
}

/// A plugin (or bare file) as an approval subject.
#[derive(Debug, Clone)]
pub(crate) struct Subject {
    /// Its name in the store: the canonical path of the plugin folder or bare file.
    pub(crate) name: String,
    /// Whether it is a bare hooks/settings file.
    pub(crate) bare: bool,
    /// Its approval, as stored when the rules were loaded.
    pub(crate) approval: Option<Approval>,
    /// Why the stored approval could not be used.
    pub(crate) error: Option<String>,
    /// The snapshot its approval keeps (what its approved hooks run from under `require`), or
    /// why it cannot be used; `None` when the approval keeps none.
    pub(crate) snapshot: Option<Result<Snapshot, String>>,
    /// Its plugin folder, canonical (for a bare file: the folder holding it).
    pub(crate) folder: PathBuf,
}

/// An approved rule no live rule carries as approved (deleted, its matcher narrowed, its event
/// or command edited): it still answers for the events its *approved* event and matcher match
/// (`crate::trust_gate::missing_guards`), so a guard cannot be removed quietly.
#[derive(Debug)]
pub(crate) struct MissingRule {
    /// Its plugin's position.
    pub(crate) plugin: usize,
    /// The approved record.
    pub(crate) record: RuleRecord,
    /// The approved event and matcher, compiled from the record. A matcher the record holds
    /// but that does not compile any more is every occurrence (answer for too much, never
    /// for nothing).
    pub(crate) event: EventName,
    pub(crate) matcher: Matcher,
    /// The live rule now at its place, when it is that rule changed (`RuleTrust::Changed`):
    /// when it matches, its own refusal (or warning) answers and this one stays quiet.
    pub(crate) live: Option<usize>,
}

/// What a loaded rule set knows about trust.
#[derive(Debug, Default)]
pub(crate) struct LoadedTrust {
    /// The mode in force.
    pub(crate) mode: TrustMode,
    /// By rule position; empty when the mode is `off` (and the policy does not `record`).
    pub(crate) rules: Vec<Option<RuleCheck>>,
    /// By plugin position.
    pub(crate) subjects: Vec<Subject>,
    /// Approved rules out of force (when the mode is on).
    pub(crate) missing: Vec<MissingRule>,
    /// The project folder, canonical: where a settings file's snapshotted hook folders live.
    pub(crate) project: Option<PathBuf>,
}

impl LoadedTrust {
    /// The standing of the rule at `pos`, when trust is on.
    pub(crate) fn rule(&self, pos: usize) -> Option<&RuleCheck> {
        self.rules.get(pos).and_then(Option::as_ref)
    }

    /// What a run of a rule of plugin `plugin` from its approval's snapshot needs shown at the
    /// live paths: each root of the snapshot (the plugin folder; a settings file's project hook
    /// folders) as a (tree → live) pair, for a private mount namespace that binds the tree
    /// read-only over the live path. Empty when its approval keeps no usable snapshot.
    #[allow(
        dead_code,
        reason = "for the private mount namespace of `crate::trust_gate` (issue 27 item 2)"
    )]
    pub(crate) fn snapshot_binds(&self, plugin: usize) -> Vec<SnapshotBind> {
        let Some(subject) = self.subjects.get(plugin) else {
            return Vec::new();
        };
        let Some(Ok(snap)) = &subject.snapshot else {
            return Vec::new();
        };
        snap.binds(|base| match base {
            Base::Plugin if !subject.bare => Some(subject.folder.clone()),
            Base::Project => self.project.clone(),
            _ => None,
        })
    }
}

/// The subject a plugin is approved as: its canonical folder, or for a bare hooks or settings
/// file (one file named as the plugin, at its root) the canonical path of that file.
pub(crate) fn subject_of(p: &PluginInfo) -> (String, bool) {
    let root = canonical(&p.root);
    let bare =
        matches!(p.files.as_slice(), [f] if f == Path::new(&p.name) && f.components().count() == 1);
    if bare {
        (root.join(&p.name).display().to_string(), true)
    } else {
        (root.display().to_string(), false)
    }
}

pub(crate) fn canonical(p: &Path) -> PathBuf {
    let p = if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    };
    p.canonicalize()
        .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_owned()))
}

/// Where a rule sits, relative to its subject.
pub(crate) fn location_of(rule: &Rule, plugin: &PluginInfo, bare: bool) -> RuleLocation {
    let file = if bare {
        plugin.name.clone()
    } else {
        let f = &rule.source.file;
        let rel = f.strip_prefix(&plugin.root).unwrap_or(f);
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    };
    RuleLocation {
        file,
        json_path: rule.source.json_path.clone(),
    }
}

/// The folders files are read beneath, each opened once per load.
struct Roots<'a> {
    project: Option<&'a MountDir>,
    project_path: Option<PathBuf>,
    home: Option<Result<(MountDir, PathBuf), String>>,
    plugins: HashMap<usize, Result<(MountDir, PathBuf), String>>,
}

impl Roots<'_> {
    fn plugin(&mut self, i: usize, p: &PluginInfo) -> Result<MountDir, String> {
        self.plugins
            .entry(i)
            .or_insert_with(|| {
                let path = canonical(&p.root);
                MountDir::open(&path)
                    .map(|d| (d, path))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map(|(d, _)| d.clone())
            .map_err(Clone::clone)
    }

    fn home(&mut self) -> Result<MountDir, String> {
        self.home
            .get_or_insert_with(|| {
                let home = std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .ok_or_else(|| "HOME is not set".to_owned())?;
                let path = canonical(Path::new(&home));
                MountDir::open(&path)
                    .map(|d| (d, path))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map(|(d, _)| d.clone())
            .map_err(Clone::clone)
    }

    /// An absolute path as a path beneath the plugin, the project or the home folder.
    fn rebase(&mut self, i: usize, p: &PluginInfo, abs: &str) -> Option<(Base, String)> {
        let abs = Path::new("/").join(abs);
        let _ = self.plugin(i, p);
        let _ = self.home();
        let plugin = self
            .plugins
            .get(&i)
            .and_then(|r| r.as_ref().ok())
            .map(|(_, p)| p.clone());
        let home = self
            .home
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .map(|(_, p)| p.clone());
        let candidates = [
            (Base::Plugin, plugin),
            (Base::Project, self.project_path.clone()),
            (Base::Home, home),
        ];
        candidates.into_iter().find_map(|(base, root)| {
            let rel = abs.strip_prefix(root?).ok()?;
            let rel = rel.to_str()?;
            (!rel.is_empty()).then(|| (base, rel.to_owned()))
        })
    }
}

/// A file a rule names: the plugin it is relative to (if any), its base folder, its path.
type PinKey = (Option<usize>, Base, String);

/// Reads files once per load and keeps the total within the policy's budget.
struct Pins {
    cache: HashMap<PinKey, Result<Arc<PinnedFile>, PinError>>,
    bytes: u64,
    max_file: u64,
    max_total: u64,
}

impl Pins {
    fn get(
        &mut self,
        roots: &mut Roots<'_>,
        plugin: (usize, &PluginInfo),
        base: Base,
        path: &str,
    ) -> Result<Arc<PinnedFile>, PinError> {
        let key = (
            (base == Base::Plugin).then_some(plugin.0),
            base,
            path.to_owned(),
        );
        if let Some(r) = self.cache.get(&key) {
            return r.clone();
        }
        let root = match base {
            Base::Plugin => roots.plugin(plugin.0, plugin.1),
            Base::Project => roots
                .project
                .cloned()
                .ok_or_else(|| "the host has no project folder".to_owned()),
            Base::Home => roots.home(),
            Base::Root => Err("an absolute path outside the plugin, project and home".to_owned()),
        };
        let r = root.map_err(PinError::Io).and_then(|root| {
            let left = self.max_total.saturating_sub(self.bytes);
            let max = self.max_file.min(left.max(1));
            match read_beneath(&root, path, max) {
                Err(PinError::TooLarge { size, .. }) if size <= self.max_file => {
                    Err(PinError::Budget {
                        max: self.max_total,
                    })
                }
                other => other,
            }
        });
        let r = r.map(|f| {
            self.bytes += f.bytes.len() as u64;
            Arc::new(f)
        });
        self.cache.insert(key, r.clone());
        r
    }
}

/// The snapshot `id` of `store`, or why it cannot be used.
fn open_snapshot(store: Option<&ApprovalStore>, id: Digest) -> Result<Snapshot, String> {
    let store = store.ok_or_else(|| "there is no approval store".to_owned())?;
    match store.snapshots(false) {
        Ok(Some(s)) => s.open(id).map_err(|e| e.to_string()),
        Ok(None) => Err(format!(
            "snapshot {id} is missing: {} holds no snapshots",
            store.path().display()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// The component path of a wasm rule beneath its plugin, as `prepare` reads it.
fn component_path(written: &str) -> String {
    let rel = ["${CLAUDE_PLUGIN_ROOT}", "${PLUGIN_ROOT}"]
        .iter()
        .find_map(|p| written.strip_prefix(p))
        .unwrap_or(written);
    rel.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// Surveys `rules` of `plugins` (with their prepared wasm components) for `trust`.
pub(crate) fn survey(
    trust: &HostTrust,
    project: Option<&MountDir>,
    plugins: &[PluginInfo],
    rules: &[Rule],
    wasm: &HashMap<usize, PreparedHook>,
) -> (LoadedTrust, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    if !trust.mode.is_on() && !trust.policy.record {
        return (LoadedTrust::default(), diagnostics);
    }
    if let Some(e) = &trust.store_error {
        diagnostics.push(
            Diagnostic::warning(
                e.path.clone(),
                format!("{e}; every rule counts as not approved"),
            )
            .fix(e.fix()),
        );
    }
    let subjects: Vec<Subject> = plugins
        .iter()
        .map(|p| {
            let (name, bare) = subject_of(p);
            let (approval, error) = match trust.store.as_ref().map(|s| s.get(&name)) {
                None if trust.store_error.is_some() => {
                    (None, trust.store_error.as_ref().map(ToString::to_string))
                }
                None | Some(Ok(None)) => (None, None),
                Some(Ok(Some(a))) => (Some(a), None),
                Some(Err(e)) => {
                    diagnostics.push(
                        Diagnostic::warning(
                            PathBuf::from(&name),
                            format!("its approval cannot be used, so its rules count as not approved: {e}"),
                        )
                        .fix(format!("review and approve it again: hookbox trust add {name}")),
                    );
                    (None, Some(e.to_string()))
                }
            };
            let snapshot = approval
                .as_ref()
                .and_then(|a| a.snapshot)
                .map(|r| open_snapshot(trust.store.as_ref(), r.id));
            Subject {
                name,
                bare,
                approval,
                error,
                snapshot,
                folder: canonical(&p.root),
            }
        })
        .collect();
    let indexes: Vec<Option<ApprovalIndex>> = subjects
        .iter()
        .map(|s| s.approval.as_ref().map(ApprovalIndex::new))
        .collect();
    let mut roots = Roots {
        project,
        project_path: project.map(|d| canonical(d.path())),
        home: None,
        plugins: HashMap::new(),
    };
    let mut pins = Pins {
        cache: HashMap::new(),
        bytes: 0,
        max_file: trust.policy.max_pinned_file_bytes,
        max_total: trust.policy.max_pinned_bytes,
    };
    // Without a private mount namespace, a command naming the live plugin folder's own path
    // reaches the live files: unpinnable (`isolation.rs`). Probed only when trust is on.
    let no_views = trust.mode.is_on() && !super::Isolation::of(trust.policy.namespace).has_views();
    // The PATH hooks run with (hookbox's own): where a program a command names is found.
    let path_var = std::env::var_os("PATH");
    if trust.mode.is_on()
        && let Some(store) = &trust.store
    {
        load_cache(store);
    }
    let mut checks = Vec::with_capacity(rules.len());
    for (pos, rule) in rules.iter().enumerate() {
        let Some(plugin) = plugins.get(rule.plugin) else {
            // The installer keeps no rule without a plugin; a position is kept for it anyway.
            checks.push(None);
            continue;
        };
        let subject = &subjects[rule.plugin];
        let location = location_of(rule, plugin, subject.bare);
        let mut files = Vec::new();
        let mut unpinned = Vec::new();
        let mut rule_pins = Vec::new();
        let mut unpinnable = None;
        let mut programs = Vec::new();
        match &rule.handler {
            Handler::Command(spec) => {
                let resolved = resolve_command(spec);
                // A construct the resolver does not model: refused under `require`, named.
                if let Some(u) = resolved.unpinnable() {
                    unpinnable = Some(u.to_string());
                }
                if no_views && !subject.bare && unpinnable.is_none() {
                    let live = canonical(&plugin.root);
                    let roots = [live.as_path(), plugin.root.as_path()];
                    let roots = if plugin.root.is_absolute() {
                        &roots[..]
                    } else {
                        &roots[..1]
                    };
                    unpinnable = super::names_live_folder(spec, roots);
                }
                unpinned = resolved.unpinned;
                if trust.mode.is_on()
                    && (subject.approval.is_some() || trust.policy.pin_unapproved_programs)
                {
                    programs = on_path(&unpinned, path_var.as_deref(), &trust.policy);
                    // Found but not hashed (too large, unreadable): what runs cannot be
                    // accounted for. Not found at all: nothing of it runs.
                    for p in &programs {
                        if let (Some(path), FileState::Unreadable { reason }) = (&p.path, &p.state)
                        {
                            unpinnable.get_or_insert_with(|| {
                                format!("program {} ({path}): {reason}", p.name)
                            });
                        }
                    }
                }
                for f in resolved.files {
                    let (base, path) = if f.base == Base::Root {
                        match roots.rebase(rule.plugin, plugin, &f.path) {
                            Some(found) => found,
                            None => {
                                unpinned.push(Unpinned::new(
                                    format!("/{}", f.path),
                                    UnpinnedWhy::OutsideRoots,
                                ));
                                continue;
                            }
                        }
                    } else {
                        (f.base, f.path)
                    };
                    let shown = format!("{}{path}", base.prefix());
                    let state = match pins.get(&mut roots, (rule.plugin, plugin), base, &path) {
                        Ok(p) => {
                            let state = FileState::Pinned {
                                sha256: p.sha256,
                                size: p.bytes.len() as u64,
                            };
                            rule_pins.push(Pin {
                                site: f.site,
                                file: p,
                                shown: shown.clone(),
                                base,
                                path: path.clone(),
                            });
                            state
                        }
                        Err(e) => {
                            unpinnable.get_or_insert_with(|| format!("{shown}: {e}"));
                            FileState::Unreadable {
                                reason: e.to_string(),
                            }
                        }
                    };
                    files.push(FileRecord {
                        role: f.role,
                        base,
                        path,
                        state,
                    });
                }
            }
            Handler::Wasm(spec) => {
                let path = component_path(&spec.component);
                let state = match wasm.get(&pos) {
                    Some(p) => match p.component.sha256().parse::<Digest>() {
                        Ok(sha256) => FileState::Pinned {
                            sha256,
                            size: p.component.size_bytes() as u64,
                        },
                        Err(e) => FileState::Unreadable {
                            reason: e.to_string(),
                        },
                    },
                    None => FileState::Unreadable {
                        reason: "not prepared".into(),
                    },
                };
                if let FileState::Unreadable { reason } = &state {
                    unpinnable = Some(format!("{}{path}: {reason}", Base::Plugin.prefix()));
                }
                files.push(FileRecord {
                    role: FileRole::Component,
                    base: Base::Plugin,
                    path,
                    state,
                });
            }
            Handler::Prompt { .. } | Handler::Http(_) => {}
        }
        let record = RuleRecord::new(
            location,
            rule.handler.label(),
            rule_content(rule),
            files,
            unpinned,
        )
        .with_programs(programs);
        let verdict = check_rule(&record, indexes[rule.plugin].as_ref());
        let snapshot_approves = if trust.mode == TrustMode::Require
            && unpinnable.is_none()
            && matches!(verdict, RuleTrust::Changed { .. })
            && matches!(rule.handler, Handler::Command(_))
            && let Some(Ok(snap)) = &subject.snapshot
            && let Some(files) = files_in_snapshot(&record.files, snap)
        {
            let approved = RuleRecord::new(
                record.location.clone(),
                record.label.clone(),
                record.content.clone(),
                files,
                record.unpinned.clone(),
            )
            .with_programs(record.programs.clone());
            check_rule(&approved, indexes[rule.plugin].as_ref()).is_approved()
        } else {
            false
        };
        checks.push(Some(RuleCheck {
            record,
            trust: verdict,
            pins: rule_pins,
            unpinnable,
            snapshot_approves,
        }));
    }
    if trust.mode.is_on()
        && let Some(store) = &trust.store
    {
        save_cache(store);
    }
    let missing = if trust.mode.is_on() {
        missing_rules(rules, &subjects, &checks)
    } else {
        Vec::new()
    };
    (
        LoadedTrust {
            mode: trust.mode,
            rules: checks,
            subjects,
            missing,
            project: roots.project_path.clone(),
        },
        diagnostics,
    )
}

/// The programs `unpinned` names as found on `PATH`, each once, by resolved path and digest.
fn on_path(
    unpinned: &[Unpinned],
    path_var: Option<&std::ffi::OsStr>,
    policy: &super::TrustPolicy,
) -> Vec<ProgramRecord> {
    let mut out: Vec<ProgramRecord> = Vec::new();
    for u in unpinned {
        if u.why != UnpinnedWhy::OnPath
            || u.what.contains(['/', '"'])
            || out.iter().any(|p| p.name == u.what)
        {
            continue;
        }
        out.push(program_record(&u.what, path_var, policy.max_program_bytes));
    }
    out
}

/// Every approved rule of `subjects` that no live rule carries as approved.
fn missing_rules(
    rules: &[Rule],
    subjects: &[Subject],
    checks: &[Option<RuleCheck>],
) -> Vec<MissingRule> {
    let mut out = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        let Some(approval) = &subject.approval else {
            continue;
        };
        let live: Vec<(usize, &RuleCheck)> = rules
            .iter()
            .zip(checks)
            .enumerate()
            .filter(|(_, (r, _))| r.plugin == i)
            .filter_map(|(pos, (_, c))| c.as_ref().map(|c| (pos, c)))
            .collect();
        let records: Vec<&RuleRecord> = live.iter().map(|(_, c)| &c.record).collect();
        for record in hookbox_trust::missing_rules(approval, &records) {
            // An approved event this build does not know cannot fire: nothing to answer for.
            let Ok(event) = record.event().parse::<EventName>() else {
                continue;
            };
            let matcher = record
                .matcher()
                .and_then(approved_matcher)
                .unwrap_or(Matcher::All);
            let live = live
                .iter()
                .find(|(_, c)| {
                    c.record.location == record.location
                        && matches!(c.trust, RuleTrust::Changed { .. })
                })
                .map(|(pos, _)| *pos);
            out.push(MissingRule {
                plugin: i,
                record: record.clone(),
                event,
                matcher,
                live,
            });
        }
    }
    out
}

/// A matcher compiled back from its record ([`Matcher::describe`]'s shape); `None` when the
/// record's value is not of that shape or does not compile.
fn approved_matcher(described: &serde_json::Value) -> Option<Matcher> {
    match described.get("kind")?.as_str()? {
        "all" => Some(Matcher::All),
        "names" => {
            let names = described.get("names")?.as_array()?;
            let names: Option<Vec<String>> = names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect();
            Some(Matcher::Names(names?))
        }
        "regex" => JsRegex::new(described.get("pattern")?.as_str()?)
            .ok()
            .map(Matcher::Regex),
        "object" => {
            let fields = described.get("fields")?.as_object()?;
            let mut map = serde_json::Map::new();
            for (field, pat) in fields {
                let p = pat.get("glob").or_else(|| pat.get("regex"))?;
                map.insert(field.clone(), p.clone());
            }
            Matcher::from_object(&map).ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_files_and_plugins_are_different_subjects() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let info = |name: &str, files: &[&str]| PluginInfo {
            name: name.into(),
            root: t.path().to_owned(),
            dialect: hookbox_core::Dialect::Claude,
            files: files.iter().map(PathBuf::from).collect(),
            parsed: Vec::new(),
        };
        assert_eq!(
            subject_of(&info("settings.json", &["settings.json"])),
            (root.join("settings.json").display().to_string(), true)
        );
        assert_eq!(
            subject_of(&info("settings.local.json", &["settings.local.json"])),
            (root.join("settings.local.json").display().to_string(), true)
        );
        assert_eq!(
            subject_of(&info("guard", &["hooks/hooks.json"])),
            (root.display().to_string(), false)
        );
    }

    #[test]
    fn a_recorded_matcher_compiles_back_to_the_approved_one() {
        use hookbox_core::matcher::ToolAliases;
        for (written, event) in [
            (serde_json::json!("Bash"), EventName::PreToolUse),
            (serde_json::json!("Bash|Edit"), EventName::PreToolUse),
            (serde_json::json!("^(Bash|Write)$"), EventName::PreToolUse),
            (serde_json::json!("*"), EventName::PreToolUse),
            (
                serde_json::json!({"tool_name": "Ba*", "agent_type": "^main$"}),
                EventName::PreToolUse,
            ),
            (serde_json::json!("auto"), EventName::PreCompact),
        ] {
            let m = Matcher::from_json(Some(&written), event).unwrap();
            let back = approved_matcher(&m.describe()).unwrap();
            assert_eq!(back.describe(), m.describe(), "{written}");
        }
        let narrowed =
            approved_matcher(&serde_json::json!({"kind": "names", "names": ["Bash"]})).unwrap();
        let aliases = ToolAliases::default();
        assert!(narrowed.matches_subject("Bash", true, &aliases));
        assert!(approved_matcher(&serde_json::json!({"kind": "regex", "pattern": "("})).is_none());
        assert!(approved_matcher(&serde_json::json!("Bash")).is_none());
    }

    #[test]
    fn component_paths_are_read_as_prepare_reads_them() {
        assert_eq!(
            component_path("${CLAUDE_PLUGIN_ROOT}/hooks/g.wasm"),
            "hooks/g.wasm"
        );
        assert_eq!(component_path("./hooks//g.wasm"), "hooks/g.wasm");
        assert_eq!(component_path("${PLUGIN_ROOT}/g.wasm"), "g.wasm");
    }
}
