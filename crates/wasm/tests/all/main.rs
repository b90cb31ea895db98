//! hookbox-wasm's integration suite, one binary (wasmtime links once): hand-written WAT guests
//! for every limit (each obeyed and violated, asserting the failure class, then a normal event on
//! the same runtime), loading and version checks, commands, the disk cache and inspection; the
//! hostile Rust guest against every sandbox boundary; one test per guest component, named after
//! it (`per_guest.rs`, checked by `foreach_guest!`); the JavaScript and Python guests
//! (`polyglot.rs`); the WebAssembly proposals refused at load (`proposals.rs`), fuel counted for
//! every ending (`fuel.rs`) and CPU shares between owners (`cpu_share.rs`).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns; a failure should panic"
)]

mod build_js;
mod cache;
mod command;
mod common;
mod cpu_share;
mod fuel;
mod guests;
mod inspect;
mod limits;
mod loading;
mod per_guest;
mod polyglot;
mod proposals;
mod reset;
mod rust_guests;
mod typed;
