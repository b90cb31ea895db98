//! Loader tests on temporary folders: layouts, manifests, paths, dedup, size bounds.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;

const STOP_HOOK: &str =
    r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]}}"#;
const START_HOOK: &str =
    r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "start.sh"}]}]}}"#;

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    p
}

fn load(paths: &[&Path]) -> LoadReport {
    load_paths(paths, &LoadOptions::default())
}

fn commands(r: &LoadReport) -> Vec<String> {
    r.rules.iter().map(|r| r.handler.label()).collect()
}

#[test]
fn claude_plugin_with_manifest_names_default_again() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("guard");
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"name": "guard-pack",
        "hooks": ["./hooks/hooks.json", "${CLAUDE_PLUGIN_ROOT}/extra.json", {"SessionStart": [{"type": "command", "command": "inline.sh"}]}]}"#,
    );
    write(&root, "hooks/hooks.json", STOP_HOOK);
    write(&root, "extra.json", START_HOOK);
    let r = load(&[&root]);
    assert_eq!(
        commands(&r),
        ["stop.sh", "start.sh", "inline.sh"],
        "{:#?}",
        r.diagnostics
    );
    assert_eq!(
        r.rules.iter().map(|r| r.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(r.plugins.len(), 1);
    assert_eq!(r.plugins[0].name, "guard-pack");
    assert_eq!(r.plugins[0].dialect, Dialect::Claude);
    assert_eq!(r.rules[0].source.plugin, "guard-pack");
    assert_eq!(r.rules[2].source.json_path, "hooks[2].SessionStart[0]");
    assert_eq!(
        r.rules[2].source.file,
        root.join(".claude-plugin/plugin.json")
    );
    let d = &r.diagnostics[0];
    assert_eq!(r.diagnostics.len(), 1, "{:#?}", r.diagnostics);
    assert_eq!(
        d.message,
        "Duplicate hooks file detected: ./hooks/hooks.json resolves to already-loaded file hooks/hooks.json — loaded once"
    );
    assert_eq!(d.json_path.as_deref(), Some("hooks[0]"));
    assert_eq!(d.line, Some(2));
    assert_eq!(
        d.fix.as_deref(),
        Some(
            "The standard hooks/hooks.json is loaded automatically, so manifest.hooks should only reference additional hook files"
        )
    );
}

#[test]
fn claude_plugin_without_manifest_and_codex_plugin() {
    let t = tempfile::tempdir().unwrap();
    let bare = t.path().join("bare");
    write(&bare, "hooks/hooks.json", STOP_HOOK);
    let codex = t.path().join("codex");
    write(
        &codex,
        ".codex-plugin/plugin.json",
        r#"{"name": "cx", "hooks": "./hooks/codex-hooks.json"}"#,
    );
    write(&codex, "hooks/codex-hooks.json", START_HOOK);
    write(&codex, "hooks/hooks.json", STOP_HOOK);
    let r = load(&[&bare, &codex]);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(
        commands(&r),
        ["stop.sh", "start.sh"],
        "a Codex manifest naming a file replaces the default"
    );
    assert_eq!(r.plugins[0].name, "bare");
    assert_eq!(
        r.plugins[1].dialect,
        Dialect::Claude,
        "Codex plugins use Claude's format"
    );
    assert_eq!(r.rules[1].plugin, 1);
}

#[test]
fn ghast_plugin() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("hook-example");
    write(
        &root,
        "plugin.json",
        r#"{"name": "hook-example", "extensions": {"ai.trapezohe.ghast": {"hooks": "hooks.json"}}}"#,
    );
    write(
        &root,
        "hooks.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo hi", "timeout": 5}]}]}}"#,
    );
    let r = load(&[&root]);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.plugins[0].dialect, Dialect::Ghast);
    assert_eq!(r.rules[0].dialect, Dialect::Ghast);

    write(
        &root,
        "hooks.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "a"}]}],
        "SessionStart": [{"matcher": "(", "hooks": [{"type": "command", "command": "b"}]}]}}"#,
    );
    let r = load(&[&root]);
    assert!(
        r.rules.is_empty(),
        "invalid config fails the whole ghast plugin"
    );
    assert!(r.has_errors());
    assert!(
        r.diagnostics
            .last()
            .unwrap()
            .message
            .starts_with("plugin 'hook-example' not registered")
    );

    write(
        &root,
        "plugin.json",
        r#"{"name": "x", "extensions": {"ai.trapezohe.ghast": {"hooks": "../hooks.json"}}}"#,
    );
    let r = load(&[&root]);
    let d = &r.diagnostics[0];
    assert_eq!(
        d.message,
        "path leaves the plugin folder: manifest field 'extensions[\"ai.trapezohe.ghast\"].hooks' names \"../hooks.json\" — not loaded"
    );
    assert_eq!(
        d.severity,
        Severity::Error,
        "in the ghast dialect this fails registration"
    );
    assert!(r.rules.is_empty());
}

