//! A tenant's approval gate (the record and the load waiting for approval, see
//! [`tenant_trust`](crate::tenant_trust)): a load put in place and recorded, or held; an
//! admin's approval or rejection of the load held; the admin view.

use std::collections::HashSet;
use std::sync::PoisonError;

use hookbox_core::clock::now_ms;
use hookbox_trust::{Approval, Digest};

use crate::error::HostError;
use crate::host::Staged;
use crate::tenant_id::TenantId;
use crate::tenant_trust::{
    self, ApprovedBy, LoadCause, PendingView, SubjectChange, TenantRecord, TenantTrustView,
    TermChange,
};
use crate::trust::ApprovalStore;
use crate::trust_report::subject_reports;

use super::Tenants;
use super::error::TenantError;
use super::load::About;
use super::snapshots;
use super::spec::{TenantAttachment, TenantInfo};
use super::tenant::Tenant;

/// A tenant's approval state.
pub(super) struct Gate<A> {
    /// `<state_root>/<id>/trust`.
    pub(super) store: ApprovalStore,
    /// The approved rule set in place; `Err` when the record cannot be used (it approves
    /// nothing).
    pub(super) record: Result<Option<TenantRecord>, String>,
    /// At most one load waiting; a newer load replaces (or drops) it.
    pub(super) pending: Option<Pending<A>>,
    /// The digest of the rule set in place (none until one is).
    pub(super) serving: Option<Digest>,
    /// With a control store: the generation of its record last read or written here.
    pub(super) generation: u64,
    /// With a control store: the last load rejected (on any replica).
    pub(super) rejected: Option<Digest>,
    /// The snapshots the generation in place runs from.
    pub(super) serving_snapshots: Vec<Digest>,
}

impl<A> Gate<A> {
    /// The snapshots to keep: the approved set's, the held load's, the serving generation's;
    /// `None` (keep everything) while the record cannot be read — it may name one.
    fn kept_snapshots(&self) -> Option<HashSet<Digest>> {
        let record = self.record.as_ref().ok()?;
        let mut keep: HashSet<Digest> = self.serving_snapshots.iter().copied().collect();
        if let Some(r) = record {
            keep.extend(snapshots::snapshot_ids(&r.subjects));
        }
        if let Some(p) = &self.pending {
            keep.extend(snapshots::snapshot_ids(&p.subjects));
        }
        Some(keep)
    }
}

/// A load held for approval.
pub(super) struct Pending<A> {
    pub(super) digest: Digest,
    pub(super) held_at_ms: u64,
    pub(super) cause: LoadCause,
    pub(super) subjects: Vec<Approval>,
    pub(super) changes: Vec<SubjectChange>,
    pub(super) term_changes: Vec<TermChange>,
    pub(super) staged: Staged,
    pub(super) about: About<A>,
}

impl<A: TenantAttachment> Tenants<A> {
    /// Puts `staged` in place and records it, or holds it for approval, as the operator's
    /// settings and the tenant's record say. Whether it was held. Under the tenant's admin lock.
    pub(super) fn settle(
        &self,
        t: &Tenant<A>,
        staged: Staged,
        about: About<A>,
        cause: LoadCause,
    ) -> Result<bool, TenantError> {
        self.settle_with(t, staged, about, cause, |staged| t.host.commit(staged))
    }

