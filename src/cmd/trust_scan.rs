//! `hookbox trust scan`: the hooks in the agent configuration files a user has, with their
//! approval state — so a hook someone else added (a worm's `SessionStart` in
//! `~/.claude/settings.json`, a checkout's `.claude/settings.local.json`) stands out.
//!
//! Files looked at: Claude Code's user, project and local settings and its installed plugins
//! (`~/.claude/plugins/installed_plugins.json`), Codex's `hooks.json` (user and project; hooks
//! written inline in `config.toml` are named, not read), Gemini CLI's `settings.json` (user and
//! project). Gemini CLI's hooks are read here for review and approval only (its event names
//! mapped to Claude Code's, timeouts from milliseconds, a hook's `env` as an `env` prefix of its
//! command); hookbox does not run that format.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use hookbox_core::Dialect;
use hookbox_core::agent::Agent;
use hookbox_core::config::{DEFAULT_MAX_FILE_BYTES, ForeignFormat, LoadReport, parse_hooks_str};
use hookbox_core::diagnostic::Severity;
use hookbox_core::files::read_file_beneath;
use hookbox_host::trust::SubjectReport;
use hookbox_trust::RuleTrust;
use owo_colors::OwoColorize;
use serde_json::{Map, Value, json};

use super::EXIT_FAILURE;
// Everything a plugin wrote is shown with its control and format characters (bidi, zero-width)
// escaped, never removed or passed through: a reviewer approves what they read.
use crate::cli::TrustScanArgs;
use hookbox_trust::escape_shown as untrusted;

/// One configuration file (or plugin folder) an agent reads hooks from.
struct Place {
    agent: &'static str,
    scope: &'static str,
    path: PathBuf,
}

fn places(home: Option<&Path>, project: &Path) -> Vec<Place> {
    let mut out = Vec::new();
    let mut add = |agent, scope, path: PathBuf| out.push(Place { agent, scope, path });
    if let Some(h) = home {
        add("Claude Code", "user", h.join(".claude/settings.json"));
    }
    add(
        "Claude Code",
        "project",
        project.join(".claude/settings.json"),
    );
    add(
        "Claude Code",
        "local",
        project.join(".claude/settings.local.json"),
    );
    if let Some(h) = home {
        for p in installed_plugins(h) {
            add("Claude Code", "plugin", p);
        }
        add("Codex", "user", h.join(".codex/hooks.json"));
    }
    add("Codex", "project", project.join(".codex/hooks.json"));
    if let Some(h) = home {
        add("Gemini CLI", "user", h.join(".gemini/settings.json"));
    }
    add(
        "Gemini CLI",
        "project",
        project.join(".gemini/settings.json"),
    );
    out
}

/// Every `installPath` in `~/.claude/plugins/installed_plugins.json` that is a folder.
fn installed_plugins(home: &Path) -> Vec<PathBuf> {
    let dir = home.join(".claude/plugins");
    let Ok(text) = read_file_beneath(
        &dir,
        Path::new("installed_plugins.json"),
        DEFAULT_MAX_FILE_BYTES,
    ) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    collect_install_paths(&v, &mut out);
    out.sort();
    out.dedup();
    out.retain(|p| p.is_dir());
    out
}

fn collect_install_paths(v: &Value, out: &mut Vec<PathBuf>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("installPath", Value::String(p)) => out.push(PathBuf::from(p)),
                    _ => collect_install_paths(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_install_paths(v, out)),
        _ => {}
    }
}

/// A single-quoted shell word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Gemini CLI's `hooks` object in Claude Code's shape (see the module's doc).
fn gemini_as_claude(hooks: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    for (event, groups) in hooks {
        let name = Agent::Gemini
            .events()
            .iter()
            .find(|(g, _)| g == event)
            .map_or(event.as_str(), |(_, c)| c.as_str());
        let Some(groups) = groups.as_array() else {
            out.insert(name.into(), groups.clone());
            continue;
        };
        let groups: Vec<Value> = groups
            .iter()
            .map(|g| {
                let mut g = g.clone();
                if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                    for h in hs {
                        convert_gemini_hook(h);
                    }
                }
                if let Some(m) = g.as_object_mut() {
                    m.remove("sequential");
                }
                g
            })
            .collect();
        out.insert(name.into(), Value::Array(groups));
    }
    json!({"hooks": out})
}

