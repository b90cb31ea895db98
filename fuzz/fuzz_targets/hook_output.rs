//! Any text as a hook's stdout and stderr, under every exit code, event and dialect:
//! interpretation must give an effect, never panic, and keep what it promises — it is a pure
//! function of its input, the effect survives the replay record's JSON round trip, Claude Code's
//! exit 2 blocks wherever the event can block, and an exit that is neither an answer nor a block
//! fails closed (`spawn_error` for 126/127).
#![no_main]

use hookbox_core::event::EventName;
use hookbox_core::output::HookResponse;
use hookbox_core::rule::FailMode;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

/// The properties, shared with hookbox-core's tests.
#[path = "../props/hook_output.rs"]
mod props;

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    event: u8,
    code: u8,
    block_on_failure: bool,
    stdout: &'a str,
    stderr: &'a str,
}

const CODES: &[i32] = &[0, 1, 2, 3, 126, 127, -1, 255];

fuzz_target!(|input: Input<'_>| {
    let name = EventName::ALL[input.event as usize % EventName::ALL.len()];
    let code = CODES[input.code as usize % CODES.len()];
    let fail_mode = if input.block_on_failure {
        FailMode::Block
    } else {
        FailMode::Allow
    };
    props::check(name, code, fail_mode, input.stdout, input.stderr);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(input.stdout.trim()) {
        let _ = HookResponse::from_json(&v);
    }
});
