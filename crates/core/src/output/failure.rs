//! Failure classes: why a hook produced no answer of its own. Each class is distinct so operators
//! and the hostile-guest suite can tell a timeout from a memory bomb from a trap.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a hook failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// It ran past its wall-clock timeout and was killed.
    Timeout,
    /// A wasm guest used up its fuel budget.
    OutOfFuel,
    /// A wasm guest tried to grow memory (or tables) past its cap.
    MemoryLimit,
    /// A wasm guest trapped (panic, unreachable, stack overflow, …).
    Trap,
    /// The hook's output could not be understood (wrong shape or types).
    InvalidOutput,
    /// A wasm component could not be instantiated (pool exhausted, bad mount, …).
    InstantiateError,
    /// A wasm component's world or imports are not what the host offers.
    IncompatibleComponent,
    /// A native command could not be started (missing, not executable).
    SpawnError,
    /// The hook was refused before it ran because its tenant (or the host) is over a quota:
    /// hooks in flight, pool slots, dispatch rate, memory budget or the dispatch deadline. Never
    /// queued behind another tenant's work.
    Overloaded,
    /// An `http` hook's request failed: connection refused, a status other than 2xx, a refused
    /// destination or redirect, or a body that cannot be read.
    HttpError,
    /// The host lost the hook: its task panicked or was cancelled. A host bug, reported so the
    /// rule's fail mode still applies instead of the hook silently vanishing.
    Internal,
    /// Refused before it ran because the rule (or a file it runs) is not approved as it is
    /// now (`trust = require`).
    Untrusted,
}

impl FailureClass {
    /// Every class, in declaration order (for metrics and docs).
    pub const ALL: [FailureClass; 12] = [
        FailureClass::Timeout,
        FailureClass::OutOfFuel,
        FailureClass::MemoryLimit,
        FailureClass::Trap,
        FailureClass::InvalidOutput,
        FailureClass::InstantiateError,
        FailureClass::IncompatibleComponent,
        FailureClass::SpawnError,
        FailureClass::Overloaded,
        FailureClass::HttpError,
        FailureClass::Internal,
        FailureClass::Untrusted,
    ];

    /// The wire spelling (`timeout`, `out_of_fuel`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Timeout => "timeout",
            FailureClass::OutOfFuel => "out_of_fuel",
            FailureClass::MemoryLimit => "memory_limit",
            FailureClass::Trap => "trap",
            FailureClass::InvalidOutput => "invalid_output",
            FailureClass::InstantiateError => "instantiate_error",
            FailureClass::IncompatibleComponent => "incompatible_component",
            FailureClass::SpawnError => "spawn_error",
            FailureClass::Overloaded => "overloaded",
            FailureClass::HttpError => "http_error",
            FailureClass::Internal => "internal_error",
            FailureClass::Untrusted => "untrusted",
        }
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A classified failure with a human message (quoting the guest's own message for traps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{class}: {message}")]
pub struct HookFailure {
    /// The class.
    pub class: FailureClass,
    /// What happened.
    pub message: String,
}

impl HookFailure {
    /// A failure of `class`.
    pub fn new(class: FailureClass, message: impl Into<String>) -> HookFailure {
        HookFailure {
            class,
            message: message.into(),
        }
    }
}
