//! `hookbox test [PLUGIN…]`: a plugin's cases (`tests/*.json`, `tests/*.toml`) run through the
//! host the way `dispatch` and `hook` run an event — trust, limits and sandbox included — each
//! in a scratch project of its own, in parallel; every expectation checked, also on the answer
//! each listed agent would receive; a line per case (or JUnit, TAP, JSON); exit 1 on a failure.
//!
//! `case` is the format and reading it, `run` runs the cases, `agents` renders and reads each
//! agent's answer, `expect` checks, `report` prints, `record` writes cases from real runs.

pub(crate) mod agents;
pub(crate) mod case;
pub(crate) mod expect;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod run;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::EXIT_FAILURE;
use crate::cli::{TestArgs, TestFormatArg};
use crate::host_setup::block_on;
use run::Suite;

/// Removes the run's scratch folder when the run ends, however it ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        // Hooks may have left read-only files; nothing sensible is left to do if it fails.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `hookbox test`.
pub(crate) fn run(args: &TestArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout();
    if args.print_schema {
        out.write_all(case::SCHEMA.as_bytes())
            .context("cannot write to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let plugins = if args.plugins.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.plugins.clone()
    };
    if let Some(file) = &args.from_replay {
        let written = record::from_replay(file, &plugins[0])?;
        for w in &written {
            writeln!(out, "wrote {}", plugins[0].join(w).display())?;
        }
        writeln!(
            out,
            "{} case{} from {} — replay keeps no payload: fill in each case's `payload`, then run `hookbox test`",
            written.len(),
            if written.len() == 1 { "" } else { "s" },
            file.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut suites = Vec::new();
    for p in &plugins {
        if !p.is_dir() {
            bail!("{} is not a plugin folder", p.display());
        }
        let plugin =
            std::path::absolute(p).with_context(|| format!("cannot resolve {}", p.display()))?;
        let mut cases = case::read_cases(&plugin)?;
        if let Some(f) = &args.filter {
            cases.retain(|c| c.name.contains(f.as_str()));
        }
        suites.push(Suite {
            plugin,
            shown: p.display().to_string(),
            cases,
        });
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
    });
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let trust = args.trust.map(Into::into);
    let scratch = Scratch(crate::scratch::private_dir("hookbox-cases")?);
    let results = block_on(run::run_all(&suites, &scratch.0, jobs, trust))??;
    drop(scratch);

    if args.record {
        for (suite, result) in suites.iter().zip(&results) {
            let updates: Vec<_> = suite
                .cases
                .iter()
                .zip(&result.cases)
                // Only failing cases: a passing case keeps the expectation its author wrote.
                .filter(|(_, r)| r.error.is_none() && !r.mismatches.is_empty())
                .map(|(c, r)| {
                    let takes = c.spec.expect.decision.is_some() || r.observed.decision.is_some();
                    (c, record::expect_from(&r.observed, &c.spec.expect, takes))
                })
                .collect();
            let n = record::rewrite(&suite.plugin, &updates)?;
            eprintln!(
                "hookbox: recorded today's answers into {n} case{} of {} — review the diff",
                if n == 1 { "" } else { "s" },
                suite.shown
            );
        }
    }

    let text = match args.format {
        TestFormatArg::Text => report::text(&suites, &results, args.coverage),
        TestFormatArg::Json => {
            let mut s = serde_json::to_string_pretty(&report::json(&suites, &results))?;
            s.push('\n');
            s
        }
        TestFormatArg::Tap => report::tap(&suites, &results),
        TestFormatArg::Junit => {
            let stamp = super::trust_show::date(super::trust_show::now())
                .trim_end_matches(" UTC")
                .replace(' ', "T");
            report::junit(&suites, &results, &stamp)
        }
    };
    let text = if args.format == TestFormatArg::Text {
        text
    } else {
        anstream::adapter::strip_str(&text).to_string()
    };
    anstream::AutoStream::auto(std::io::stdout())
        .write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    let (_, failed) = report::totals(&results);
    Ok(if failed > 0 {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
