//! hookbox-trust: trust pinned to content (SPEC §11) — the pure model of what an approval covers.
//!
//! An approval is of a *subject* — a plugin folder or a bare hooks/settings file — and holds
//! one record per rule: the rule's canonical content with every grant (mounts and their access,
//! env, limits, http URL, headers and `allowedEnvVars`), the SHA-256 of every file the rule runs
//! that hookbox can resolve (a wasm component; the script a command names through
//! `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PROJECT_DIR}`, `~` or a relative path, or an interpreter's
//! script argument), what it runs that cannot be pinned (named, never silently trusted), and a
//! digest over all of it. One digest per rule: a changed rule does not untrust the others.
//!
//! - [`resolve_command`]: which files a command runs, and where their names sit in it.
//! - [`rule_content`]: a rule as the JSON its digest is taken over ([`canonical_json`]).
//! - [`RuleRecord`], [`Approval`]: records, and reading them back with every digest checked.
//! - [`ApprovalIndex`], [`RuleTrust`]: the verdict on a rule as it is now.
//! - [`diff_rules`], [`diff_approval`]: what changed, file by file and grant by grant.
//! - [`TrustMode`]: the `trust` setting (`off`, `warn`, `require`).
//! - [`escape_shown`]: untrusted text as it is shown for approval (controls, bidi and
//!   zero-width characters escaped).
//! - [`SnapshotManifest`], [`SnapshotRef`]: what an approval's snapshot holds (every file of the
//!   plugin folder, by digest), the reference an [`Approval`] keeps, and reading it back.
//!
//! Reading files, hashing what runs and storing approvals belong to the host (`hookbox-host`'s
//! `trust` module); nothing here touches the file system. It imports only the rule model of
//! `hookbox-core` and changes on its own; like core it has no async runtime, no wasm engine and
//! spawns no process (`scripts/check-deps.sh` checks it).

mod check;
mod content;
mod diff;
mod digest;
mod grants;
mod mode;
mod programs;
mod record;
mod resolve;
mod shell;
mod shown;
mod snapshot;

pub use check::{ApprovalIndex, RuleTrust, check_rule, missing_rules};
pub use content::rule_content;
pub use diff::{ApprovalDiff, Change, RuleDiff, RuleStatus, diff_approval, diff_rules};
pub use digest::{BadDigest, Digest, canonical_json, digest_of};
pub use grants::grants;
pub use mode::{TrustMode, UnknownTrustMode};
pub use record::{
    Approval, FileRecord, FileState, HookFile, MAX_FIELD_BYTES, MAX_FILES_PER_RULE, MAX_HOOK_FILES,
    MAX_RULES_PER_APPROVAL, ProgramRecord, RECORD_VERSION, RecordError, RuleLocation, RuleRecord,
    rule_digest, rule_digest_with_programs,
};
pub use resolve::{
    Base, CommandFiles, FileRef, FileRole, Site, UNPINNABLE_FIX, Unpinned, UnpinnedWhy,
    resolve_command,
};
pub use shown::{escape_shown, needs_escape};
pub use snapshot::{
    EntryKind, LiveChange, MAX_MANIFEST_BYTES, MAX_SNAPSHOT_ENTRIES, MAX_SNAPSHOT_ROOTS,
    ManifestError, SNAPSHOT_VERSION, SnapshotEntry, SnapshotManifest, SnapshotRef, SnapshotRoot,
    compare_root,
};
