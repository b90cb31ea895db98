//! `hookbox-js-build RUNTIME.wasm HOOK.js OUT.wasm`: builds a JavaScript hook into a component of
//! hookbox's `hook` world, with the interpreter's state made here, once, instead of per event.
//!
//! The bootstrap of `hookbox build-js`: it builds the repository's QuickJS guests (and the guest
//! README's example) before any `hookbox` binary exists. The pre-initialiser itself is
//! `crates/wasm/src/build_js.rs`, the same file `hookbox build-js` runs (included here by path),
//! so both bound the author's top-level code alike (fuel, memory, source size) and give the same
//! errors. `RUNTIME.wasm` is the QuickJS runtime component (`runtime/`).

use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

#[path = "../../../../crates/wasm/src/build_js.rs"]
mod build_js;

use build_js::{JsBuildLimits, build_js};

/// No proposal restriction here: the input is this repository's own runtime, and hookbox
/// validates the output against its allow-list when it loads it.
fn restrict_proposals(_: &mut wasmtime::Config) {}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [runtime, source, output] = args.as_slice() else {
        eprintln!("usage: hookbox-js-build RUNTIME.wasm HOOK.js OUT.wasm");
        return ExitCode::from(2);
    };
    match build(Path::new(runtime), Path::new(source), Path::new(output)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookbox-js-build: {e}");
            ExitCode::FAILURE
        }
    }
}

fn build(runtime: &Path, source: &Path, output: &Path) -> Result<(), String> {
    let started = Instant::now();
    let limits = JsBuildLimits::default();
    let wasm = std::fs::read(runtime)
        .map_err(|e| format!("cannot read the runtime {}: {e}", runtime.display()))?;
    let mut bytes = Vec::new();
    std::fs::File::open(source)
        .and_then(|f| {
            f.take(limits.max_source_bytes.saturating_add(1))
                .read_to_end(&mut bytes)
        })
        .map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| format!("{} is not UTF-8 text: {e}", source.display()))?;
    let snapshot =
        build_js(&wasm, &text, &limits).map_err(|e| format!("{}: {e}", source.display()))?;
    let partial = output.with_extension("wasm.partial");
    std::fs::write(&partial, &snapshot)
        .and_then(|()| std::fs::rename(&partial, output))
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    eprintln!(
        "built {} ({} bytes) in {:.1} s",
        output.display(),
        snapshot.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
