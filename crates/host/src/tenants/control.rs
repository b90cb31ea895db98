//! The tenants' side of the shared control store ([`tenant_control`](crate::tenant_control)),
//! when the embedder gave one ([`Tenants::with_control`]): what a replica reads before it
//! decides on a load (the approved set and the last rejection, instead of its own state
//! folder's record), what it writes (a held load, an approval, a rejection, a load put in
//! place), and [`Tenants::sync_control`] — acting on what another replica wrote.
//!
//! Every write is a compare-and-set on the tenant's generation
//! ([`update`](crate::tenant_control::update)): an approval names the digest the admin
//! reviewed and is refused when another replica has since held another load or approved one
//! — on every replica, since they all read the same record.

use std::sync::PoisonError;

use hookbox_core::clock::now_ms;
use hookbox_trust::Digest;

use crate::tenant_control::{self, ControlRecord, ControlStore, HeldLoad};
use crate::tenant_id::TenantId;
use crate::tenant_trust::TenantRecord;

use super::Tenants;
use super::error::TenantError;
use super::spec::TenantAttachment;
use super::tenant::Tenant;

/// What [`Tenants::sync_control`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlSync {
    /// Nothing new in the store (or nothing for this replica to do).
    Unchanged,
    /// The held load was put in place (approved elsewhere) or dropped (rejected elsewhere).
    Applied,
    /// The store approves a rule set this replica does not have: reload the tenant from its
    /// folder (its load then matches the approved digest, or is held).
    Reload,
}

impl<A: TenantAttachment> Tenants<A> {
    /// Reads the control store's record of `t` into its gate (the approved set in place of the
    /// local record; an unreadable store approves nothing). Under the admin lock.
    pub(super) fn refresh_from_control(&self, t: &Tenant<A>, store: &dyn ControlStore) {
        let read = store.read(&t.id);
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        match read {
            Ok(read) => {
                g.record = Ok(read.record.approved.clone());
                g.generation = read.record.generation;
                g.rejected = read.record.rejected;
            }
            Err(e) => {
                tracing::error!(tenant = %t.id, error = %e, "control store unreadable: nothing is approved");
                g.record = Err(e.to_string());
            }
        }
    }

    /// Publishes a load held for approval; a failure is logged (the load stays held here,
    /// and an approval on another replica is refused until a write succeeds).
    pub(super) fn publish_held(&self, t: &Tenant<A>, store: &dyn ControlStore, held: HeldLoad) {
        let written = tenant_control::update::<TenantError>(store, &t.id, now_ms(), |r| {
            if r.held.as_ref().is_some_and(|h| h.digest == held.digest) {
                return Ok(false);
            }
            r.held = Some(held.clone());
            Ok(true)
        });
        self.note_written(t, written, "the held load");
    }

    /// Publishes `record`, just put in place (holding off, or the approved rules loaded):
    /// the approved set, unless it already is.
    pub(super) fn publish_approved(
        &self,
        t: &Tenant<A>,
        store: &dyn ControlStore,
        record: &TenantRecord,
    ) {
        let digest = record.approved.digest;
        let written = tenant_control::update::<TenantError>(store, &t.id, now_ms(), |r| {
            if r.approved_digest() == Some(digest) {
                return Ok(false);
            }
            r.approved = Some(record.clone());
            if r.held.as_ref().is_some_and(|h| h.digest == digest) {
                r.held = None;
            }
            Ok(true)
        });
        self.note_written(t, written, "the rules in place");
    }

    fn note_written(
        &self,
        t: &Tenant<A>,
        written: Result<ControlRecord, TenantError>,
        what: &'static str,
    ) {
        match written {
            Ok(r) => {
                t.gate
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .generation = r.generation
            }
            Err(e) => {
                tracing::error!(tenant = %t.id, error = %e, "cannot write {what} to the control store");
            }
        }
    }

