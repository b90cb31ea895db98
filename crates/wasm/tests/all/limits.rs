//! Every limit, obeyed and violated. Violations assert the failure class (never a message), and
//! the same runtime then serves a normal event.

use std::time::Duration;

use hookbox_core::output::FailureClass;
use hookbox_wasm::{WasmLimits, WasmOutput};

use crate::common::{assert_serves, class, fuel_runtime, run, run_with, runtime, typed};
use crate::guests;

fn limits() -> WasmLimits {
    WasmLimits::default()
}

#[tokio::test]
async fn timeout_obeyed() {
    let l = limits().with_timeout(Duration::from_secs(30));
    typed(run_with(runtime(), &guests::count(), &l).await);
}

#[tokio::test]
async fn timeout_violated_by_an_infinite_loop() {
    let l = limits().with_timeout(Duration::from_millis(50));
    assert_eq!(
        class(run_with(runtime(), &guests::spin(), &l).await),
        FailureClass::Timeout
    );
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn fuel_obeyed_and_reported() {
    let l = limits().with_fuel(Some(1_000_000_000));
    let run = run_with(fuel_runtime(), &guests::count(), &l)
        .await
        .unwrap();
    let used = run.report.fuel_consumed.unwrap();
    assert!(used > 5_000_000 && used < 1_000_000_000, "{used}");
}

/// Whenever the runtime meters fuel, a run reports what it used, budget or not; a runtime
/// without metering reports nothing.
#[tokio::test]
async fn fuel_is_reported_without_a_budget() {
    let metered = run(fuel_runtime(), &guests::count()).await.unwrap();
    let used = metered.report.fuel_consumed.unwrap();
    assert!(used > 5_000_000 && used < 1_000_000_000, "{used}");
    let unmetered = run(runtime(), &guests::count()).await.unwrap();
    assert_eq!(unmetered.report.fuel_consumed, None);
}

#[tokio::test]
async fn fuel_violated() {
    let l = limits().with_fuel(Some(10_000));
    assert_eq!(
        class(run_with(fuel_runtime(), &guests::count(), &l).await),
        FailureClass::OutOfFuel
    );
    assert_serves(fuel_runtime()).await;
}

#[tokio::test]
async fn fuel_on_a_runtime_without_fuel_is_refused() {
    let l = limits().with_fuel(Some(10_000));
    assert_eq!(
        class(run_with(runtime(), &guests::ok(), &l).await),
        FailureClass::InstantiateError
    );
}

#[tokio::test]
async fn memory_grow_obeyed() {
    typed(
        run_with(
            runtime(),
            &guests::grow(),
            &limits().with_memory_bytes(16 << 20),
        )
        .await,
    );
}

#[tokio::test]
async fn memory_grow_violated() {
    let l = limits().with_memory_bytes(4 << 20);
    assert_eq!(
        class(run_with(runtime(), &guests::grow(), &l).await),
        FailureClass::MemoryLimit
    );
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn initial_memory_obeyed() {
    typed(
        run_with(
            runtime(),
            &guests::big_memory(),
            &limits().with_memory_bytes(200 << 20),
        )
        .await,
    );
}

#[tokio::test]
async fn initial_memory_violated() {
    assert_eq!(
        class(run(runtime(), &guests::big_memory()).await),
        FailureClass::MemoryLimit
    );
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn table_elements_obeyed() {
    typed(
        run_with(
            runtime(),
            &guests::table(),
            &limits().with_table_elements(10_000),
        )
        .await,
    );
}

#[tokio::test]
async fn table_elements_violated() {
    let l = limits().with_table_elements(1_000);
    assert_eq!(
        class(run_with(runtime(), &guests::table(), &l).await),
        FailureClass::MemoryLimit
    );
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn instances_obeyed() {
    typed(run_with(runtime(), &guests::echo(), &limits().with_instances(32)).await);
}

#[tokio::test]
async fn instances_violated() {
    // The echo guest's imports need a shim and a fixup instance besides its own: its structure
    // says so, and the run is refused before anything is instantiated.
    let l = limits().with_instances(1);
    let failed = run_with(runtime(), &guests::echo(), &l).await.unwrap_err();
    assert_eq!(failed.class(), FailureClass::InstantiateError);
    assert_eq!(
        failed.failure.message,
        "component creates 3 core instances, above this rule's `instances` limit of 1; raise `instances` to at least 3"
    );
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn stack_obeyed_by_bounded_recursion() {
    typed(run(runtime(), &guests::recurse_bounded()).await);
}

#[tokio::test]
async fn stack_violated_by_unbounded_recursion() {
    assert_eq!(
        class(run(runtime(), &guests::recurse()).await),
        FailureClass::Trap
    );
    assert_serves(runtime()).await;
}

/// The command guest that prints 1 MiB of `x`, with stdout capped at `cap` bytes.
async fn flood(cap: u64) -> (hookbox_core::output::RawOutput, u64) {
    let run = run_with(
        runtime(),
        &guests::cmd_flood(),
        &limits().with_output_bytes(cap),
    )
    .await
    .unwrap();
    let WasmOutput::Command(out) = run.output else {
        panic!("{:?}", run.output)
    };
    (out, run.report.stdout.total_bytes)
}

#[tokio::test]
async fn output_obeyed() {
    let (out, total) = flood(2 << 20).await;
    assert_eq!(
        (out.exit_code, out.stdout.len(), out.stdout_truncated, total),
        (Some(0), 1 << 20, false, 1 << 20)
    );
}

#[tokio::test]
async fn output_violated_is_truncated_not_a_crash() {
    let (out, total) = flood(64 << 10).await;
    assert_eq!(
        (out.exit_code, out.stdout.len(), out.stdout_truncated, total),
        (Some(0), 64 << 10, true, 1 << 20)
    );
    assert!(out.stdout.bytes().all(|b| b == b'x'));
    assert_serves(runtime()).await;
}

#[tokio::test]
async fn log_calls_obeyed() {
    let run = run(runtime(), &guests::chatty()).await.unwrap();
    assert_eq!((run.report.logs.len(), run.report.logs_dropped), (10, 0));
}

#[tokio::test]
async fn log_calls_violated_are_dropped_and_counted() {
    let run = run_with(runtime(), &guests::chatty(), &limits().with_log_calls(3))
        .await
        .unwrap();
    assert_eq!((run.report.logs.len(), run.report.logs_dropped), (3, 7));
    assert_serves(runtime()).await;
}

/// A runtime of its own with `slots` instance slots (a pool: required) and a memory budget of
/// `budget` bytes (compiled code comes from the disk cache).
fn admitting(slots: u32, budget: u64) -> hookbox_wasm::WasmRuntime {
    let mut config =
        hookbox_wasm::RuntimeConfig::default().with_cache_dir(crate::common::tmp_dir("cache"));
    config.pooling = hookbox_wasm::PoolingMode::Required;
    config.pool.slots = slots;
    config.memory_budget_bytes = budget;
    hookbox_wasm::WasmRuntime::new(config).unwrap()
}

/// A slot is free again once its run has returned (its store is dropped inside the run): with a
/// single pool slot, back-to-back runs never find the pool still occupied. (Runs are admitted
/// to slots by the embedder — the host's pool; host `concurrency` tests cover waiting for one.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_obeyed_a_slot_is_free_again_when_its_run_returns() {
    let rt = admitting(1, 4 << 30);
    let echo = guests::echo();
    crate::common::load(&rt, &echo);
    for _ in 0..24 {
        typed(run(&rt, &echo).await);
    }
}

/// Runs `waiter` while `hog_limits`' spinning guest (for 500 ms) holds what it was admitted
/// with; the waiter starts 100 ms in. Returns the waiter's failure class.
async fn while_a_hog_runs(
    rt: &hookbox_wasm::WasmRuntime,
    hog_limits: WasmLimits,
    waiter_limits: WasmLimits,
) -> FailureClass {
    let (spin, ok) = (guests::spin(), guests::ok());
    // Loaded up front, so the hog holds its admission before the waiter asks.
    crate::common::load(rt, &spin);
    crate::common::load(rt, &ok);
    let hog = hog_limits.with_timeout(Duration::from_millis(500));
    let (a, b) = tokio::join!(run_with(rt, &spin, &hog), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        run_with(rt, &ok, &waiter_limits).await
    });
    assert_eq!(class(a), FailureClass::Timeout);
    class(b)
}

/// The runtime queues no run for a slot (the embedder's pool admits them): a run the pool
/// cannot place is refused at once as `overloaded`, naming the setting to raise — not an
/// `instantiate_error`, and never a second wait of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_violated_a_run_beyond_the_pool_is_overloaded_at_once() {
    let rt = admitting(1, 4 << 30);
    let waiter = limits().with_timeout(Duration::from_secs(30));
    let (spin, ok) = (guests::spin(), guests::ok());
    crate::common::load(&rt, &spin);
    crate::common::load(&rt, &ok);
    let hog = limits().with_timeout(Duration::from_millis(500));
    let (a, b) = tokio::join!(run_with(&rt, &spin, &hog), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        run_with(&rt, &ok, &waiter).await
    });
    assert_eq!(class(a), FailureClass::Timeout);
    let refused = b.unwrap_err();
    assert_eq!(refused.class(), FailureClass::Overloaded);
    assert!(
        refused.failure.message.contains("pool.slots"),
        "{}",
        refused.failure.message
    );
    assert_serves(&rt).await;
}

/// Two runs whose memory caps fit the budget together run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_budget_obeyed() {
    let rt = admitting(4, 96 << 20);
    let (spin, ok) = (guests::spin(), guests::ok());
    crate::common::load(&rt, &spin);
    crate::common::load(&rt, &ok);
    let hog = limits()
        .with_memory_bytes(64 << 20)
        .with_timeout(Duration::from_millis(300));
    let (a, (in_use, b)) = tokio::join!(run_with(&rt, &spin, &hog), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let in_use = rt.memory_in_use();
        let small = limits().with_memory_bytes(32 << 20);
        (in_use, run_with(&rt, &ok, &small).await)
    });
    assert_eq!(class(a), FailureClass::Timeout);
    assert_eq!(in_use, 64 << 20);
    typed(b);
    assert_eq!(rt.memory_in_use(), 0);
}

