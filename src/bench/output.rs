//! Printing a bench report: JSON with `--json` (what `--compare` reads back and what
//! `docs/bench-baseline.json` holds), else the table; then, with `--compare FILE`, each figure
//! against the saved one.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;

use super::compare;
use crate::cli::BenchArgs;

/// Runs `run_in` in a fresh private scratch folder (`name-<pid>-<n>`, removed afterwards,
/// whatever happened) and prints its report: JSON with `--json`, else `table`'s text. With
/// `--compare`, the comparison follows (on stderr with `--json`, so stdout stays one report that
/// can become the next baseline) and a figure more than 1.3× worse makes the exit code 1.
pub(crate) fn measure_and_print<R: Serialize>(
    args: &BenchArgs,
    name: &str,
    run_in: impl FnOnce(&BenchArgs, &Path) -> anyhow::Result<R>,
    table: impl FnOnce(&R) -> String,
) -> anyhow::Result<ExitCode> {
    let scratch = crate::scratch::private_dir(name)?;
    let result = run_in(args, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let report = result?;
    let text = if args.json {
        serde_json::to_string_pretty(&report).context("cannot encode the report")? + "\n"
    } else {
        table(&report)
    };
    anstream::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    let Some(baseline) = &args.compare else {
        return Ok(ExitCode::SUCCESS);
    };
    let now = serde_json::to_value(&report).context("cannot encode the report")?;
    let base = compare::read(baseline)?;
    let comparison = compare::Comparison::of(&base, &now);
    let text = comparison.text(baseline);
    if args.json {
        anstream::stderr().lock().write_all(text.as_bytes())
    } else {
        anstream::stdout().lock().write_all(text.as_bytes())
    }
    .context("cannot print the comparison")?;
    Ok(comparison.exit_code())
}
