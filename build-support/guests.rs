//! Building guest workspaces for `wasm32-wasip2` from a build script, shared by the build scripts
//! of `crates/test-artifacts` (every guest, for tests) and `crates/bundled` (the example guests
//! the `hookbox` binary carries) through `#[path]`: a build script cannot depend on a library of
//! the same workspace without building it for the host first, and this is plain std + serde_json.
//!
//! The inner target dir is `<outer target dir>/wasm-guests`, not `$OUT_DIR`: `OUT_DIR` differs
//! between `cargo build`, `cargo test`, `--release`, … so each would rebuild every guest from
//! cold (about two minutes on two cores), while one shared dir makes all but the first an
//! incremental no-op. Concurrent outer builds are safe: the inner cargo locks its target dir.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// A build script's `main`: runs `run` and turns its error into one `error:` line (cargo shows
/// a failing build script's stderr; keep it to the point).
pub(crate) fn exit_with(result: Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The script's `OUT_DIR` and the repository root (two folders above the crate's manifest).
pub(crate) fn out_and_root() -> Result<(PathBuf, PathBuf), String> {
    let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(var("OUT_DIR")?);
    let root = manifest_dir
        .join("../..")
        .canonicalize()
        .map_err(|e| format!("cannot find the repository root: {e}"))?;
    Ok((out_dir, root))
}

/// The inputs of every guest besides its own files: the WIT, the SDK and this build code (the
/// dep-info files read after a build name the exact files; these folders also catch new ones).
pub(crate) fn common_inputs(root: &Path) -> BTreeSet<PathBuf> {
    [
        "wit",
        "crates/guest/Cargo.toml",
        "crates/guest/src",
        "build-support",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect()
}

/// The guests' target.
pub(crate) const TARGET: &str = "wasm32-wasip2";

/// One built component.
pub(crate) struct Artifact {
    /// The cargo target name (`shell_guard`, `cli-guard`), or a polyglot guest's name.
    pub(crate) target: String,
    /// The workspace member's folder, relative to the repository root.
    pub(crate) source: String,
    /// `cdylib` → a typed hook; `bin` → a `wasi:cli` command.
    pub(crate) command: bool,
    pub(crate) wasm: PathBuf,
}

pub(crate) fn var(name: &str) -> Result<String, String> {
    env::var(name).map_err(|e| format!("${name}: {e}"))
}

/// A guest workspace's manifests and each member's manifest and sources. Not the whole folder:
/// a `target/` left by a manual build inside it would make every outer build rerun this script.
pub(crate) fn watch_workspace(workspace: &Path, watched: &mut BTreeSet<PathBuf>) {
    for file in ["Cargo.toml", "Cargo.lock"] {
        watched.insert(workspace.join(file));
    }
    // The guests' link flags (their stack size), where the workspace sets any: watched only when
    // present, since cargo reruns a script on every build for a watched path that does not exist.
    let config = workspace.join(".cargo/config.toml");
    if config.is_file() {
        watched.insert(config);
    }
    let Ok(entries) = fs::read_dir(workspace) else {
        return;
    };
    for member in entries.flatten().map(|entry| entry.path()) {
        if member.join("Cargo.toml").is_file() {
            watched.insert(member.join("Cargo.toml"));
            watched.insert(member.join("src"));
        }
    }
}

/// `<target>/<profile>/build/<pkg>-<hash>/out` → `<target>/wasm-guests`; any other layout →
/// `$OUT_DIR/wasm-guests` (correct, only not shared).
pub(crate) fn guests_target_dir(out_dir: &Path) -> PathBuf {
    cargo_target_dir(out_dir).map_or_else(|| out_dir.join("wasm-guests"), |t| t.join("wasm-guests"))
}

/// The outer cargo target dir (`<target>` in `<target>/<profile>/build/<pkg>-<hash>/out`, or in
/// `<target>/<triple>/<profile>/…` with an explicit `--target`), when `OUT_DIR` has cargo's
/// usual layout. `scripts/setup-polyglot.sh` derives the same folder from `CARGO_TARGET_DIR`.
pub(crate) fn cargo_target_dir(out_dir: &Path) -> Option<PathBuf> {
    let build = out_dir.parent().and_then(Path::parent)?;
    if build.file_name() != Some("build".as_ref()) {
        return None;
    }
    let target = build.parent().and_then(Path::parent)?;
    match (target.file_name(), env::var_os("TARGET")) {
        (Some(name), Some(triple)) if name == triple => target.parent().map(Path::to_owned),
        _ => Some(target.to_owned()),
    }
}

/// Fails early, with the fix, when the toolchain has no standard library for the target.
pub(crate) fn check_target_installed() -> Result<(), String> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let output = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", rustc.to_string_lossy()))?;
    let libdir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    let has_std = output.status.success()
        && fs::read_dir(&libdir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
        });
    if has_std {
        Ok(())
    } else {
        Err(format!(
            "the `{TARGET}` target is not installed for this toolchain; hookbox's test guests \
             are built for it.\n  help: run `rustup target add {TARGET}`"
        ))
    }
}

