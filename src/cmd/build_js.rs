//! `hookbox build-js HOOK.js -o OUT.wasm`: a JavaScript hook made into a component of hookbox's
//! `hook` world with the QuickJS runtime this binary carries, its module evaluated once here
//! (`hookbox_wasm::build_js`) — no node, npm or compiler needed. The output is loaded by this
//! host before it is written, so what is written is a hook hookbox runs (and its compiled code
//! is in the cache for the first event). `--check` says whether this binary can build at all:
//! it carries the runtime only when its build had the QuickJS toolchain (clang, wasi-libc).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use hookbox_core::files::{Symlinks, read_file};
use hookbox_wasm::{JsBuildLimits, WasmRuntime, build_js};

use super::EXIT_FAILURE;
use crate::cli::BuildJsArgs;
use crate::host_setup::wasm_runtime_config;

/// Runs `hookbox build-js`.
pub(crate) fn run(args: &BuildJsArgs) -> anyhow::Result<ExitCode> {
    run_with(args, hookbox_bundled::QUICKJS_RUNTIME)
}

/// [`run`] with `runtime` as the QuickJS runtime this binary carries (`None`: built without the
/// toolchain) — apart so that the branch a binary without it takes is tested where every binary
/// built has one.
fn run_with(args: &BuildJsArgs, runtime: Option<&[u8]>) -> anyhow::Result<ExitCode> {
    let Some(runtime) = runtime else {
        let why = format!(
            "this hookbox carries no QuickJS runtime, so it cannot build JavaScript hooks: it \
             was built without the QuickJS toolchain ({}). Build with componentize-qjs from npm \
             instead (`hookbox new --lang js` writes a build.sh that does), or rebuild hookbox \
             after scripts/setup-polyglot.sh",
            hookbox_bundled::POLYGLOT_MISSING.join("; ")
        );
        if args.check {
            eprintln!("hookbox: {why}");
            return Ok(ExitCode::from(EXIT_FAILURE));
        }
        bail!(why);
    };
    if args.check {
        println!(
            "hookbox builds JavaScript hooks with its QuickJS runtime ({} bytes)",
            runtime.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let Some(source_path) = &args.source else {
        bail!("which hook? `hookbox build-js HOOK.js -o OUT.wasm`");
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| source_path.with_extension("wasm"));
    let limits = JsBuildLimits::default();
    // Core's reader: opened without blocking (a FIFO is refused, not waited on), a regular file
    // of at most the limit, UTF-8. The author named it, so a symlink to it is followed.
    let source = read_file(source_path, limits.max_source_bytes, Symlinks::Follow)?;
    let started = Instant::now();
    let component = match build_js(runtime, &source, &limits) {
        Ok(component) => component,
        Err(e) => {
            eprintln!("hookbox: {}: {e}", source_path.display());
            return Ok(ExitCode::from(EXIT_FAILURE));
        }
    };
    // Loaded as a rule would load it: a component this host refuses is not written.
    let host = WasmRuntime::new(wasm_runtime_config()).context("cannot start the wasm runtime")?;
    if let Err(e) = host.load_bytes(&component) {
        eprintln!(
            "hookbox: {}: the built component is not one this host runs: {e}",
            source_path.display()
        );
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    // Atomically, never through a link planted at the output or beside it.
    super::install::write::replace(&output, &component)?;
    eprintln!(
        "built {} ({} bytes) in {:.1} s",
        output.display(),
        component.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A binary built without the QuickJS toolchain says so, names the way that works without
    /// it, exits 1 under `--check`, fails a build with the same words and writes nothing.
    #[test]
    fn without_a_runtime_it_says_what_to_use_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("hook.js");
        std::fs::write(
            &source,
            "export const handler = { handle() { return {}; } };",
        )
        .unwrap();
        let output = dir.path().join("hook.wasm");
        let check = BuildJsArgs {
            source: None,
            output: None,
            check: true,
        };
        assert_eq!(
            run_with(&check, None).unwrap(),
            ExitCode::from(EXIT_FAILURE)
        );
        let build = BuildJsArgs {
            source: Some(source),
            output: Some(output.clone()),
            check: false,
        };
        let e = run_with(&build, None).unwrap_err().to_string();
        assert!(
            e.contains("carries no QuickJS runtime") && e.contains("componentize-qjs"),
            "{e}"
        );
        assert!(!output.exists(), "nothing written");
        // And with a runtime, `--check` says it can build.
        assert_eq!(
            run_with(&check, Some(b"runtime bytes")).unwrap(),
            ExitCode::SUCCESS
        );
    }
}
