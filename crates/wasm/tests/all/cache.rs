//! The disk cache: compiled once, found by a later runtime, a damaged entry is a miss (never an
//! error), entries are per engine configuration, and a cache folder others can write is refused.

use std::fs;

use hookbox_wasm::{CacheStatus, RuntimeConfig, WasmError, WasmRuntime};

use crate::common::{assert_serves, tmp_dir};
use crate::guests;

fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = tmp_dir(name);
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn rt(dir: &std::path::Path, fuel: bool) -> WasmRuntime {
    WasmRuntime::new(RuntimeConfig::default().with_cache_dir(dir).with_fuel(fuel)).unwrap()
}

fn cwasm_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn compiled_once_then_found_by_later_runtimes() {
    let dir = fresh_dir("cache-reuse");
    let bytes = guests::echo();
    assert_eq!(
        rt(&dir, false).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Compiled
    );
    assert_eq!(cwasm_files(&dir).len(), 1);
    let second = rt(&dir, false);
    let loaded = second.load_bytes(&bytes).unwrap();
    assert_eq!(loaded.cache_status(), CacheStatus::Disk);
    assert!(loaded.cache_status().is_hit());
    assert_serves(&second).await;
}

#[tokio::test]
async fn a_damaged_entry_is_a_miss_not_an_error() {
    let dir = fresh_dir("cache-damaged");
    let bytes = guests::echo();
    rt(&dir, false).precompile_bytes(&bytes).unwrap();
    let file = cwasm_files(&dir).remove(0);
    let mut content = fs::read(&file).unwrap();
    let mid = content.len() / 2;
    content[mid] ^= 0xff;
    fs::write(&file, &content).unwrap();
    let third = rt(&dir, false);
    assert_eq!(
        third.precompile_bytes(&bytes).unwrap(),
        CacheStatus::Compiled
    );
    assert_serves(&third).await;
    fs::write(&file, &content[..100]).unwrap();
    assert_eq!(
        rt(&dir, false).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Compiled
    );
    fs::write(&file, b"").unwrap();
    assert_eq!(
        rt(&dir, false).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Compiled
    );
    assert_eq!(
        rt(&dir, false).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Disk
    );
}

#[test]
fn entries_are_per_engine_configuration() {
    let dir = fresh_dir("cache-engines");
    let bytes = guests::ok();
    assert_eq!(
        rt(&dir, false).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Compiled
    );
    assert_eq!(
        rt(&dir, true).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Compiled
    );
    assert_eq!(cwasm_files(&dir).len(), 2);
    assert_eq!(
        rt(&dir, true).precompile_bytes(&bytes).unwrap(),
        CacheStatus::Disk
    );
}

#[cfg(unix)]
#[test]
fn a_cache_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = fresh_dir("cache-open");
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let err = WasmRuntime::new(RuntimeConfig::default().with_cache_dir(&dir)).unwrap_err();
    assert!(matches!(err, WasmError::CacheDir { .. }), "{err}");
}

/// `parent/cache` with `parent` of `mode`, owned by `owner` (we run as root in CI, so `chown`
/// works); returns the cache folder, created private.
#[cfg(unix)]
fn under_parent(name: &str, mode: u32, owner: Option<u32>) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let parent = fresh_dir(name);
    let cache = parent.join("cache");
    fs::create_dir_all(&cache).unwrap();
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o700)).unwrap();
    fs::set_permissions(&parent, fs::Permissions::from_mode(mode)).unwrap();
    if let Some(uid) = owner {
        std::os::unix::fs::chown(&parent, Some(uid), None).unwrap();
    }
    cache
}

#[cfg(unix)]
fn refused_because(dir: &std::path::Path) -> String {
    match WasmRuntime::new(RuntimeConfig::default().with_cache_dir(dir)) {
        Err(WasmError::CacheDir { reason, .. }) => reason,
        other => panic!("expected a refused cache folder, got {other:?}"),
    }
}

#[cfg(unix)]
fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[cfg(unix)]
#[test]
fn a_cache_folder_owned_by_another_user_is_refused() {
    // As root (CI): a folder of ours given to user 4242. Otherwise: `/`, which is root's.
    let (dir, owner) = if is_root() {
        let dir = fresh_dir("cache-other-owner");
        fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(4242), None).unwrap();
        (dir, 4242)
    } else {
        (std::path::PathBuf::from("/"), 0)
    };
    let reason = refused_because(&dir);
    assert!(
        reason.contains(&format!("owned by user {owner},")),
        "{reason}"
    );
}

