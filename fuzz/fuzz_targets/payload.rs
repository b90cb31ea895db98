//! Any bytes as an event payload (`hookbox dispatch`'s stdin, a server request): reading it gives
//! an event or a `PayloadError`, never a panic. An event read for a given name has that name;
//! what hooks are then sent (`wire::flat`) reads back as the same event; every dialect's payload,
//! the envelope and the simple dialect's environment can be built from it.
#![no_main]

use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName, wire};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, json)) = data.split_first() else {
        return;
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(json) else {
        return;
    };
    let given = (selector as usize)
        .checked_sub(1)
        .map(|i| EventName::ALL[i % EventName::ALL.len()]);
    match Event::from_payload(given, value, "default-session", "/default") {
        Ok(ev) => {
            if let Some(name) = given {
                assert_eq!(ev.name, name);
            }
            let sent = serde_json::Value::Object(wire::flat(&ev));
            let envelope_like = sent.get("event").is_some() && sent.get("data").is_some();
            if !envelope_like {
                let back = Event::from_payload(Some(ev.name), sent.clone(), "d", "/")
                    .unwrap_or_else(|e| panic!("{sent} does not read back: {e}"));
                assert_eq!(back, ev, "{sent} reads back as another event");
            }
            for dialect in Dialect::ALL {
                let _ = wire::payload(&ev, dialect);
            }
            let _ = wire::envelope(&ev);
            let _ = wire::simple_env(&ev);
            let _ = ev.matcher_subject();
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
