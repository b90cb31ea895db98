//! Plugin manifests (SPEC §1): which layout a folder is, what the manifest calls the plugin,
//! which dialect it asks for, and which hook files (or inline hook objects) it names. Paths a
//! manifest names are checked lexically here; the loader then opens them beneath the plugin
//! folder with cap-std, which also refuses symlinks that point outside.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::document::{Ctx, describe};
use super::span::JsonPath;
use crate::dialect::Dialect;

/// The extension key of Agent Plugins / Ghast manifests.
pub(crate) const GHAST_EXTENSION: &str = "ai.trapezohe.ghast";
/// hookbox's own manifest extension (`dialect`).
pub(crate) const HOOKBOX_EXTENSION: &str = "dev.hookbox";
/// The hooks file every Claude Code plugin may have.
pub(crate) const DEFAULT_HOOKS: &str = "hooks/hooks.json";

/// How a plugin folder is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `.claude-plugin/plugin.json` (optional) + `hooks/hooks.json` always.
    Claude,
    /// `.codex-plugin/plugin.json`: Claude's format; the manifest's `hooks`, else the default.
    Codex,
    /// Root `plugin.json` with `extensions["ai.trapezohe.ghast"].hooks`.
    Ghast,
    /// Root `plugin.json`; its `hooks`, else the default.
    Agentao,
    /// `.cursor-plugin/plugin.json`: recognised, not read.
    CursorPlugin,
}

impl Layout {
    /// Where the manifest lives, relative to the plugin root.
    pub(crate) fn manifest(self) -> &'static str {
        match self {
            Layout::Claude => ".claude-plugin/plugin.json",
            Layout::Codex => ".codex-plugin/plugin.json",
            Layout::Ghast | Layout::Agentao => "plugin.json",
            Layout::CursorPlugin => ".cursor-plugin/plugin.json",
        }
    }

    pub(crate) fn dialect(self) -> Dialect {
        match self {
            Layout::Claude | Layout::Codex | Layout::CursorPlugin => Dialect::Claude,
            Layout::Ghast => Dialect::Ghast,
            Layout::Agentao => Dialect::Agentao,
        }
    }

    /// Claude Code loads `hooks/hooks.json` whatever the manifest says; the others only when
    /// the manifest names no hooks.
    pub(crate) fn default_always(self) -> bool {
        self == Layout::Claude
    }
}

/// Why a path written in a manifest or a rule cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathProblem {
    Empty,
    /// Absolute, or `..` climbs above the plugin root, or another placeholder.
    Leaves,
}

/// A path relative to the plugin root, checked lexically: `./` and `${CLAUDE_PLUGIN_ROOT}/` /
/// `${PLUGIN_ROOT}/` prefixes are stripped, `..` may not climb above the root, absolute paths
/// and any other placeholder (`${HOME}/…`) are refused.
pub(crate) fn plugin_relative(raw: &str) -> Result<PathBuf, PathProblem> {
    let mut s = raw.trim();
    for prefix in [
        "${CLAUDE_PLUGIN_ROOT}",
        "${PLUGIN_ROOT}",
        "$CLAUDE_PLUGIN_ROOT",
        "$PLUGIN_ROOT",
    ] {
        if let Some(rest) = s.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            s = rest.trim_start_matches('/');
            break;
        }
    }
    if s.is_empty() {
        return Err(PathProblem::Empty);
    }
    if s.contains('$')
        || s.starts_with('\\')
        || s.get(1..3).is_some_and(|d| d == ":\\" || d == ":/")
    {
        return Err(PathProblem::Leaves);
    }
    let mut out = PathBuf::new();
    for c in Path::new(s).components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(PathProblem::Leaves);
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(PathProblem::Leaves),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(PathProblem::Empty);
    }
    Ok(out)
}

/// One place a manifest takes hooks from.
#[derive(Debug, Clone)]
pub(crate) enum HookSource {
    /// A file, relative to the plugin root.
    File {
        rel: PathBuf,
        /// As written, for messages.
        raw: String,
        /// The manifest field that names it.
        field: JsonPath,
    },
    /// A hooks object written in the manifest itself.
    Inline {
        value: Map<String, Value>,
        field: JsonPath,
    },
}

