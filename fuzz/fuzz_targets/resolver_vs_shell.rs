//! The resolver against the shell (issue 27 item 8): bytes choose a command from a small
//! grammar; it is resolved, then run under `sh` or `bash` with a tracing `PATH`, and whatever
//! ran that the resolver neither pinned, named, nor marked unpinnable is a finding. The
//! property and the grammar are in `fuzz/props/resolver_shell.rs`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../props/resolver_shell.rs"]
mod props;

static WORLD: OnceLock<props::World> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let world = WORLD.get_or_init(|| props::World::new(&std::env::temp_dir()));
    let (text, shell) = props::generate(data);
    if let Err(e) = props::check(world, &text, shell) {
        panic!("{e}");
    }
});