#[test]
fn agentao_plugin_default_only_when_manifest_names_none() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ag");
    write(
        &root,
        "plugin.json",
        r#"{"name": "ag", "hooks": ["extra.json"]}"#,
    );
    write(&root, "hooks/hooks.json", STOP_HOOK);
    write(&root, "extra.json", START_HOOK);
    let r = load(&[&root]);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(commands(&r), ["start.sh"]);
    assert_eq!(r.plugins[0].dialect, Dialect::Agentao);
    write(&root, "plugin.json", r#"{"name": "ag"}"#);
    let r = load(&[&root]);
    assert_eq!(commands(&r), ["stop.sh"]);
}

#[test]
fn dialect_overrides() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("p");
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"name": "p", "extensions": {"dev.hookbox": {"dialect": "simple"}}}"#,
    );
    write(&root, "hooks/hooks.json", STOP_HOOK);
    assert_eq!(load(&[&root]).rules[0].dialect, Dialect::Simple);
    let opts = LoadOptions::default().with_dialect(Some(Dialect::Agentao));
    assert_eq!(
        load_paths(&[&root], &opts).rules[0].dialect,
        Dialect::Agentao,
        "--dialect wins"
    );
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"name": "p", "extensions": {"dev.hookbox": {"dialect": "cursor"}}}"#,
    );
    let r = load(&[&root]);
    assert_eq!(r.rules[0].dialect, Dialect::Claude);
    assert!(
        r.diagnostics[0]
            .message
            .starts_with("unknown dialect `cursor`")
    );
}

#[test]
fn paths_that_leave_the_plugin() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "outside.json", STOP_HOOK);
    let root = t.path().join("p");
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"hooks": ["../outside.json", "/etc/passwd", "./missing.json"]}"#,
    );
    let r = load(&[&root]);
    let msgs = messages(&r);
    assert_eq!(
        msgs,
        [
            "path leaves the plugin folder: manifest field 'hooks[0]' names \"../outside.json\" — not loaded",
            "path leaves the plugin folder: manifest field 'hooks[1]' names \"/etc/passwd\" — not loaded",
            "hooks file \"./missing.json\" named by manifest field 'hooks[2]' does not exist — not loaded",
        ]
    );
    assert!(
        r.diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning && d.line.is_some())
    );
    assert!(r.rules.is_empty());
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_plugin_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let secret = write(t.path(), "secret.json", STOP_HOOK);
    let root = t.path().join("p");
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"hooks": "./link.json"}"#,
    );
    std::os::unix::fs::symlink(&secret, root.join("link.json")).unwrap();
    let r = load(&[&root]);
    assert_eq!(
        messages(&r),
        [
            "path leaves the plugin folder: manifest field 'hooks' names \"./link.json\" (through a symlink) — not loaded"
        ]
    );
    assert!(r.rules.is_empty());
}

/// The diagnostics of `r` about `file`, as `severity: message`.
#[cfg(unix)]
fn about(r: &LoadReport, file: &Path) -> Vec<String> {
    r.diagnostics
        .iter()
        .filter(|d| d.file == file)
        .map(|d| format!("{:?}: {}", d.severity, d.message))
        .collect()
}

