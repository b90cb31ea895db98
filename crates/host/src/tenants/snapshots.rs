//! A tenant's approved files as snapshots (issue 27 item 6).
//!
//! Every load of a tenant snapshots each plugin folder it loaded into the tenant's snapshot
//! store (`<state_root>/<id>/trust/snapshots`: the approval store's, content-addressed,
//! read-only, within [`limits`]) and its commands run from that tree: `CLAUDE_PLUGIN_ROOT` is
//! the tree, so a script's neighbours are the ones loaded with it and `node` starts a script
//! as it would from the folder (no sealed per-file copy). A held load therefore never changes
//! what the generation in place runs. The record names each plugin's snapshot, and the ids are
//! part of the set digest: a library a script sources, changed alone, is a change.
//!
//! When a tenant has nothing approved in place and its load is held (a restart that found its
//! files changed, a replica started with an empty state folder while a load is held), its
//! serving generation is built from the approved snapshots ([`Tenants::serve_approved`]):
//! from its own store, every file read back and checked against its manifest, or — when a
//! control store is shared — brought from there, every file checked before it is stored. Only
//! when that cannot be done does the tenant answer as held, saying why.
//!
//! With a control store, each approved set's snapshots are published there before the record
//! that names them ([`publish`]); snapshots no record, held load or serving generation keeps
//! are collected from the tenant's own store ([`collect`]).

use std::collections::HashSet;
use std::path::PathBuf;

use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_core::diagnostic::Diagnostic;
use hookbox_core::files::path;
use hookbox_trust::{Approval, Base, Digest, EntryKind, FileState, SnapshotEntry, diff_approval};

use crate::host::Staged;
use crate::tenant_control::ControlStore;
use crate::tenant_policy::TenantPolicy;
use crate::tenant_trust::TenantRecord;
use crate::trust::{
    ApprovalStore, DEFAULT_MAX_PINNED_FILE_BYTES, DEFAULT_MAX_SNAPSHOT_BYTES,
    DEFAULT_MAX_SNAPSHOT_FILES, Snapshot, SnapshotError, SnapshotLimits,
};
use crate::trust_report::subject_reports;

use super::Tenants;
use super::spec::{TenantAttachment, TenantSpec};
use super::tenant::Tenant;

/// The bounds of one plugin's snapshot: the store's defaults (10,000 files, 256 MiB), one file
/// as large as the larger of the pinned-file bound (16 MiB) and the tenant's
/// `max_component_bytes`, so every component it may load fits.
pub(super) fn limits(max_component_bytes: u64) -> SnapshotLimits {
    SnapshotLimits {
        max_files: DEFAULT_MAX_SNAPSHOT_FILES,
        max_bytes: DEFAULT_MAX_SNAPSHOT_BYTES,
        max_file_bytes: DEFAULT_MAX_PINNED_FILE_BYTES.max(max_component_bytes),
    }
}

/// Whether `snap` holds the plugin file `path` with digest `sha256`.
fn holds(snap: &Snapshot, path: &str, sha256: Digest) -> bool {
    matches!(
        snap.manifest.find(Base::Plugin, path),
        Some((_, SnapshotEntry { kind: EntryKind::File { sha256: s, .. }, .. })) if *s == sha256
    )
}

/// Snapshots every plugin folder `staged` loaded into `store` (within `limits`): each approval
/// of `subjects` (one per plugin, in order) then names its snapshot, and the staged load runs
/// its commands from it. A hooks file loaded alone is not snapshotted (its scripts run from
/// sealed copies of the bytes hashed, as before). Every file its rules run and every hook file
/// must be in the snapshot as it was loaded: one that changed in between fails the load.
pub(super) fn snapshot_load(
    store: &ApprovalStore,
    staged: &mut Staged,
    subjects: &mut [Approval],
    limits: &SnapshotLimits,
) -> Result<(), String> {
    let reports = subject_reports(staged.loaded());
    for (i, (report, approval)) in reports.iter().zip(subjects.iter_mut()).enumerate() {
        if report.bare {
            continue;
        }
        let folder = PathBuf::from(&report.subject);
        let (approved, snap) = store
            .snapshot_plugin(approval.clone(), &folder, limits)
            .map_err(|e| format!("cannot snapshot its plugin `{}`: {e}", approval.subject))?;
        for f in &approval.hook_files {
            if let FileState::Pinned { sha256, .. } = f.state
                && !holds(&snap, &f.path, sha256)
            {
                return Err(format!(
                    "its plugin `{}`: {} changed while it was loaded; load it again",
                    approval.subject, f.path
                ));
            }
        }
        *approval = approved;
        if let Some(s) = staged.loaded_mut().trust.subjects.get_mut(i) {
            s.snapshot = Some(Ok(snap));
        }
    }
    Ok(())
}

