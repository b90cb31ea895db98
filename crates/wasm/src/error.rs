//! Errors of building a runtime and loading components. Failures of a *run* are
//! [`HookFailure`]s with a [`FailureClass`]; a load that fails because of the component itself
//! maps to `incompatible_component` through [`WasmError::failure`].

use std::path::PathBuf;

use hookbox_core::output::{FailureClass, HookFailure};

use crate::policy::PolicyError;

/// Why a runtime could not be built or a component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// The runtime configuration is inconsistent.
    #[error("wasm runtime configuration: {0}")]
    Config(String),
    /// wasmtime refused the engine configuration.
    #[error("cannot create the wasm engine: {0}")]
    Engine(String),
    /// The cache folder cannot be used.
    #[error("wasm cache folder `{path}`: {reason}")]
    CacheDir {
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The component file cannot be read.
    #[error("cannot read component `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong (core's reader's reason: missing, a symlink refused, I/O).
        source: hookbox_core::files::ReadErrorKind,
    },
    /// The component file is not a regular file (a FIFO, a device, a folder): refused before
    /// reading, since a FIFO would block the read and a device would never end.
    #[error("component `{origin}` is {kind}, not a regular file")]
    NotAFile {
        /// The file.
        origin: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// The component file is larger than `RuntimeConfig::max_component_bytes`: refused without
    /// reading it whole.
    #[error(
        "component `{origin}` is {size} bytes, above the limit of {max_bytes} bytes (max_component_bytes)"
    )]
    TooLarge {
        /// The file.
        origin: String,
        /// Its size (or the bytes read before giving up).
        size: u64,
        /// The limit.
        max_bytes: u64,
    },
    /// The bytes are not a component this host can run (not wasm, a core module, invalid, wrong
    /// world or version, imports the host does not grant).
    #[error("component `{origin}` is incompatible: {reason}")]
    Incompatible {
        /// The file, or `<bytes>`.
        origin: String,
        /// Why, naming the offending export or import.
        reason: String,
    },
    /// The component needs more than the limits its hook would run under (known from its
    /// structure, so it is refused before it is compiled).
    #[error("component `{origin}` cannot run within its limits: {reason}")]
    AboveLimit {
        /// The file, or `<bytes>`.
        origin: String,
        /// Which limit, what it needs and the fix.
        reason: String,
    },
    /// A rule or policy asks for more than allowed.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

impl WasmError {
    /// The failure class of this error when it is reported as a hook failure: the component's
    /// own problems are `incompatible_component`; the rest are host problems with no class.
    pub fn failure_class(&self) -> Option<FailureClass> {
        match self {
            WasmError::Incompatible { .. } => Some(FailureClass::IncompatibleComponent),
            WasmError::AboveLimit { .. } => Some(FailureClass::InstantiateError),
            _ => None,
        }
    }

    /// This error as a hook failure (`incompatible_component` for the component's problems,
    /// `instantiate_error` for the host's).
    pub fn failure(&self) -> HookFailure {
        let class = self
            .failure_class()
            .unwrap_or(FailureClass::InstantiateError);
        HookFailure::new(class, self.to_string())
    }
}