#[cfg(unix)]
#[test]
fn a_cache_folder_below_a_folder_others_may_write_or_own_is_refused() {
    let reason = refused_because(&under_parent("cache-open-parent", 0o777, None));
    assert!(
        reason.contains("writable by group or others without the sticky bit"),
        "{reason}"
    );
    // Sticky, as /tmp: others cannot rename or remove what is ours.
    let sticky = under_parent("cache-sticky-parent", 0o1777, None);
    WasmRuntime::new(RuntimeConfig::default().with_cache_dir(&sticky)).unwrap();
    // A parent of another user (giving one away needs root; the rule itself is unit-tested).
    if is_root() {
        let reason = refused_because(&under_parent("cache-foreign-parent", 0o755, Some(4242)));
        assert!(reason.contains("is owned by user 4242"), "{reason}");
    }
}

/// Sum of the `.cwasm` files' sizes.
fn disk_usage(dir: &std::path::Path) -> u64 {
    cwasm_files(dir)
        .iter()
        .map(|f| fs::metadata(f).unwrap().len())
        .sum()
}

/// `disk_cache_bytes`: loading more distinct components than fit leaves at most the bound on
/// disk (the oldest files go), and the newest entry is always there.
#[test]
fn disk_cache_bytes_obeyed_and_violated() {
    let dir = fresh_dir("cache-disk-bound");
    let one = {
        rt(&dir, false)
            .precompile_bytes(&guests::numbered(0))
            .unwrap();
        disk_usage(&dir)
    };
    let bound = one * 3 + one / 2;
    let config = RuntimeConfig {
        disk_cache_bytes: bound,
        ..RuntimeConfig::default().with_cache_dir(&dir)
    };
    let runtime = WasmRuntime::new(config.clone()).unwrap();
    for n in 1..=10 {
        runtime.precompile_bytes(&guests::numbered(n)).unwrap();
        assert!(disk_usage(&dir) <= bound, "after {n}: {}", disk_usage(&dir));
    }
    assert_eq!(cwasm_files(&dir).len(), 3);
    // The most recent ones are the ones kept: a new runtime finds the last on disk.
    let later = WasmRuntime::new(config).unwrap();
    assert_eq!(
        later.precompile_bytes(&guests::numbered(10)).unwrap(),
        CacheStatus::Disk
    );
    assert_eq!(
        later.precompile_bytes(&guests::numbered(1)).unwrap(),
        CacheStatus::Compiled
    );
}

/// `memory_cache_bytes`: the map of loaded components stays under its bound; a forgotten
/// component held by someone keeps working, and loading it again finds the disk cache.
#[tokio::test]
async fn memory_cache_bytes_obeyed_and_violated() {
    let dir = fresh_dir("cache-memory-bound");
    let probe = rt(&dir, false);
    let one = probe.load_bytes(&guests::numbered(0)).unwrap().code_bytes();
    let bound = one * 4 + one / 2;
    let runtime = WasmRuntime::new(RuntimeConfig {
        memory_cache_bytes: bound,
        ..RuntimeConfig::default().with_cache_dir(&dir)
    })
    .unwrap();
    let first = runtime.load_bytes(&guests::echo()).unwrap();
    for n in 1..=12 {
        runtime.load_bytes(&guests::numbered(n)).unwrap();
        let usage = runtime.memory_cache_usage();
        assert!(usage.bytes <= bound, "after {n}: {usage:?}");
    }
    assert!(runtime.memory_cache_usage().components <= 4);
    // `first` was forgotten by the map, not unloaded: it still runs...
    crate::common::typed(
        runtime
            .run(
                &first,
                hookbox_wasm::Invocation {
                    event: &crate::common::event(),
                    payload_json: "",
                    tool_input_json: None,
                    limits: &hookbox_wasm::WasmLimits::default(),
                    mounts: &[],
                    env: &[],
                    config_json: "null".into(),
                    label: "t".into(),
                },
            )
            .await,
    );
    // ...and loading its bytes again is a new entry, from disk.
    let again = runtime.load_bytes(&guests::echo()).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &again));
    assert_eq!(again.cache_status(), CacheStatus::Disk);
}
