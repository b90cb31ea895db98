//! A tenant's approval gate (the record and the load waiting for approval, see
//! [`tenant_trust`](crate::tenant_trust)): a load put in place and recorded, or held; an
//! admin's approval or rejection of the load held; the admin view.

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
        staged: Staged,
        about: About<A>,
        cause: LoadCause,
        commit: impl FnOnce(Staged) -> Result<(), HostError>,
    ) -> Result<bool, TenantError> {
        let now = now_ms();
        let reports = subject_reports(staged.loaded());
        let subjects =
            tenant_trust::tenant_subjects(&reports, &about.folder, now / 1000).map_err(|e| {
                TenantError::Trust {
                    id: t.id.clone(),
                    reason: format!("cannot name its plugins by their place in its folder: {e}"),
                }
            })?;
        let (hold, changes, term_changes, before, store) = {
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
            (
                hold,
                changes,
                term_changes,
                g.record.clone(),
                g.store.clone(),
            )
        };
        if hold {
            t.gate
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pending = Some(Pending {
                digest: tenant_trust::set_digest(&subjects, Some(&about.terms)),
                held_at_ms: now,
                cause,
                subjects,
                changes,
                term_changes,
                staged,
                about,
            });
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
            // A newer load that needs no approval supersedes the one waiting.
            g.pending = None;
        }
        write_record(&t.id, &store, &record, "its rules")?;
        Ok(false)
    }

    /// [`Tenants::approve`] with the tenant's admin lock held.
    pub(super) fn approve_held(
        &self,
        id: &TenantId,
        digest: &Digest,
    ) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        let (pending, before, store) = {
            let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
            match &g.pending {
                None => return Err(TenantError::NothingPending(id.clone())),
                Some(p) if p.digest != *digest => {
                    return Err(TenantError::StalePending {
                        id: id.clone(),
                        asked: *digest,
                        pending: p.digest,
                    });
                }
                Some(_) => {}
            }
            (g.pending.take(), g.record.clone(), g.store.clone())
        };
        // Taken above, under the admin lock: nothing put it back since.
        let Some(p) = pending else {
            return Err(TenantError::NothingPending(id.clone()));
        };
        let before = before.as_ref().ok().and_then(Option::as_ref);
        let record = tenant_trust::next_record(
            id.as_str(),
            before,
            p.subjects,
            p.about.terms.clone(),
            ApprovedBy::Admin,
            now_ms(),
        );
        t.host
            .commit(p.staged)
            .map_err(|source| TenantError::Host {
                id: id.clone(),
                source,
            })?;
        t.set_about(p.about);
        t.set_serving();
        t.gate.lock().unwrap_or_else(PoisonError::into_inner).record = Ok(Some(record.clone()));
        write_record(id, &store, &record, "the approved rules")?;
        Ok(t.info())
    }

    /// [`Tenants::reject`] with the tenant's admin lock held.
    pub(super) fn reject_held(
        &self,
        id: &TenantId,
        digest: Option<&Digest>,
    ) -> Result<TenantInfo, TenantError> {
        let t = self.get(id)?;
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        match (&g.pending, digest) {
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
        Ok(t.info())
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
