//! Integration tests of the command runner: real processes, tiny shell scripts in a temp dir.

// clippy.toml allows unwrap in `#[test]` functions only; the shared helpers are test code too.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail the test on a broken setup"
)]

mod util;

mod concurrency;
mod data_dir;
mod env;
mod escape;
mod exit_codes;
mod output;
mod shell;
mod spawn_errors;
mod start;
mod stdin;
mod timeout;
mod views;