/// The manifest's `name`.
pub(crate) fn name(map: &Map<String, Value>) -> Option<String> {
    map.get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

/// Whether a root `plugin.json` is an Agent Plugins / Ghast manifest.
pub(crate) fn is_ghast(map: &Map<String, Value>) -> bool {
    map.get("extensions")
        .and_then(|e| e.get(GHAST_EXTENSION))
        .is_some_and(Value::is_object)
}

/// `extensions["dev.hookbox"].dialect`: `Ok(None)` when absent, `Err` (path, message) when invalid.
pub(crate) fn dialect_override(
    map: &Map<String, Value>,
) -> Result<Option<Dialect>, (JsonPath, String)> {
    let path = JsonPath::root()
        .key("extensions")
        .key(HOOKBOX_EXTENSION)
        .key("dialect");
    match map
        .get("extensions")
        .and_then(|e| e.get(HOOKBOX_EXTENSION))
        .and_then(|h| h.get("dialect"))
    {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s
            .parse::<Dialect>()
            .map(Some)
            .map_err(|e| (path, format!("{e}; ignored"))),
        Some(other) => Err((
            path,
            format!(
                "'dialect' must be a string, found {}; ignored",
                describe(other)
            ),
        )),
    }
}

/// The hook sources a manifest names, in order. Problems are reported on `ctx` (whose file is
/// the manifest); a bad entry is left out, the others stay.
pub(crate) fn hook_sources(
    ctx: &mut Ctx<'_>,
    map: &Map<String, Value>,
    layout: Layout,
) -> Vec<HookSource> {
    let mut out = Vec::new();
    match layout {
        Layout::Ghast => {
            let field = JsonPath::root()
                .key("extensions")
                .key(GHAST_EXTENSION)
                .key("hooks");
            match map.get("extensions").and_then(|e| e.get(GHAST_EXTENSION)).and_then(|g| g.get("hooks")) {
                None | Some(Value::Null) => ctx.warn(
                    &field,
                    format!("this plugin names no hooks file (extensions[\"{GHAST_EXTENSION}\"].hooks): no hooks loaded"),
                    None,
                ),
                Some(Value::String(s)) => push_file(ctx, &mut out, s, field),
                Some(other) => ctx.invalid(
                    &field,
                    format!("'hooks' must be the path of a hooks file, found {}", describe(other)),
                    Some("write \"hooks\": \"./hooks/hooks.json\"".to_owned()),
                ),
            }
        }
        Layout::Claude | Layout::Codex | Layout::Agentao => {
            let field = JsonPath::root().key("hooks");
            match map.get("hooks") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => push_file(ctx, &mut out, s, field),
                Some(Value::Object(o)) => out.push(HookSource::Inline { value: o.clone(), field }),
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        let f = field.index(i);
                        match item {
                            Value::String(s) => push_file(ctx, &mut out, s, f),
                            Value::Object(o) => out.push(HookSource::Inline { value: o.clone(), field: f }),
                            other => ctx.invalid(
                                &f,
                                format!("manifest 'hooks' entries must be paths or hooks objects, found {}", describe(other)),
                                None,
                            ),
                        }
                    }
                }
                Some(other) => ctx.invalid(
                    &field,
                    format!("manifest 'hooks' must be a path, a list of paths or a hooks object, found {}", describe(other)),
                    Some("write \"hooks\": \"./hooks/extra.json\"".to_owned()),
                ),
            }
        }
        Layout::CursorPlugin => {}
    }
    out
}

fn push_file(ctx: &mut Ctx<'_>, out: &mut Vec<HookSource>, raw: &str, field: JsonPath) {
    match plugin_relative(raw) {
        Ok(rel) => out.push(HookSource::File {
            rel,
            raw: raw.to_owned(),
            field,
        }),
        Err(PathProblem::Empty) => ctx.invalid(
            &field,
            format!("manifest field '{field}' is an empty path"),
            None,
        ),
        Err(PathProblem::Leaves) => ctx.invalid(
            &field,
            format!(
                "path leaves the plugin folder: manifest field '{field}' names {} — not loaded",
                Value::String(raw.to_owned())
            ),
            Some(
                "name a file inside the plugin, relative to its root (e.g. \"./hooks/hooks.json\")"
                    .to_owned(),
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let ok = |s: &str| plugin_relative(s).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(ok("./hooks/hooks.json"), Ok("hooks/hooks.json".into()));
        assert_eq!(ok("hooks.json"), Ok("hooks.json".into()));
        assert_eq!(
            ok("${CLAUDE_PLUGIN_ROOT}/hooks/a.json"),
            Ok("hooks/a.json".into())
        );
        assert_eq!(
            ok("${PLUGIN_ROOT}/x/../hooks/g.wasm"),
            Ok("hooks/g.wasm".into())
        );
        assert_eq!(ok("a/./b//c.json"), Ok("a/b/c.json".into()));
        for bad in [
            "../x.json",
            "/etc/passwd",
            "a/../../x",
            "${HOME}/x.json",
            "${CLAUDE_PROJECT_DIR}/x",
            "C:\\x",
            "\\\\srv\\x",
        ] {
            assert_eq!(plugin_relative(bad), Err(PathProblem::Leaves), "{bad}");
        }
        for empty in ["", "./", "${PLUGIN_ROOT}/", "a/.."] {
            assert_eq!(plugin_relative(empty), Err(PathProblem::Empty), "{empty}");
        }
    }

    #[test]
    fn dialect_overrides() {
        let m = |v: Value| v.as_object().cloned().unwrap();
        let map = m(serde_json::json!({"extensions": {"dev.hookbox": {"dialect": "simple"}}}));
        assert_eq!(dialect_override(&map), Ok(Some(Dialect::Simple)));
        let map = m(serde_json::json!({"extensions": {"dev.hookbox": {"dialect": "cursor"}}}));
        let (path, msg) = dialect_override(&map).unwrap_err();
        assert_eq!(path.to_string(), r#"extensions["dev.hookbox"].dialect"#);
        assert!(msg.starts_with("unknown dialect `cursor`"), "{msg}");
        assert_eq!(dialect_override(&m(serde_json::json!({}))), Ok(None));
    }
}
