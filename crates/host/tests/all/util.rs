//! Shared helpers: a temp project with a hook file, a host on it, events.

use std::path::{Path, PathBuf};

use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_core::{Dialect, Event};
use hookbox_host::{Dispatch, HookHost, HostPolicy};
use serde_json::Value;

/// A temp project folder holding one plugin, a host that loaded it, and what the load reported.
/// The host's state (plugin data, replay) is in a temp folder of its own, outside the project.
pub(crate) struct Project {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) state: tempfile::TempDir,
    pub(crate) host: HookHost,
    pub(crate) report: LoadReport,
}

impl Project {
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Writes `hooks` as `hooks.json` (dialect forced) in a fresh project and loads it.
pub(crate) fn project(dialect: Dialect, hooks: Value) -> Project {
    project_with(dialect, hooks, |_| {})
}

/// Like [`project`], with a chance to adjust the policy.
pub(crate) fn project_with(
    dialect: Dialect,
    hooks: Value,
    tweak: impl FnOnce(&mut HostPolicy),
) -> Project {
    let p = load_project(dialect, hooks, &[], tweak);
    assert!(!p.report.has_errors(), "{:#?}", p.report.diagnostics);
    assert!(
        !p.report.rules.is_empty(),
        "no rule loaded: {:#?}",
        p.report.diagnostics
    );
    p
}

/// A fresh project whose plugin holds `hooks` as `hooks/hooks.json` and copies of `files`
/// (name in `hooks/` → source path), loaded by a host whose policy `tweak` adjusted. The load
/// report is returned as is, errors included.
pub(crate) fn load_project(
    dialect: Dialect,
    hooks: Value,
    files: &[(&str, &str)],
    tweak: impl FnOnce(&mut HostPolicy),
) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    for (name, src) in files {
        std::fs::copy(src, plugin.join("hooks").join(name)).unwrap();
    }
    std::fs::write(
        plugin.join("hooks/hooks.json"),
        serde_json::to_vec_pretty(&hooks).unwrap(),
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut policy = HostPolicy::for_project(dir.path()).with_state_dir(state.path());
    tweak(&mut policy);
    let host = HookHost::new(policy).unwrap();
    let report = host.load(
        &[plugin],
        &LoadOptions::default().with_dialect(Some(dialect)),
    );
    Project {
        dir,
        state,
        host,
        report,
    }
}

/// An event from a flat payload; cwd defaults to `cwd`.
pub(crate) fn event(payload: Value, cwd: &Path) -> Event {
    Event::from_payload(None, payload, "sess-1", &cwd.display().to_string()).unwrap()
}

pub(crate) async fn dispatch(p: &Project, payload: Value) -> Dispatch {
    p.host.dispatch(event(payload, p.path())).await
}

/// Writes an executable script in the project and returns its path.
pub(crate) fn script(p: &Project, name: &str, body: &str) -> PathBuf {
    let path = p.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// The verdict as JSON, for field assertions.
pub(crate) fn verdict(d: &Dispatch) -> Value {
    serde_json::to_value(&d.verdict).unwrap()
}

/// The one plugin data folder (`PLUGIN_DATA`) the project's hooks wrote in (the plugin's own
/// folder under the state's `data/`; for Ghast, the session's folder beneath it).
pub(crate) fn plugin_data(p: &Project) -> PathBuf {
    let first = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
    };
    let plugin = first(&p.state.path().join("data"));
    match std::fs::read_dir(&plugin).unwrap().find_map(|e| {
        let e = e.unwrap();
        e.file_type().unwrap().is_dir().then(|| e.path())
    }) {
        Some(session) if p.report.plugins[0].dialect == hookbox_core::Dialect::Ghast => session,
        _ => plugin,
    }
}

/// A number a hook wrote to a file (a timestamp, a pid).
pub(crate) fn read_number(path: &Path) -> u128 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
