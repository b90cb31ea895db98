//! Turns whatever wasmtime returned into a [`HookFailure`] of the right class. Nothing leaves this
//! crate as a bare `wasmtime::Error`: the limiter's record comes first (a memory-cap hit is not a
//! `Trap`), then the trap code, then the phase the error happened in.

use std::time::Duration;

use hookbox_core::output::{FailureClass, HookFailure};
use wasmtime::{PoolConcurrencyLimitError, Trap};
use wasmtime_wasi::I32Exit;

use crate::capture::CappedPipe;
use crate::state::StoreState;

/// Where the error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Instantiating the component (start functions, initial memories and tables).
    Instantiate,
    /// Calling its export.
    Call,
}

/// How much of the guest's stderr goes into a trap message.
const STDERR_EXCERPT: usize = 2048;

/// What the run was allowed, for messages.
pub(crate) struct Budget {
    pub(crate) timeout: Duration,
    pub(crate) fuel: Option<u64>,
    pub(crate) response_bytes: u64,
}

/// How wasmtime 48.0.8 words the error of a lift past the store's hostcall fuel (its type,
/// `HostcallFuelExhausted`, is private). A test runs a guest over the cap, so a new wording
/// fails the suite instead of turning `invalid_output` into `trap`.
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

/// Classifies `err`, raised in `phase` by a store whose data is `state`.
pub(crate) fn classify(
    err: &wasmtime::Error,
    phase: Phase,
    state: &StoreState,
    stderr: &CappedPipe,
    budget: &Budget,
) -> HookFailure {
    if let Some(hit) = &state.limiter.hit {
        return HookFailure::new(FailureClass::MemoryLimit, hit.describe());
    }
    if let Some(trap) = err.downcast_ref::<Trap>() {
        return match *trap {
            Trap::Interrupt => timeout(budget.timeout),
            Trap::OutOfFuel => HookFailure::new(
                FailureClass::OutOfFuel,
                format!(
                    "used up its fuel budget of {}",
                    budget.fuel.unwrap_or_default()
                ),
            ),
            Trap::StackOverflow => HookFailure::new(
                FailureClass::Trap,
                "wasm stack overflow (call stack exhausted; unbounded recursion?)",
            ),
            other => HookFailure::new(FailureClass::Trap, with_stderr(&other.to_string(), stderr)),
        };
    }
    if format!("{err:#}").contains(HOSTCALL_FUEL_EXHAUSTED) {
        return HookFailure::new(
            FailureClass::InvalidOutput,
            format!(
                "the guest handed the host more than {} bytes in one call (its response, a log message or a write): above the `response_bytes` limit of {} bytes",
                budget
                    .response_bytes
                    .max(crate::limits::WasmLimits::MIN_HOSTCALL_BYTES),
                budget.response_bytes
            ),
        );
    }
    if err.downcast_ref::<PoolConcurrencyLimitError>().is_some() {
        // The embedder admits runs to the pool's slots (the host's pool does); a run beyond
        // them is refused at once, as any other run over capacity.
        return HookFailure::new(
            FailureClass::Overloaded,
            format!("every instance slot of the pool is in use: raise pool.slots ({err})"),
        );
    }
    if let Some(exit) = err.downcast_ref::<I32Exit>() {
        return HookFailure::new(
            FailureClass::Trap,
            with_stderr(
                &format!(
                    "guest exited with code {} instead of returning a response",
                    exit.0
                ),
                stderr,
            ),
        );
    }
    match phase {
        Phase::Instantiate => HookFailure::new(FailureClass::InstantiateError, format!("{err:#}")),
        Phase::Call => {
            HookFailure::new(FailureClass::Trap, with_stderr(&format!("{err:#}"), stderr))
        }
    }
}

/// The failure of a run stopped at its wall-clock budget.
pub(crate) fn timeout(limit: Duration) -> HookFailure {
    HookFailure::new(
        FailureClass::Timeout,
        format!("ran past its {} s timeout", limit.as_secs_f64()),
    )
}

/// `what`, followed by the end of the guest's stderr (a Rust panic message lands there).
fn with_stderr(what: &str, stderr: &CappedPipe) -> String {
    let tail = stderr.tail(STDERR_EXCERPT);
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    if lines.is_empty() {
        what.to_owned()
    } else {
        format!("{what}; guest stderr: {}", lines.join(" | "))
    }
}
