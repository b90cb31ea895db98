//! `hookbox inspect X.wasm`: what a file is (typed hook, command, other component, core module,
//! not wasm), which `hookbox:hook` version it targets, what it imports (its capability requests,
//! each marked granted or not) and exports, and whether this host would load it, with reasons.
//! It applies exactly the checks of loading.

use serde::{Deserialize, Serialize};

use crate::bindings::PACKAGE;
use crate::cache;
use crate::error::WasmError;
use crate::runtime::{ComponentKind, WasmRuntime};
use crate::shape::{self, ComponentShape};
use crate::world::{self, Analysis, Grant, World};

/// What the inspected bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InspectKind {
    /// A component of the typed `hookbox:hook` world.
    TypedHook,
    /// A component exporting `wasi:cli/run`.
    WasiCommand,
    /// A component exporting neither (or a wrong version of the hook world).
    UnknownComponent,
    /// A component wasmtime cannot compile.
    InvalidComponent,
    /// A core WebAssembly module, not a component.
    CoreModule,
    /// Not WebAssembly.
    NotWasm,
}

/// One import of the component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    /// Its name, e.g. `wasi:filesystem/types@0.2.0`.
    pub name: String,
    /// Whether this host grants it.
    pub granted: bool,
    /// How: granted, refused as network, or not offered.
    pub grant: Grant,
}

/// The inspection of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InspectReport {
    /// What it is.
    pub kind: InspectKind,
    /// The `hookbox:hook` version it exports, when it exports the package at all.
    pub wit_version: Option<String>,
    /// Its imports: the capabilities it asks for.
    pub imports: Vec<ImportReport>,
    /// Its export names.
    pub exports: Vec<String>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// sha256 of the bytes, hex.
    pub sha256: String,
    /// What one instantiation creates, when the bytes are a component that parses.
    pub shape: Option<ComponentShape>,
    /// Whether this host would load and run it.
    pub accepted: bool,
    /// Why not (empty when accepted).
    pub reasons: Vec<String>,
}

impl WasmRuntime {
    /// Inspects the file at `path`.
    pub fn inspect_file(&self, path: &std::path::Path) -> Result<InspectReport, WasmError> {
        let bytes = crate::read::read_path(path, self.config.max_component_bytes)?;
        Ok(self.inspect_bytes(&bytes))
    }

    /// Inspects `bytes`. Compiles them (through the cache) when they are a component.
    pub fn inspect_bytes(&self, bytes: &[u8]) -> InspectReport {
        let sha = cache::sha256(bytes);
        let mut report = InspectReport {
            kind: InspectKind::NotWasm,
            wit_version: None,
            imports: vec![],
            exports: vec![],
            size_bytes: bytes.len() as u64,
            sha256: cache::hex(&sha),
            shape: None,
            accepted: false,
            reasons: vec![],
        };
        if let Err(reason) = world::check_header(bytes) {
            report.kind = if bytes.starts_with(b"\0asm\x01\0\0\0") {
                InspectKind::CoreModule
            } else {
                InspectKind::NotWasm
            };
            report.reasons.push(reason);
            return report;
        }
        // Refused before compiling, as loading does: naming the pool setting is the answer.
        match shape::read(bytes) {
            Ok(reading) => {
                report.shape = Some(reading.shape);
                if let Err(reason) = self.check_shape(&reading.shape) {
                    report.kind = match world::world(&reading.exports) {
                        Ok(World::Hook(_)) => InspectKind::TypedHook,
                        Ok(World::Command) => InspectKind::WasiCommand,
                        Err(_) => InspectKind::UnknownComponent,
                    };
                    report.exports = reading.exports;
                    report.reasons.push(reason);
                    return report;
                }
            }
            Err(e) => {
                report.kind = InspectKind::InvalidComponent;
                report.reasons.push(format!("invalid component: {e}"));
                return report;
            }
        }
        let compiled =
            crate::runtime::guard_wasmtime("<bytes>", || self.compile(bytes, &sha, "<bytes>"))
                .and_then(|r| r);
        let component = match compiled {
            Ok((c, _)) => c,
            Err(e) => {
                report.kind = InspectKind::InvalidComponent;
                report.reasons.push(match e {
                    WasmError::Incompatible { reason, .. } => reason,
                    other => other.to_string(),
                });
                return report;
            }
        };
        let analysis = Analysis::of(&self.engine, &component);
        report.kind = match analysis.world {
            Ok(World::Hook(_)) => InspectKind::TypedHook,
            Ok(World::Command) => InspectKind::WasiCommand,
            Err(_) => InspectKind::UnknownComponent,
        };
        report.wit_version = analysis.exports.iter().find_map(|e| {
            let (path, version) = e.split_once('@')?;
            path.starts_with(&format!("{PACKAGE}/"))
                .then(|| version.to_owned())
        });
        report.reasons = analysis.problems();
        if report.reasons.is_empty()
            && let Err(e) = self.linker.instantiate_pre(&component)
        {
            report.reasons.push(format!("{e:#}"));
        }
        report.accepted = report.reasons.is_empty();
        report.imports = analysis
            .imports
            .into_iter()
            .map(|(name, grant)| ImportReport {
                name,
                granted: grant == Grant::Granted,
                grant,
            })
            .collect();
        report.exports = analysis.exports;
        report
    }
}

impl InspectKind {
    /// The kind a loaded component of `kind` inspects as.
    pub fn of(kind: ComponentKind) -> InspectKind {
        match kind {
            ComponentKind::TypedHook => InspectKind::TypedHook,
            ComponentKind::WasiCommand => InspectKind::WasiCommand,
        }
    }
}
