//! hookbox-core: the pure heart of hookbox.
//!
//! It reads hook files of every dialect (`config`), models events and their payloads (`event`),
//! decides which rules fire (`matcher`, `index`), reads what hooks answered (`output`), and folds
//! the answers into one verdict per dispatch (`aggregate`), with the markers and tags the agent
//! shows (`render`) and the `HookFired` record (`fired`). Each coding agent's hook wire protocol
//! — its payload in, the aggregated verdict out as that agent's answer — is in `agent`. What an
//! approval of a plugin covers (records, digests, diffs — SPEC §11) is the `hookbox-trust` crate,
//! on top of this one.
//! Host-side helpers every crate shares live here once: the bounded file reader, path
//! normalisation and safe names (`files`), and the clock of records (`clock`).
//!
//! It must not depend on an async runtime, a wasm engine, or spawn processes: runners live in
//! `hookbox-command` and `hookbox-wasm`, and CI checks this crate's dependency tree.

pub mod agent;
pub mod aggregate;
pub mod clock;
pub mod config;
pub mod credentials;
pub mod diagnostic;
pub mod dialect;
pub mod event;
pub mod explain;
pub mod files;
pub mod fired;
pub mod index;
pub mod limits;
pub mod matcher;
pub mod output;
pub mod render;
pub mod report;
pub mod rule;
pub mod stop_loop;
mod suggest;

pub use aggregate::{Outcome, StopState, Verdict, aggregate};
pub use dialect::Dialect;
pub use event::{Event, EventName};
pub use fired::HookFired;
pub use index::RuleSet;
