//! Limits core enforces or validates against, named, each with its default or maximum:
//!
//! - [`TextLimits`]: how much text a rule and a dispatch may add to a verdict (prompt rules
//!   included), cut with a visible marker;
//! - the maxima of what a hooks file may ask for ([`MAX_TIMEOUT_SECS`], [`MAX_FUEL`],
//!   [`MAX_MEMORY_MB`], …), refused at load with a located error, never clamped;
//! - [`duration_from_secs`]: seconds as written in a file or flag made a `Duration` only when
//!   they are one (finite, in range), for every reader of seconds.

mod duration;
mod maxima;
mod text;

pub use duration::{DurationError, duration_from_secs};
pub use maxima::{
    MAX_FUEL, MAX_INSTANCES, MAX_LOG_CALLS, MAX_MEMORY_MB, MAX_OUTPUT_BYTES, MAX_RESPONSE_BYTES,
    MAX_TABLE_ELEMENTS, MAX_TIMEOUT_SECS, MAX_WRITE_BYTES, MAX_WRITE_FILES, WASM_FIELD_MAXIMA,
    wasm_field_maximum,
};
pub(crate) use text::{Budget, Scope, bounded_replace};
pub use text::{
    CUT_MARKER, DEFAULT_DISPATCH_TEXT_BYTES, DEFAULT_RULE_CONTEXTS, DEFAULT_RULE_TEXT_BYTES,
    DEFAULT_UPDATED_INPUT_BYTES, MAX_PROMPT_PLACEHOLDERS, MAX_PROMPT_TEXT_BYTES,
    PROMPT_PLACEHOLDER, TextLimits,
};
