//! A fresh instance per event, whatever the pool's reset: for every reset configuration hookbox
//! ships or lets an operator choose (`memory_keep_resident` from 0 to 4 MiB, `pagemap_scan` off
//! and on), an instance never sees a byte the previous instance in its slot wrote — neither in
//! the kept-resident prefix reset in place, nor past it where pages are given back, nor in pages
//! the previous guest grew.

use hookbox_wasm::{RuntimeConfig, WasmRuntime};

use crate::common::{run, tmp_dir, typed};
use crate::guests;

/// Offsets the guest reads and then writes: inside the first page of the 64 KiB default prefix,
/// past it but inside 256 KiB, 1 MiB and 2 MiB prefixes, and past all of them — every one but the
/// first in memory the guest grew (the module declares one page).
const OFFSETS: [u32; 5] = [5_000, 200_000, 900_000, 1_800_000, 2_400_000];

/// Grows memory to 41 pages, traps if any of [`OFFSETS`] is not zero (a byte a previous instance
/// left), then writes a marker at each.
fn marker_guest() -> Vec<u8> {
    let mut body = String::from("(drop (memory.grow (i32.const 40)))");
    for off in OFFSETS {
        body.push_str(&format!(
            "(if (i32.load8_u (i32.const {off})) (then unreachable))"
        ));
    }
    for off in OFFSETS {
        body.push_str(&format!("(i32.store8 (i32.const {off}) (i32.const 171))"));
    }
    guests::hook_with("", &body)
}

/// A runtime with one pool slot (so every run reuses the previous run's slot) and `reset`.
fn one_slot(name: &str, reset: impl FnOnce(&mut RuntimeConfig)) -> WasmRuntime {
    let mut config = RuntimeConfig::default().with_cache_dir(tmp_dir(&format!("reset-{name}")));
    config.pool.slots = 1;
    reset(&mut config);
    WasmRuntime::new(config).unwrap()
}

#[tokio::test]
async fn no_instance_sees_what_the_previous_one_in_its_slot_wrote() {
    let guest = marker_guest();
    let mut configs: Vec<(String, WasmRuntime)> =
        [0u64, 64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20]
            .into_iter()
            .map(|keep| {
                let name = format!("keep-{keep}");
                let rt = one_slot(&name, |c| c.pool.memory_keep_resident = keep);
                (name, rt)
            })
            .collect();
    // The single-owner opt-in (in force only where the kernel has PAGEMAP_SCAN and no swap is
    // configured; elsewhere this is the default reset again).
    configs.push((
        "pagemap-scan".to_owned(),
        one_slot("pagemap-scan", |c| c.pool.pagemap_scan = true),
    ));
    configs.push(("default".to_owned(), one_slot("default", |_| {})));
    for (name, rt) in &configs {
        for round in 0..4 {
            match run(rt, &guest).await {
                Ok(ok) => {
                    typed(Ok(ok));
                }
                Err(failed) => panic!(
                    "{name}, run {round}: the instance found a byte its slot's previous instance wrote (or failed): {:?}",
                    failed.failure
                ),
            }
        }
    }
}

/// The guest does detect a marker: within one instance, a second call would see it. Checked the
/// only way a test can see "the same memory twice": the guest reads back what it just wrote.
#[tokio::test]
async fn the_marker_guest_traps_on_a_marker_it_finds() {
    let mut body = String::from("(drop (memory.grow (i32.const 40)))");
    for off in OFFSETS {
        body.push_str(&format!("(i32.store8 (i32.const {off}) (i32.const 171))"));
    }
    body.push_str(&format!(
        "(if (i32.load8_u (i32.const {})) (then unreachable))",
        OFFSETS[4]
    ));
    let rt = one_slot("sensitivity", |_| {});
    assert!(
        run(&rt, &guests::hook_with("", &body)).await.is_err(),
        "a marker that is there must trap"
    );
}
