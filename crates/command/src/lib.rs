//! hookbox-command: hookbox's native command runner.
//!
//! It runs one command hook (`sh -c COMMAND`, or the `args` exec form without a shell) the way
//! SPEC §4.1 describes: the payload on stdin, the dialect's environment (the host's minus a
//! deny-list of provider API keys, plus `CLAUDE_PROJECT_DIR`, `CLAUDE_PLUGIN_ROOT`,
//! `CLAUDE_PLUGIN_DATA`, `PLUGIN_ROOT`, `PLUGIN_DATA`, ghast's `GHAST_HOOK`, simple's `HOOK_*`),
//! stdout and stderr read concurrently and capped, and a timeout that kills the hook's whole
//! process group. Whatever path a run takes — exit, timeout, signal, or the caller dropping the
//! future — nothing of the hook's process group is left running and the hook is reaped.
//!
//! The result is a [`hookbox_core::output::RawOutput`]; reading it per dialect belongs to
//! `hookbox-core`. This crate must not depend on the wasm runner or on the host: the host calls
//! [`CommandRunner::run`], concurrently for many hooks, through a shared `&CommandRunner`.
//!
//! Native command hooks are not sandboxed: the deny-list keeps secrets out of their environment,
//! and the process group bounds their lifetime, but they run with the host user's rights. A
//! process that leaves the group on purpose (`setsid`) escapes the group kill; the runner
//! catches it with a cgroup v2 per hook where Linux allows, or (opt-in) as a child subreaper —
//! see [`ContainmentPolicy`] and [`CommandRunner::containment`].
//!
//! A request may carry read-only views ([`CommandRequest::views`]): the hook then runs in a
//! private mount namespace of its own in which each view's source shows, read-only, at its
//! target — how a host runs an approved plugin from its snapshot at the plugin's own path.
//! [`view_support`] says whether this process can make them, and why not.

// `unsafe` is allowed only where it is needed, each block with its SAFETY argument: `clone3.rs`
// (starting the hook inside its cgroup with a raw `clone3` and the child's raw system calls —
// with read-only views, the namespaces and mounts it makes, see `views.rs` — and registering
// its pidfd with tokio), `join.rs` (the fallback: joining the cgroup between fork and exec) and
// `pass_fds.rs` (the fallback's way of keeping a pinned script's descriptor open in its hook
// only); everywhere else unsafe code is an error.
#![deny(unsafe_code)]

mod capture;
mod cgroup;
mod child;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod clone3;
mod containment;
mod data_dir;
mod env_policy;
mod environment;
mod error;
mod exit;
mod group;
mod join;
mod limits;
mod pass_fds;
mod placeholder;
mod procfs;
mod request;
mod runner;
mod shell;
mod spawn;
mod subreaper;
mod views;

pub use containment::{Containment, ContainmentPolicy};
pub use data_dir::{DataDirError, create_plugin_data_dir};
pub use env_policy::{DEFAULT_DENY, EnvPolicy};
pub use environment::{MANAGED_VARS, PLACEHOLDER_VARS};
pub use error::SpawnError;
pub use limits::CommandLimits;
pub use placeholder::substitute;
pub use request::{CommandRequest, HookContext};
pub use runner::{CommandRun, CommandRunner};
pub use subreaper::RUN_MARKER_VAR;
pub use views::{ReadOnlyView, ViewPolicy, ViewSupport, view_support};