    /// [`Tenants::settle`], putting the rules in place with `commit`. The gate's mutex is held
    /// only to read and change it in memory — never across the commit or the record's write,
    /// since `info` and the trust view take it from async handlers; the admin lock (held by the
    /// caller) is what keeps another operation from changing it meanwhile. The record is written
    /// once the commit succeeded, so it never describes rules that are not in place.
    fn settle_with(
        &self,
        t: &Tenant<A>,
        mut staged: Staged,
        about: About<A>,
        cause: LoadCause,
        commit: impl FnOnce(Staged) -> Result<(), HostError>,
    ) -> Result<bool, TenantError> {
        if let Some(c) = &self.control {
            self.refresh_from_control(t, c.as_ref());
        }
        let now = now_ms();
        let reports = subject_reports(staged.loaded());
        let mut subjects = tenant_trust::tenant_subjects(&reports, &about.folder, now / 1000)
            .map_err(|e| TenantError::Trust {
                id: t.id.clone(),
                reason: format!("cannot name its plugins by their place in its folder: {e}"),
            })?;
        // Every load is a snapshot: the generation it makes runs from it, its record names it.
        let store = t
            .gate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .store
            .clone();
        let limits = snapshots::limits(component_bytes(&about.terms));
        snapshots::snapshot_load(&store, &mut staged, &mut subjects, &limits).map_err(
            |reason| TenantError::Trust {
                id: t.id.clone(),
                reason,
            },
        )?;
        let (hold, changes, term_changes, before) = {
            let g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            let approved = g.record.as_ref().ok().and_then(Option::as_ref);
            let changes = tenant_trust::changes(
                approved.map_or(&[][..], |r| r.subjects.as_slice()),
                &subjects,
            );
            let term_changes =
                tenant_trust::term_changes(approved.and_then(|r| r.terms.as_ref()), &about.terms);
            let hold = match &g.record {
                Ok(Some(_)) => {
                    self.trust.hold_changed_reloads
                        && (tenant_trust::any_change(&changes) || !term_changes.is_empty())
                }
                Ok(None) => self.trust.hold_first_load,
                // A record that cannot be used approves nothing.
                Err(_) => self.trust.hold_changed_reloads || self.trust.hold_first_load,
            };
            (hold, changes, term_changes, g.record.clone())
        };
        if hold {
            let digest = tenant_trust::set_digest(&subjects, Some(&about.terms));
            let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            if g.rejected == Some(digest) {
                // Rejected on some replica: these very files are dropped here too.
                g.pending = None;
                drop(g);
                tracing::info!(tenant = %t.id, %digest, "load rejected before (control store): dropped; the rules in place keep serving");
                self.collect_snapshots(t);
                return Ok(true);
            }
            let held = crate::tenant_control::HeldLoad {
                digest,
                held_at_ms: now,
                cause,
                diff: serde_json::json!({"changes": changes, "term_changes": term_changes}),
            };
            g.pending = Some(Pending {
                digest,
                held_at_ms: now,
                cause,
                subjects,
                changes,
                term_changes,
                staged,
                about,
            });
            drop(g);
            if let Some(c) = &self.control {
                self.publish_held(t, c.as_ref(), held);
            }
            self.collect_snapshots(t);
            return Ok(true);
        }
        let by = match &before {
            Ok(Some(_)) => ApprovedBy::Load,
            _ => ApprovedBy::FirstLoad,
        };
        let before = before.as_ref().ok().and_then(Option::as_ref);
        let record = tenant_trust::next_record(
            t.id.as_str(),
            before,
            subjects,
            about.terms.clone(),
            by,
            now,
        );
        commit(staged).map_err(|source| TenantError::Host {
            id: t.id.clone(),
            source,
        })?;
        t.set_about(about);
        t.set_serving();
        {
            let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            g.record = Ok(Some(record.clone()));
            g.serving = Some(record.approved.digest);
            g.serving_snapshots = snapshots::snapshot_ids(&record.subjects).collect();
            // A newer load that needs no approval supersedes the one waiting.
            g.pending = None;
        }
        match &self.control {
            Some(c) => {
                self.publish_snapshots(t, c.as_ref(), &store, &record.subjects, &limits);
                self.publish_approved(t, c.as_ref(), &record);
            }
            None => write_record(&t.id, &store, &record, "its rules")?,
        }
        self.collect_snapshots(t);
        Ok(false)
    }