#[cfg(unix)]
#[test]
fn a_symlinked_default_hooks_file_that_is_refused_is_reported() {
    // Issue 16: a plugin whose hooks/hooks.json links out of it loaded 0 rules, silently.
    let t = tempfile::tempdir().unwrap();
    let shared = write(t.path(), "shared/hooks.json", STOP_HOOK);
    let plugins = t.path().join("plugins");
    // With a manifest, without one, dangling, and found by searching a folder of plugins.
    let with_manifest = plugins.join("with-manifest");
    write(
        &with_manifest,
        ".claude-plugin/plugin.json",
        r#"{"name": "wm"}"#,
    );
    let bare = plugins.join("bare");
    let dangling = plugins.join("dangling");
    for root in [&with_manifest, &bare, &dangling] {
        fs::create_dir_all(root.join("hooks")).unwrap();
    }
    std::os::unix::fs::symlink(&shared, with_manifest.join("hooks/hooks.json")).unwrap();
    std::os::unix::fs::symlink(&shared, bare.join("hooks/hooks.json")).unwrap();
    std::os::unix::fs::symlink("gone.json", dangling.join("hooks/hooks.json")).unwrap();
    let shown = serde_json::Value::String(shared.display().to_string());
    let out = format!(
        "Error: this file is a symbolic link to {shown}, which leads out of the plugin folder: hookbox does not follow it, so no rules are loaded from it"
    );
    for r in [
        load(&[&with_manifest]),
        load(&[&bare]),
        load_plugin(&bare, &LoadOptions::default()),
    ] {
        let root = if r.plugins[0].name == "wm" {
            &with_manifest
        } else {
            &bare
        };
        let file = root.join("hooks/hooks.json");
        assert_eq!(about(&r, &file), vec![out.clone()], "{:#?}", r.diagnostics);
        let d = r.diagnostics.iter().find(|d| d.file == file).unwrap();
        assert_eq!(
            d.fix.as_deref(),
            Some(
                "replace the link with a copy of the file it points to, or point it at a file inside the plugin folder"
            )
        );
        assert!(r.rules.is_empty());
        assert!(r.has_errors());
        assert_eq!(r.files[0].status, FileStatus::Failed);
    }
    // Searching the folder of plugins finds all three and says so of each.
    let r = load(&[&plugins]);
    assert_eq!(r.plugins.len(), 3, "{:#?}", r.diagnostics);
    assert_eq!(
        about(&r, &dangling.join("hooks/hooks.json")),
        [
            "Error: this file is a symbolic link to \"gone.json\", which does not exist: no rules are loaded from it"
        ]
    );
    for root in [&with_manifest, &bare] {
        assert_eq!(about(&r, &root.join("hooks/hooks.json")), vec![out.clone()]);
    }
    // A link that stays inside the plugin is followed as before.
    let inside = t.path().join("inside");
    write(&inside, "real/hooks.json", STOP_HOOK);
    fs::create_dir_all(inside.join("hooks")).unwrap();
    std::os::unix::fs::symlink("../real/hooks.json", inside.join("hooks/hooks.json")).unwrap();
    let r = load(&[&inside]);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.rules.len(), 1);
}

#[cfg(unix)]
#[test]
fn a_project_hooks_file_that_is_a_dangling_link_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let project = t.path().join("project");
    fs::create_dir_all(project.join(".claude")).unwrap();
    std::os::unix::fs::symlink(
        "../../dotfiles/settings.json",
        project.join(".claude/settings.json"),
    )
    .unwrap();
    write(&project, ".hooks.json", STOP_HOOK);
    let r = load(&[&project]);
    assert_eq!(
        about(&r, &project.join(".claude/settings.json")),
        [
            "Error: this file is a symbolic link to \"../../dotfiles/settings.json\", which does not exist: no rules are loaded from it"
        ]
    );
    assert_eq!(r.rules.len(), 1, "the other file still loads");
    // A link the user keeps that resolves is followed, as before.
    write(t.path(), "dotfiles/settings.json", STOP_HOOK);
    let r = load(&[&project]);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert_eq!(r.rules.len(), 2);
}