    /// Records an admin's approval of `digest` (whose set is `record`) in the store — refused
    /// unless it is the load the store holds ([`TenantError::StalePending`] naming the one
    /// held, [`TenantError::NothingPending`] when none is), so two replicas approving
    /// different loads cannot both win.
    pub(super) fn approve_in_control(
        &self,
        id: &TenantId,
        store: &dyn ControlStore,
        digest: &Digest,
        record: &TenantRecord,
    ) -> Result<ControlRecord, TenantError> {
        tenant_control::update(store, id, now_ms(), |r| {
            if r.approved_digest() == Some(*digest) {
                return Ok(false);
            }
            match &r.held {
                Some(h) if h.digest == *digest => {}
                Some(h) => {
                    return Err(TenantError::StalePending {
                        id: id.clone(),
                        asked: *digest,
                        pending: h.digest,
                    });
                }
                None => return Err(TenantError::NothingPending(id.clone())),
            }
            r.approved = Some(record.clone());
            r.held = None;
            r.rejected = None;
            Ok(true)
        })
    }

    /// Records an admin's rejection in the store: the load it holds (only if it is `digest`,
    /// when given) is dropped and remembered as rejected. Whether the store held one.
    pub(super) fn reject_in_control(
        &self,
        id: &TenantId,
        store: &dyn ControlStore,
        digest: Option<&Digest>,
    ) -> Result<Option<ControlRecord>, TenantError> {
        let mut rejected = false;
        let r = tenant_control::update(store, id, now_ms(), |r| {
            // Of the last read only: an earlier one may have lost a race.
            rejected = false;
            reject_held_load(r, id, digest, &mut rejected)
        })?;
        Ok(rejected.then_some(r))
    }

    /// Acts on what other replicas wrote to the control store for tenant `id` since this one
    /// last looked: its held load approved there is put in place here, rejected there is
    /// dropped here; an approved set this replica has neither in place nor held asks for a
    /// reload ([`ControlSync::Reload`]). Nothing without a control store.
    ///
    /// # Blocking
    /// Waits for the tenant's admin lock, reads the store.
    pub fn sync_control(&self, id: &TenantId) -> Result<ControlSync, TenantError> {
        let _lock = self.admin(id);
        let Some(store) = self.control.clone() else {
            return Ok(ControlSync::Unchanged);
        };
        let t = self.get(id)?;
        let read = store.read(id)?;
        let r = read.record;
        let mut g = t.gate.lock().unwrap_or_else(PoisonError::into_inner);
        if g.generation == r.generation {
            return Ok(ControlSync::Unchanged);
        }
        g.generation = r.generation;
        g.record = Ok(r.approved.clone());
        g.rejected = r.rejected;
        let approved = r.approved_digest();
        let pending = g.pending.as_ref().map(|p| p.digest);
        if pending.is_some() && pending == approved {
            let Some(p) = g.pending.take() else {
                return Ok(ControlSync::Unchanged);
            };
            drop(g);
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
                g.serving = approved;
                g.serving_snapshots = super::snapshots::snapshot_ids(&p.subjects).collect();
            }
            self.collect_snapshots(&t);
            return Ok(ControlSync::Applied);
        }
        if pending.is_some() && pending == r.rejected {
            g.pending = None;
            return Ok(ControlSync::Applied);
        }
        if approved.is_some() && approved != g.serving {
            return Ok(ControlSync::Reload);
        }
        Ok(ControlSync::Unchanged)
    }
}

/// The store's part of a rejection: its held load (only if it is `digest`, when given) dropped
/// and remembered as rejected.
fn reject_held_load(
    r: &mut ControlRecord,
    id: &TenantId,
    digest: Option<&Digest>,
    rejected: &mut bool,
) -> Result<bool, TenantError> {
    match &r.held {
        Some(h) if digest.is_none_or(|d| *d == h.digest) => {
            r.rejected = Some(h.digest);
            r.held = None;
            *rejected = true;
            Ok(true)
        }
        Some(h) => Err(TenantError::StalePending {
            id: id.clone(),
            asked: digest.copied().unwrap_or(h.digest),
            pending: h.digest,
        }),
        None => Ok(false),
    }
}
