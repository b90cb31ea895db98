//! Any bytes as a hook file, in every dialect: the config parser must return a report (with
//! located diagnostics), never panic, never hang.
#![no_main]

use std::path::Path;

use hookbox_core::config::parse_hooks_bytes;
use hookbox_core::dialect::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for dialect in Dialect::ALL {
        let _ = parse_hooks_bytes(data, Path::new("hooks.json"), dialect);
    }
});
