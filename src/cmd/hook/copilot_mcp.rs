//! The MCP servers GitHub Copilot CLI has configured, by name: Copilot names an MCP tool
//! `<server>-<tool>` and sends no server field, so the adapter needs the configured names to map
//! the call back to Claude Code's `mcp__<server>__<tool>` (and a plugin's `mcp__srv__.*` guard to
//! fire). Copilot CLI 1.0.102 reads them from `~/.copilot/mcp-config.json` (`$COPILOT_HOME`) and,
//! in the workspace, `.mcp.json` and `.github/mcp.json`; each holds `{"mcpServers": {NAME: …}}`.
//! Its built-in GitHub server is `github-mcp-server`.
//!
//! The files are read bounded; the project's without following a symlink (a checkout controls
//! them). A file that does not read only means fewer names: an unmapped MCP tool is named in a
//! warning by the adapter, never a reason not to answer.

use std::path::{Path, PathBuf};

use hookbox_core::files::{Symlinks, read_file};
use serde_json::Value;

/// The largest MCP configuration read: 1 MiB.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The server Copilot CLI runs itself.
const BUILT_IN: &[&str] = &["github-mcp-server"];

/// The configured server names, for the project `project`.
pub(super) fn server_names(project: Option<&Path>) -> Vec<String> {
    let mut out: Vec<String> = BUILT_IN.iter().map(|s| (*s).to_owned()).collect();
    let user_dir = std::env::var_os("COPILOT_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".copilot"))
        });
    if let Some(d) = user_dir {
        // The user's own file may be a link into their dotfiles.
        add(&mut out, &d.join("mcp-config.json"), Symlinks::Follow);
    }
    if let Some(p) = project {
        for rel in [".mcp.json", ".github/mcp.json"] {
            add(&mut out, &p.join(rel), Symlinks::Refuse);
        }
    }
    out
}

fn add(out: &mut Vec<String>, path: &Path, links: Symlinks) {
    let Ok(text) = read_file(path, MAX_CONFIG_BYTES, links) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    let servers = v
        .get("mcpServers")
        .or_else(|| v.get("servers"))
        .and_then(Value::as_object);
    for name in servers.into_iter().flat_map(|m| m.keys()) {
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_project_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".mcp.json"),
            r#"{"mcpServers": {"my-db": {"command": "x"}, "files": {}}}"#,
        )
        .unwrap();
        std::fs::create_dir(dir.path().join(".github")).unwrap();
        std::fs::write(dir.path().join(".github/mcp.json"), "not json").unwrap();
        let names = server_names(Some(dir.path()));
        for n in ["github-mcp-server", "my-db", "files"] {
            assert!(names.iter().any(|x| x == n), "{n}: {names:?}");
        }
    }
}
