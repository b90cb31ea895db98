//! Admission of a run to the memory budget: room for the run's memory caps in the runtime's
//! aggregate budget, held until the run's store is dropped.
//!
//! Instance slots are not admitted here: the embedder's admission does that, once (the host's
//! pool, which also keeps each tenant to its quota and a reserve for quiet tenants, sized to
//! `pool.slots`). A run the pool cannot place anyway fails at once, `overloaded`, naming
//! `pool.slots`.
//!
//! The wait is bounded: a run waits at most the wait its caller gives
//! ([`RunScope::admission_wait`](crate::RunScope::admission_wait), never past its own timeout),
//! then fails with class `overloaded`, so a flood is refused instead of queueing every later hook
//! behind it. A run whose memory cap alone is above the whole budget can never be admitted and
//! fails at once (`instantiate_error`, naming the setting).

use std::time::Duration;

use hookbox_core::output::{FailureClass, HookFailure};
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

/// The memory budget is counted in wasm pages (64 KiB), so a `u32` of permits covers 256 TiB.
const UNIT: u64 = 64 << 10;

/// The runtime's memory budget.
#[derive(Debug)]
pub(crate) struct Admission {
    memory: Semaphore,
    memory_units: u32,
    memory_budget_bytes: u64,
}

/// What an admitted run holds; dropping it gives its memory back.
#[derive(Debug)]
pub(crate) struct Admitted<'a> {
    _memory: SemaphorePermit<'a>,
}

/// `bytes` in budget units, rounded up; `None` past `u32`.
fn units(bytes: u64) -> Option<u32> {
    u32::try_from(bytes.div_ceil(UNIT)).ok()
}

impl Admission {
    pub(crate) fn new(memory_budget_bytes: u64) -> Admission {
        let memory_units = units(memory_budget_bytes).unwrap_or(u32::MAX);
        Admission {
            memory: Semaphore::new(memory_units as usize),
            memory_units,
            memory_budget_bytes,
        }
    }

    /// Waits (at most `wait`) for `memory_bytes × memories` of the budget (each linear memory
    /// of the component is capped at `memory_bytes` on its own).
    pub(crate) async fn admit(
        &self,
        memory_bytes: u64,
        memories: u64,
        wait: Duration,
    ) -> Result<Admitted<'_>, HookFailure> {
        let charge = memory_bytes.saturating_mul(memories);
        let what =
            || format!("{charge} bytes: memory_bytes {memory_bytes} × {memories} linear memories");
        let need = units(charge)
            .filter(|&n| n <= self.memory_units)
            .ok_or_else(|| {
                HookFailure::new(
                    FailureClass::InstantiateError,
                    format!(
                        "this run's memory cap ({}) is above the runtime's whole memory budget of {} bytes (memory_budget_bytes): lower memory_mb or raise the budget",
                        what(),
                        self.memory_budget_bytes
                    ),
                )
            })?;
        // Room now: no timer. A `timeout` made for every run (a clock read, the runtime's
        // timer handle cloned — a reference count every core writes) showed in the profile,
        // and the wait is the rare case.
        if let Ok(memory) = self.memory.try_acquire_many(need) {
            return Ok(Admitted { _memory: memory });
        }
        let deadline = Instant::now() + wait;
        let Ok(Ok(memory)) =
            tokio::time::timeout_at(deadline, self.memory.acquire_many(need)).await
        else {
            return Err(HookFailure::new(
                FailureClass::Overloaded,
                format!(
                    "the runs in progress hold {} of the {} bytes of memory_budget_bytes; this run needs {} more and waited {} ms: raise memory_budget_bytes",
                    self.memory_in_use(),
                    self.memory_budget_bytes,
                    what(),
                    wait.as_millis()
                ),
            ));
        };
        Ok(Admitted { _memory: memory })
    }

    /// Bytes of the budget held by runs in progress (rounded to pages).
    pub(crate) fn memory_in_use(&self) -> u64 {
        let free = u64::try_from(self.memory.available_permits()).unwrap_or(u64::MAX);
        u64::from(self.memory_units).saturating_sub(free) * UNIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_is_admitted_while_it_fits_then_overloaded() {
        let a = Admission::new(10 * UNIT);
        let wait = Duration::from_millis(5);
        let first = a.admit(6 * UNIT, 1, wait).await.unwrap();
        assert_eq!(a.memory_in_use(), 6 * UNIT);
        let e = a.admit(5 * UNIT, 1, wait).await.unwrap_err();
        assert_eq!(e.class, FailureClass::Overloaded);
        assert!(
            e.message.contains("raise memory_budget_bytes"),
            "{}",
            e.message
        );
        let second = a.admit(2 * UNIT, 2, wait).await.unwrap();
        drop((first, second));
        assert_eq!(a.memory_in_use(), 0);
        let e = a.admit(6 * UNIT, 2, wait).await.unwrap_err();
        assert_eq!(e.class, FailureClass::InstantiateError);
        assert!(e.message.contains("memory_budget_bytes"), "{}", e.message);
    }
}