/// The snapshot ids `subjects` name.
pub(super) fn snapshot_ids(subjects: &[Approval]) -> impl Iterator<Item = Digest> + '_ {
    subjects.iter().filter_map(|s| s.snapshot.map(|r| r.id))
}

/// Removes from the tenant's store every snapshot not in `keep`. Best effort: a failure is
/// logged (what is left is removed by a later collection).
pub(super) fn collect(store: &ApprovalStore, keep: HashSet<Digest>) {
    match store.snapshots(false) {
        Ok(Some(s)) => {
            if let Err(e) = s.collect(&keep) {
                tracing::warn!(store = %s.path().display(), error = %e, "cannot collect a tenant's snapshots");
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "cannot open a tenant's snapshots to collect them"),
    }
}

/// Publishes the snapshots `subjects` name to the control store: each file's bytes not there
/// yet (read back from the tenant's tree and checked against the manifest, never a corrupt
/// copy), then the manifest — before the record that names them is written.
pub(super) fn publish(
    control: &dyn ControlStore,
    store: &ApprovalStore,
    subjects: &[Approval],
    limits: &SnapshotLimits,
) -> Result<(), String> {
    let local = store
        .snapshots(false)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{} holds no snapshots", store.path().display()))?;
    for id in snapshot_ids(subjects) {
        let snap = local.open(id).map_err(|e| e.to_string())?;
        local
            .read_back(
                &snap,
                limits,
                |sha256, size| !control.has_snapshot_object(sha256, size),
                |sha256, bytes| {
                    control
                        .put_snapshot_object(sha256, bytes)
                        .map_err(|e| e.to_string())
                },
            )
            .map_err(|e| e.to_string())?;
        control
            .put_snapshot_manifest(id, &snap.manifest.to_json())
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The approved snapshot `id` of plugin `subject`, ready to serve: from the tenant's store,
/// read back and checked; or, when the store does not hold it and a control store is shared,
/// brought from there, every file checked before it is stored. Why not, naming which.
fn approved_snapshot(
    store: &ApprovalStore,
    control: Option<&dyn ControlStore>,
    subject: &str,
    id: Digest,
    limits: &SnapshotLimits,
) -> Result<Snapshot, String> {
    let local = store
        .snapshots(true)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{} holds no snapshots", store.path().display()))?;
    match local.open(id) {
        Ok(snap) => {
            local.verify(&snap, limits).map_err(|e| {
                format!("the approved snapshot {id} of its plugin `{subject}` is corrupt: {e}")
            })?;
            Ok(snap)
        }
        Err(SnapshotError::Missing { .. }) => {
            let Some(control) = control else {
                return Err(format!(
                    "the approved snapshot {id} of its plugin `{subject}` is missing from {}",
                    local.path().display()
                ));
            };
            let manifest = control
                .snapshot_manifest(id)
                .map_err(|e| format!("the approved snapshot {id} of its plugin `{subject}` cannot be read from the control store: {e}"))?
                .ok_or_else(|| format!("the approved snapshot {id} of its plugin `{subject}` is missing from the control store {}", control.describe()))?;
            local
                .import(&manifest, id, limits, |sha256, size| {
                    control
                        .snapshot_object(sha256, size)
                        .map_err(|e| e.to_string())
                })
                .map_err(|e| format!("the approved snapshot {id} of its plugin `{subject}` from the control store is corrupt: {e}"))
        }
        Err(e) => Err(format!(
            "the approved snapshot {id} of its plugin `{subject}` cannot be opened: {e}"
        )),
    }
}

/// The tenant policy `record` approved: its terms without the embedder's (`attached`'s) keys;
/// `spec`'s own when the record approved no terms (version 1).
fn approved_policy<A: TenantAttachment>(
    record: &TenantRecord,
    spec: &TenantSpec<A>,
) -> Result<TenantPolicy, String> {
    let Some(terms) = &record.terms else {
        return Ok(spec.policy.clone());
    };
    let attached = spec.attached.approval_terms();
    let policy: serde_json::Map<String, serde_json::Value> = terms
        .iter()
        .filter(|(k, _)| !attached.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::from_value(serde_json::Value::Object(policy))
        .map_err(|e| format!("its approved policy cannot be read back: {e}"))
}

impl<A: TenantAttachment> Tenants<A> {
    /// After a load of `spec` (`held`: it was held): when nothing approved is in place but an
    /// approval is recorded, serves the approved snapshots meanwhile; when they cannot be
    /// served, the tenant answers as held, saying why. Under the tenant's admin lock.
    pub(super) fn serve_approved_if_held(&self, t: &Tenant<A>, spec: &TenantSpec<A>, held: bool) {
        let approved = matches!(
            t.gate
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .record,
            Ok(Some(_)) | Err(_)
        );
        if !held || !approved || t.held().is_none() {
            return;
        }
        match self.serve_approved(t, spec) {
            Ok(()) => {
                tracing::info!(tenant = %t.id, "load held for approval; its approved snapshots serve meanwhile");
            }
            Err(why) => {
                tracing::warn!(tenant = %t.id, why = %why, "load held for approval and its approved files cannot be served: it answers as held");
                *t.held_why
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
            }
        }
    }

    /// Puts the approved rule set of `t` in place from its snapshots, under its approved
    /// policy, for a tenant with nothing approved in place whose load (of `spec`) was just
    /// held. Under the tenant's admin lock. `Err`: why not — its held answer says it.
    fn serve_approved(&self, t: &Tenant<A>, spec: &TenantSpec<A>) -> Result<(), String> {
        let (record, store) = {
            let g = t
                .gate
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match &g.record {
                Ok(Some(r)) => (r.clone(), g.store.clone()),
                Ok(None) => return Err("nothing of it was ever approved".into()),
                Err(e) => return Err(format!("its approval record cannot be used: {e}")),
            }
        };
        let policy = approved_policy(&record, spec)?;
        let limits = limits(policy.max_component_bytes);
        let mut snaps = Vec::with_capacity(record.subjects.len());
        for s in &record.subjects {
            let Some(r) = s.snapshot else {
                return Err(format!(
                    "its plugin `{}` was approved without a snapshot (by an older hookbox, or a hooks file loaded alone), so its approved files are not kept",
                    s.subject
                ));
            };
            snaps.push(approved_snapshot(
                &store,
                self.control.as_deref(),
                &s.subject,
                r.id,
                &limits,
            )?);
        }
        let paths: Vec<PathBuf> = snaps.iter().map(|s| s.base_dir(Base::Plugin)).collect();
        let trees: Vec<PathBuf> = paths
            .iter()
            .map(|p| path::canonical(p).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let approved_spec = TenantSpec {
            policy,
            ..spec.clone()
        };
        let host_policy = self
            .host_policy(&approved_spec, &paths)
            .map_err(|e| e.to_string())?;
        // Every plugin loaded must be one of the trees (no link out of one).
        let check = |r: &LoadReport| -> Vec<Diagnostic> {
            r.plugins
                .iter()
                .filter(|p| !path::canonical(&p.root).is_ok_and(|real| trees.contains(&real)))
                .map(|p| {
                    Diagnostic::error(
                        p.root.clone(),
                        "not one of the approved snapshots' trees".to_owned(),
                    )
                })
                .collect()
        };
        let (_, mut staged) = t
            .host
            .stage_reconfigure(host_policy, &paths, &LoadOptions::default(), check)
            .map_err(|e| e.to_string())?
            .map_err(|report| {
                let first = report
                    .diagnostics
                    .iter()
                    .find(|d| d.severity == hookbox_core::diagnostic::Severity::Error)
                    .map(ToString::to_string)
                    .unwrap_or_default();
                format!("its approved snapshots do not load: {first}")
            })?;
        let reports = subject_reports(staged.loaded());
        if reports.len() != record.subjects.len() {
            return Err(format!(
                "its approved snapshots load {} plugins, the approval has {}",
                reports.len(),
                record.subjects.len()
            ));
        }
        for (now, approved) in reports.iter().zip(&record.subjects) {
            let now = now.to_approval(0);
            if diff_approval(approved, &now.rules, &now.hook_files).rules_changed() {
                return Err(format!(
                    "the rules its approved snapshot of plugin `{}` loads are not the approved ones",
                    approved.subject
                ));
            }
        }
        let ids: Vec<Digest> = snaps.iter().map(|s| s.id).collect();
        for (i, snap) in snaps.into_iter().enumerate() {
            if let Some(s) = staged.loaded_mut().trust.subjects.get_mut(i) {
                s.snapshot = Some(Ok(snap));
            }
        }
        t.host.commit(staged).map_err(|e| e.to_string())?;
        t.set_serving();
        let mut g = t
            .gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.serving = Some(record.approved.digest);
        g.serving_snapshots = ids;
        Ok(())
    }
}