/// A run whose cap does not fit beside the runs in progress waits its scope's `admission_wait`
/// (none here), then is refused as `overloaded`; a cap above the whole budget is refused at once
/// as `instantiate_error`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_budget_violated() {
    let rt = admitting(4, 96 << 20);
    let big = limits().with_memory_bytes(64 << 20);
    assert_eq!(
        while_a_hog_runs(&rt, big.clone(), big).await,
        FailureClass::Overloaded
    );
    let over = run_with(&rt, &guests::ok(), &limits().with_memory_bytes(128 << 20))
        .await
        .unwrap_err();
    assert_eq!(over.class(), FailureClass::InstantiateError);
    assert!(
        over.failure.message.contains("memory_budget_bytes"),
        "{}",
        over.failure.message
    );
    assert_serves(&rt).await;
}

/// `PAGEMAP_SCAN` (which can leave a swapped-out page of one guest to the next in its slot)
/// is off unless asked for; when asked for, `engine.rs` keeps it off while swap is configured.
#[test]
fn pagemap_scan_is_off_by_default() {
    assert!(!runtime().pagemap_scan_active());
    assert!(!hookbox_wasm::PoolConfig::default().pagemap_scan);
}

/// On a single-threaded executor the spinning guest yields between slices, so another run
/// finishes while it spins (without yielding, the other run would wait for the timeout).
#[tokio::test(flavor = "current_thread")]
async fn a_spinning_guest_shares_its_worker() {
    let (spin, ok) = (guests::spin(), guests::ok());
    crate::common::load(runtime(), &spin);
    crate::common::load(runtime(), &ok);
    let hog = limits().with_timeout(Duration::from_millis(300));
    let (spin_done, ok_done) = tokio::join!(
        async {
            assert_eq!(
                class(run_with(runtime(), &spin, &hog).await),
                FailureClass::Timeout
            );
            std::time::Instant::now()
        },
        async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            typed(run(runtime(), &ok).await);
            std::time::Instant::now()
        }
    );
    assert!(ok_done < spin_done);
}
