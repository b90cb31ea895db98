//! What the `hookbox` binary carries, as bytes: the example guests built from
//! `guest-examples/` (the Rust ones always; the JavaScript and Python ones when their tooling was
//! installed at build time — [`POLYGLOT_MISSING`] says why not) and the files of
//! `examples/plugins/`. `hookbox demo` and `hookbox bench` write them into a scratch folder, so a
//! binary installed with `cargo install --path .` runs from any folder and points into no build
//! tree. The build script (`build.rs`) builds them; nothing is checked in.

/// What a guest component exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Exports `hookbox:hook/handler`: called with a typed event.
    Hook,
    /// Exports `wasi:cli/run`: run as a command hook (payload on stdin).
    Command,
}

/// One example guest component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guest {
    /// The cargo target name with `-` as `_` (`shell_guard`, `cli_guard`), or the polyglot guest's
    /// name (`context_injection_js`, `shell_guard_py`).
    pub name: &'static str,
    /// What it exports.
    pub kind: Kind,
    /// The folder it is built from, relative to the repository root (`guest-examples/noop`).
    pub source: &'static str,
    /// The component.
    pub bytes: &'static [u8],
}

/// One file of `examples/plugins/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginFile {
    /// Its path below `examples/plugins/`, `/`-separated (`shell-guard/hooks/hooks.json`).
    pub path: &'static str,
    /// Its contents.
    pub bytes: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// The guest named `name` (`noop`, `shell_guard`, `shell_guard_py`, …), if this binary has it.
pub fn guest(name: &str) -> Option<&'static Guest> {
    GUESTS.iter().find(|g| g.name == name)
}

/// The files of the example plugin `plugin` (a folder of `examples/plugins/`), each with its path
/// below the plugin's folder.
pub fn plugin_files(plugin: &str) -> impl Iterator<Item = (&'static str, &'static [u8])> {
    let prefix = format!("{plugin}/");
    PLUGIN_FILES
        .iter()
        .filter_map(move |f| f.path.strip_prefix(&prefix).map(|rest| (rest, f.bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_and_bench_guests_are_carried() {
        for name in [
            "noop",
            "noop_cli",
            "shell_guard",
            "context_injection",
            "runaway",
        ] {
            let g = guest(name).unwrap_or_else(|| panic!("{name} is not bundled"));
            // A component starts with the wasm magic and the component-model layer.
            assert_eq!(&g.bytes[..4], b"\0asm", "{name}");
        }
        assert_eq!(guest("noop_cli").map(|g| g.kind), Some(Kind::Command));
        assert!(
            guest("chaos").is_none(),
            "hostile test guests stay out of the binary"
        );
    }

    #[test]
    fn plugin_files_are_found_by_plugin() {
        let files: Vec<_> = plugin_files("wasm-shell-guard").map(|(p, _)| p).collect();
        // The manifest and the hooks file, then the plugin's own `tests/` cases (which
        // `hookbox test` runs), all named below the plugin's folder, not below `examples/plugins/`.
        assert_eq!(
            files[..2],
            [".claude-plugin/plugin.json", "hooks/hooks.json"]
        );
        assert!(
            files[2..]
                .iter()
                .all(|p| p.starts_with("tests/") && p.ends_with(".json")),
            "{files:?}"
        );
        assert!(plugin_files("no-such-plugin").next().is_none());
    }
}
