//! Every guest component exists, is a component, and has the world its role needs: typed hooks
//! export `hookbox:hook/handler@0.1.0`, command hooks export `wasi:cli/run@0.2.x`, and only
//! `net` asks for the network. What each guest *does* is tested through the host
//! (`crates/wasm`); this file checks what the host will see when it loads them. The JavaScript and
//! Python guests are checked when their tooling was installed (the `hookbox_polyglot` cfg this
//! crate's build script sets), and reported as ignored otherwise.

use hookbox_test_artifacts::{ALL, Kind, foreach_guest};

/// Forces one test function per guest: a new guest without a test here fails to compile.
macro_rules! assert_test_exists {
    ($name:ident) => {
        #[expect(unused_imports, reason = "only checks that the test function exists")]
        use self::$name as _;
    };
}
foreach_guest!(assert_test_exists);

const HANDLER: &str = "hookbox:hook/handler@0.1.0";
const HOST: &str = "hookbox:hook/host@0.1.0";
/// Type-only interface: `handler` uses its records, so the component imports it (no functions).
const TYPES: &str = "hookbox:hook/types@0.1.0";

/// The WASI interfaces the host's closed sandbox links (no sockets, no HTTP). Rust's standard
/// library imports a subset of these; anything else would make the host refuse the guest.
const GRANTABLE_WASI: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:filesystem/types",
    "wasi:filesystem/preopens",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
];

/// A component's world as the host sees it: import and export names, with versions.
#[derive(Debug)]
struct World {
    imports: Vec<String>,
    exports: Vec<String>,
}

fn world_of(name: &str) -> World {
    let guest = ALL
        .iter()
        .find(|guest| guest.name == name)
        .unwrap_or_else(|| panic!("no guest `{name}` in ALL"));
    let bytes = std::fs::read(guest.path)
        .unwrap_or_else(|e| panic!("{name}: cannot read {}: {e}", guest.path));
    // Component-model binaries have layer 1 in the version field; core modules have 0.
    assert_eq!(
        bytes.get(..8),
        Some(&b"\0asm\x0d\x00\x01\x00"[..]),
        "{name}: not a component"
    );
    let wit_component::DecodedWasm::Component(resolve, world) = wit_component::decode(&bytes)
        .unwrap_or_else(|e| panic!("{name}: cannot decode {}: {e:#}", guest.path))
    else {
        panic!("{name}: decoded as a WIT package, not a component");
    };
    let world = &resolve.worlds[world];
    World {
        imports: world
            .imports
            .keys()
            .map(|key| resolve.name_world_key(key))
            .collect(),
        exports: world
            .exports
            .keys()
            .map(|key| resolve.name_world_key(key))
            .collect(),
    }
}

fn kind_of(name: &str) -> Kind {
    ALL.iter()
        .find(|guest| guest.name == name)
        .map(|guest| guest.kind)
        .unwrap_or_else(|| panic!("no guest `{name}` in ALL"))
}

/// The imports that are neither our host interface nor grantable WASI.
fn ungrantable(world: &World) -> Vec<&str> {
    world
        .imports
        .iter()
        .map(String::as_str)
        .filter(|import| {
            let unversioned = import.split('@').next().unwrap_or(import);
            *import != HOST && *import != TYPES && !GRANTABLE_WASI.contains(&unversioned)
        })
        .collect()
}

#[track_caller]
fn assert_typed_hook(name: &str) -> World {
    let world = world_of(name);
    assert_eq!(world.exports, [HANDLER], "{name}: exports");
    assert_eq!(kind_of(name), Kind::Hook, "{name}: kind in ALL");
    world
}

#[track_caller]
fn assert_sandboxable_hook(name: &str) {
    let world = assert_typed_hook(name);
    assert_eq!(ungrantable(&world), Vec::<&str>::new(), "{name}: imports");
}

#[track_caller]
fn assert_command(name: &str) {
    let world = world_of(name);
    assert_eq!(
        world.exports.len(),
        1,
        "{name}: exports {:?}",
        world.exports
    );
    assert!(
        world.exports[0].starts_with("wasi:cli/run@0.2."),
        "{name}: exports {:?}",
        world.exports
    );
    assert_eq!(ungrantable(&world), Vec::<&str>::new(), "{name}: imports");
    assert!(
        !world.imports.iter().any(|i| i.starts_with("hookbox:")),
        "{name}: a command needs no hookbox import: {:?}",
        world.imports
    );
    assert_eq!(kind_of(name), Kind::Command, "{name}: kind in ALL");
}

#[test]
fn noop() {
    assert_sandboxable_hook("noop");
    // The benchmark's baseline: nothing beyond what wit-bindgen's glue needs.
    let world = world_of("noop");
    assert!(
        !world
            .imports
            .iter()
            .any(|i| i.starts_with("wasi:filesystem")),
        "{world:?}"
    );
}

#[test]
fn runaway() {
    assert_sandboxable_hook("runaway");
}

