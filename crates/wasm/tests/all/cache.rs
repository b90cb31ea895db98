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
