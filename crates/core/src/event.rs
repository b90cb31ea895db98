//! Events: names and per-event rules, the typed event model, and its wire shapes per dialect.

mod fields;
mod json_text;
mod model;
mod name;
pub mod wire;

pub use model::{
    CompactionType, Event, EventData, PayloadError, StopData, ToolCall, TurnEndReason, json_type,
};
pub use name::{EventName, HandlerType, KNOWN_UNSUPPORTED_HOOK_TYPES, UnknownEvent};