#[test]
fn context_injection() {
    assert_sandboxable_hook("context_injection");
    assert!(
        world_of("context_injection")
            .imports
            .contains(&HOST.to_owned())
    );
}

#[test]
fn shell_guard() {
    assert_sandboxable_hook("shell_guard");
}

#[test]
fn empty_answer_rescue() {
    assert_sandboxable_hook("empty_answer_rescue");
}

#[test]
fn compaction_audit() {
    assert_sandboxable_hook("compaction_audit");
    // It writes its audit line through a mounted folder.
    let world = world_of("compaction_audit");
    assert!(
        world
            .imports
            .iter()
            .any(|i| i.starts_with("wasi:filesystem/preopens@")),
        "{world:?}"
    );
}

#[test]
fn chaos() {
    assert_sandboxable_hook("chaos");
}

#[test]
fn net() {
    let world = assert_typed_hook("net");
    let refused = ungrantable(&world);
    assert!(
        refused.iter().any(|i| i.starts_with("wasi:sockets/tcp@"))
            && refused.iter().all(|i| i.starts_with("wasi:sockets/")),
        "net must import wasi:sockets (and nothing else ungrantable): {refused:?}"
    );
}

#[test]
fn cli_guard() {
    assert_command("cli_guard");
}

#[test]
fn noop_cli() {
    assert_command("noop_cli");
}

/// componentize-js links StarlingMonkey's WASI use (stdio, clocks, random; `http` and the
/// fetch-event are disabled in `build.mjs`): all grantable.
#[test]
#[cfg_attr(
    not(hookbox_polyglot),
    ignore = "JavaScript/Python guest tooling not installed: run scripts/setup-polyglot.sh"
)]
fn context_injection_js() {
    assert_sandboxable_hook("context_injection_js");
    assert!(
        world_of("context_injection_js")
            .imports
            .contains(&HOST.to_owned())
    );
}

/// The same source built with the QuickJS toolchain (`guest-examples/js-quickjs`): Rust's
/// standard library's WASI (stdio, clocks, random), all grantable. Besides the handler it
/// exports the runtime's `wizer-initialize` (wasmtime-wizer 48 cannot drop it cleanly); the
/// host calls only the handler.
#[test]
#[cfg_attr(
    not(hookbox_polyglot),
    ignore = "JavaScript/Python guest tooling not installed: run scripts/setup-polyglot.sh"
)]
fn context_injection_qjs() {
    let world = world_of("context_injection_qjs");
    assert_eq!(world.exports, ["wizer-initialize", HANDLER], "exports");
    assert_eq!(kind_of("context_injection_qjs"), Kind::Hook);
    assert_eq!(ungrantable(&world), Vec::<&str>::new(), "imports");
    assert!(world.imports.contains(&HOST.to_owned()), "{world:?}");
}

/// The same source built with componentize-qjs (npm; QuickJS pre-initialised by Wizer, bindings
/// by wit-dylib): stdio, clocks, filesystem types and the insecure seed of WASI, all grantable.
/// Besides the handler it exports componentize-qjs's `init` (its pre-initialisation entry);
/// the host calls only the handler.
#[test]
#[cfg_attr(
    not(hookbox_polyglot),
    ignore = "JavaScript/Python guest tooling not installed: run scripts/setup-polyglot.sh"
)]
fn context_injection_cqjs() {
    let world = world_of("context_injection_cqjs");
    assert_eq!(world.exports, ["init", HANDLER], "exports");
    assert_eq!(kind_of("context_injection_cqjs"), Kind::Hook);
    assert_eq!(ungrantable(&world), Vec::<&str>::new(), "imports");
    assert!(world.imports.contains(&HOST.to_owned()), "{world:?}");
}

/// componentize-py's CPython would import `wasi:sockets/*`; the build uses `--stub-wasi`, so
/// the component imports hookbox's interfaces and no WASI at all.
#[test]
#[cfg_attr(
    not(hookbox_polyglot),
    ignore = "JavaScript/Python guest tooling not installed: run scripts/setup-polyglot.sh"
)]
fn shell_guard_py() {
    let world = world_of("shell_guard_py");
    // Besides the handler, componentize-py exports an unversioned `exports` interface (its
    // table of exported functions, used at pre-initialisation); the host ignores it.
    assert_eq!(world.exports, ["exports", HANDLER], "exports");
    assert_eq!(kind_of("shell_guard_py"), Kind::Hook);
    assert_eq!(ungrantable(&world), Vec::<&str>::new(), "imports");
    assert!(
        world.imports.iter().all(|i| i.starts_with("hookbox:")),
        "{world:?}"
    );
}

#[test]
fn every_guest_has_a_distinct_existing_file() {
    let mut paths: Vec<_> = ALL.iter().map(|guest| guest.path).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), ALL.len());
    for guest in ALL {
        let len = std::fs::metadata(guest.path)
            .unwrap_or_else(|e| panic!("{}: {e}", guest.name))
            .len();
        assert!(len > 0, "{}: empty file", guest.name);
    }
}
