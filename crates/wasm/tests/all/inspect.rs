//! `inspect`: kind, WIT version, imports with their grant, exports, and the same verdict as load.

use hookbox_wasm::{Grant, InspectKind};

use crate::common::runtime;
use crate::guests;

#[test]
fn typed_hook_is_accepted() {
    let r = runtime().inspect_bytes(&guests::echo());
    assert_eq!(
        (r.kind, r.wit_version.as_deref(), r.accepted),
        (InspectKind::TypedHook, Some("0.1.0"), true)
    );
    assert!(r.reasons.is_empty());
    assert!(
        r.imports
            .iter()
            .any(|i| i.name == "hookbox:hook/host@0.1.0" && i.granted)
    );
    assert_eq!(r.exports, ["hookbox:hook/handler@0.1.0"]);
    assert_eq!(r.size_bytes, guests::echo().len() as u64);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["kind"], "typed_hook");
}

#[test]
fn command_is_accepted() {
    let r = runtime().inspect_bytes(&guests::cmd_echo());
    assert_eq!((r.kind, r.accepted), (InspectKind::WasiCommand, true));
    assert!(r.imports.iter().all(|i| i.granted), "{:?}", r.imports);
}

#[test]
fn network_imports_are_shown_and_refused() {
    let r = runtime().inspect_bytes(&guests::sockets());
    assert!(!r.accepted);
    let tcp = r
        .imports
        .iter()
        .find(|i| i.name == "wasi:sockets/tcp@0.2.0")
        .unwrap();
    assert_eq!((tcp.granted, tcp.grant), (false, Grant::Network));
    assert!(
        r.reasons
            .iter()
            .any(|m| m.contains("hooks have no network"))
    );
}

#[test]
fn wrong_version_reports_the_version_found() {
    let r = runtime().inspect_bytes(&guests::wrong_version());
    assert_eq!(
        (r.kind, r.wit_version.as_deref(), r.accepted),
        (InspectKind::UnknownComponent, Some("0.2.0"), false)
    );
}

#[test]
fn non_components_are_named() {
    assert_eq!(
        runtime().inspect_bytes(&guests::core_module()).kind,
        InspectKind::CoreModule
    );
    let r = runtime().inspect_bytes(b"not wasm");
    assert_eq!((r.kind, r.accepted), (InspectKind::NotWasm, false));
    let r = runtime().inspect_bytes(b"\0asm\x0d\0\x01\0garbage");
    assert_eq!((r.kind, r.accepted), (InspectKind::InvalidComponent, false));
}
