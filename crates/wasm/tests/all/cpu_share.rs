//! CPU shares between owners: a quiet owner's guest is never queued behind another owner's
//! spinners. Asserted on the order in which runs complete, never on time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookbox_wasm::{
    CpuShare, Invocation, LoadedComponent, RunScope, RuntimeConfig, WasmLimits, WasmRuntime,
};

use crate::common::{event, load, tmp_dir};
use crate::guests;

/// Guests each noisy owner starts at once (as in the report: two tenants of 16 spinners).
const NOISY_GUESTS: usize = 16;
/// Steps of work of one noisy guest (about 15 ms of guest code here).
const NOISY_STEPS: u32 = 20_000_000;

async fn run_as(rt: &WasmRuntime, component: &LoadedComponent, share: &CpuShare) {
    let event = event();
    let limits = WasmLimits::default().with_timeout(Duration::from_secs(300));
    let inv = Invocation {
        event: &event,
        payload_json: "{}",
        tool_input_json: None,
        limits: &limits,
        mounts: &[],
        env: &[],
        config_json: "null".into(),
        label: "share".into(),
    };
    let scope = RunScope {
        share: Some(share),
        ..RunScope::default()
    };
    rt.run_in(component, inv, scope)
        .await
        .expect("the guest answers");
}

/// Two noisy owners start 16 guests each, then a quiet owner one guest with four times the work
/// of any noisy one. Sharing the executor per hook, all 33 guests advance at about the same pace
/// and the noisy guests (a quarter of the work) finish first (measured without shares: 16 to 32
/// of them). With one turn per owner the quiet guest competes with two guests, not 32, while
/// each noisy guest gets a sixteenth of its owner's turn: the quiet one finishes first
/// (measured: 0, six runs out of six).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_owner_finishes_before_two_noisy_owners_spinners() {
    // A runtime of its own: 33 runs held open must not take the shared runtime's memory budget
    // from the tests running beside this one.
    let rt: &'static WasmRuntime = Box::leak(Box::new(
        WasmRuntime::new(RuntimeConfig::default().with_cache_dir(tmp_dir("cache"))).unwrap(),
    ));
    let noisy: Arc<LoadedComponent> = load(rt, &guests::count_n(NOISY_STEPS));
    let quiet = load(rt, &guests::count_n(4 * NOISY_STEPS));
    let owners = [CpuShare::new(1).unwrap(), CpuShare::new(1).unwrap()];
    let finished = Arc::new(AtomicUsize::new(0));
    // Everything is spawned from a worker, in order, as tasks a server would run: tasks spawned
    // from the test's own thread would wait in tokio's global queue, which busy workers only
    // look at every 61 polls, and the quiet guest would start late for that reason alone.
    let test = tokio::spawn({
        let (owners, finished) = (owners.clone(), finished.clone());
        async move {
            let mut spinners = Vec::new();
            for owner in &owners {
                for _ in 0..NOISY_GUESTS {
                    let (owner, noisy, finished) = (owner.clone(), noisy.clone(), finished.clone());
                    spinners.push(tokio::spawn(async move {
                        run_as(rt, &noisy, &owner).await;
                        finished.fetch_add(1, Ordering::SeqCst);
                    }));
                }
            }
            let quiet = tokio::spawn(async move {
                run_as(rt, &quiet, &CpuShare::new(1).unwrap()).await;
            });
            quiet.await.unwrap();
            let noisy_done_first = finished.load(Ordering::SeqCst);
            for s in spinners {
                s.await.unwrap();
            }
            noisy_done_first
        }
    });
    let noisy_done_first = test.await.unwrap();
    eprintln!("noisy guests finished before the quiet one: {noisy_done_first}");
    assert_eq!(finished.load(Ordering::SeqCst), 2 * NOISY_GUESTS);
    assert!(
        owners.iter().all(|o| o.executing() == 0),
        "every turn given back"
    );
    assert!(
        noisy_done_first < NOISY_GUESTS / 2,
        "{noisy_done_first} of {} noisy guests finished before the quiet one: it was queued behind them",
        2 * NOISY_GUESTS
    );
}

/// A turn is for executing: a guest waiting inside a host call (a 1 s `wasi:clocks` sleep) gives
/// its turn back meanwhile, so six sleeping guests of one owner with one turn all sleep at once
/// and answer within a 3 s timeout. Holding turns through the sleep, they slept one after the
/// other and the fourth and later ones timed out (`serve_ops::sigterm_answers_every_accepted_request_then_exits_0`
/// caught it). Asserted on outcomes: 6 s of sleep in turn cannot fit 3 s, however noisy the machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_sleeping_in_a_host_call_gives_its_turn_back() {
    use hookbox_core::event::{EventData, EventName};
    let rt = crate::common::runtime();
    let chaos = rt
        .load_file(std::path::Path::new(hookbox_test_artifacts::CHAOS))
        .unwrap();
    let owner = CpuShare::new(1).unwrap();
    let mut runs = Vec::new();
    for _ in 0..6 {
        let (owner, chaos) = (owner.clone(), chaos.clone());
        runs.push(tokio::spawn(async move {
            let mut event = hookbox_core::Event::new(EventName::UserPromptSubmit, "s", "/work");
            if let EventData::UserPromptSubmit { prompt } = &mut event.data {
                *prompt = "sleep:1000".to_owned();
            }
            let limits = WasmLimits::default().with_timeout(Duration::from_secs(3));
            let inv = Invocation {
                event: &event,
                payload_json: "{}",
                tool_input_json: None,
                limits: &limits,
                mounts: &[],
                env: &[],
                config_json: "null".into(),
                label: "sleeper".into(),
            };
            let scope = RunScope {
                share: Some(&owner),
                ..RunScope::default()
            };
            let r = crate::common::typed(rt.run_in(&chaos, inv, scope).await);
            r.additional_contexts
        }));
    }
    for run in runs {
        assert_eq!(run.await.unwrap(), ["slept"]);
    }
    assert_eq!(owner.executing(), 0, "every turn given back");
}
