//! Why a tenant operation failed.

use hookbox_core::diagnostic::Diagnostic;
use hookbox_trust::Digest;

use crate::error::HostError;
use crate::tenant_id::TenantId;
use crate::tenant_policy::TenantPolicyError;

/// Why a tenant operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TenantError {
    /// No tenant has this id.
    #[error("no tenant `{0}`")]
    NotFound(TenantId),
    /// `add` of an id already present.
    #[error("tenant `{0}` already exists; reload or replace it instead")]
    AlreadyExists(TenantId),
    /// Its policy is inconsistent.
    #[error("tenant `{id}`: {source}")]
    Policy {
        /// The tenant.
        id: TenantId,
        /// Why.
        source: TenantPolicyError,
    },
    /// Its host could not be built (state folder, policy).
    #[error("tenant `{id}`: {source}")]
    Host {
        /// The tenant.
        id: TenantId,
        /// Why.
        source: HostError,
    },
    /// The runtime's pool resets slots with `pagemap_scan`, which is sound only where one party's
    /// code uses the pool: refused for every tenant.
    #[error(
        "tenant `{id}`: this runtime's pool resets slots with pagemap_scan, which is not allowed \
         where tenants share the pool (wasmtime 48.0.8 keeps only present pages, so a dirty page \
         swapped out or being migrated survives into the next instance of its slot — another \
         tenant's); fix: build the tenants' runtime with `pool.pagemap_scan` off (the default)"
    )]
    PagemapScanShared {
        /// The tenant.
        id: TenantId,
    },
    /// Its hooks did not load without errors; nothing changed.
    #[error("tenant `{id}`: {} error(s) loading its hooks; the previous rules (if any) keep serving", .diagnostics.iter().filter(|d| d.severity == hookbox_core::diagnostic::Severity::Error).count())]
    Load {
        /// The tenant.
        id: TenantId,
        /// Every diagnostic of the failed load.
        diagnostics: Vec<Diagnostic>,
    },
    /// Its rule digests could not be recorded; nothing changed.
    #[error("tenant `{id}`: {reason}; the previous rules (if any) keep serving")]
    Trust {
        /// The tenant.
        id: TenantId,
        /// Why.
        reason: String,
    },
    /// The rules were put in place, but their record could not be written: they serve, and
    /// the next load records them (until then a restart compares the folder with the record
    /// before them).
    #[error(
        "tenant `{id}`: {what} are in place but could not be recorded ({reason}); the next load records them"
    )]
    Unrecorded {
        /// The tenant.
        id: TenantId,
        /// Which rules.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// An operation through one tenant's admin lock ([`TenantAdmin`](super::TenantAdmin)) named
    /// another tenant.
    #[error("the admin lock held is tenant `{held}`'s, not `{asked}`'s")]
    NotHeld {
        /// The tenant whose lock is held.
        held: TenantId,
        /// The tenant the operation named.
        asked: TenantId,
    },
    /// The tenant has no approved rules in place and does not answer this event
    /// ([`Held::answer`](super::Held::answer)).
    #[error(transparent)]
    Held(#[from] super::HeldUnavailable),
    /// `approve` or `reject` of a tenant with no load waiting.
    #[error("tenant `{0}` has no load waiting for approval")]
    NothingPending(TenantId),
    /// `approve` or `reject` naming another load than the one waiting (a newer load replaced
    /// the one the admin saw).
    #[error(
        "tenant `{id}`: the load waiting for approval is {pending}, not {asked}; review it again"
    )]
    StalePending {
        /// The tenant.
        id: TenantId,
        /// The digest the request named.
        asked: Digest,
        /// The digest of the load waiting.
        pending: Digest,
    },
}
