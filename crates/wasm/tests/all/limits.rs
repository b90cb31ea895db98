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
    // The echo guest's imports need a shim and a fixup instance besides its own.
    let l = limits().with_instances(1);
    assert_eq!(
        class(run_with(runtime(), &guests::echo(), &l).await),
        FailureClass::InstantiateError
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

/// A runtime of its own with a single instance slot (compiled code comes from the disk cache).
fn one_slot() -> hookbox_wasm::WasmRuntime {
    let mut config =
        hookbox_wasm::RuntimeConfig::default().with_cache_dir(crate::common::tmp_dir("cache"));
    config.pool.slots = 1;
    hookbox_wasm::WasmRuntime::new(config).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_obeyed_runs_wait_for_a_free_slot() {
    let rt = one_slot();
    let (count, echo) = (guests::count(), guests::echo());
    let (a, b) = tokio::join!(run(&rt, &count), run(&rt, &echo));
    typed(a);
    typed(b);
}

/// A slot's permit is released only after its store is dropped: with a single pool slot,
/// back-to-back and overlapping runs never find the pool still occupied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_obeyed_a_slot_is_reused_only_after_its_store_is_freed() {
    let rt = one_slot();
    let echo = guests::echo();
    crate::common::load(&rt, &echo);
    for _ in 0..4 {
        let r = || run(&rt, &echo);
        let (a, b, c, d, e, f) = tokio::join!(r(), r(), r(), r(), r(), r());
        for done in [a, b, c, d, e, f] {
            typed(done);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_violated_when_busy_for_the_whole_timeout() {
    let rt = one_slot();
    let (spin, ok) = (guests::spin(), guests::ok());
    // Loaded up front, so the hog holds the slot before the waiter asks for it.
    crate::common::load(&rt, &spin);
    crate::common::load(&rt, &ok);
    let hog = limits().with_timeout(Duration::from_millis(500));
    let waiter = limits().with_timeout(Duration::from_millis(20));
    let (a, b) = tokio::join!(run_with(&rt, &spin, &hog), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        run_with(&rt, &ok, &waiter).await
    });
    assert_eq!(class(a), FailureClass::Timeout);
    assert_eq!(class(b), FailureClass::InstantiateError);
    assert_serves(&rt).await;
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
