//! Hook output: what runners capture ([`RawOutput`]), how each dialect's exit codes and JSON keys
//! are read ([`interpret`]), the structured answer ([`HookResponse`]) and failure classes.

mod failure;
mod raw;
mod response;

pub use failure::{FailureClass, HookFailure};
pub use raw::RawOutput;
pub use response::{HookResponse, PermissionDecision, ResponseError, TopDecision};
