//! Fuel consumed is counted for every ending of a run — ok, timeout, trap, out_of_fuel,
//! memory_limit, and cancelled (the caller dropping the run's future) — on a guest that first does
//! a known amount of work in one loop without a call, then ends. Compiled code keeps its fuel count
//! in a register between calls; before fuel was handed out in slices
//! (`RuntimeConfig::fuel_slice`) a run stopped mid-loop reported only what had been counted at
//! its last call (a guest that spun 2 s before its timeout: `fuel_consumed: 3257`; these guests
//! reported 154). The runtime here hands out small slices, so the bound is tight; each test
//! asserts a lower bound, never a time.

use std::sync::OnceLock;
use std::time::Duration;

use hookbox_core::output::FailureClass;
use hookbox_wasm::{
    FailedRun, FuelMeter, Invocation, RunScope, RuntimeConfig, WasmLimits, WasmRun, WasmRuntime,
};

use crate::common::{event, load, tmp_dir};
use crate::guests;

/// Fuel handed out at a time by [`runtime`]: small, so the known work spans many slices and a
/// stopped run's count (low by less than one slice) is well above [`AT_LEAST`].
const SLICE: u64 = 1 << 20;
/// Steps of the known work: at least six fuel units each (about 3 ms of guest code here).
const STEPS: u32 = 5_000_000;
/// What the known work costs at the very least, minus one slice: five units a step.
const AT_LEAST: u64 = 5 * STEPS as u64;

/// A fuel-metering runtime with [`SLICE`].
fn runtime() -> &'static WasmRuntime {
    static RT: OnceLock<WasmRuntime> = OnceLock::new();
    RT.get_or_init(|| {
        let config = RuntimeConfig {
            fuel_slice: SLICE,
            ..RuntimeConfig::default()
                .with_fuel(true)
                .with_cache_dir(tmp_dir("cache"))
        };
        WasmRuntime::new(config).unwrap()
    })
}

/// A timeout far beyond the known work, so every ending below comes after it.
fn limits() -> WasmLimits {
    WasmLimits::default().with_timeout(Duration::from_secs(30))
}

async fn run_in(
    bytes: &[u8],
    limits: &WasmLimits,
    meter: &FuelMeter,
) -> Result<WasmRun, FailedRun> {
    let rt = runtime();
    let component = load(rt, bytes);
    let event = event();
    let inv = Invocation {
        event: &event,
        payload_json: "{}",
        tool_input_json: None,
        limits,
        mounts: &[],
        env: &[],
        config_json: "null".into(),
        label: "fuel".into(),
    };
    let scope = RunScope {
        fuel: Some(meter),
        ..RunScope::default()
    };
    rt.run_in(&component, inv, scope).await
}

/// Runs `end` after the known work; returns the failure class (if any), the report's fuel and
/// the meter's.
async fn ending(end: &str, limits: &WasmLimits) -> (Option<FailureClass>, u64) {
    let meter = FuelMeter::new();
    let (class, reported) = match run_in(&guests::work_then(STEPS, end), limits, &meter).await {
        Ok(run) => (None, run.report.fuel_consumed),
        Err(failed) => (Some(failed.class()), failed.report.fuel_consumed),
    };
    let reported = reported.expect("a metering runtime reports fuel for every ending");
    assert_eq!(
        meter.consumed(),
        Some(reported),
        "the meter and the report agree"
    );
    (class, reported)
}

#[tokio::test]
async fn fuel_is_counted_when_the_run_returns() {
    let (class, used) = ending("", &limits()).await;
    assert_eq!(class, None);
    assert!(used >= AT_LEAST, "{used}");
}

#[tokio::test]
async fn fuel_is_counted_when_the_run_times_out() {
    let l = limits().with_timeout(Duration::from_secs(1));
    let (class, used) = ending("(loop $spin (br $spin))", &l).await;
    assert_eq!(class, Some(FailureClass::Timeout));
    assert!(used >= AT_LEAST, "{used}");
}

#[tokio::test]
async fn fuel_is_counted_when_the_run_traps() {
    // An out-of-bounds load: a trap with no call before it to write the count back.
    let (class, used) = ending("(drop (i32.load (i32.const -4)))", &limits()).await;
    assert_eq!(class, Some(FailureClass::Trap));
    assert!(used >= AT_LEAST, "{used}");
}

#[tokio::test]
async fn fuel_is_counted_when_the_run_runs_out_of_fuel() {
    let budget = AT_LEAST / 2;
    let l = limits().with_fuel(Some(budget));
    let (class, used) = ending("", &l).await;
    assert_eq!(class, Some(FailureClass::OutOfFuel));
    assert_eq!(used, budget);
}

#[tokio::test]
async fn fuel_is_counted_when_the_run_hits_its_memory_limit() {
    let l = limits().with_memory_bytes(4 << 20);
    let (class, used) = ending("(drop (memory.grow (i32.const 1000)))", &l).await;
    assert_eq!(class, Some(FailureClass::MemoryLimit));
    assert!(used >= AT_LEAST, "{used}");
}

/// The caller drops the run's future mid-run (the host's dispatch deadline does): no report
/// comes back, and the meter still has the figure.
#[tokio::test]
async fn fuel_is_counted_when_the_caller_cancels_the_run() {
    let meter = FuelMeter::new();
    let bytes = guests::work_then(STEPS, "(loop $spin (br $spin))");
    let cut = tokio::time::timeout(Duration::from_secs(1), run_in(&bytes, &limits(), &meter)).await;
    assert!(cut.is_err(), "the run outlived the caller's deadline");
    let used = meter.consumed().expect("a cancelled run records its fuel");
    assert!(used >= AT_LEAST, "{used}");
}
