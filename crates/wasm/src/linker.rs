//! The one `component::Linker` of a runtime: WASI 0.2 cli/io/clocks/random/filesystem, linked
//! interface by interface so that `wasi:sockets` (and `wasi:http`) are not linked at all, plus the
//! `hookbox:hook/host` interface. Both kinds of component (typed hooks and `wasi:cli/run`
//! commands) are granted the same imports, so one linker serves both and `inspect` has one list.
//! A few `wasi:filesystem` methods are then shadowed by [`fs_guard`](crate::fs_guard).

use wasmtime::Engine;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, io, random};
use wasmtime_wasi::random::WasiRandom;

use crate::bindings;
use crate::state::StoreState;

/// `wasi:io` only needs the resource table.
struct IoData;

impl HasData for IoData {
    type Data<'a> = &'a mut ResourceTable;
}

/// Builds the linker. Keep in sync with [`GRANTED_WASI`](crate::world::GRANTED_WASI): a test
/// instantiates a component importing every granted interface.
pub(crate) fn build(engine: &Engine) -> wasmtime::Result<Linker<StoreState>> {
    let mut linker = Linker::new(engine);
    let l = &mut linker;
    io::error::add_to_linker::<StoreState, IoData>(l, |s| &mut s.table)?;
    io::poll::add_to_linker::<StoreState, IoData>(l, |s| &mut s.table)?;
    io::streams::add_to_linker::<StoreState, IoData>(l, |s| &mut s.table)?;
    clocks::wall_clock::add_to_linker::<StoreState, WasiClocks>(l, StoreState::clocks)?;
    clocks::monotonic_clock::add_to_linker::<StoreState, WasiClocks>(l, StoreState::clocks)?;
    random::random::add_to_linker::<StoreState, WasiRandom>(l, |s| s.wasi.get().random())?;
    random::insecure::add_to_linker::<StoreState, WasiRandom>(l, |s| s.wasi.get().random())?;
    random::insecure_seed::add_to_linker::<StoreState, WasiRandom>(l, |s| s.wasi.get().random())?;
    filesystem::types::add_to_linker::<StoreState, WasiFilesystem>(l, StoreState::filesystem)?;
    filesystem::preopens::add_to_linker::<StoreState, WasiFilesystem>(l, StoreState::filesystem)?;
    // Special files refused, writes to `rw` mounts charged to the run's budget.
    crate::fs_guard::add_to_linker(l)?;
    // `exit-with-code` is stable in wasmtime-wasi 48's `wasi:cli/exit@0.2.12` (no link option to
    // turn on): a command exiting with 2 blocks, as a native command would.
    cli::exit::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::environment::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::stdin::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::stdout::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::stderr::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::terminal_input::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::terminal_output::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::terminal_stdin::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::terminal_stdout::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    cli::terminal_stderr::add_to_linker::<StoreState, WasiCli>(l, StoreState::cli)?;
    bindings::add_to_linker(l)?;
    Ok(linker)
}