fn convert_gemini_hook(h: &mut Value) {
    let Some(m) = h.as_object_mut() else { return };
    if let Some(ms) = m.get("timeout").and_then(Value::as_f64) {
        m.insert("timeout".into(), json!(ms / 1000.0));
    }
    if let (Some(Value::Object(env)), Some(Value::String(cmd))) =
        (m.remove("env"), m.get("command"))
    {
        let vars: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{k}={}", sh_quote(v.as_str().unwrap_or(""))))
            .collect();
        let cmd = format!("env {} {cmd}", vars.join(" "));
        m.insert("command".into(), json!(cmd));
    }
    m.remove("name");
    m.remove("description");
}

/// Reads the Gemini CLI files the loader named as foreign into `report` (for review and
/// approval; hookbox does not run them).
pub(crate) fn read_gemini(report: &mut LoadReport, max_bytes: u64) {
    let files: Vec<PathBuf> = report
        .foreign
        .iter()
        .filter(|f| f.format == ForeignFormat::Gemini)
        .map(|f| f.path.clone())
        .collect();
    for path in files {
        let (dir, name) = match (path.parent(), path.file_name()) {
            (Some(d), Some(n)) => (d, Path::new(n)),
            _ => continue,
        };
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let Ok(text) = read_file_beneath(dir, name, max_bytes) else {
            continue;
        };
        let Some(hooks) = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("hooks").and_then(Value::as_object).cloned())
        else {
            continue;
        };
        let converted = gemini_as_claude(&hooks).to_string();
        let sub = parse_hooks_str(&converted, &path, Dialect::Claude);
        report.foreign.retain(|f| f.path != path);
        report
            .diagnostics
            .retain(|d| !(d.file == path && d.severity == Severity::Warning));
        let offset = report.plugins.len();
        for d in sub.diagnostics {
            report.diagnostics.push(d);
        }
        report.plugins.extend(sub.plugins);
        for mut r in sub.rules {
            r.plugin += offset;
            r.index = report.rules.len();
            if let Some((g, c)) = Agent::Gemini.events().iter().find(|(_, c)| *c == r.event) {
                let prefix = format!("hooks.{c}[");
                if let Some(rest) = r.source.json_path.strip_prefix(&prefix) {
                    r.source.json_path = format!("hooks.{g}[{rest}");
                }
            }
            report.rules.push(r);
        }
    }
}

/// Where a found file stands.
fn summary_line(sub: &SubjectReport) -> (usize, usize) {
    let approved = sub
        .rules
        .iter()
        .filter(|r| r.trust.is_approved() && r.unpinnable.is_none())
        .count();
    (approved, sub.rules.len())
}

fn state(t: &RuleTrust) -> String {
    match t {
        RuleTrust::Approved => "approved    ".green().to_string(),
        RuleTrust::Unapproved => "NOT APPROVED".red().bold().to_string(),
        RuleTrust::New => "NEW         ".red().bold().to_string(),
        RuleTrust::Changed { .. } => "CHANGED     ".red().bold().to_string(),
        RuleTrust::Missing { .. } => "MISSING     ".red().bold().to_string(),
    }
}

