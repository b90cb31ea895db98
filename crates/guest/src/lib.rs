//! Guest SDK for hookbox WebAssembly hooks.
//!
//! A hook is a type that implements [`Hook`], exported with [`export_hook!`] from a `cdylib`
//! crate built with `cargo build --target wasm32-wasip2 --release`. The output `.wasm` is already
//! a component targeting hookbox's `hook` world (`hookbox:hook@0.1.0`, in the repository's
//! `wit/`): it exports `hookbox:hook/handler@0.1.0` and imports only `hookbox:hook/types`,
//! `hookbox:hook/host` and the WASI interfaces Rust's standard library links — never
//! `wasi:sockets` or `wasi:http` unless the hook itself uses `std::net`, which makes the host
//! refuse it.
//!
//! ```
//! use hookbox_guest::{Event, Hook, Response, host};
//!
//! #[derive(Default)]
//! struct DenyWords;
//!
//! impl Hook for DenyWords {
//!     fn on_pre_tool_use(&self, event: &Event) -> Result<Response, String> {
//!         let words: Vec<String> = host::config()?; // the rule's "config": ["push --force"]
//!         match event.command() {
//!             Some(cmd) if words.iter().any(|w| cmd.contains(w.as_str())) => {
//!                 Ok(Response::deny(format!("`{cmd}` is denied by this rule")))
//!             }
//!             _ => Ok(Response::none()),
//!         }
//!     }
//! }
//! hookbox_guest::export_hook!(DenyWords);
//! ```
//!
//! The host calls the hook once per event, in a fresh instance: nothing a hook stores survives
//! to the next event, so a hook type is normally a unit struct (`Default` is how the export glue
//! builds it). Every `on_*` method defaults to "no opinion" ([`Response::none`]), so a hook only
//! writes the events it cares about; [`Hook::handle`] is the dispatcher and may be overridden to
//! see every event.
//!
//! The crate compiles on native targets too (host imports are then stubs that panic), so a hook's
//! decision logic can be unit-tested with plain `cargo test` by calling [`Hook::handle`] with an
//! [`Event`] built in the test; only [`host`] calls need the real host.

#![deny(unsafe_code)]

mod event;
mod hook;
pub mod host;
mod response;

pub use hook::Hook;
/// The JSON library of [`Event::tool_input_json`] and [`Response::updated_input`], re-exported so
/// a hook uses the same version without naming it in its own `Cargo.toml`.
pub use serde_json;

// We explicitly enumerate what plugin authors see: the generated module tree stays an
// implementation detail that a wit-bindgen upgrade may reshape.
pub use bindings::hookbox::hook::host::Level;
pub use bindings::hookbox::hook::types::{Event, Permission, PermissionDecision, Response};

/// The version of the WIT package this SDK implements; the host reads it from the export name
/// `hookbox:hook/handler@<WIT_VERSION>`.
pub const WIT_VERSION: &str = "0.1.0";

/// Bindings generated from the repository's `wit/` (the single source of the contract).
#[doc(hidden)]
#[allow(unsafe_code, reason = "wit-bindgen canonical-ABI glue")]
#[allow(
    missing_docs,
    reason = "generated code; the WIT doc comments are carried where wit-bindgen can"
)]
#[allow(unreachable_pub, reason = "generated code decides its own visibility")]
#[allow(clippy::all, reason = "generated code")]
pub mod bindings {
    wit_bindgen::generate!({
        world: "hook",
        path: "../../wit",
        // `export_hook!` (below) calls this macro from the plugin's crate.
        pub_export_macro: true,
        export_macro_name: "__export_hook_world",
        default_bindings_module: "hookbox_guest::bindings",
        additional_derives: [PartialEq, Eq],
        // The all-empty response is "no opinion": `Response::none()`.
        additional_type_attributes: {
            "hookbox:hook/types@0.1.0/response": [#[derive(Default)]],
        },
    });
}

/// Export glue used by [`export_hook!`]; not part of the API.
#[doc(hidden)]
pub mod __private {
    use core::marker::PhantomData;

    use crate::bindings::exports::hookbox::hook::handler::Guest;
    use crate::{Event, Hook, Response};

    /// Adapts a [`Hook`] to wit-bindgen's static `Guest` trait: one fresh hook value per call,
    /// mirroring the one-instance-per-event lifecycle on the host.
    pub struct Adapter<H>(PhantomData<H>);

    impl<H: Hook + Default> Guest for Adapter<H> {
        fn handle(event: Event) -> Result<Response, String> {
            H::default().handle(&event)
        }
    }

    pub use crate::bindings::__export_hook_world;
}

/// Exports a [`Hook`] type as the component's `hookbox:hook/handler` implementation.
///
/// The type must implement [`Hook`] and [`Default`] (a `#[derive(Default)]` unit struct is the
/// usual shape). Invoke it once, at the root of a `cdylib` crate:
///
/// ```
/// #[derive(Default)]
/// struct Quiet;
/// impl hookbox_guest::Hook for Quiet {}
/// hookbox_guest::export_hook!(Quiet);
/// ```
///
/// The expansion contains wit-bindgen's `unsafe extern "C"` entry points and allows
/// `unsafe_code` for them, so the plugin crate may `#![deny(unsafe_code)]` (but not `forbid` it).
#[macro_export]
macro_rules! export_hook {
    ($hook:ty) => {
        #[allow(unsafe_code, reason = "wit-bindgen canonical-ABI export glue")]
        const _: () = {
            type __HookboxExport = $crate::__private::Adapter<$hook>;
    $crate::__private::__export_hook_world!(__HookboxExport with_types_in $crate::bindings);
        };
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn wit_version_matches_the_wit_package() {
        let wit = include_str!("../../../wit/hook.wit");
        let package = format!("package hookbox:hook@{};", super::WIT_VERSION);
        assert!(
            wit.contains(&package),
            "wit/hook.wit does not declare `{package}`"
        );
    }
}
