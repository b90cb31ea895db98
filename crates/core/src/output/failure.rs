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
}

impl FailureClass {
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
