//! The hostile `chaos` hook of `hookbox-test-artifacts` (behaviour chosen by the event's prompt)
//! against every sandbox boundary — limits, output caps, environment, and the filesystem: escapes,
//! read-only mounts, hard links and renames across mounts, `O_TRUNC`, symlinks with a trailing
//! slash — each violation followed by a normal event on the same runtime; and every guest
//! inspected as built. What each guest decides is in `per_guest.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_core::EventName;
use hookbox_core::output::FailureClass;
use hookbox_core::rule::Access;
use hookbox_test_artifacts::{ALL, CHAOS, Kind};
use hookbox_wasm::{
    FailedRun, InspectKind, Invocation, MountDir, ResolvedMount, WasmLimits, WasmOutput, WasmRun,
    WasmRuntime,
};

use crate::common::{fuel_runtime, runtime, tmp_dir, typed};

/// Runs the chaos guest on a `UserPromptSubmit` whose prompt is `behaviour`.
async fn chaos_in(
    rt: &WasmRuntime,
    behaviour: &str,
    limits: &WasmLimits,
    mounts: &[ResolvedMount],
    env: &[(String, String)],
) -> Result<WasmRun, FailedRun> {
    let component = rt.load_file(Path::new(CHAOS)).unwrap();
    let mut event = hookbox_core::Event::new(EventName::UserPromptSubmit, "s", "/work");
    if let hookbox_core::event::EventData::UserPromptSubmit { prompt } = &mut event.data {
        *prompt = behaviour.to_owned();
    }
    let inv = Invocation {
        event: &event,
        payload_json: "{}",
        tool_input_json: None,
        limits,
        mounts,
        env,
        config_json: r#"{"behaviour":"ok","x":1}"#.into(),
        label: "chaos".into(),
    };
    rt.run(&component, inv).await
}

async fn chaos(behaviour: &str) -> Result<WasmRun, FailedRun> {
    chaos_in(runtime(), behaviour, &WasmLimits::default(), &[], &[]).await
}

/// The one context the chaos guest answers.
fn answer(result: Result<WasmRun, FailedRun>) -> String {
    let r = typed(result);
    assert_eq!(r.additional_contexts.len(), 1, "{r:?}");
    r.additional_contexts[0].clone()
}

fn failure(result: Result<WasmRun, FailedRun>) -> FailedRun {
    match result {
        Ok(run) => panic!("expected a failure, got {:?}", run.output),
        Err(f) => f,
    }
}

async fn assert_chaos_serves(rt: &WasmRuntime) {
    assert_eq!(
        answer(chaos_in(rt, "ok", &WasmLimits::default(), &[], &[]).await),
        "ok"
    );
}

