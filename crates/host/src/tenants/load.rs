//! Loading a tenant's folder: the host policy of a spec, a new tenant built and loaded, and
//! the validate-then-swap load of its plugins — every path and every plugin really inside the
//! tenant's folder.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use hookbox_core::clock::now_ms;
use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::files::path;

use crate::host::HookHost;
use crate::install::rule_error;
use crate::policy::HostPolicy;
use crate::tenant_id::TenantId;
use crate::tenant_trust::{self, LoadCause, TenantTerms};
use crate::trust::ApprovalStore;

use super::Tenants;
use super::approval::Gate;
use super::error::TenantError;
use super::spec::{TenantAttachment, TenantSpec};
use super::tenant::Tenant;

/// What the current generation of a tenant was loaded from.
pub(super) struct About<A> {
    pub(super) folder: PathBuf,
    pub(super) plugins: Vec<PathBuf>,
    pub(super) attached: A,
    /// Its terms (policy values, what the attachment's approval covers), as approved with it.
    pub(super) terms: TenantTerms,
    pub(super) loaded_at_ms: u64,
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl<A: Clone> About<A> {
    /// A tenant's folder, plugins and attachment after a load that ended now with
    /// `diagnostics`.
    pub(super) fn loaded_now(
        folder: PathBuf,
        plugins: Vec<PathBuf>,
        attached: A,
        terms: TenantTerms,
        diagnostics: Vec<Diagnostic>,
    ) -> About<A> {
        About {
            folder,
            plugins,
            attached,
            terms,
            loaded_at_ms: now_ms(),
            diagnostics,
        }
    }

    /// The same tenant after another load of its folder that ended now with `diagnostics`.
    pub(super) fn reloaded_now(&self, diagnostics: Vec<Diagnostic>) -> About<A> {
        About::loaded_now(
            self.folder.clone(),
            self.plugins.clone(),
            self.attached.clone(),
            self.terms.clone(),
            diagnostics,
        )
    }

    /// This description, loaded at the same time, without its load's diagnostics.
    pub(super) fn without_diagnostics(&self) -> About<A> {
        About {
            loaded_at_ms: self.loaded_at_ms,
            ..self.reloaded_now(Vec::new())
        }
    }
}

impl<A: TenantAttachment> Tenants<A> {
    /// The host policy of `spec`: its tenant policy, its folder and its plugin paths protected
    /// from read-write mounts.
    pub(super) fn host_policy(
        &self,
        spec: &TenantSpec<A>,
        plugins: &[PathBuf],
    ) -> Result<HostPolicy, TenantError> {
        let state_dir = self.state_root.join(spec.id.as_str());
        let mut policy = spec
            .policy
            .host_policy(&spec.folder, &state_dir, self.runtime.settings().wasm.fuel)
            .map_err(|source| TenantError::Policy {
                id: spec.id.clone(),
                source,
            })?;
        // Even a plugins folder that does not exist yet: a guest must not create one.
        policy.protected_paths.extend(plugins.iter().cloned());
        // Nor write its record or the snapshots its commands run from.
        policy.protected_paths.push(state_dir.join("trust"));
        // Nor write the store every replica serves from.
        if let Some(p) = self.control.as_ref().and_then(|c| c.local_path()) {
            policy.protected_paths.push(p.to_owned());
        }
        Ok(policy)
    }

