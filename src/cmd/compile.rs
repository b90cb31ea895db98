//! `hookbox compile PLUGIN…`: compile every wasm component the plugins' rules name into the
//! on-disk cache ahead of time, with a progress bar, so the first dispatch does not pay for
//! Cranelift (~20–100 ms per component). Uses the same engine configuration as `dispatch`.
//! `--json` prints each component's outcome instead. The demo compiles its components through
//! [`components`] and [`compile_all`] too, to show its first run's progress.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Severity;
use hookbox_core::rule::Handler;
use hookbox_wasm::{
    CacheStatus, DEFAULT_MAX_COMPONENT_BYTES, MountDir, WasmRuntime, read_component_beneath,
};
use indicatif::{ProgressBar, ProgressStyle};
use owo_colors::OwoColorize;
use serde_json::json;

use super::EXIT_FAILURE;
use super::validate::write_diagnostic;
use crate::cli::CompileArgs;
use crate::host_setup::wasm_runtime_config;

/// One component to compile: its file, and its bytes or why they could not be read.
pub(crate) struct Job {
    pub(crate) path: PathBuf,
    pub(crate) bytes: anyhow::Result<Vec<u8>>,
}

/// What became of one component.
pub(crate) struct Compiled {
    pub(crate) path: PathBuf,
    pub(crate) outcome: anyhow::Result<CacheStatus>,
    pub(crate) ms: f64,
}

/// One job per distinct component file the wasm rules of `report` name, in rule order, each
/// read beneath its plugin folder as loading reads it.
pub(crate) fn components(report: &LoadReport) -> Vec<Job> {
    let mut seen = BTreeSet::new();
    let mut jobs = Vec::new();
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
                    jobs.push(Job {
                        path: root.join(rel),
                        bytes: Ok(bytes),
                    });
                }
            }
            Err(e) => jobs.push(Job {
                path: root.join(&spec.component),
                bytes: Err(e),
            }),
        }
    }
    jobs
}

/// A progress bar of `n` steps on stderr (drawn only when stderr is a terminal).
pub(crate) fn progress_bar(n: usize) -> anyhow::Result<ProgressBar> {
    let bar = ProgressBar::new(n as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {wide_msg}")
            .context("progress bar template")?
            .progress_chars("=> "),
    );
    Ok(bar)
}

/// Compiles each job's component into `runtime` (and its disk cache), advancing `bar` with the
/// file's name as its message.
pub(crate) fn compile_all(
    runtime: &WasmRuntime,
    jobs: Vec<Job>,
    bar: &ProgressBar,
) -> Vec<Compiled> {
    let mut out = Vec::with_capacity(jobs.len());
    for Job { path, bytes } in jobs {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        bar.set_message(name);
        let started = Instant::now();
        let outcome = bytes.and_then(|b| runtime.precompile_bytes(&b).map_err(anyhow::Error::from));
        out.push(Compiled {
            path,
            outcome,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    out
}

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
    let errors: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !args.json {
        let mut diags = String::new();
        for d in &errors {
            write_diagnostic(&mut diags, d);
        }
        eprint!("{}", anstream::adapter::strip_str(&diags));
    }
    let jobs = components(&report);
    let config = wasm_runtime_config();
    let cache = config.cache_dir.clone();
    let runtime = WasmRuntime::new(config).context("cannot start the wasm runtime")?;
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        progress_bar(jobs.len())?
    };
    let compiled = compile_all(&runtime, jobs, &bar);
    let failed = report.has_errors() || compiled.iter().any(|c| c.outcome.is_err());
    let text = if args.json {
        json_text(&compiled, cache.as_deref(), &errors, failed)?
    } else {
        human_text(&compiled, cache.as_deref())
    };
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    Ok(if failed {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn human_text(compiled: &[Compiled], cache: Option<&std::path::Path>) -> String {
    let mut s = String::new();
    for c in compiled {
        let name = c.path.display();
        let line = match &c.outcome {
            Ok(CacheStatus::Compiled) => format!("{} {name} ({:.0} ms)", "compiled".green(), c.ms),
            Ok(status) => format!(
                "{} {name} (already cached: {})",
                "cached".cyan(),
                cache_word(*status)
            ),
            Err(e) => format!("{} {name}: {e:#}", "failed".red()),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str(&format!(
        "{} component{} → cache: {}\n",
        compiled.len(),
        if compiled.len() == 1 { "" } else { "s" },
        where_cache(cache)
    ));
    s
}

/// The `--json` document: `ok`, `cache_dir`, each component (`path`, `outcome` compiled |
/// cached | failed, `cached_in` memory | disk, `ms`, `error`) and the load's error diagnostics.
fn json_text(
    compiled: &[Compiled],
    cache: Option<&std::path::Path>,
    errors: &[&hookbox_core::diagnostic::Diagnostic],
    failed: bool,
) -> anyhow::Result<String> {
    let components: Vec<serde_json::Value> = compiled
        .iter()
        .map(|c| match &c.outcome {
            Ok(CacheStatus::Compiled) => {
                json!({"path": c.path, "outcome": "compiled", "ms": c.ms})
            }
            Ok(status) => {
                json!({"path": c.path, "outcome": "cached", "cached_in": cache_word(*status), "ms": c.ms})
            }
            Err(e) => json!({"path": c.path, "outcome": "failed", "error": format!("{e:#}")}),
        })
        .collect();
    let v = json!({
        "ok": !failed,
        "cache_dir": cache,
        "components": components,
        "diagnostics": errors,
    });
    let mut s = serde_json::to_string_pretty(&v).context("cannot encode the result")?;
    s.push('\n');
    Ok(s)
}

fn where_cache(cache: Option<&std::path::Path>) -> String {
    cache.map_or_else(
        || "memory only (no cache folder: set HOOKBOX_CACHE_DIR or HOME)".to_owned(),
        |d| d.display().to_string(),
    )
}

fn cache_word(s: CacheStatus) -> &'static str {
    match s {
        CacheStatus::Memory => "memory",
        CacheStatus::Disk => "disk",
        CacheStatus::Compiled => "compiled",
    }
}
