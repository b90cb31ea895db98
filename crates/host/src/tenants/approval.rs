//! A tenant's approval gate (the record and the load waiting for approval, see
//! [`tenant_trust`](crate::tenant_trust)): a load put in place and recorded, or held; an
//! admin's approval or rejection of the load held; the admin view.

use std::sync::PoisonError;

use hookbox_core::clock::now_ms;
use hookbox_core::trust::{Approval, Digest};

use crate::host::Staged;
use crate::tenant_id::TenantId;
use crate::tenant_trust::{
    self, ApprovedBy, LoadCause, PendingView, SubjectChange, TenantRecord, TenantTrustView,
};
use crate::trust::ApprovalStore;
use crate::trust_report::subject_reports;

use super::Tenants;
use super::error::TenantError;
use super::load::About;
use super::spec::TenantInfo;
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
    pub(super) staged: Staged,
    pub(super) about: About<A>,
}

impl<A: Clone + Send + Sync + 'static> Tenants<A> {
    /// Puts `staged` in place and records it, or holds it for approval, as the operator's
    /// settings and the tenant's record say. Whether it was held. Under the admin lock.
    pub(super) fn gate(
        &self,
        t: &Tenant<A>,
        staged: Staged,
        about: About<A>,
        cause: LoadCause,
    ) -> Result<bool, TenantError> {
        let now = now_ms();
        let reports = subject_reports(staged.loaded());
        let subjects = tenant_trust::tenant_subjects(&reports, &about.folder, now / 1000);
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let approved: Option<&[Approval]> = match &g.record {
            Ok(Some(r)) => Some(&r.subjects),
            _ => None,
        };
        let changes = tenant_trust::changes(approved.unwrap_or(&[]), &subjects);
        let hold = match &g.record {
            Ok(Some(_)) => self.trust.hold_changed_reloads && tenant_trust::any_change(&changes),
            Ok(None) => self.trust.hold_first_load,
            // A record that cannot be used approves nothing.
            Err(_) => self.trust.hold_changed_reloads || self.trust.hold_first_load,
        };
        if hold {
            g.pending = Some(Pending {
                digest: tenant_trust::set_digest(&subjects),
                held_at_ms: now,
                cause,
                subjects,
                changes,
                staged,
                about,
            });
            return Ok(true);
        }
        let by = match &g.record {
            Ok(Some(_)) => ApprovedBy::Load,
            _ => ApprovedBy::FirstLoad,
        };
        let before = g.record.as_ref().ok().and_then(Option::as_ref);
        let record = tenant_trust::next_record(t.id.as_str(), before, subjects, by, now);
        tenant_trust::write_record(&g.store, &record).map_err(|e| TenantError::Trust {
            id: t.id.clone(),
            reason: format!("cannot record its rule digests: {e}"),
        })?;
        g.record = Ok(Some(record));
        // A newer load that needs no approval supersedes the one waiting.
        g.pending = None;
        t.host.commit(staged).map_err(|source| TenantError::Host {
            id: t.id.clone(),
            source,
        })?;
        t.set_about(about);
        Ok(false)
    }

    /// Puts the tenant's load waiting for approval in place and records it as approved by an
    /// admin — only if it is the one named by `digest` (the one the admin reviewed): another
    /// is [`TenantError::StalePending`] and nothing changes.
    pub fn approve(&self, id: &TenantId, digest: &Digest) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let t = self.get(id)?;
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let pending = match &g.pending {
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
            pending.subjects.clone(),
            ApprovedBy::Admin,
            now_ms(),
        );
        tenant_trust::write_record(&g.store, &record).map_err(|e| TenantError::Trust {
            id: id.clone(),
            reason: format!("cannot record the approval: {e}"),
        })?;
        g.record = Ok(Some(record));
        if let Some(p) = g.pending.take() {
            t.host
                .commit(p.staged)
                .map_err(|source| TenantError::Host {
                    id: id.clone(),
                    source,
                })?;
            t.set_about(p.about);
        }
        drop(g);
        Ok(t.info())
    }

    /// Drops the tenant's load waiting for approval (the old rules go on serving). With
    /// `digest`, only if it is that one.
    pub fn reject(
        &self,
        id: &TenantId,
        digest: Option<&Digest>,
    ) -> Result<TenantInfo, TenantError> {
        let lock = self.admin_lock(id);
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
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
        let (approved, rules, record_error) = match &g.record {
            Ok(Some(r)) => (
                Some(r.approved),
                tenant_trust::rule_views(&r.subjects, &r.rules),
                None,
            ),
            Ok(None) => (None, Vec::new(), None),
            Err(e) => (None, Vec::new(), Some(e.clone())),
        };
        Ok(TenantTrustView {
            tenant: id.to_string(),
            settings: self.trust,
            approved,
            record_error,
            rules,
            pending: g.pending.as_ref().map(|p| PendingView {
                digest: p.digest,
                held_at_ms: p.held_at_ms,
                cause: p.cause,
                changes: p.changes.clone(),
                rules: tenant_trust::rule_views(&p.subjects, &[]),
            }),
        })
    }
}