    /// Builds a new tenant and loads its hooks; an error anywhere is an `Err` and nothing is
    /// kept. With `hold_first_load` (or a recorded approval its rules differ from, under
    /// `hold_changed_reloads`), the tenant starts with no rules and its load waits for
    /// approval. Blocking (reads files, may compile components).
    pub(super) fn build(&self, spec: TenantSpec<A>) -> Result<(Arc<Tenant<A>>, bool), TenantError> {
        let id = spec.id.clone();
        // Tenants share the runtime's pool: a reset that can hand one guest's dirty page to the
        // next instance of its slot would hand it to another tenant.
        if self.runtime.wasm().config().pool.pagemap_scan {
            return Err(TenantError::PagemapScanShared { id });
        }
        let plugins = plugin_paths(&spec);
        let policy = self.host_policy(&spec, &plugins)?;
        let state_dir = self.state_root.join(id.as_str());
        let approved_spec = spec.clone();
        let host =
            HookHost::with_runtime(&self.runtime, policy).map_err(|source| TenantError::Host {
                id: id.clone(),
                source,
            })?;
        // Ids are `[A-Za-z0-9_-]{1,64}` (TenantId): the folder is always beneath the root.
        let store =
            ApprovalStore::create(&state_dir.join("trust")).map_err(|e| TenantError::Trust {
                id: id.clone(),
                reason: e.to_string(),
            })?;
        let record = tenant_trust::read_record(&store, id.as_str());
        let (report, staged) = load(&id, &spec.folder, &plugins, None, |paths, opts, check| {
            host.stage_reload(paths, opts, check)
                .map_err(|report| failed_load(&id, report))
        })?;
        let terms = spec.terms();
        let about = About::loaded_now(
            spec.folder,
            plugins,
            spec.attached,
            terms,
            report.diagnostics,
        );
        let empty = about.without_diagnostics();
        let tenant = Arc::new(Tenant {
            id,
            host,
            state_dir,
            about: RwLock::new(Arc::new(empty)),
            gate: Mutex::new(Gate {
                store,
                record,
                pending: None,
                serving: None,
                generation: 0,
                rejected: None,
                serving_snapshots: Vec::new(),
            }),
            serving: AtomicBool::new(false),
            held_answer: self.trust.held_answer,
            held_why: Mutex::new(None),
        });
        let held = self.settle(&tenant, staged, about, LoadCause::Add)?;
        self.serve_approved_if_held(&tenant, &approved_spec, held);
        Ok((tenant, held))
    }
}

/// The plugin paths of `spec`: its own, or `<folder>/plugins`.
pub(super) fn plugin_paths<A>(spec: &TenantSpec<A>) -> Vec<PathBuf> {
    spec.plugins
        .clone()
        .unwrap_or_else(|| vec![spec.folder.join("plugins")])
}

/// Validate-then-swap of tenant `id`'s hooks from `plugins` (or `paths`, for this load) with
/// `stage` (a reload of the rules, or a replacement of the policy too), whose value it returns.
/// The default `<folder>/plugins` may be missing (no rules); a path given explicitly must exist;
/// every path and every plugin must really lie inside `folder`: `stage` is given the check of
/// the plugins it loads.
pub(super) fn load<T>(
    id: &TenantId,
    folder: &Path,
    plugins: &[PathBuf],
    paths: Option<&[PathBuf]>,
    stage: impl FnOnce(
        &[&PathBuf],
        &LoadOptions,
        &dyn Fn(&LoadReport) -> Vec<Diagnostic>,
    ) -> Result<T, TenantError>,
) -> Result<T, TenantError> {
    let explicit = paths.is_some();
    let paths = paths.unwrap_or(plugins);
    let mut refused = outside_folder(id, folder, paths);
    if explicit {
        refused.extend(
            paths
                .iter()
                .filter(|p| !p.exists())
                .map(|p| Diagnostic::error(p.clone(), "no such file or folder".to_owned())),
        );
    }
    if !refused.is_empty() {
        return Err(TenantError::Load {
            id: id.clone(),
            diagnostics: refused,
        });
    }
    let existing: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
    let check = |r: &LoadReport| plugins_outside(id, folder, r);
    stage(&existing, &LoadOptions::default(), &check)
}

/// A load of tenant `id` that did not load without errors: its every diagnostic.
pub(super) fn failed_load(id: &TenantId, report: LoadReport) -> TenantError {
    TenantError::Load {
        id: id.clone(),
        diagnostics: report.diagnostics,
    }
}

/// Paths named for loading that lie outside the tenant's folder — or whose place cannot be
/// resolved, which is refused too: "inside" is only ever said of a real path.
fn outside_folder(id: &TenantId, folder: &Path, paths: &[PathBuf]) -> Vec<Diagnostic> {
    let real = match path::canonical(folder) {
        Ok(real) => real,
        Err(e) => {
            return vec![Diagnostic::error(
                folder.to_owned(),
                format!("tenant `{id}`'s folder: {e}"),
            )];
        }
    };
    paths
        .iter()
        .filter_map(|p| match path::resolve(p) {
            Ok(rp) if rp.starts_with(&real) => None,
            Ok(_) => Some(Diagnostic::error(
                p.clone(),
                format!(
                    "tenant `{id}` may only load hooks from inside its folder {}",
                    folder.display()
                ),
            )),
            Err(e) => Some(Diagnostic::error(
                p.clone(),
                format!(
                    "{e}: tenant `{id}` loads hooks only from paths it can place inside its folder"
                ),
            )),
        })
        .collect()
}

/// Plugins whose real folder (through symlinks) is outside the tenant's folder, or cannot be
/// resolved: a symlink to another tenant's plugin would otherwise load and mount that tenant's
/// files.
fn plugins_outside(id: &TenantId, folder: &Path, report: &LoadReport) -> Vec<Diagnostic> {
    let folder = path::canonical(folder);
    report
        .plugins
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let why = match (&folder, &path::canonical(&p.root)) {
                (Ok(folder), Ok(real)) if real.starts_with(folder) => return None,
                (Ok(_), Ok(real)) => format!(
                    "plugin `{}` resolves to {}, outside tenant `{id}`'s folder: a tenant's plugins must really be inside its folder (no symlink out)",
                    p.name,
                    real.display(),
                ),
                (Err(e), _) | (_, Err(e)) => format!(
                    "plugin `{}` cannot be placed inside tenant `{id}`'s folder: {e}",
                    p.name
                ),
            };
            Some((i, p, why))
        })
        .map(|(i, p, msg)| match report.rules.iter().find(|r| r.plugin == i) {
            Some(rule) => rule_error(rule, Some(p), msg),
            None => Diagnostic::error(p.root.clone(), msg),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{HookRuntime, RuntimeSettings};
    use crate::tenant_policy::TenantPolicy;

    /// Issue 32: a tenant's plugins folder that cannot be resolved (here a symlink loop) is a
    /// load error naming it. The old fallback took its lexical path for its place, found it
    /// "inside" the tenant's folder, then skipped it as missing: the tenant served no rules
    /// without a word.
    #[test]
    fn a_plugins_folder_that_cannot_be_resolved_is_refused_not_loaded_empty() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let tenants: Tenants = Tenants::new(runtime, dir.path().join("state"));
        let folder = dir.path().join("acme");
        std::fs::create_dir_all(&folder).unwrap();
        std::os::unix::fs::symlink(folder.join("loop-b"), folder.join("plugins")).unwrap();
        std::os::unix::fs::symlink(folder.join("plugins"), folder.join("loop-b")).unwrap();
        let e = tenants
            .add(TenantSpec {
                id: TenantId::new("acme").unwrap(),
                folder: folder.clone(),
                policy: TenantPolicy::default(),
                plugins: None,
                attached: (),
            })
            .unwrap_err();
        let TenantError::Load { diagnostics, .. } = &e else {
            panic!("{e}");
        };
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(diagnostics[0].file, folder.join("plugins"));
        assert!(
            diagnostics[0].message.starts_with("cannot resolve")
                && diagnostics[0].message.contains("inside its folder"),
            "{}",
            diagnostics[0].message
        );
        assert!(tenants.is_empty());
    }
}
