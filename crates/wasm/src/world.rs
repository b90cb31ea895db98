//! What a component is, read from its type alone: which world it targets (the typed `hook` world
//! or `wasi:cli/run`), which `hookbox:hook` version it was built against, and whether each of its
//! imports is something this host grants. `load` and `inspect` share this reading, so the CLI
//! reports exactly what loading would decide.

use std::fmt;

use serde::{Deserialize, Serialize};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::{HANDLER, MAX_VERSION, MIN_VERSION, PACKAGE};

/// A `major.minor.patch` version (pre-release and build suffixes are kept apart and never match
/// a release).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
}

impl Version {
    pub(crate) const fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parses `1.2.3`; anything else (including `1.2.3-rc`) is `None`.
    pub(crate) fn parse(s: &str) -> Option<Version> {
        let mut it = s.split('.').map(|p| p.parse::<u64>().ok());
        let v = Version::new(it.next()??, it.next()??, it.next()??);
        it.next().is_none().then_some(v)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// `ns:pkg/iface@1.2.3` split into `ns:pkg/iface` and `1.2.3`.
fn split_name(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((path, version)) => (path, Some(version)),
        None => (name, None),
    }
}

/// The `hookbox:hook` versions this host speaks, for messages.
pub(crate) fn host_versions() -> String {
    if MIN_VERSION == MAX_VERSION {
        MIN_VERSION.to_string()
    } else {
        format!("{MIN_VERSION} to {MAX_VERSION}")
    }
}

/// The WASI 0.2 interfaces linked for hooks. Sockets and HTTP are deliberately absent.
pub(crate) const GRANTED_WASI: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stderr",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stderr",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:filesystem/preopens",
    "wasi:filesystem/types",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:random/random",
];

/// The `hookbox:hook` interfaces a component may import.
const GRANTED_HOOKBOX: &[&str] = &["hookbox:hook/host", "hookbox:hook/types"];

/// A one-line summary of what the host grants, for messages.
pub(crate) fn grants_summary() -> String {
    format!(
        "hookbox:hook/host@{} and wasi:{{cli,clocks,filesystem,io,random}}@0.2.x",
        host_versions()
    )
}

/// Whether the host grants one import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// Linked for every hook.
    Granted,
    /// A network interface (`wasi:sockets`, `wasi:http`): hooks have no network.
    Network,
    /// Anything else the host does not offer.
    NotGranted,
}

fn is_wasi_02(version: Option<&str>) -> bool {
    version
        .and_then(Version::parse)
        .is_some_and(|v| v.major == 0 && v.minor == 2)
}

fn is_host_version(version: Option<&str>) -> bool {
    version
        .and_then(Version::parse)
        .is_some_and(|v| (MIN_VERSION..=MAX_VERSION).contains(&v))
}

/// Whether this host grants the import `name`.
pub(crate) fn grant(name: &str) -> Grant {
    let (path, version) = split_name(name);
    if path.starts_with("wasi:sockets/") || path.starts_with("wasi:http/") {
        Grant::Network
    } else if (GRANTED_WASI.contains(&path) && is_wasi_02(version))
        || (GRANTED_HOOKBOX.contains(&path) && is_host_version(version))
    {
        Grant::Granted
    } else {
        Grant::NotGranted
    }
}

/// Why an import is refused, in words.
pub(crate) fn refusal(name: &str, grant: Grant) -> Option<String> {
    match grant {
        Grant::Granted => None,
        Grant::Network => Some(format!(
            "component imports `{name}`, but hooks have no network: wasi:sockets and wasi:http are not linked \
             (a Rust guest imports them when it uses std::net; JavaScript toolchains unless told not to)"
        )),
        Grant::NotGranted => Some(format!(
            "component imports `{name}`, which this host does not grant (it grants {})",
            grants_summary()
        )),
    }
}

/// The world a component targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum World {
    /// Exports `hookbox:hook/handler@<version>`.
    Hook(Version),
    /// Exports `wasi:cli/run@0.2.x`.
    Command,
}

/// Reads the world from export names; `Err` says which export is wrong or missing.
pub(crate) fn world(exports: &[String]) -> Result<World, String> {
    let mut run = None;
    for name in exports {
        let (path, version) = split_name(name);
        if path == HANDLER {
            return match version.map(|v| (v, Version::parse(v))) {
                Some((_, Some(v))) if (MIN_VERSION..=MAX_VERSION).contains(&v) => {
                    Ok(World::Hook(v))
                }
                Some((v, _)) => Err(format!(
                    "component exports {HANDLER}@{v}; this host speaks {}",
                    host_versions()
                )),
                None => Err(format!(
                    "component exports {HANDLER} without a version; this host speaks {HANDLER}@{}",
                    host_versions()
                )),
            };
        }
        if path == "wasi:cli/run" {
            run = Some((name, version));
        }
    }
    match run {
        Some((_, version)) if is_wasi_02(version) => Ok(World::Command),
        Some((name, _)) => Err(format!(
            "component exports {name}; this host runs wasi:cli/run@0.2.x"
        )),
        None if exports
            .iter()
            .any(|e| e.starts_with(&format!("{PACKAGE}/"))) =>
        {
            Err(format!(
                "component exports {} but not {HANDLER}@{}",
                exports.join(", "),
                host_versions()
            ))
        }
        None => Err(format!(
            "component exports neither {HANDLER}@{} nor wasi:cli/run@0.2.x (its exports: {})",
            host_versions(),
            if exports.is_empty() {
                "none".to_owned()
            } else {
                exports.join(", ")
            }
        )),
    }
}

