//! Any bytes as a hook's stdout (and stderr), under every exit code and dialect: interpretation
//! must give an effect, never panic.
#![no_main]

use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName};
use hookbox_core::output::{HookResponse, Interpretation, RawOutput};
use hookbox_core::rule::FailMode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest).into_owned();
    let event = Event::new(EventName::ALL[selector as usize % EventName::ALL.len()], "s", "/");
    let code = [0, 1, 2, 3, 127][selector as usize % 5];
    for dialect in Dialect::ALL {
        let interp = Interpretation { dialect, event: &event, fail_mode: FailMode::Allow, timeout_secs: 1.0 };
        let _ = interp.interpret(&RawOutput::exited(code, text.clone(), text.clone()));
    }
    if let Ok(v) = serde_json::from_str(&text) {
        let _ = HookResponse::from_json(&v);
    }
});
