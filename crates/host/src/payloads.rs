//! The event's payload bytes per dialect, serialised at most once per dispatch however many hooks
//! of that dialect run — and copied nowhere on a wasm hook's path: the guest's text borrows the
//! serialised bytes, and only a command, whose stdin is shared with its writer task, gets a
//! shared copy (made once per dialect too).

use std::sync::{Arc, OnceLock};

use hookbox_core::Dialect;
use hookbox_core::event::Event;
use hookbox_core::event::wire::{self, FlatPayload};
use hookbox_core::output::{FailureClass, HookFailure};

/// Lazily serialised payloads of one event.
#[derive(Debug)]
pub(crate) struct Payloads {
    event: Arc<Event>,
    /// Each dialect's bytes; the Claude dialect's (the flat payload) with its `tool_input`
    /// marked, for typed wasm hooks' WIT event.
    by_dialect: [OnceLock<Result<FlatPayload, HookFailure>>; 4],
    /// The same bytes shared, for command hooks' stdin.
    shared: [OnceLock<Arc<[u8]>>; 4],
}

/// The slot of `dialect` in the per-dialect arrays.
fn slot(dialect: Dialect) -> usize {
    match dialect {
        Dialect::Claude => 0,
        Dialect::Agentao => 1,
        Dialect::Ghast => 2,
        Dialect::Simple => 3,
    }
}

impl Payloads {
    pub(crate) fn new(event: Arc<Event>) -> Payloads {
        Payloads {
            event,
            by_dialect: Default::default(),
            shared: Default::default(),
        }
    }

    /// The JSON payload a hook of `dialect` gets on stdin; a payload that cannot be encoded is
    /// the hook's failure (`internal_error`), never an empty payload.
    pub(crate) fn get(&self, dialect: Dialect) -> Result<&[u8], HookFailure> {
        self.payload(dialect).map(|p| p.bytes.as_slice())
    }

    /// The flat payload (Claude's, which typed wasm hooks get) and its `tool_input` text.
    pub(crate) fn flat(&self) -> Result<(&[u8], Option<&str>), HookFailure> {
        self.payload(Dialect::Claude)
            .map(|p| (p.bytes.as_slice(), p.tool_input_json()))
    }

    fn payload(&self, dialect: Dialect) -> Result<&FlatPayload, HookFailure> {
        self.by_dialect[slot(dialect)]
            .get_or_init(|| {
                let made = match dialect {
                    Dialect::Claude => wire::flat_payload(&self.event),
                    _ => wire::payload_bytes(&self.event, dialect).map(|bytes| FlatPayload {
                        bytes,
                        tool_input: None,
                    }),
                };
                made.map_err(|e| {
                    HookFailure::new(
                        FailureClass::Internal,
                        format!("cannot encode the {} payload: {e}", dialect.as_str()),
                    )
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// [`Payloads::get`] as shared bytes (a command's stdin outlives this dispatch's borrow).
    pub(crate) fn shared(&self, dialect: Dialect) -> Result<Arc<[u8]>, HookFailure> {
        let bytes = self.get(dialect)?;
        Ok(self.shared[slot(dialect)]
            .get_or_init(|| Arc::from(bytes))
            .clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::event::EventName;
    use serde_json::json;

    #[test]
    fn every_dialect_gets_its_payload_and_commands_share_the_same_bytes() {
        let event = Event::from_payload(
            Some(EventName::PreToolUse),
            json!({"tool_name": "Bash", "tool_input": {"command": "ls \"x\" é"}}),
            "s",
            "/w",
        )
        .unwrap();
        let payloads = Payloads::new(Arc::new(event.clone()));
        for dialect in Dialect::ALL {
            let want = serde_json::to_vec(&wire::payload(&event, dialect)).unwrap();
            assert_eq!(
                payloads.get(dialect).unwrap(),
                want.as_slice(),
                "{dialect:?}"
            );
            let a = payloads.shared(dialect).unwrap();
            let b = payloads.shared(dialect).unwrap();
            assert_eq!(&*a, want.as_slice());
            assert!(Arc::ptr_eq(&a, &b), "one shared copy per dialect");
        }
        let (bytes, tool_input) = payloads.flat().unwrap();
        assert_eq!(bytes, payloads.get(Dialect::Claude).unwrap());
        assert_eq!(tool_input, Some(r#"{"command":"ls \"x\" é"}"#));
    }
}