    /// [`Tenants::approve`] with the tenant's admin lock held.
    pub(super) fn approve_held(
        &self,
        id: &TenantId,
        digest: &Digest,
    ) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        if let Some(c) = &self.control {
            self.refresh_from_control(&t, c.as_ref());
        }
        let (record, store, limits) = {
            let g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            let p = match &g.pending {
                None => return Err(TenantError::NothingPending(id.clone())),
                Some(p) if p.digest != *digest => {
                    return Err(TenantError::StalePending {
                        id: id.clone(),
                        asked: *digest,
                        pending: p.digest,
                    });
                }
                Some(p) => p,
            };
            let before = g.record.as_ref().ok().and_then(Option::as_ref);
            let record = tenant_trust::next_record(
                id.as_str(),
                before,
                p.subjects.clone(),
                p.about.terms.clone(),
                ApprovedBy::Admin,
                now_ms(),
            );
            let limits = snapshots::limits(component_bytes(&p.about.terms));
            (record, g.store.clone(), limits)
        };
        // The store decides first: an approval of a load another replica superseded is refused
        // on every replica, and nothing changes here.
        let generation = match &self.control {
            Some(c) => {
                // Its files first, so a replica reading the record finds them.
                self.publish_snapshots(&t, c.as_ref(), &store, &record.subjects, &limits);
                Some(
                    self.approve_in_control(id, c.as_ref(), digest, &record)?
                        .generation,
                )
            }
            None => None,
        };
        // Checked above, under the admin lock: nothing took it since.
        let Some(p) = t
            .gate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pending
            .take()
        else {
            return Err(TenantError::NothingPending(id.clone()));
        };
        t.host
            .commit(p.staged)
            .map_err(|source| TenantError::Host {
                id: id.clone(),
                source,
            })?;
        t.set_about(p.about);
        t.set_serving();
        {
            let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            g.record = Ok(Some(record.clone()));
            g.serving = Some(record.approved.digest);
            g.serving_snapshots = snapshots::snapshot_ids(&record.subjects).collect();
            if let Some(generation) = generation {
                g.generation = generation;
            }
        }
        if self.control.is_none() {
            write_record(id, &store, &record, "the approved rules")?;
        }
        self.collect_snapshots(&t);
        Ok(t.info())
    }

    /// [`Tenants::reject`] with the tenant's admin lock held.
    pub(super) fn reject_held(
        &self,
        id: &TenantId,
        digest: Option<&Digest>,
    ) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        let in_store = match &self.control {
            Some(c) => self.reject_in_control(id, c.as_ref(), digest)?,
            None => None,
        };
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(r) = &in_store {
            g.generation = r.generation;
            g.rejected = r.rejected;
        }
        match (&g.pending, digest) {
            // Rejected in the store: this replica had not held it yet.
            (None, _) if in_store.is_some() => {}
            (None, _) => return Err(TenantError::NothingPending(id.clone())),
            (Some(p), Some(d)) if p.digest != *d => {
                return Err(TenantError::StalePending {
                    id: id.clone(),
                    asked: *d,
                    pending: p.digest,
                });
            }
            _ => {}
        }
        g.pending = None;
        drop(g);
        self.collect_snapshots(&t);
        Ok(t.info())
    }

    /// Removes the tenant's snapshots that nothing keeps any more (see [`Gate`]).
    pub(super) fn collect_snapshots(&self, t: &Tenant<A>) {
        let (store, keep) = {
            let g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            (g.store.clone(), g.kept_snapshots())
        };
        if let Some(keep) = keep {
            snapshots::collect(&store, keep);
        }
    }

    /// Publishes the snapshots `subjects` name to the control store; a failure is logged (a
    /// replica that needs them then answers as held, naming them missing).
    fn publish_snapshots(
        &self,
        t: &Tenant<A>,
        control: &dyn crate::tenant_control::ControlStore,
        store: &ApprovalStore,
        subjects: &[Approval],
        limits: &crate::trust::SnapshotLimits,
    ) {
        if let Err(e) = snapshots::publish(control, store, subjects, limits) {
            tracing::error!(tenant = %t.id, error = %e, "cannot publish the approved snapshots to the control store");
        }
    }

    /// The tenant's recorded rule digests (with when each changed) and the load waiting for
    /// approval, with its changes file by file and grant by grant.
    pub fn trust(&self, id: &TenantId) -> Result<TenantTrustView, TenantError> {
        let t = self.get(id)?;
        let g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let (approved, rules, terms, record_error) = match &g.record {
            Ok(Some(r)) => (
                Some(r.approved),
                tenant_trust::rule_views(&r.subjects, &r.rules),
                r.terms.clone(),
                None,
            ),
            Ok(None) => (None, Vec::new(), None, None),
            Err(e) => (None, Vec::new(), None, Some(e.clone())),
        };
        Ok(TenantTrustView {
            tenant: id.to_string(),
            settings: self.trust,
            approved,
            record_error,
            rules,
            terms,
            pending: g.pending.as_ref().map(|p| PendingView {
                digest: p.digest,
                held_at_ms: p.held_at_ms,
                cause: p.cause,
                changes: p.changes.clone(),
                term_changes: p.term_changes.clone(),
                rules: tenant_trust::rule_views(&p.subjects, &[]),
            }),
        })
    }
}

