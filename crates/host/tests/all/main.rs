//! hookbox-host integration tests: real processes through `HookHost::dispatch`, no mocked runner.
//! One binary (wasmtime links once); modules by concern.

mod concurrency;
mod exit_codes;
mod observe;
mod processes;
mod replay;
mod stop;
mod util;
