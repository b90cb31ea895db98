//! The event's payload bytes per dialect, serialised at most once per dispatch however many hooks
//! of that dialect run.

use std::sync::{Arc, OnceLock};

use hookbox_core::Dialect;
use hookbox_core::event::{Event, wire};
use hookbox_core::output::{FailureClass, HookFailure};

/// Lazily serialised payloads of one event.
#[derive(Debug)]
pub(crate) struct Payloads {
    event: Arc<Event>,
    by_dialect: [OnceLock<Result<Arc<[u8]>, HookFailure>>; 4],
}

impl Payloads {
    pub(crate) fn new(event: Arc<Event>) -> Payloads {
        Payloads {
            event,
            by_dialect: Default::default(),
        }
    }

    /// The JSON payload a hook of `dialect` gets on stdin; a payload that cannot be encoded is
    /// the hook's failure (`internal_error`), never an empty payload.
    pub(crate) fn get(&self, dialect: Dialect) -> Result<Arc<[u8]>, HookFailure> {
        let slot = match dialect {
            Dialect::Claude => 0,
            Dialect::Agentao => 1,
            Dialect::Ghast => 2,
            Dialect::Simple => 3,
        };
        self.by_dialect[slot]
            .get_or_init(|| {
                wire::payload_bytes(&self.event, dialect)
                    .map(Into::into)
                    .map_err(|e| {
                        HookFailure::new(
                            FailureClass::Internal,
                            format!("cannot encode the {} payload: {e}", dialect.as_str()),
                        )
                    })
            })
            .clone()
    }
}
