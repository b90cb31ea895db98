//! The event's payload bytes per dialect, serialised at most once per dispatch however many hooks
//! of that dialect run.

use std::sync::{Arc, OnceLock};

use hookbox_core::Dialect;
use hookbox_core::event::{Event, wire};

/// Lazily serialised payloads of one event.
#[derive(Debug)]
pub(crate) struct Payloads {
    event: Arc<Event>,
    by_dialect: [OnceLock<Arc<[u8]>>; 4],
}

impl Payloads {
    pub(crate) fn new(event: Arc<Event>) -> Payloads {
        Payloads {
            event,
            by_dialect: Default::default(),
        }
    }

    /// The JSON payload a hook of `dialect` gets on stdin.
    pub(crate) fn get(&self, dialect: Dialect) -> Arc<[u8]> {
        let slot = match dialect {
            Dialect::Claude => 0,
            Dialect::Agentao => 1,
            Dialect::Ghast => 2,
            Dialect::Simple => 3,
        };
        self.by_dialect[slot]
            .get_or_init(|| {
                let v = wire::payload(&self.event, dialect);
                serde_json::to_vec(&v).unwrap_or_default().into()
            })
            .clone()
    }
}
