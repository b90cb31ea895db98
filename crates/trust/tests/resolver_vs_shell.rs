//! The resolver against the real shell (`fuzz/props/resolver_shell.rs`) on every `cargo test`:
//! a few hundred commands generated from fixed seeds run under `sh` and `bash` with a tracing
//! `PATH`; every script that ran and every program found on `PATH` must be one the resolver
//! pinned or named, unless it marked the rule unpinnable. The `resolver_vs_shell` fuzz target
//! runs the same property on generated inputs for as long as it is given.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use hookbox_core::rule::Shell;

#[path = "../../../fuzz/props/resolver_shell.rs"]
mod props;

/// Commands run per `cargo test` (each is one shell process, a few milliseconds).
const CASES: u64 = 400;

/// A small deterministic generator (xorshift64*), so a failure names a seed that repeats.
fn bytes(seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..64)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// Commands the fuzz target found, kept: (shell, command).
const KEPT: &[(Shell, &str)] = &[
    // A second `cd sub` fails (there is no sub/sub): the resolver's sub/sub/x.sh does not
    // exist, so the host cannot pin it and `require` refuses the rule.
    (
        Shell::Bash,
        "if npx foo < /dev/null; then env grep -q x > /dev/null; fi\ncd sub && nohup grep -q x > /dev/null\ncd sub && nohup grep -q x > /dev/null\nnohup ./x.sh > /dev/null",
    ),
];

#[test]
fn what_the_shell_runs_is_what_the_resolver_accounts_for() {
    if !std::path::Path::new("/bin/bash").exists() {
        eprintln!("skipped: no /bin/bash");
        return;
    }
    let world = props::World::new(&std::env::temp_dir());
    let mut findings = Vec::new();
    let (mut unpinnable, mut compared, mut ran) = (0, 0, 0);
    for seed in 0..CASES {
        let (text, shell) = props::generate(&bytes(seed));
        match props::check(&world, &text, shell) {
            Err(e) => findings.push(format!("seed {seed}: {e}")),
            Ok(props::Checked::Unpinnable) => unpinnable += 1,
            Ok(props::Checked::TimedOut | props::Checked::Unreadable) => {}
            Ok(props::Checked::Ran(n)) => {
                compared += 1;
                ran += n;
            }
        }
    }
    for (shell, text) in KEPT {
        if let Err(e) = props::check(&world, text, *shell) {
            findings.push(format!("kept: {e}"));
        }
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
    eprintln!(
        "{CASES} commands: {compared} compared ({ran} programs and scripts ran), {unpinnable} unpinnable"
    );
    // Not vacuous: most commands are compared, and what they run is seen.
    assert!(
        compared >= CASES as usize / 3 && ran >= compared,
        "{compared} compared, {ran} ran"
    );
}
