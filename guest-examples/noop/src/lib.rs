//! The trivial typed hook: answers "no opinion" to every event. The benchmark uses it to
//! measure the host's own cost per wasm dispatch.

#[derive(Default)]
struct Noop;

impl hookbox_guest::Hook for Noop {}

hookbox_guest::export_hook!(Noop);