/// A component's imports, exports and world, read once.
pub(crate) struct Analysis {
    /// Every import with the host's grant.
    pub(crate) imports: Vec<(String, Grant)>,
    /// Every export name.
    pub(crate) exports: Vec<String>,
    /// The world, or why there is none this host runs.
    pub(crate) world: Result<World, String>,
}

impl Analysis {
    /// Reads `component`'s type.
    pub(crate) fn of(engine: &Engine, component: &Component) -> Analysis {
        let ty = component.component_type();
        let imports: Vec<_> = ty
            .imports(engine)
            .map(|(name, _)| (name.to_owned(), grant(name)))
            .collect();
        let exports: Vec<String> = ty
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let world = world(&exports);
        Analysis {
            imports,
            exports,
            world,
        }
    }

    /// Every reason this host refuses the component: the world first, then each import.
    pub(crate) fn problems(&self) -> Vec<String> {
        let world = self.world.as_ref().err().cloned();
        world
            .into_iter()
            .chain(
                self.imports
                    .iter()
                    .filter_map(|(name, g)| refusal(name, *g)),
            )
            .collect()
    }
}

/// Checks the first bytes: a component, a core module, or not wasm at all.
pub(crate) fn check_header(bytes: &[u8]) -> Result<(), String> {
    match bytes {
        [0, b'a', b's', b'm', 1, 0, 0, 0, ..] => Err(
            "this is a core WebAssembly module, not a component; hooks are components \
             (build with `--target wasm32-wasip2`, or wrap it with `wasm-tools component new`)"
                .into(),
        ),
        [0, b'a', b's', b'm', _, _, 1, 0, ..] => Ok(()),
        [0, b'a', b's', b'm', ..] => {
            Err("this is a WebAssembly binary of an unknown layer or version".into())
        }
        _ => Err("this is not a WebAssembly binary (no `\\0asm` header)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn worlds_are_read_from_exports() {
        assert_eq!(
            world(&names(&["hookbox:hook/handler@0.1.0"])),
            Ok(World::Hook(Version::new(0, 1, 0)))
        );
        assert_eq!(world(&names(&["wasi:cli/run@0.2.0"])), Ok(World::Command));
        assert_eq!(
            world(&names(&[
                "wasi:cli/run@0.2.6",
                "hookbox:hook/handler@0.1.0"
            ])),
            Ok(World::Hook(MIN_VERSION))
        );
        let e = world(&names(&["hookbox:hook/handler@0.2.0"])).unwrap_err();
        assert_eq!(
            e,
            "component exports hookbox:hook/handler@0.2.0; this host speaks 0.1.0"
        );
        let e = world(&names(&["hookbox:hook/handler"])).unwrap_err();
        assert!(e.contains("without a version"), "{e}");
        let e = world(&names(&["wasi:cli/run@0.3.0"])).unwrap_err();
        assert!(e.contains("wasi:cli/run@0.2.x"), "{e}");
        let e = world(&[]).unwrap_err();
        assert!(
            e.starts_with(
                "component exports neither hookbox:hook/handler@0.1.0 nor wasi:cli/run@0.2.x"
            ),
            "{e}"
        );
    }

    #[test]
    fn grants() {
        assert_eq!(grant("wasi:io/streams@0.2.0"), Grant::Granted);
        assert_eq!(grant("wasi:cli/exit@0.2.12"), Grant::Granted);
        assert_eq!(grant("hookbox:hook/host@0.1.0"), Grant::Granted);
        assert_eq!(grant("hookbox:hook/host@0.2.0"), Grant::NotGranted);
        assert_eq!(grant("wasi:io/streams@0.3.0"), Grant::NotGranted);
        assert_eq!(grant("wasi:sockets/tcp@0.2.0"), Grant::Network);
        assert_eq!(grant("wasi:http/outgoing-handler@0.2.0"), Grant::Network);
        assert_eq!(grant("evil:pkg/thing"), Grant::NotGranted);
        assert!(
            refusal("wasi:sockets/tcp@0.2.0", Grant::Network)
                .unwrap()
                .contains("hooks have no network")
        );
    }

    #[test]
    fn headers() {
        assert!(check_header(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(
            check_header(b"\0asm\x01\0\0\0")
                .unwrap_err()
                .contains("core WebAssembly module")
        );
        assert!(
            check_header(b"hello")
                .unwrap_err()
                .contains("not a WebAssembly binary")
        );
        assert!(check_header(b"").is_err());
    }

    #[test]
    fn versions_parse_strictly() {
        assert_eq!(Version::parse("0.1.0"), Some(Version::new(0, 1, 0)));
        assert_eq!(Version::parse("0.1"), None);
        assert_eq!(Version::parse("0.1.0-rc1"), None);
        assert_eq!(Version::parse("0.1.0.0"), None);
    }
}
