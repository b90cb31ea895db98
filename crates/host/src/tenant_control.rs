//! The control store every replica of a service shares (issue 29): for each tenant, the
//! approved rule set ([`TenantRecord`]), the load waiting for approval (its digest and diff),
//! the last load rejected, and a **generation** that every write raises by one.
//!
//! Replicas never talk to each other; they read and write this store. A write is a
//! compare-and-set: it names the generation it read and fails with
//! [`ControlError::Conflict`] when another replica wrote that generation first, so two replicas
//! approving different loads at once cannot both win — the loser reads again and finds the load
//! it approved is no longer the one held ([`update`]). No decision rests on a clock: the times
//! in a record are for people, the generation orders writes.
//!
//! A store that cannot be read approves nothing: the caller holds what it would have served
//! (when holding is on) rather than guess.
//!
//! [`ControlStore`] is the small trait a backend implements; [`folder`] is the default one (a
//! folder on shared storage, correct on NFS).
//!
//! It also holds the snapshots the approved sets name (a tenant's approved files, by digest):
//! a replica that did not load a tenant's approved files itself — it started while a load was
//! held — brings them from here, checking every file against its snapshot's manifest.

pub mod folder;

use hookbox_trust::Digest;
use serde::{Deserialize, Serialize};

use crate::tenant_id::TenantId;
use crate::tenant_trust::{LoadCause, TenantRecord};

/// The control record's format version.
pub const CONTROL_RECORD_VERSION: u32 = 1;

/// How many times [`update`] reads again after losing a race before it gives up.
pub const MAX_CONTROL_RETRIES: usize = 16;

/// Why the control store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Another replica wrote the generation this write meant to write: read again.
    #[error(
        "control record of tenant `{tenant}`: generation {generation} was written by another replica first"
    )]
    Conflict {
        /// The tenant.
        tenant: TenantId,
        /// The generation both meant to write.
        generation: u64,
    },
    /// The store (or one tenant's part of it) cannot be read or written.
    #[error("control store {place}: {reason}")]
    Unusable {
        /// The folder or file.
        place: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
}

/// The load waiting for approval, as every replica sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldLoad {
    /// Its rule set digest (with the tenant's terms): what an approval must name.
    pub digest: Digest,
    /// When it was held (ms since the Unix epoch, the holding replica's clock: for people).
    pub held_at_ms: u64,
    /// What loaded it.
    pub cause: LoadCause,
    /// Its changes against the approved set, as the trust view shows them (`changes`,
    /// `term_changes`).
    pub diff: serde_json::Value,
}

/// One tenant's control record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlRecord {
    /// [`CONTROL_RECORD_VERSION`].
    pub version: u32,
    /// The tenant.
    pub tenant: String,
    /// Raised by one at every write; the generation a replica serves (`/v1/status`).
    pub generation: u64,
    /// When it was written (ms since the Unix epoch, the writer's clock: for people only).
    pub written_at_ms: u64,
    /// The approved rule set; `None` until one was.
    pub approved: Option<TenantRecord>,
    /// The load waiting for approval.
    pub held: Option<HeldLoad>,
    /// The last load rejected: a replica that loads these very files drops them too.
    pub rejected: Option<Digest>,
}

impl ControlRecord {
    /// The first record of `tenant` (generation 0: none written yet).
    pub fn empty(tenant: &TenantId) -> ControlRecord {
        ControlRecord {
            version: CONTROL_RECORD_VERSION,
            tenant: tenant.to_string(),
            generation: 0,
            written_at_ms: 0,
            approved: None,
            held: None,
            rejected: None,
        }
    }

    /// Parses a stored record of `tenant`, checking its version, its tenant and its approved
    /// set (whose digest must match its rules: [`TenantRecord::parse`]).
    pub fn parse(text: &str, tenant: &TenantId) -> Result<ControlRecord, String> {
        let r: ControlRecord =
            serde_json::from_str(text).map_err(|e| format!("not a control record: {e}"))?;
        if r.version != CONTROL_RECORD_VERSION {
            return Err(format!(
                "control record version {}; this hookbox reads version {CONTROL_RECORD_VERSION}",
                r.version
            ));
        }
        if r.tenant != tenant.as_str() {
            return Err(format!(
                "it is tenant `{}`'s record, not `{tenant}`'s (a file copied or planted)",
                r.tenant
            ));
        }
        if let Some(a) = &r.approved {
            TenantRecord::parse(&a.to_json(), tenant.as_str())
                .map_err(|e| format!("its approved set: {e}"))?;
        }
        Ok(r)
    }