#[tokio::test]
async fn chaos_spin_times_out() {
    let l = WasmLimits::default().with_timeout(Duration::from_millis(50));
    assert_eq!(
        failure(chaos_in(runtime(), "spin", &l, &[], &[]).await).class(),
        FailureClass::Timeout
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_spin_runs_out_of_fuel() {
    let l = WasmLimits::default().with_fuel(Some(1_000_000));
    assert_eq!(
        failure(chaos_in(fuel_runtime(), "spin", &l, &[], &[]).await).class(),
        FailureClass::OutOfFuel
    );
    assert_chaos_serves(fuel_runtime()).await;
}

#[tokio::test]
async fn chaos_sleep_in_a_host_call_times_out() {
    let l = WasmLimits::default().with_timeout(Duration::from_millis(100));
    assert_eq!(
        failure(chaos_in(runtime(), "sleep:60000", &l, &[], &[]).await).class(),
        FailureClass::Timeout
    );
    assert_eq!(
        answer(chaos_in(runtime(), "sleep:1", &l, &[], &[]).await),
        "slept"
    );
}

#[tokio::test]
async fn chaos_recursion_traps() {
    assert_eq!(failure(chaos("recurse").await).class(), FailureClass::Trap);
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_memory_bomb_hits_the_cap() {
    assert_eq!(answer(chaos("alloc:1000000").await), "alloc:1000000 ok");
    assert_eq!(
        failure(chaos("alloc:200000000").await).class(),
        FailureClass::MemoryLimit
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_stdout_flood_is_truncated() {
    let l = WasmLimits::default().with_output_bytes(100_000);
    let run = chaos_in(runtime(), "stdout:10000000", &l, &[], &[])
        .await
        .unwrap();
    assert_eq!(run.report.stdout.text.len(), 100_000);
    assert!(run.report.stdout.truncated);
    let WasmOutput::Typed(r) = run.output else {
        panic!()
    };
    assert_eq!(r.additional_contexts, ["wrote 10000000"]);
}

#[tokio::test]
async fn chaos_bad_json_is_invalid_output() {
    assert_eq!(
        failure(chaos("bad-json").await).class(),
        FailureClass::InvalidOutput
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_panic_is_a_trap_with_the_panic_message() {
    let f = failure(chaos("trap").await);
    assert_eq!(f.class(), FailureClass::Trap);
    assert!(
        f.failure.message.contains("chaos: trap requested"),
        "{}",
        f.failure.message
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_err_and_exit_are_traps() {
    let f = failure(chaos("err:no thanks").await);
    assert_eq!(
        (f.class(), f.failure.message.as_str()),
        (FailureClass::Trap, "guest returned error: no thanks")
    );
    assert_eq!(failure(chaos("exit:3").await).class(), FailureClass::Trap);
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn chaos_logs_are_capped() {
    let l = WasmLimits::default().with_log_calls(5);
    let run = chaos_in(runtime(), "log:50", &l, &[], &[]).await.unwrap();
    assert_eq!((run.report.logs.len(), run.report.logs_dropped), (5, 45));
    assert_eq!(run.report.logs[4].message, "chaos log line 4");
}

#[tokio::test]
async fn chaos_sees_only_the_rules_env_and_no_args() {
    // `PATH` exists in the host's environment; the guest must not see it.
    assert!(std::env::var_os("PATH").is_some());
    assert_eq!(answer(chaos("env").await), "");
    let env = [("MODE".to_owned(), "strict".to_owned())];
    assert_eq!(
        answer(chaos_in(runtime(), "env", &WasmLimits::default(), &[], &env).await),
        "MODE=strict"
    );
    assert_eq!(answer(chaos("args").await), "");
}

/// `root/{mounted/{inside.txt, link_out -> ../secret.txt, abs_link -> <root>/secret.txt},
/// secret.txt, other/other.txt}`.
fn tree(name: &str) -> PathBuf {
    let root = tmp_dir(name);
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("mounted")).unwrap();
    fs::create_dir_all(root.join("other")).unwrap();
    fs::write(root.join("mounted/inside.txt"), "inside").unwrap();
    fs::write(root.join("secret.txt"), "host secret").unwrap();
    fs::write(root.join("other/other.txt"), "other tenant").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../secret.txt", root.join("mounted/link_out")).unwrap();
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("mounted/abs_link")).unwrap();
    }
    root
}

fn mount(root: &Path, access: Access) -> Vec<ResolvedMount> {
    vec![ResolvedMount {
        host: MountDir::open(&root.join("mounted")).unwrap(),
        guest: "/data".into(),
        access,
        symlinks: false,
    }]
}

async fn in_mount(root: &Path, access: Access, behaviour: &str) -> String {
    answer(
        chaos_in(
            runtime(),
            behaviour,
            &WasmLimits::default(),
            &mount(root, access),
            &[],
        )
        .await,
    )
}

#[tokio::test]
async fn mount_is_readable() {
    let root = tree("fs-read");
    assert_eq!(
        in_mount(&root, Access::Ro, "fs-read:/data/inside.txt").await,
        "ok:inside"
    );
    assert_eq!(
        in_mount(&root, Access::Ro, "fs-list:/data").await,
        "ok:abs_link\ninside.txt\nlink_out"
    );
}

#[tokio::test]
async fn no_escape_from_a_mount() {
    let root = tree("fs-escape");
    let secret = root.join("secret.txt").display().to_string();
    let other = root.join("other/other.txt").display().to_string();
    for path in [
        "/data/../secret.txt".to_owned(),
        "/data/../../secret.txt".to_owned(),
        "/secret.txt".to_owned(),
        "/data/link_out".to_owned(),
        "/data/link_out/".to_owned(),
        "/data/abs_link".to_owned(),
        secret,
        "/other/other.txt".to_owned(),
        "/data/../other/other.txt".to_owned(),
        other,
        "/etc/passwd".to_owned(),
    ] {
        let got = in_mount(&root, Access::Ro, &format!("fs-read:{path}")).await;
        assert!(got.starts_with("err:"), "{path}: {got}");
        assert!(
            !got.contains("secret") && !got.contains("other tenant"),
            "{path}: {got}"
        );
    }
}

#[tokio::test]
async fn read_only_mount_refuses_writes_and_rw_allows_them() {
    let root = tree("fs-write");
    let got = in_mount(&root, Access::Ro, "fs-write:/data/new.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert!(!root.join("mounted/new.txt").exists());
    let got = in_mount(&root, Access::Ro, "fs-write:/data/inside.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert_eq!(
        fs::read_to_string(root.join("mounted/inside.txt")).unwrap(),
        "inside"
    );
    assert_eq!(
        in_mount(&root, Access::Rw, "fs-write:/data/new.txt").await,
        "ok"
    );
    assert_eq!(
        fs::read_to_string(root.join("mounted/new.txt")).unwrap(),
        "written by chaos\n"
    );
    let got = in_mount(&root, Access::Rw, "fs-write:/data/../escaped.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert!(!root.join("escaped.txt").exists());
}

#[tokio::test]
async fn without_a_mount_there_is_no_filesystem() {
    let got = answer(chaos("fs-read:/etc/passwd").await);
    assert!(got.starts_with("err:"), "{got}");
    let got = answer(chaos("fs-list:/").await);
    assert!(got.starts_with("err:"), "{got}");
}

/// `root/{ro/{ro.txt}, rw/{rw.txt}}`, mounted at `/ro` (read-only) and `/rw` (read-write).
fn ro_and_rw(name: &str) -> (PathBuf, Vec<ResolvedMount>) {
    let root = tmp_dir(name);
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("ro")).unwrap();
    fs::create_dir_all(root.join("rw")).unwrap();
    fs::write(root.join("ro/ro.txt"), "read-only data").unwrap();
    fs::write(root.join("rw/rw.txt"), "writable data").unwrap();
    let mounts = vec![
        ResolvedMount {
            host: MountDir::open(&root.join("ro")).unwrap(),
            guest: "/ro".into(),
            access: Access::Ro,
            symlinks: false,
        },
        ResolvedMount {
            host: MountDir::open(&root.join("rw")).unwrap(),
            guest: "/rw".into(),
            access: Access::Rw,
            symlinks: false,
        },
    ];
    (root, mounts)
}

async fn in_mounts(mounts: &[ResolvedMount], behaviour: &str) -> String {
    answer(chaos_in(runtime(), behaviour, &WasmLimits::default(), mounts, &[]).await)
}

/// The guest saw an error of `kind` (`std::io::ErrorKind`'s name), e.g. `PermissionDenied` for
/// WASI's `not-permitted` ("Operation not permitted").
#[track_caller]
fn assert_refused(got: &str, kind: &str) {
    assert!(
        got.starts_with(&format!("err:{kind}:")),
        "expected {kind}, got {got}"
    );
}

/// A hard link from a read-only mount into a writable one would give the guest a writable name
/// for a read-only file; wasmtime refuses `link-at` unless both folders are writable with the
/// same permissions.
#[tokio::test]
async fn hard_link_from_a_read_only_mount_into_a_writable_one_is_refused() {
    let (root, mounts) = ro_and_rw("fs-link");
    let got = in_mounts(&mounts, "fs-link:/ro/ro.txt:/rw/alias.txt").await;
    assert_refused(&got, "PermissionDenied");
    assert!(!root.join("rw/alias.txt").exists());
    // The other direction writes into the read-only mount.
    let got = in_mounts(&mounts, "fs-link:/rw/rw.txt:/ro/alias.txt").await;
    assert_refused(&got, "PermissionDenied");
    assert!(!root.join("ro/alias.txt").exists());
    // Escaping the writable mount with `..` is refused as well.
    let got = in_mounts(&mounts, "fs-link:/rw/../ro/ro.txt:/rw/alias.txt").await;
    assert!(got.starts_with("err:"), "{got}");
    assert!(!root.join("rw/alias.txt").exists());
    // Inside the writable mount, linking works: the refusals are about permissions.
    assert_eq!(
        in_mounts(&mounts, "fs-link:/rw/rw.txt:/rw/link.txt").await,
        "ok"
    );
    assert_eq!(
        fs::read_to_string(root.join("rw/link.txt")).unwrap(),
        "writable data"
    );
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn rename_across_permissions_is_refused() {
    let (root, mounts) = ro_and_rw("fs-rename");
    // Out of the read-only mount: it would delete a read-only name.
    let got = in_mounts(&mounts, "fs-rename:/ro/ro.txt:/rw/moved.txt").await;
    assert_refused(&got, "PermissionDenied");
    assert_eq!(
        fs::read_to_string(root.join("ro/ro.txt")).unwrap(),
        "read-only data"
    );
    assert!(!root.join("rw/moved.txt").exists());
    // Into the read-only mount: it would create a name there.
    let got = in_mounts(&mounts, "fs-rename:/rw/rw.txt:/ro/moved.txt").await;
    assert_refused(&got, "PermissionDenied");
    assert!(root.join("rw/rw.txt").exists() && !root.join("ro/moved.txt").exists());
    // Within the read-only mount.
    let got = in_mounts(&mounts, "fs-rename:/ro/ro.txt:/ro/renamed.txt").await;
    assert_refused(&got, "PermissionDenied");
    assert!(root.join("ro/ro.txt").exists());
    // Within the writable mount it works.
    assert_eq!(
        in_mounts(&mounts, "fs-rename:/rw/rw.txt:/rw/renamed.txt").await,
        "ok"
    );
    assert!(!root.join("rw/rw.txt").exists() && root.join("rw/renamed.txt").exists());
    assert_chaos_serves(runtime()).await;
}

/// Two writable mounts on different filesystems (the target dir and `/dev/shm`, a tmpfs on
/// Linux): a rename or hard link between them is refused by the kernel (`EXDEV`) and nothing
/// moves. (Between two writable mounts of one filesystem both work: the rule granted both.)
#[cfg(target_os = "linux")]
#[tokio::test]
async fn rename_and_link_across_devices_are_refused() {
    use std::os::unix::fs::MetadataExt as _;

    let (root, mut mounts) = ro_and_rw("fs-xdev");
    let shm =
        PathBuf::from("/dev/shm").join(format!("hookbox-wasm-tests-xdev-{}", std::process::id()));
    let _ = fs::remove_dir_all(&shm);
    fs::create_dir_all(&shm).unwrap();
    assert_ne!(
        fs::metadata(&shm).unwrap().dev(),
        fs::metadata(root.join("rw")).unwrap().dev(),
        "/dev/shm must be another filesystem than the target dir for this test"
    );
    mounts.push(ResolvedMount {
        host: MountDir::open(&shm).unwrap(),
        guest: "/shm".into(),
        access: Access::Rw,
        symlinks: false,
    });
    let renamed = in_mounts(&mounts, "fs-rename:/rw/rw.txt:/shm/moved.txt").await;
    let linked = in_mounts(&mounts, "fs-link:/rw/rw.txt:/shm/linked.txt").await;
    let left_behind = root.join("rw/rw.txt").exists();
    let arrived = shm.join("moved.txt").exists() || shm.join("linked.txt").exists();
    let _ = fs::remove_dir_all(&shm);
    // wasmtime-wasi 48 has no mapping for `EXDEV` (its `cross-device` error code is never
    // produced on Linux), so the guest sees the generic `io` error ("I/O error", EIO).
    assert_refused(&renamed, "Uncategorized");
    assert_refused(&linked, "Uncategorized");
    assert!(renamed.ends_with("I/O error (os error 29)"), "{renamed}");
    assert!(left_behind && !arrived);
    assert_chaos_serves(runtime()).await;
}

/// `O_TRUNC` needs write access: on a read-only mount the open is refused before anything is
/// truncated (`fs-write` covers create+truncate; this is truncate alone, on an existing file).
#[tokio::test]
async fn truncating_on_a_read_only_mount_is_refused() {
    let root = tree("fs-trunc");
    let got = in_mount(&root, Access::Ro, "fs-trunc:/data/inside.txt").await;
    assert_refused(&got, "PermissionDenied");
    assert_eq!(
        fs::read_to_string(root.join("mounted/inside.txt")).unwrap(),
        "inside"
    );
    assert_chaos_serves(runtime()).await;
    assert_eq!(
        in_mount(&root, Access::Rw, "fs-trunc:/data/inside.txt").await,
        "ok"
    );
    assert_eq!(
        fs::read_to_string(root.join("mounted/inside.txt")).unwrap(),
        ""
    );
}

/// `link_out -> ../secret.txt` points outside the mount. With a trailing slash the path must be
/// resolved as a directory through the link; none of write, truncate, link or rename may reach
/// the secret, even on a writable mount (reads are in `no_escape_from_a_mount`).
#[cfg(unix)]
#[tokio::test]
async fn symlink_with_a_trailing_slash_does_not_escape() {
    let root = tree("fs-trailing-slash");
    // What the guest sees differs by operation (wasi-libc refuses a create with a trailing
    // slash itself; cap-std refuses to follow a link out of the mount); every one is refused.
    for (behaviour, kind) in [
        ("fs-write:/data/link_out/", "IsADirectory"),
        ("fs-write:/data/abs_link/", "IsADirectory"),
        ("fs-trunc:/data/link_out/", "PermissionDenied"),
        ("fs-list:/data/link_out/", "PermissionDenied"),
        (
            "fs-link:/data/link_out/:/data/alias.txt",
            "PermissionDenied",
        ),
        // Moving a link is refused first: the mount does not say `"symlinks": true`.
        (
            "fs-rename:/data/link_out/:/data/moved.txt",
            "PermissionDenied",
        ),
    ] {
        let got = in_mount(&root, Access::Rw, behaviour).await;
        assert!(
            got.starts_with(&format!("err:{kind}:")),
            "{behaviour}: {got}"
        );
        assert!(!got.contains("host secret"), "{behaviour}: {got}");
    }
    assert_eq!(
        fs::read_to_string(root.join("secret.txt")).unwrap(),
        "host secret"
    );
    assert!(!root.join("mounted/alias.txt").exists() && !root.join("mounted/moved.txt").exists());
    assert!(fs::symlink_metadata(root.join("mounted/link_out")).is_ok());
    assert_chaos_serves(runtime()).await;
}

/// A guest cannot plant a symbolic link in an `rw` mount whose rule does not say
/// `"symlinks": true` — hookbox never follows it, but the user's shell or editor would — nor
/// hard-link or move an existing one there (both change what a relative link points at).
#[cfg(unix)]
#[tokio::test]
async fn symlinks_violated_a_guest_cannot_plant_one_without_symlinks_true() {
    let root = tree("fs-symlink-refused");
    for (behaviour, planted) in [
        ("fs-symlink:../secret.txt:/data/notes", "notes"),
        ("fs-symlink:inside.txt:/data/harmless", "harmless"),
        ("fs-link:/data/link_out:/data/alias", "alias"),
        ("fs-rename:/data/link_out:/data/moved", "moved"),
    ] {
        let got = in_mount(&root, Access::Rw, behaviour).await;
        assert!(
            got.starts_with("err:PermissionDenied:"),
            "{behaviour}: {got}"
        );
        assert!(
            fs::symlink_metadata(root.join("mounted").join(planted)).is_err(),
            "{behaviour} planted a link"
        );
    }
    assert!(fs::symlink_metadata(root.join("mounted/link_out")).is_ok());
    // Files are still linked and renamed as before.
    assert_eq!(
        in_mount(&root, Access::Rw, "fs-link:/data/inside.txt:/data/hard.txt").await,
        "ok"
    );
    assert_eq!(
        in_mount(
            &root,
            Access::Rw,
            "fs-rename:/data/hard.txt:/data/renamed.txt"
        )
        .await,
        "ok"
    );
    assert_chaos_serves(runtime()).await;
}

/// With `"symlinks": true` the guest creates links in that mount (in its subfolders too), and
/// only there: the nearest mount root above the folder decides, and a link moved from that mount
/// into another one is refused. The links it makes still do not take it out of its mounts.
#[cfg(unix)]
#[tokio::test]
async fn symlinks_obeyed_a_mount_with_symlinks_true_gets_them_and_only_it() {
    let root = tree("fs-symlink-allowed");
    fs::create_dir_all(root.join("mounted/sub")).unwrap();
    let mounts = [
        ResolvedMount {
            host: MountDir::open(&root.join("mounted")).unwrap(),
            guest: "/data".into(),
            access: Access::Rw,
            symlinks: true,
        },
        ResolvedMount {
            host: MountDir::open(&root.join("other")).unwrap(),
            guest: "/other".into(),
            access: Access::Rw,
            symlinks: false,
        },
    ];
    let run = |behaviour: &'static str| {
        let mounts = mounts.clone();
        async move { answer(chaos_in(runtime(), behaviour, &WasmLimits::default(), &mounts, &[]).await) }
    };
    assert_eq!(run("fs-symlink:inside.txt:/data/alias").await, "ok");
    assert_eq!(
        fs::read_link(root.join("mounted/alias")).unwrap(),
        Path::new("inside.txt")
    );
    assert_eq!(run("fs-read:/data/alias").await, "ok:inside");
    assert_eq!(run("fs-symlink:../inside.txt:/data/sub/up").await, "ok");
    assert_eq!(run("fs-read:/data/sub/up").await, "ok:inside");
    // Allowed to exist, never followed out of the mount.
    assert_eq!(run("fs-symlink:../secret.txt:/data/out").await, "ok");
    let got = run("fs-read:/data/out").await;
    assert!(got.starts_with("err:PermissionDenied:"), "{got}");
    // The other mount does not allow links: not created there, not moved or linked in.
    for behaviour in [
        "fs-symlink:other.txt:/other/alias",
        "fs-rename:/data/alias:/other/moved",
        "fs-link:/data/alias:/other/linked",
    ] {
        let got = run(behaviour).await;
        assert!(got.starts_with("err:"), "{behaviour}: {got}");
    }
    for name in ["alias", "moved", "linked"] {
        assert!(
            fs::symlink_metadata(root.join("other").join(name)).is_err(),
            "{name}"
        );
    }
    assert_chaos_serves(runtime()).await;
}

#[test]
fn every_guest_is_inspected_as_built() {
    // Every guest, the Python one (38 core instances) included, with the default runtime.
    for guest in ALL {
        let r = runtime().inspect_file(Path::new(guest.path)).unwrap();
        let want = match guest.kind {
            Kind::Hook => InspectKind::TypedHook,
            Kind::Command => InspectKind::WasiCommand,
        };
        assert_eq!(r.kind, want, "{}", guest.name);
        assert_eq!(
            r.accepted,
            guest.name != "net",
            "{}: {:?}",
            guest.name,
            r.reasons
        );
    }
}

/// The chaos guest's response of `bytes` (`respond:` a context, `update:` an updated-input)
/// under `limits`.
async fn respond(verb: &str, bytes: u64, limits: &WasmLimits) -> Result<WasmRun, FailedRun> {
    chaos_in(runtime(), &format!("{verb}:{bytes}"), limits, &[], &[]).await
}

#[tokio::test]
async fn response_bytes_obeyed() {
    let l = WasmLimits::default();
    assert_eq!(answer(respond("respond", 900_000, &l).await).len(), 900_000);
    let r = typed(respond("update", 900_000, &l).await);
    assert_eq!(
        r.updated_input.unwrap()["x"].as_str().unwrap().len(),
        900_000
    );
}

/// Over the cap but within what the host lifts (the hostcall budget never goes below 1 MiB):
/// refused once lifted, before `updated-input` is parsed.
#[tokio::test]
async fn response_bytes_violated_is_invalid_output() {
    let l = WasmLimits::default().with_response_bytes(10_000);
    for verb in ["respond", "update"] {
        let f = failure(respond(verb, 20_000, &l).await);
        assert_eq!(f.class(), FailureClass::InvalidOutput, "{verb}");
        assert!(
            f.failure
                .message
                .contains("above the `response_bytes` limit of 10000 bytes"),
            "{verb}: {}",
            f.failure.message
        );
    }
    assert_chaos_serves(runtime()).await;
}

/// Far over the cap (the 40 MiB `updated-input` and 100 MiB answers of issue 8 in small): the
/// host refuses while lifting it, so it never holds more than the cap.
#[tokio::test]
async fn response_bytes_violated_while_lifting() {
    let l = WasmLimits::default().with_memory_bytes(128 << 20);
    for verb in ["respond", "update"] {
        let f = failure(respond(verb, 24 << 20, &l).await);
        assert_eq!(f.class(), FailureClass::InvalidOutput, "{verb}");
        assert!(
            f.failure
                .message
                .contains("`response_bytes` limit of 1048576 bytes"),
            "{verb}: {}",
            f.failure.message
        );
    }
    assert_chaos_serves(runtime()).await;
}

/// A huge log line is cut at `log_message_bytes`, and only the kept bytes stay allocated.
#[tokio::test]
async fn log_message_bytes_obeyed_a_long_line_is_cut_and_only_its_prefix_kept() {
    let run = chaos("log-big:800000").await.unwrap();
    assert_eq!(run.report.logs.len(), 1);
    let line = &run.report.logs[0];
    assert!(line.truncated);
    assert_eq!(line.message.len(), 4096);
    assert!(
        line.message.capacity() <= 4096,
        "{}",
        line.message.capacity()
    );
}

/// A log line larger than the hostcall budget is refused while it is lifted: the host never
/// copies it (wasmtime's default budget, 128 MiB per call, let one hook drive the host past
/// 3 GiB).
#[tokio::test]
async fn log_message_past_the_hostcall_budget_is_invalid_output() {
    let l = WasmLimits::default().with_memory_bytes(128 << 20);
    let f = failure(chaos_in(runtime(), "log-big:24000000", &l, &[], &[]).await);
    assert_eq!(f.class(), FailureClass::InvalidOutput);
    assert!(f.report.logs.is_empty());
    assert_chaos_serves(runtime()).await;
}

/// One writable mount at `/rw` on a fresh folder.
fn rw_mount(name: &str) -> (PathBuf, Vec<ResolvedMount>) {
    let root = tmp_dir(name);
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(&root).unwrap();
    let mounts = vec![ResolvedMount {
        host: MountDir::open(&root).unwrap(),
        guest: "/rw".into(),
        access: Access::Rw,
        symlinks: false,
    }];
    (root, mounts)
}

async fn in_rw(mounts: &[ResolvedMount], limits: &WasmLimits, behaviour: &str) -> WasmRun {
    chaos_in(runtime(), behaviour, limits, mounts, &[])
        .await
        .unwrap()
}

fn context(run: &WasmRun) -> String {
    match &run.output {
        WasmOutput::Typed(r) => r.additional_contexts.join("\n"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn write_bytes_obeyed() {
    let (root, mounts) = rw_mount("quota-bytes-ok");
    let l = WasmLimits::default().with_write_budget(2 << 20, 10);
    let run = in_rw(&mounts, &l, "fs-write-n:/rw/a:1000000").await;
    assert_eq!(context(&run), "ok");
    let run2 = in_rw(&mounts, &l, "fs-append-n:/rw/b:1000000").await;
    assert_eq!(context(&run2), "ok");
    assert_eq!(fs::metadata(root.join("a")).unwrap().len(), 1_000_000);
    assert_eq!(fs::metadata(root.join("b")).unwrap().len(), 1_000_000);
    assert_eq!(
        (run.report.bytes_written, run.report.files_created),
        (1_000_000, 1)
    );
    assert_eq!(
        (run2.report.bytes_written, run2.report.files_created),
        (1_000_000, 1)
    );
}

/// Past `write_bytes` the guest's writes fail (through a write stream and an append stream
/// alike) and no more than the budget reaches the disk; the run goes on. (The host reports
/// `insufficient-space`; wasi-libc turns any failed stream write into `EIO`.)
#[tokio::test]
async fn write_bytes_violated_stops_at_the_budget() {
    let (root, mounts) = rw_mount("quota-bytes-over");
    let l = WasmLimits::default().with_write_budget(100_000, 10);
    for (behaviour, file) in [
        ("fs-write-n:/rw/a:1000000", "a"),
        ("fs-append-n:/rw/b:1000000", "b"),
    ] {
        let run = in_rw(&mounts, &l, behaviour).await;
        let got = context(&run);
        assert_eq!(
            got, "err:Uncategorized:I/O error (os error 29)",
            "{behaviour}"
        );
        assert!(run.report.bytes_written <= 100_000, "{behaviour}");
        assert!(
            fs::metadata(root.join(file)).unwrap().len() <= 100_000,
            "{behaviour}"
        );
    }
    assert_chaos_serves(runtime()).await;
}

#[tokio::test]
async fn write_files_obeyed() {
    let (root, mounts) = rw_mount("quota-files-ok");
    let l = WasmLimits::default().with_write_budget(1 << 20, 20);
    let run = in_rw(&mounts, &l, "fs-create:/rw:20").await;
    assert_eq!(context(&run), "created 20");
    assert_eq!(fs::read_dir(&root).unwrap().count(), 20);
    assert_eq!(run.report.files_created, 20);
}

#[tokio::test]
async fn write_files_violated_stops_at_the_budget() {
    let (root, mounts) = rw_mount("quota-files-over");
    let l = WasmLimits::default().with_write_budget(1 << 20, 20);
    let run = in_rw(&mounts, &l, "fs-create:/rw:100").await;
    let got = context(&run);
    assert!(got.starts_with("created 20; err:StorageFull:"), "{got}");
    assert_eq!(fs::read_dir(&root).unwrap().count(), 20);
    assert_chaos_serves(runtime()).await;
}

/// Threads of this process blocked in the kernel waiting for a FIFO's other end.
#[cfg(target_os = "linux")]
fn fifo_waiters() -> usize {
    fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| fs::read_to_string(t.unwrap().path().join("wchan")).ok())
        .filter(|w| w.trim() == "wait_for_partner")
        .count()
}

/// Opens both ends of the FIFO at `path` when dropped (`O_RDWR` never blocks on Linux), so a
/// thread a failing test left blocked in `open` is released.
#[cfg(target_os = "linux")]
struct ReleaseFifo(PathBuf);

#[cfg(target_os = "linux")]
impl Drop for ReleaseFifo {
    fn drop(&mut self) {
        let _ = fs::OpenOptions::new().read(true).write(true).open(&self.0);
    }
}

/// A FIFO inside a mount, opened by the guest for reading and for writing: the guest gets an
/// error (`unsupported`) at once, and no thread is left blocked in `open` — the open never
/// reached the kernel (without a reader, a non-blocking writer's open fails with `ENXIO`).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_fifo_in_a_mount_is_refused_not_waited_on() {
    use std::os::unix::fs::OpenOptionsExt;
    let (root, mounts) = rw_mount("fifo-in-mount");
    let fifo = root.join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let _release = ReleaseFifo(fifo.clone());
    let l = WasmLimits::default().with_timeout(Duration::from_millis(500));
    let before = fifo_waiters();
    let mut answers = Vec::new();
    for behaviour in ["fs-read:/rw/pipe", "fs-write:/rw/pipe", "fs-trunc:/rw/pipe"] {
        let run = chaos_in(runtime(), behaviour, &l, &mounts, &[]).await;
        answers.push((behaviour, run.map(|r| context(&r)).map_err(|f| f.failure)));
    }
    let waiters = fifo_waiters() - before;
    let no_reader = fs::OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(&fifo)
        .map(drop)
        .map_err(|e| e.raw_os_error());
    assert_eq!(waiters, 0, "{answers:?}");
    assert_eq!(no_reader, Err(Some(rustix::io::Errno::NXIO.raw_os_error())));
    for (behaviour, got) in answers {
        let got = got.unwrap_or_else(|f| panic!("{behaviour}: {f}"));
        assert!(got.starts_with("err:Unsupported:"), "{behaviour}: {got}");
    }
    // Ordinary files beside it still open.
    assert_eq!(
        context(&in_rw(&mounts, &WasmLimits::default(), "fs-write:/rw/plain").await),
        "ok"
    );
}

/// A device file in a mount (here `/dev/null`, bind-less: a mount of a copy of its node would
/// need privileges, so the mount is `/dev` itself, read-only) is refused the same way.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_device_in_a_mount_is_refused() {
    let mounts = vec![ResolvedMount {
        host: MountDir::open(Path::new("/dev")).unwrap(),
        guest: "/dev".into(),
        access: Access::Ro,
        symlinks: false,
    }];
    for device in ["/dev/zero", "/dev/null", "/dev/urandom"] {
        let got = answer(
            chaos_in(
                runtime(),
                &format!("fs-read:{device}"),
                &WasmLimits::default(),
                &mounts,
                &[],
            )
            .await,
        );
        assert!(got.starts_with("err:Unsupported:"), "{device}: {got}");
    }
}

/// A mount opened, then its folder renamed and its name replaced by a symlink to `/`: the
/// guest still sees the folder that was opened (its file, and no `etc`), never `/`.
#[cfg(unix)]
#[tokio::test]
async fn a_mount_renamed_and_replaced_by_a_symlink_to_root_stays_the_original_folder() {
    let root = tree("mount-swap");
    let mounts = mount(&root, Access::Ro);
    fs::rename(root.join("mounted"), root.join("moved-away")).unwrap();
    std::os::unix::fs::symlink("/", root.join("mounted")).unwrap();
    assert_eq!(
        in_mount_with(&mounts, "fs-list:/data").await,
        "ok:abs_link\ninside.txt\nlink_out"
    );
    assert_eq!(
        in_mount_with(&mounts, "fs-read:/data/inside.txt").await,
        "ok:inside"
    );
    let got = in_mount_with(&mounts, "fs-read:/data/etc/passwd").await;
    assert!(got.starts_with("err:NotFound:"), "{got}");
}

async fn in_mount_with(mounts: &[ResolvedMount], behaviour: &str) -> String {
    answer(chaos_in(runtime(), behaviour, &WasmLimits::default(), mounts, &[]).await)
}

/// Rust's `std::process::exit` on `wasm32-wasip2` goes through wasi-libc's `exit`, which calls
/// `wasi:cli/exit.exit(err)` for any non-zero status: the host sees 1, whatever the code. (So
/// a Rust command guest cannot exit with 2; it answers with JSON instead. `exit-with-code`
/// itself passes any code through: `command.rs`.)
#[tokio::test]
async fn rust_std_process_exit_reaches_the_host_as_1() {
    let f = failure(chaos("exit:3").await);
    assert_eq!(
        f.failure.message,
        "guest exited with code 1 instead of returning a response"
    );
}
