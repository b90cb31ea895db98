//! Files and names on the host side, one home each:
//!
//! - [`read`](mod@read): the one bounded, non-blocking, no-follow reader for small files that
//!   someone else may control (hook files, settings, `tenant.toml`, `serve.toml`);
//! - [`path`]: path normalisation with typed errors instead of silent fallbacks;
//! - [`name`]: names from payloads and manifests made safe as one path component, with a hash
//!   so that two names never share one.
//!
//! Every crate above core uses these rather than a copy of its own.

pub mod name;
pub mod path;
pub mod read;

pub use name::safe_component;
pub use path::PathError;
#[cfg(unix)]
pub use read::open_beneath_dir;
pub use read::{
    CheckedFile, ReadError, ReadErrorKind, Symlinks, open_beneath, open_path, open_within,
    read_file, read_file_beneath, read_opened, read_text,
};
