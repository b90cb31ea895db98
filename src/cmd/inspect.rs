//! `hookbox inspect X.wasm`: what a component is (typed hook world, `wasi:cli` command, core
//! module…), its WIT version, the capabilities it asks for (imports, each granted or refused),
//! its exports and size, and whether this host would accept it — before anyone runs it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use hookbox_wasm::{Grant, InspectKind, InspectReport, PoolingMode, WasmRuntime};
use owo_colors::OwoColorize;

use super::EXIT_FAILURE;
use crate::cli::InspectArgs;
use crate::host_setup::wasm_runtime_config;

/// Runs `hookbox inspect`.
pub(crate) fn run(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    if !args.component.is_file() {
        bail!("cannot inspect {}: no such file", args.component.display());
    }
    let mut config = wasm_runtime_config();
    // One look at one file: no instance pool to reserve, no cache to write.
    config.pooling = PoolingMode::Disabled;
    config.cache_dir = None;
    let runtime = WasmRuntime::new(config).context("cannot start the wasm runtime")?;
    let report = runtime
        .inspect_file(&args.component)
        .with_context(|| format!("cannot inspect {}", args.component.display()))?;
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report).context("cannot encode the report")?;
        s.push('\n');
        s
    } else {
        human(&args.component.display().to_string(), &report)
    };
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(if report.accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}

fn kind(k: InspectKind) -> &'static str {
    match k {
        InspectKind::TypedHook => "typed hook (world hookbox:hook/hook)",
        InspectKind::WasiCommand => "wasi:cli command (run as a sandboxed command hook)",
        InspectKind::UnknownComponent => "component of an unknown world",
        InspectKind::InvalidComponent => "invalid component",
        InspectKind::CoreModule => "core WebAssembly module (not a component)",
        InspectKind::NotWasm => "not WebAssembly",
    }
}

fn human(name: &str, r: &InspectReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", name.bold());
    let _ = writeln!(s, "  kind:        {}", kind(r.kind));
    let _ = writeln!(
        s,
        "  WIT version: {}",
        r.wit_version
            .as_deref()
            .map_or_else(|| "-".to_owned(), |v| format!("hookbox:hook@{v}"))
    );
    let _ = writeln!(
        s,
        "  size:        {} bytes ({:.1} KiB)",
        r.size_bytes,
        r.size_bytes as f64 / 1024.0
    );
    let _ = writeln!(s, "  sha256:      {}", r.sha256);
    let _ = writeln!(s, "  exports:");
    for e in &r.exports {
        let _ = writeln!(s, "    {e}");
    }
    let _ = writeln!(s, "  imports (capabilities it asks for):");
    if r.imports.is_empty() {
        let _ = writeln!(s, "    none");
    }
    for i in &r.imports {
        let mark = match i.grant {
            Grant::Granted => "granted".green().to_string(),
            Grant::Network => "refused: hooks have no network".red().to_string(),
            Grant::NotGranted => "refused: not offered by this host".red().to_string(),
        };
        let _ = writeln!(s, "    {:<44} {mark}", i.name);
    }
    if matches!(r.kind, InspectKind::TypedHook | InspectKind::WasiCommand) {
        let wasi = r
            .imports
            .iter()
            .filter(|i| i.name.starts_with("wasi:"))
            .count();
        let _ = match (wasi, r.kind) {
            (0, InspectKind::TypedHook) => writeln!(
                s,
                "  WASI:        none: it runs without a WASI context (the cheapest hook to start)"
            ),
            (n, InspectKind::TypedHook) => writeln!(
                s,
                "  WASI:        {n} interfaces (its WASI context is made at its first WASI call)"
            ),
            (n, _) => writeln!(s, "  WASI:        {n} interfaces"),
        };
    }
    if let Some(shape) = &r.shape {
        let _ = writeln!(
            s,
            "  per event:   {} core instance(s), {} linear memory(ies), {} table(s)",
            shape.core_instances, shape.memories, shape.tables
        );
    }
    if r.accepted {
        let _ = writeln!(s, "  accepted:    {}", "yes".green().bold());
    } else {
        let _ = writeln!(s, "  accepted:    {}", "no".red().bold());
        for reason in &r.reasons {
            let _ = writeln!(s, "    - {reason}");
        }
    }
    s
}