/// Runs `hookbox trust scan`.
pub(crate) fn run(args: &TrustScanArgs) -> anyhow::Result<ExitCode> {
    let project = match &args.project_dir {
        Some(p) => p.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let all = places(home.as_deref(), &project);
    let found: Vec<&Place> = all.iter().filter(|p| p.path.exists()).collect();
    let paths: Vec<PathBuf> = found.iter().map(|p| p.path.clone()).collect();
    let (report, subjects) = if paths.is_empty() {
        (LoadReport::default(), Vec::new())
    } else {
        super::trust::survey(&paths, &project, None)?
    };
    let inline_toml: Vec<PathBuf> = home
        .iter()
        .map(|h| h.join(".codex/config.toml"))
        .chain([project.join(".codex/config.toml")])
        .filter(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| {
                t.lines().any(|l| {
                    l.trim_start().starts_with("[hooks") || l.trim_start().starts_with("[[hooks")
                })
            })
        })
        .collect();
    let mut text = String::new();
    let mut json_files = Vec::new();
    let (mut approved, mut total) = (0, 0);
    for place in &found {
        let real = place
            .path
            .canonicalize()
            .unwrap_or_else(|_| place.path.clone());
        let mine: Vec<&SubjectReport> = subjects
            .iter()
            .filter(|s| Path::new(&s.subject).starts_with(&real))
            .collect();
        text.push_str(&format!(
            "{} · {}  {}\n",
            place.agent.bold(),
            place.scope,
            untrusted(&place.path.display().to_string())
        ));
        if mine.iter().all(|s| s.rules.is_empty()) {
            text.push_str("  (no hooks)\n");
        }
        for s in &mine {
            let (a, t) = summary_line(s);
            approved += a;
            total += t;
            for r in &s.rules {
                text.push_str(&format!(
                    "  {}  {} · {} · {}\n",
                    state(&r.trust),
                    r.record.event(),
                    untrusted(&r.record.location.json_path),
                    untrusted(&r.record.label.chars().take(100).collect::<String>())
                ));
            }
        }
        json_files.push(json!({
            "agent": place.agent,
            "scope": place.scope,
            "path": place.path,
            "subjects": mine,
        }));
    }
    for p in &inline_toml {
        text.push_str(&format!(
            "{} · {}  {}\n  {} hooks written inline in config.toml are not read by hookbox: review them by hand\n",
            "Codex".bold(),
            "config",
            untrusted(&p.display().to_string()),
            "not read".yellow()
        ));
    }
    for d in report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
    {
        text.push_str(&format!(
            "{} {}: {}\n",
            "error".red().bold(),
            untrusted(&d.file.display().to_string()),
            untrusted(&d.message)
        ));
    }
    let unapproved = total - approved;
    if found.is_empty() {
        text.push_str("no agent configuration file with hooks found\n");
    } else {
        text.push_str(&format!(
            "\n{total} hook{} in {} file{}: {approved} approved, {}\n",
            if total == 1 { "" } else { "s" },
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if unapproved == 0 {
                "none to review".green().to_string()
            } else {
                format!("{unapproved} to review").red().bold().to_string()
            }
        ));
        if unapproved > 0 {
            text.push_str("review with `hookbox trust show PATH` or `hookbox trust diff PATH`, approve with `hookbox trust add PATH`\n");
        }
    }
    let errors = report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    if args.json {
        let v = json!({
            "files": json_files,
            "not_read": inline_toml,
            "hooks": total,
            "approved": approved,
            "diagnostics": report.diagnostics,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).context("cannot encode JSON")?
        );
    } else {
        super::trust::print(&text)?;
    }
    Ok(if unapproved > 0 || errors || !inline_toml.is_empty() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_hooks_are_read_in_claude_codes_shape() {
        let hooks = json!({
            "BeforeTool": [{"matcher": "run_shell_command", "sequential": true, "hooks": [
                {"type": "command", "name": "guard", "command": "$GEMINI_PROJECT_DIR/guard.sh", "timeout": 5000, "env": {"MODE": "it's strict"}}
            ]}],
            "BeforeModel": [{"hooks": [{"type": "command", "command": "x"}]}],
        });
        let v = gemini_as_claude(hooks.as_object().unwrap());
        let h = &v["hooks"]["PreToolUse"][0]["hooks"][0];
        assert_eq!(h["timeout"], json!(5.0));
        assert_eq!(
            h["command"],
            json!("env MODE='it'\\''s strict' $GEMINI_PROJECT_DIR/guard.sh")
        );
        assert!(h.get("name").is_none() && v["hooks"]["PreToolUse"][0].get("sequential").is_none());
        // Events without a Claude Code name keep theirs (and the loader says it skips them).
        assert!(v["hooks"]["BeforeModel"].is_array());
    }

    #[test]
    fn install_paths_are_found_at_any_depth() {
        let v = json!({"version": 2, "plugins": {"a@m": [{"installPath": "/x/a"}], "b@m": {"installPath": "/x/b"}}});
        let mut out = Vec::new();
        collect_install_paths(&v, &mut out);
        out.sort();
        assert_eq!(out, [PathBuf::from("/x/a"), PathBuf::from("/x/b")]);
    }
}