/// A tenant's `max_component_bytes` as its terms hold it (0 when they do not).
fn component_bytes(terms: &tenant_trust::TenantTerms) -> u64 {
    terms
        .get("max_component_bytes")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// Writes `record` to the tenant's store, after the rules it describes (`what`) were put in
/// place: a failure leaves them serving and says they are not recorded.
///
/// # Blocking
/// Two `fsync`s (the file, the folder); under the admin lock only.
fn write_record(
    id: &TenantId,
    store: &ApprovalStore,
    record: &TenantRecord,
    what: &'static str,
) -> Result<(), TenantError> {
    tenant_trust::write_record(store, record).map_err(|e| TenantError::Unrecorded {
        id: id.clone(),
        what,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::runtime::{HookRuntime, RuntimeSettings};
    use crate::tenant_policy::TenantPolicy;
    use crate::tenants::TenantSpec;
    use crate::tenants::load::load;

    fn write_rule(folder: &Path, command: &str) {
        let hooks = folder.join("plugins/p/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let rule = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": command}]}]}});
        std::fs::write(hooks.join("hooks.json"), rule.to_string()).unwrap();
    }

    /// Issue 32: the record is written once the rules are in place. A commit that fails leaves
    /// the old rules serving and the old record, on disk and in memory; before the fix the new
    /// record was written first and described rules that never served.
    #[test]
    fn a_commit_that_fails_leaves_the_old_record() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let tenants: Arc<Tenants> = Arc::new(Tenants::new(runtime, dir.path().join("state")));
        let id = TenantId::new("a").unwrap();
        let folder = dir.path().join("a");
        write_rule(&folder, "echo first");
        tenants
            .add(TenantSpec {
                id: id.clone(),
                folder: folder.clone(),
                policy: TenantPolicy {
                    allow_native_commands: true,
                    ..TenantPolicy::default()
                },
                plugins: None,
                attached: (),
            })
            .unwrap();
        let t = tenants.get(&id).unwrap();
        let store = t.gate.lock().unwrap().store.clone();
        let first = tenant_trust::read_record(&store, "a").unwrap().unwrap();
        write_rule(&folder, "echo second");
        let _held = tenants.admin(&id);
        let about = t.about();
        let (report, staged) = load(&id, &folder, &about.plugins, None, |paths, opts, check| {
            t.host
                .stage_reload(paths, opts, check)
                .map_err(|r| super::super::load::failed_load(&id, r))
        })
        .unwrap();
        let failed = tenants.settle_with(
            &t,
            staged,
            about.reloaded_now(report.diagnostics),
            LoadCause::Reload,
            |_| {
                Err(HostError::Invalid {
                    field: "wasm_cpu_share",
                    reason: "refused by the test".into(),
                })
            },
        );
        assert!(
            matches!(failed, Err(TenantError::Host { .. })),
            "{failed:?}"
        );
        let on_disk = tenant_trust::read_record(&store, "a").unwrap().unwrap();
        assert_eq!(on_disk, first, "the failed commit's rules were recorded");
        let in_memory = t.gate.lock().unwrap().record.clone().unwrap().unwrap();
        assert_eq!(in_memory, first);
        let label = t.host.rules().rules()[0].handler.label();
        assert!(label.contains("first"), "{label}");
    }
}
