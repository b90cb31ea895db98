//! The properties of interpreting a hook's output, in one place: the `hook_output` fuzz target
//! checks them on generated input, and hookbox-core's tests check them on kept and mutated input
//! (`tests/fuzz_regressions.rs`, `tests/robustness.rs`), each including this file by path — so
//! the three cannot drift apart. Depends on hookbox-core and serde_json only.

use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName};
use hookbox_core::output::{
    Effect, FailureClass, HookResponse, Interpretation, PermissionDecision, RawOutput,
};
use hookbox_core::rule::FailMode;

/// What one [`check`] saw, for callers that count the branches they reached.
#[allow(dead_code, reason = "each including file reads the fields it needs")]
pub(crate) struct Checked {
    /// The effect in each dialect, in [`Dialect::ALL`] order.
    pub(crate) effects: Vec<(Dialect, Effect)>,
    /// `Some(true)` when stdout is a JSON object that reads as an answer, `Some(false)` when it
    /// is a JSON object of the wrong shape, `None` when it is no JSON object.
    pub(crate) answer: Option<bool>,
    /// Dialects in which the exit failed closed (checked to be a failure).
    pub(crate) closed_failures: usize,
}

/// Whether an effect stops what the event was about.
pub(crate) fn blocks(e: &Effect) -> bool {
    e.block.is_some() || e.permission == Some(PermissionDecision::Deny) || e.follow_up.is_some()
}

/// Interprets `stdout` and `stderr` under exit `code` for an event `name`, in every dialect, and
/// panics unless: interpreting is a pure function of its input; the effect survives the replay
/// record's JSON round trip; Claude Code's (and Agentao's, Ghast's) exit 2 blocks wherever the
/// event can block, whatever stdout says; and, under `FailMode::Block`, an exit that is neither
/// an answer nor a block fails closed — `spawn_error` exactly for 126 and 127.
pub(crate) fn check(
    name: EventName,
    code: i32,
    fail_mode: FailMode,
    stdout: &str,
    stderr: &str,
) -> Checked {
    let event = Event::new(name, "s", "/");
    // A JSON object on stdout that reads as an answer decides whatever the exit code.
    let answer = serde_json::from_str::<serde_json::Value>(stdout.trim())
        .ok()
        .filter(serde_json::Value::is_object)
        .map(|v| HookResponse::from_json(&v).is_ok());
    let mut checked = Checked {
        effects: Vec::with_capacity(Dialect::ALL.len()),
        answer,
        closed_failures: 0,
    };
    for dialect in Dialect::ALL {
        let interp = Interpretation {
            dialect,
            event: &event,
            fail_mode,
            timeout_secs: 1.0,
        };
        let raw = RawOutput::exited(code, stdout.to_owned(), stderr.to_owned());
        let e = interp.interpret(&raw);
        assert_eq!(
            e,
            interp.interpret(&raw),
            "{dialect} {name} {code}: not deterministic"
        );
        let json = serde_json::to_value(&e).expect("an effect serialises");
        let back: Effect = serde_json::from_value(json).expect("an effect reads back");
        assert_eq!(back, e, "{dialect} {name} {code}: replay round trip");
        match (dialect, code) {
            (Dialect::Claude | Dialect::Agentao, 2)
                if name.can_block() && name != EventName::PermissionRequest =>
            {
                assert!(blocks(&e), "{dialect} {name} exit 2 does not block: {e:?}");
            }
            (Dialect::Ghast, 2) if name.can_block() => {
                assert!(blocks(&e), "{dialect} {name} exit 2 does not block: {e:?}");
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
                checked.closed_failures += 1;
            }
            _ => {}
        }
        checked.effects.push((dialect, e));
    }
    checked
}
