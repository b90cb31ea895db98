//! What a run is accounted to beyond its own report: the CPU share of its owner, and a fuel meter
//! its caller can read however the run ended — including when the caller dropped the run's
//! future (a dispatch deadline), so no report ever came back.

use std::sync::OnceLock;

use crate::cpu_share::CpuShare;

/// Where a run records the fuel it consumed, once, when it ends: returned normally, failed, or
/// dropped by its caller mid-run. Create one per run, keep it outside the run's future, and read
/// it after the future is done or dropped.
#[derive(Debug, Default)]
pub struct FuelMeter {
    consumed: OnceLock<u64>,
}

impl FuelMeter {
    /// An empty meter.
    pub fn new() -> FuelMeter {
        FuelMeter::default()
    }

    /// The fuel the run consumed; `None` before it ended, when it never got a store (refused at
    /// admission), or on a runtime without fuel metering.
    pub fn consumed(&self) -> Option<u64> {
        self.consumed.get().copied()
    }

    pub(crate) fn record(&self, consumed: u64) {
        // A meter is for one run; a second run's figure is ignored rather than mixed in.
        let _ = self.consumed.set(consumed);
    }
}

/// What a run belongs to, for [`WasmRuntime::run_in`](crate::WasmRuntime::run_in). The default is
/// no share (the run executes whenever the executor polls it), no meter and no wait for room
/// in the memory budget.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunScope<'a> {
    /// The CPU share of the run's owner: the run executes only while it holds one of its turns.
    pub share: Option<&'a CpuShare>,
    /// Where the run records its fuel, whatever ends it.
    pub fuel: Option<&'a FuelMeter>,
    /// How long the run may wait for room in the memory budget (never past its own timeout)
    /// before it fails `overloaded`. The embedder's one admission wait: the host passes its
    /// `RuntimeSettings::admission_wait`, the same wait its pool gives a run for a slot. Default
    /// 0: refused at once when the budget is full.
    pub admission_wait: std::time::Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meter_keeps_its_first_figure() {
        let m = FuelMeter::new();
        assert_eq!(m.consumed(), None);
        m.record(7);
        m.record(9);
        assert_eq!(m.consumed(), Some(7));
    }
}
