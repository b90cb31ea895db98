//! `hookbox`: the command-line face of the hook host. Each subcommand lives in `cmd/<name>.rs`;
//! argument definitions are in `cli.rs`.
//!
//! Exit codes, for every subcommand unless its help says otherwise:
//! - `0`: done, nothing wrong (warnings allowed);
//! - `1`: done, and what was checked is wrong (e.g. `validate` found an error);
//! - `2`: could not run: a usage error (bad arguments, a path that does not exist) or an I/O
//!   failure. The message goes to stderr, with its causes (`{:#}`).

#![forbid(unsafe_code)]

// `demo` and `bench` and the example guests they run: the default-on `tools` feature. The
// production image builds without it (no bundled guests, no wasm32-wasip2 target needed).
#[cfg(feature = "tools")]
mod bench;
mod cli;
mod cmd;
#[cfg(feature = "tools")]
mod guests;
mod host_setup;
mod scratch;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // An agent runs `hookbox hook`: a command line it does not understand is still
            // answered in that agent's protocol (a usage error's exit 2 reads as a block).
            let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
            if e.use_stderr() && argv.get(1).is_some_and(|w| w == "hook") {
                return cmd::hook::answer_usage_error(&argv, &e.to_string());
            }
            // `--help` and `--version` are not errors; clap knows which is which.
            let code = if e.use_stderr() {
                ExitCode::from(cmd::EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
            // Nothing sensible is left to do if even this print fails.
            let _ = e.print();
            return code;
        }
    };
    init_tracing();
    match cmd::run(cli) {
        Ok(code) => code,
        // The reader went away (`hookbox inspect x.wasm | head`): stop quietly, like other
        // command-line tools, instead of reporting an error nobody asked about.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookbox: error: {e:#}");
            ExitCode::from(cmd::EXIT_USAGE)
        }
    }
}

/// Whether `e` comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Logs go to stderr, filtered by `HOOKBOX_LOG` (e.g. `HOOKBOX_LOG=debug`); off by default so
/// that stdout and stderr stay scriptable.
fn init_tracing() {
    let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("HOOKBOX_LOG") else {
        return;
    };
    // A second initialisation (impossible here) would be the only failure.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
