//! Any text as a hook's stdout and stderr, under every exit code, event and dialect:
//! interpretation must give an effect, never panic, and keep what it promises — it is a pure
//! function of its input, the effect survives the replay record's JSON round trip, Claude Code's
//! exit 2 blocks wherever the event can block, and an exit that is neither an answer nor a block
//! fails closed (`spawn_error` for 126/127).
#![no_main]

use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName};
use hookbox_core::output::{
    Effect, FailureClass, HookResponse, Interpretation, PermissionDecision, RawOutput,
};
use hookbox_core::rule::FailMode;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

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
    let event = Event::new(name, "s", "/");
    let fail_mode = if input.block_on_failure {
        FailMode::Block
    } else {
        FailMode::Allow
    };
    // A JSON object on stdout that reads as an answer decides whatever the exit code.
    let trimmed = input.stdout.trim();
    let answer = serde_json::from_str::<serde_json::Value>(trimmed)
        .ok()
        .filter(|v| v.is_object() && input.stdout.trim_start().starts_with('{'))
        .map(|v| HookResponse::from_json(&v).is_ok());
    for dialect in Dialect::ALL {
        let interp = Interpretation {
            dialect,
            event: &event,
            fail_mode,
            timeout_secs: 1.0,
        };
        let raw = RawOutput::exited(code, input.stdout.to_owned(), input.stderr.to_owned());
        let e = interp.interpret(&raw);
        assert_eq!(
            e,
            interp.interpret(&raw),
            "{dialect} {name} {code}: not deterministic"
        );
        let json = serde_json::to_value(&e).expect("an effect serialises");
        let back: Effect = serde_json::from_value(json).expect("an effect reads back");
        assert_eq!(back, e, "{dialect} {name} {code}: replay round trip");
        let blocked = e.block.is_some()
            || e.permission == Some(PermissionDecision::Deny)
            || e.follow_up.is_some();
        match (dialect, code) {
            (Dialect::Claude | Dialect::Agentao, 2)
                if name.can_block() && name != EventName::PermissionRequest =>
            {
                assert!(blocked, "{dialect} {name} exit 2 does not block: {e:?}");
            }
            (Dialect::Ghast, 2) if name.can_block() => {
                assert!(blocked, "{dialect} {name} exit 2 does not block: {e:?}");
            }
            (Dialect::Claude | Dialect::Agentao, 1 | 3 | 126 | 127 | -1 | 255)
                if answer != Some(true) && fail_mode == FailMode::Block =>
            {
                let f = e
                    .failure
                    .as_ref()
                    .unwrap_or_else(|| panic!("{dialect} {name} {code} fails open: {e:?}"));
                assert_eq!(
                    f.class == FailureClass::SpawnError,
                    matches!(code, 126 | 127),
                    "{dialect} {name} {code}: {f:?}"
                );
            }
            _ => {}
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed) {
        let _ = HookResponse::from_json(&v);
    }
});
