//! Why a host could not be built: [`HostError`], typed at every source (the runtime's, the wasm
//! policy's, the state folder's, the trust store's) and naming the field or folder at fault.

use std::path::PathBuf;

use hookbox_core::files::PathError;
use hookbox_wasm::{MountError, PolicyError};

use crate::runtime::RuntimeError;

/// Why a host could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The runtime (for `HookHost::new`) could not be built.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The state folder cannot be used.
    #[error("state folder {path}: {reason}")]
    State {
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The policy's wasm limits cannot be enforced by this runtime (wasm's own error, typed).
    #[error("the wasm policy cannot be enforced: {0}")]
    WasmPolicy(#[from] PolicyError),
    /// A policy value is out of range: refused, never clamped to something that works.
    #[error("host policy `{field}` {reason}")]
    Invalid {
        /// The [`HostPolicy`](crate::HostPolicy) field.
        field: &'static str,
        /// The value found and what it must be.
        reason: String,
    },
    /// A path of the policy cannot be made absolute or resolved (an empty path, a working
    /// directory that cannot be read, a folder on the way that cannot be searched): refused,
    /// never guessed.
    #[error("host policy `{field}`: {source}")]
    Path {
        /// The [`HostPolicy`](crate::HostPolicy) field.
        field: &'static str,
        /// Why (core's path error, quoting the path).
        #[source]
        source: PathError,
    },
    /// An extra mount root (`HostPolicy::extra_mount_roots`) cannot be opened.
    #[error("extra mount root: {0}")]
    MountRoot(#[source] MountError),
    /// The trust approval store cannot be opened.
    #[error(transparent)]
    TrustStore(#[from] crate::trust::StoreError),
    /// The trust approval store is inside (or holds) a folder hooks may read or write.
    #[error(
        "the approval store {} overlaps {}, a folder hooks may read or write: keep approvals in hookbox's state folder (e.g. ~/.local/state/hookbox/trust)",
        store.display(),
        overlaps.display()
    )]
    TrustStoreOverlaps {
        /// The store folder.
        store: PathBuf,
        /// The project or mount root it overlaps.
        overlaps: PathBuf,
    },
}
