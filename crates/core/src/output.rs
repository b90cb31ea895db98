//! Hook output: what runners capture ([`RawOutput`]), each dialect's exit-code table
//! ([`Interpretation`]), the structured answer ([`HookResponse`]), what one hook asks for
//! ([`Effect`]) and failure classes.

mod bound;
mod claude_json;
mod effect;
mod exit_codes;
mod failure;
mod raw;
mod response;
mod run;

pub use claude_json::to_claude_json;
pub use effect::{DEFAULT_STOP_FOLLOW_UP, DEFAULT_STOP_REASON, Effect};
pub use exit_codes::{GHAST_MAX_OUTPUT_UTF16, Interpretation};
pub use failure::{FailureClass, HookFailure};
pub use raw::RawOutput;
pub use response::{HookResponse, PermissionDecision, ResponseError, TopDecision};
pub use run::{RunOutput, effect_of, effect_of_within, prompt_effect, prompt_effect_within};
