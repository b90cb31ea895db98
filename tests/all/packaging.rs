//! The binary carries what `demo` and `bench` run: copied to an empty folder and run from there,
//! `hookbox demo` works, and the binary names no path of the build tree it would read at run time
//! (the example plugins' folder, the guests' build folders).

use std::process::Command;

use crate::util::Dir;

#[test]
fn a_copied_binary_runs_the_demo_from_an_empty_folder() {
    let built = env!("CARGO_BIN_EXE_hookbox");
    let bytes = std::fs::read(built).expect("read the binary");
    let root = env!("CARGO_MANIFEST_DIR");
    for build_tree_path in [
        format!("{root}/examples/plugins"),
        "/out/guests/".to_owned(),
        "wasm-guests/".to_owned(),
    ] {
        assert!(
            !bytes
                .windows(build_tree_path.len())
                .any(|w| w == build_tree_path.as_bytes()),
            "the binary names {build_tree_path}: it would read the build tree at run time"
        );
    }

    let empty = Dir::new();
    let copy = empty.path().join("hookbox");
    std::fs::copy(built, &copy).expect("copy the binary");
    let out = Command::new(&copy)
        .args(["demo", "--json"])
        .current_dir(empty.path())
        .env("HOME", empty.path())
        .env("HOOKBOX_STATE_DIR", empty.path().join("state"))
        .env("HOOKBOX_CACHE_DIR", empty.path().join("cache"))
        .env("TMPDIR", empty.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .expect("run the copied binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("demo --json is JSON");
    let text = report.to_string();
    // The wasm guard and the runaway guest ran from the bytes the binary carries.
    assert!(text.contains("shell-guard"), "{text}");
    assert!(text.contains("\"class\":\"timeout\""), "{text}");
}