    /// Pretty JSON, as stored.
    pub fn to_json(&self) -> String {
        // Plain data: serialising it cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The approved set's digest.
    pub fn approved_digest(&self) -> Option<Digest> {
        self.approved.as_ref().map(|r| r.approved.digest)
    }
}

/// What a read of one tenant's control records found.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlRead {
    /// The newest valid record (an empty one of generation 0 when there is none).
    pub record: ControlRecord,
    /// The highest generation present, valid or not: the next write is one above it, so a
    /// damaged newest record is superseded rather than fought over.
    pub latest: u64,
}

/// Where replicas share their tenants' approvals. A backend keeps records by tenant and
/// generation; it never decides anything itself.
pub trait ControlStore: Send + Sync + std::fmt::Debug {
    /// The newest valid record of `tenant` and the highest generation present. A record that
    /// cannot be read or parsed is skipped (and logged), never taken for another.
    fn read(&self, tenant: &TenantId) -> Result<ControlRead, ControlError>;

    /// Writes `record` as its generation, only if no record of that generation exists
    /// ([`ControlError::Conflict`] otherwise): atomic, durable, whole or not at all.
    fn write(&self, record: &ControlRecord) -> Result<(), ControlError>;

    /// Where it is, for logs and errors.
    fn describe(&self) -> String;

    /// Its folder on this machine, if it has one: kept out of every tenant's read-write
    /// mounts, so no hook can write what every replica serves.
    fn local_path(&self) -> Option<&std::path::Path> {
        None
    }

    /// Stores the manifest of snapshot `id` for every replica (issue 27 item 6), unless it is
    /// there: named by its id, never replaced. Default: this store keeps no snapshots.
    fn put_snapshot_manifest(&self, id: Digest, text: &str) -> Result<(), ControlError> {
        let _ = (id, text);
        Err(self.no_snapshots())
    }

    /// Stores one file's bytes of a snapshot, named by their SHA-256 (`sha256`), unless an
    /// object of that name and size is there. Default: this store keeps no snapshots.
    fn put_snapshot_object(&self, sha256: Digest, bytes: &[u8]) -> Result<(), ControlError> {
        let _ = (sha256, bytes);
        Err(self.no_snapshots())
    }

    /// Whether an object of `sha256` and `size` is stored (its bytes are checked only when read).
    fn has_snapshot_object(&self, sha256: Digest, size: u64) -> bool {
        let _ = (sha256, size);
        false
    }

    /// The manifest of snapshot `id` (bounded by
    /// [`MAX_MANIFEST_BYTES`](hookbox_trust::MAX_MANIFEST_BYTES)); `None` when not stored. The
    /// reader checks it is `id`'s.
    fn snapshot_manifest(&self, id: Digest) -> Result<Option<String>, ControlError> {
        let _ = id;
        Err(self.no_snapshots())
    }

    /// The bytes stored as object `sha256`, at most `size` of them. The reader checks them
    /// against the manifest: another writer could have swapped them.
    fn snapshot_object(&self, sha256: Digest, size: u64) -> Result<Vec<u8>, ControlError> {
        let _ = (sha256, size);
        Err(self.no_snapshots())
    }

    /// The error of a store that keeps no snapshots.
    fn no_snapshots(&self) -> ControlError {
        ControlError::Unusable {
            place: self.describe(),
            reason: "this control store keeps no snapshots, so a replica cannot serve approved files it did not load itself".into(),
        }
    }
}

/// Reads `tenant`'s record, lets `change` make the next one from it, and writes that as the
/// next generation — again from a fresh read whenever another replica wrote first, at most
/// [`MAX_CONTROL_RETRIES`] times. `change` returns `Ok(false)` when nothing is to be written,
/// and its own error to stop (a stale approval). The record written (or the current one).
pub fn update<E: From<ControlError>>(
    store: &dyn ControlStore,
    tenant: &TenantId,
    now_ms: u64,
    mut change: impl FnMut(&mut ControlRecord) -> Result<bool, E>,
) -> Result<ControlRecord, E> {
    let mut last = None;
    for _ in 0..MAX_CONTROL_RETRIES {
        let read = store.read(tenant)?;
        let mut next = read.record.clone();
        if !change(&mut next)? {
            return Ok(read.record);
        }
        next.version = CONTROL_RECORD_VERSION;
        next.generation = read.latest + 1;
        next.written_at_ms = now_ms;
        match store.write(&next) {
            Ok(()) => return Ok(next),
            Err(e @ ControlError::Conflict { .. }) => last = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last
        .unwrap_or_else(|| ControlError::Unusable {
            place: store.describe(),
            reason: "no retries".into(),
        })
        .into())
}
