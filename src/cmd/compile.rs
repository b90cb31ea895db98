//! `hookbox compile PLUGIN…`: compile every wasm component the plugins' rules name into the
//! on-disk cache ahead of time, with a progress bar, so the first dispatch does not pay for
//! Cranelift (~20–100 ms per component). Uses the same engine configuration as `dispatch`.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use hookbox_core::config::{LoadOptions, load_paths};
use hookbox_core::rule::Handler;
use hookbox_wasm::{
    CacheStatus, DEFAULT_MAX_COMPONENT_BYTES, MountDir, WasmRuntime, read_component_beneath,
};
use indicatif::{ProgressBar, ProgressStyle};
use owo_colors::OwoColorize;

use super::EXIT_FAILURE;
use super::validate::write_diagnostic;
use crate::cli::CompileArgs;
use crate::host_setup::wasm_runtime_config;

/// Runs `hookbox compile`.
pub(crate) fn run(args: &CompileArgs) -> anyhow::Result<ExitCode> {
    for p in &args.plugins {
        if !p.try_exists().unwrap_or(true) {
            bail!("cannot compile {}: no such file or directory", p.display());
        }
    }
    let report = load_paths(
        &args.plugins,
        &LoadOptions::default().with_dialect(args.dialect.map(Into::into)),
    );
    let mut diags = String::new();
    for d in report
        .diagnostics
        .iter()
        .filter(|d| d.severity == hookbox_core::diagnostic::Severity::Error)
    {
        write_diagnostic(&mut diags, d);
    }
    eprint!("{}", anstream::adapter::strip_str(&diags));
    // One job per distinct component file, in rule order.
    let mut seen = BTreeSet::new();
    let mut jobs: Vec<(PathBuf, anyhow::Result<Vec<u8>>)> = Vec::new();
    for rule in &report.rules {
        let (Handler::Wasm(spec), Some(plugin)) = (&rule.handler, report.plugins.get(rule.plugin))
        else {
            continue;
        };
        let root = std::path::absolute(&plugin.root).unwrap_or_else(|_| plugin.root.clone());
        let read = MountDir::open(&root)
            .map_err(anyhow::Error::from)
            .and_then(|dir| {
                read_component_beneath(&dir, &spec.component, DEFAULT_MAX_COMPONENT_BYTES)
                    .map_err(anyhow::Error::from)
            });
        match read {
            Ok((rel, bytes)) => {
                if seen.insert(root.join(&rel)) {
                    jobs.push((root.join(rel), Ok(bytes)));
                }
            }
            Err(e) => jobs.push((root.join(&spec.component), Err(e))),
        }
    }
    let config = wasm_runtime_config();
    let cache = config.cache_dir.clone();
    let runtime = WasmRuntime::new(config).context("cannot start the wasm runtime")?;
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {wide_msg}")
            .context("progress bar template")?
            .progress_chars("=> "),
    );
    let mut lines = Vec::new();
    let mut failed = report.has_errors();
    for (path, bytes) in jobs {
        let name = path.display().to_string();
        bar.set_message(name.clone());
        let started = Instant::now();
        let outcome = bytes.and_then(|b| runtime.precompile_bytes(&b).map_err(anyhow::Error::from));
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        lines.push(match outcome {
            Ok(CacheStatus::Compiled) => format!("{} {name} ({ms:.0} ms)", "compiled".green()),
            Ok(status) => format!(
                "{} {name} (already cached: {})",
                "cached".cyan(),
                cache_word(status)
            ),
            Err(e) => {
                failed = true;
                format!("{} {name}: {e:#}", "failed".red())
            }
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut out = anstream::stdout().lock();
    for l in &lines {
        writeln!(out, "{l}").context("cannot write to stdout")?;
    }
    let where_ = cache.map_or_else(
        || "memory only (no cache folder: set HOOKBOX_CACHE_DIR or HOME)".to_owned(),
        |d| d.display().to_string(),
    );
    writeln!(
        out,
        "{} component{} → cache: {where_}",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" }
    )
    .context("cannot write to stdout")?;
    Ok(if failed {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn cache_word(s: CacheStatus) -> &'static str {
    match s {
        CacheStatus::Memory => "memory",
        CacheStatus::Disk => "disk",
        CacheStatus::Compiled => "compiled",
    }
}
