//! Subcommands: one module each (`cmd/<name>.rs`), each with a `run` that returns the process's
//! exit code, or an error for what kept it from running (printed by `main`, exit code 2).

#[cfg(feature = "tools")]
pub(crate) mod build_js;
pub(crate) mod compile;
pub(crate) mod completions;
#[cfg(feature = "tools")]
pub(crate) mod demo;
pub(crate) mod dispatch;
pub(crate) mod exec;
pub(crate) mod hook;
pub(crate) mod inspect;
pub(crate) mod install;
pub(crate) mod new;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod term;
pub(crate) mod test;
pub(crate) mod trust;
pub(crate) mod trust_files_diff;
pub(crate) mod trust_scan;
pub(crate) mod trust_show;
pub(crate) mod validate;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// A problem was found (e.g. `validate` saw an error diagnostic).
pub(crate) const EXIT_FAILURE: u8 = 1;
/// Usage or I/O error: the command could not run.
pub(crate) const EXIT_USAGE: u8 = 2;
/// `dispatch --fail-on-block`: the verdict blocks.
pub(crate) const EXIT_VERDICT_BLOCKS: u8 = 3;

/// Runs the chosen subcommand.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Dispatch(args) => dispatch::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Compile(args) => compile::run(&args),
        #[cfg(feature = "tools")]
        Command::BuildJs(args) => build_js::run(&args),
        Command::Schema(_) => schema::run(),
        Command::Completions(args) => completions::run(&args),
        Command::Exec(args) => exec::run(&args),
        Command::Hook(args) => hook::run(&args),
        Command::Install(args) => install::run_install(&args),
        Command::Uninstall(args) => install::run_uninstall(&args),
        #[cfg(feature = "tools")]
        Command::Demo(args) => demo::run(&args),
        #[cfg(feature = "tools")]
        Command::Bench(args) => crate::bench::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Trust(args) => trust::run(&args),
        Command::New(args) => new::run(&args),
        Command::Test(args) => test::run(&args),
    }
}