#[cfg(unix)]
#[test]
fn a_refused_manifest_or_named_link_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let outside = write(
        t.path(),
        "elsewhere/plugin.json",
        r#"{"hooks": "./x.json"}"#,
    );
    // A manifest that links out: the plugin is not loaded, and the manifest is named.
    let root = t.path().join("p");
    write(&root, "hooks/hooks.json", STOP_HOOK);
    fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join(".claude-plugin/plugin.json")).unwrap();
    let r = load(&[&root]);
    let manifest = root.join(".claude-plugin/plugin.json");
    assert_eq!(about(&r, &manifest).len(), 1, "{:#?}", r.diagnostics);
    assert!(
        about(&r, &manifest)[0].contains("is a symbolic link to"),
        "{:#?}",
        r.diagnostics
    );
    assert!(r.rules.is_empty());
    // A file the manifest names that is a dangling link: said to be a link.
    let root = t.path().join("q");
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"hooks": "./extra.json"}"#,
    );
    std::os::unix::fs::symlink("missing.json", root.join("extra.json")).unwrap();
    let r = load(&[&root]);
    assert_eq!(
        messages(&r),
        [
            "hooks file \"./extra.json\" named by manifest field 'hooks' is a symbolic link to \"missing.json\", which does not exist — not loaded"
        ]
    );
}

#[test]
fn a_file_named_twice_loads_once() {
    let t = tempfile::tempdir().unwrap();
    let f = write(t.path(), "hooks.json", STOP_HOOK);
    let dotted = t.path().join(".").join("hooks.json");
    let r = load(&[&f, &dotted]);
    assert_eq!(r.rules.len(), 1);
    assert!(
        messages(&r)[0].starts_with("Duplicate hooks file detected: "),
        "{:#?}",
        r.diagnostics
    );
    let root = t.path().join("p");
    write(&root, "hooks/hooks.json", STOP_HOOK);
    let r = load(&[&root, &root]);
    assert_eq!(r.rules.len(), 1);
    assert_eq!(messages(&r), ["plugin folder named twice — loaded once"]);
    // Named directly first, then by a manifest: the warning points at the manifest field.
    let q = t.path().join("q");
    write(
        &q,
        ".claude-plugin/plugin.json",
        "{\n  \"hooks\": \"./extra.json\"\n}",
    );
    let extra = write(&q, "extra.json", START_HOOK);
    let r = load(&[&extra, &q]);
    assert_eq!(r.rules.len(), 1);
    let d = only_diag(&r);
    assert!(
        d.message.starts_with("Duplicate hooks file detected: "),
        "{d}"
    );
    assert_eq!(
        (d.json_path.as_deref(), d.line, d.column),
        (Some("hooks"), Some(2), Some(3))
    );
    assert_eq!(d.file, q.join(".claude-plugin/plugin.json"));
}

#[test]
fn oversized_files_are_refused_unread() {
    let t = tempfile::tempdir().unwrap();
    let f = write(
        t.path(),
        "hooks.json",
        &format!("{}{STOP_HOOK}", " ".repeat(4096)),
    );
    let opts = LoadOptions::default().with_max_file_bytes(1024);
    let r = load_paths(&[&f], &opts);
    let d = only_diag(&r);
    assert_eq!(
        d.message,
        format!(
            "file is {} bytes, over the limit of 1024 bytes",
            4096 + STOP_HOOK.len()
        )
    );
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(r.files[0].status, FileStatus::Failed);
    assert_eq!(LoadOptions::default().max_file_bytes, 8 * 1024 * 1024);
}

