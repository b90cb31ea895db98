//! Paths of hookbox's guest components, for tests and benchmarks.
//!
//! The build script compiles `guest-examples/` and `tests/guests/` from source for
//! `wasm32-wasip2` (release profile of those workspaces) whenever their sources, the SDK
//! (`crates/guest`) or `wit/` change; nothing is checked in. It needs the target installed
//! (`rustup target add wasm32-wasip2`) and says so when it is not.
//!
//! Each component has a constant holding its absolute path, named after its cargo target in
//! upper case (`NOOP`, `SHELL_GUARD`, `CLI_GUARD`, `CHAOS`, …), and an entry in [`ALL`].
//! [`foreach_guest!`] calls a macro once per guest, so a test module can have the compiler
//! check that every guest is exercised — `tests/components.rs` does it with
//! `foreach_guest!(assert_test_exists)`, where `assert_test_exists!(name)` expands to
//! `use self::name as _;`, which only compiles if a test function `name` exists.
//!
//! ```
//! use hookbox_test_artifacts::{ALL, Kind, NOOP};
//!
//! let noop = ALL.iter().find(|guest| guest.name == "noop").unwrap();
//! assert_eq!((noop.path, noop.kind, noop.source), (NOOP, Kind::Hook, "guest-examples/noop"));
//! ```
//!
//! The JavaScript and Python guest examples (`guest-examples/js/`, `guest-examples/python/`:
//! [`CONTEXT_INJECTION_JS`], [`SHELL_GUARD_PY`]) are built too when their tooling is installed
//! (`scripts/setup-polyglot.sh`: node + `npm ci`, componentize-py in a venv under the target
//! dir), and cached: they rebuild only when their sources, `wit/` or the tool versions change.
//! Without the tooling their constants still exist but [`POLYGLOT_BUILT`] is false, they are
//! not in [`ALL`], and tests wrapped in [`polyglot_test!`] are reported as ignored, with the
//! command that installs the tooling. `HOOKBOX_REQUIRE_POLYGLOT=1` makes missing tooling a build
//! error instead (CI). In this crate's own targets the `hookbox_polyglot` cfg says the same.
//!
//! This crate depends on nothing of ours and is a dev-dependency only.

/// What a guest component exports, which decides how the host runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Exports `hookbox:hook/handler@0.1.0`: called with a typed event.
    Hook,
    /// Exports `wasi:cli/run@0.2.x`: run as a command hook (payload on stdin).
    Command,
}

/// One built guest component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guest {
    /// The cargo target name with `-` as `_` (`shell_guard`, `cli_guard`), or the polyglot
    /// guest's name (`context_injection_js`, `shell_guard_py`): the name [`foreach_guest!`] passes.
    pub name: &'static str,
    /// Absolute path of the `.wasm` component.
    pub path: &'static str,
    /// What it exports.
    pub kind: Kind,
    /// The guest's folder, relative to the repository root (`guest-examples/noop`).
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/guests.rs"));