/// Runs `cargo build --release --target wasm32-wasip2` in one guest workspace and returns the
/// components it produced, read from cargo's JSON messages (so a new member needs no edit here).
pub(crate) fn build_workspace(
    root: &Path,
    workspace: &Path,
    target_dir: &Path,
) -> Result<Vec<Artifact>, String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(workspace)
        .args(["build", "--release", "--quiet", "--target", TARGET])
        .arg("--message-format=json-render-diagnostics");
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        if leaks_into_inner_build(&key) {
            cmd.env_remove(&*key);
        }
    }
    // After the clean-up, which drops an inherited `CARGO_TARGET_DIR` (the outer one).
    cmd.env("CARGO_TARGET_DIR", target_dir);
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cargo.to_string_lossy()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);

    let mut artifacts = Vec::new();
    let mut diagnostics = String::new();
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match message["reason"].as_str() {
            Some("compiler-message") => {
                if let Some(rendered) = message["message"]["rendered"].as_str() {
                    diagnostics.push_str(rendered);
                }
            }
            Some("compiler-artifact") => {
                let kinds = &message["target"]["kind"];
                let command = kinds
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "bin"));
                let wasm = message["filenames"].as_array().and_then(|files| {
                    files
                        .iter()
                        .filter_map(serde_json::Value::as_str)
                        .find(|f| f.ends_with(".wasm"))
                });
                let (Some(wasm), Some(target), Some(manifest)) = (
                    wasm,
                    message["target"]["name"].as_str(),
                    message["manifest_path"].as_str(),
                ) else {
                    continue;
                };
                let source = Path::new(manifest)
                    .parent()
                    .and_then(|dir| dir.strip_prefix(root).ok())
                    .map_or_else(|| manifest.to_owned(), |dir| dir.display().to_string());
                artifacts.push(Artifact {
                    target: target.to_owned(),
                    source,
                    command,
                    wasm: PathBuf::from(wasm),
                });
            }
            _ => {}
        }
    }

    if !output.status.success() {
        return Err(format!(
            "building the guests in {ws} failed ({}):\n{diagnostics}{}\n  \
             reproduce: cd {ws} && cargo build --release --target {TARGET}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            ws = workspace.display(),
        ));
    }
    if artifacts.is_empty() {
        return Err(format!("{} built no .wasm component", workspace.display()));
    }
    Ok(artifacts)
}

/// Variables that cargo sets for this build script, or that configure the outer build, and
/// that would change the inner build if inherited: flags meant for the host target
/// (`CARGO_ENCODED_RUSTFLAGS`, `RUSTFLAGS`, `CARGO_TARGET_<triple>_*`), profile overrides, the
/// clippy driver, and this script's own `CARGO_CFG_*`/`CARGO_FEATURE_*`/`TARGET`/… which the
/// inner build scripts would otherwise see. Kept: `CARGO_HOME`, the jobserver
/// (`CARGO_MAKEFLAGS`, so both builds share the `-j` budget), network and registry settings,
/// `RUSTC`/`RUSTC_WRAPPER`/`RUSTUP_TOOLCHAIN` (same compiler).
pub(crate) fn leaks_into_inner_build(key: &str) -> bool {
    const KEEP_PREFIXES: &[&str] = &[
        "CARGO_HOME",
        "CARGO_MAKEFLAGS",
        "CARGO_NET_",
        "CARGO_HTTP_",
        "CARGO_REGISTRIES_",
        "CARGO_REGISTRY_",
        "CARGO_TERM_",
    ];
    const BARE: &[&str] = &[
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_LINKER",
        "CLIPPY_ARGS",
        "CLIPPY_CONF_DIR",
        "OUT_DIR",
        "TARGET",
        "HOST",
        "NUM_JOBS",
        "OPT_LEVEL",
        "PROFILE",
        "DEBUG",
    ];
    let cargo_var = key.starts_with("CARGO_") && !KEEP_PREFIXES.iter().any(|p| key.starts_with(p));
    cargo_var || key.starts_with("__CARGO") || key.starts_with("DEP_") || BARE.contains(&key)
}

/// Watches the repository files named in a component's dep-info (`.d`): the guest's own
/// sources, the SDK's, the WIT. Registry sources are immutable and skipped.
pub(crate) fn watch_dep_info(wasm: &Path, root: &Path, watched: &mut BTreeSet<PathBuf>) {
    let Ok(contents) = fs::read_to_string(wasm.with_extension("d")) else {
        return;
    };
    let mut files = Vec::new();
    for line in contents.lines() {
        let Some((_, deps)) = line.split_once(": ") else {
            continue;
        };
        // Make's escaping: `\ ` is a space inside a path.
        let mut current = String::new();
        let mut parts = deps.split(' ').peekable();
        while let Some(part) = parts.next() {
            if let Some(stripped) = part.strip_suffix('\\')
                && parts.peek().is_some()
            {
                current.push_str(stripped);
                current.push(' ');
                continue;
            }
            current.push_str(part);
            if !current.is_empty() {
                files.push(PathBuf::from(std::mem::take(&mut current)));
            }
        }
    }
    watched.extend(files.into_iter().filter(|file| file.starts_with(root)));
}