#[test]
fn folders_of_plugins_and_bare_files() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        ".hooks.json",
        r#"{"hooks": {"PreToolUse": [{"matcher": "bash", "command": "check.sh"}]}}"#,
    );
    write(t.path(), "plugins/a/hooks/hooks.json", STOP_HOOK);
    write(
        t.path(),
        "plugins/b/.claude-plugin/plugin.json",
        r#"{"name": "bee"}"#,
    );
    write(t.path(), "plugins/b/hooks/hooks.json", START_HOOK);
    write(
        t.path(),
        "plugins/c/.hooks.json",
        r#"{"hooks": {"SessionStart": [{"command": "simple.sh"}]}}"#,
    );
    write(t.path(), "node_modules/x/hooks/hooks.json", STOP_HOOK);
    write(t.path(), "a/b/c/hooks/hooks.json", STOP_HOOK);
    let r = load(&[t.path()]);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    let names: Vec<&str> = r.plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [".hooks.json", "a", "bee", ".hooks.json"],
        "a/b/c is deeper than the search"
    );
    assert_eq!(r.plugins[0].dialect, Dialect::Simple);
    assert_eq!(r.plugins[3].dialect, Dialect::Simple);
    assert_eq!(
        commands(&r),
        ["check.sh", "stop.sh", "start.sh", "simple.sh"]
    );

    let empty = tempfile::tempdir().unwrap();
    let r = load(&[empty.path()]);
    assert_eq!(
        only_diag(&r).message,
        "no plugin or hooks file found in this folder"
    );
    assert!(r.has_errors());
}

#[test]
fn cursor_files_and_plugins_are_named() {
    let t = tempfile::tempdir().unwrap();
    let cursor = write(
        t.path(),
        ".cursor/hooks.json",
        r#"{"version": 1, "hooks": {"sessionStart": [{"command": "x"}]}}"#,
    );
    let r = load(&[&cursor]);
    assert_eq!(only_diag(&r).message, ForeignFormat::Cursor.message());
    assert_eq!(r.foreign[0].format, ForeignFormat::Cursor);
    assert!(!r.has_errors());

    let p = t.path().join("cp");
    write(
        &p,
        ".cursor-plugin/plugin.json",
        r#"{"name": "cp", "hooks": "./hooks/hooks-cursor.json"}"#,
    );
    let r = load(&[&p]);
    assert_eq!(r.foreign.len(), 1);
    assert_eq!(r.foreign[0].format, ForeignFormat::CursorPlugin);
    assert!(
        messages(&r)[0]
            .starts_with("this is a Cursor plugin manifest (.cursor-plugin/plugin.json)")
    );
    assert!(r.plugins.is_empty());
}

#[test]
fn manifests_named_directly_load_their_plugin() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("p");
    let m = write(&root, ".claude-plugin/plugin.json", r#"{"name": "named"}"#);
    write(&root, "hooks/hooks.json", STOP_HOOK);
    let r = load(&[&m]);
    assert_eq!(r.plugins[0].name, "named");
    assert_eq!(r.rules.len(), 1);
    let g = t.path().join("g");
    let m = write(
        &g,
        "plugin.json",
        r#"{"name": "gh", "extensions": {"ai.trapezohe.ghast": {"hooks": "./hooks/hooks.json"}}}"#,
    );
    write(&g, "hooks/hooks.json", START_HOOK);
    let r = load(&[&m]);
    assert_eq!(r.plugins[0].dialect, Dialect::Ghast);
    assert_eq!(r.rules.len(), 1);
}

#[test]
fn broken_manifests_and_missing_paths() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("p");
    write(&root, ".claude-plugin/plugin.json", "{\"name\": \"p\",\n}");
    write(&root, "hooks/hooks.json", STOP_HOOK);
    let r = load(&[&root]);
    assert!(r.rules.is_empty());
    assert_eq!(
        r.diagnostics[0].message,
        "invalid JSON in plugin manifest: trailing comma"
    );
    assert_eq!(
        (r.diagnostics[0].line, r.diagnostics[0].column),
        (Some(2), Some(1))
    );
    assert!(r.has_errors());

    let missing = t.path().join("nope");
    let r = load(&[&missing]);
    assert_eq!(only_diag(&r).message, "no such file or directory");
    assert!(load_plugin(t.path(), &LoadOptions::default()).has_errors());
}
