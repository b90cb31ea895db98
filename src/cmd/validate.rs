//! `hookbox validate PATH…`: load plugins and hook files into a host as `dispatch` would
//! (components read and checked, limits and mounts resolved against the policy), then print
//! every diagnostic with its location (`path:line:col: warning: …` and a fix line), a summary
//! per plugin and file, and totals; or, with `--json`, one machine-readable report.
//! Exit code 1 when any diagnostic is an error (with `--strict`, any warning too: each is
//! reported as an error), 0 otherwise; a PATH that does not exist is a usage error (exit 2),
//! since nothing could be validated.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use hookbox_core::config::{FileStatus, FileSummary, LoadOptions, LoadReport};
use hookbox_core::diagnostic::{Diagnostic, Severity};
use hookbox_core::rule::{PluginInfo, Rule};
use owo_colors::OwoColorize;
use serde_json::{Value, json};

use super::EXIT_FAILURE;
use crate::cli::ValidateArgs;
use crate::host_setup::HostSetup;

/// Runs `hookbox validate`.
pub(crate) fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    for p in &args.paths {
        // A typo in a path is the caller's mistake, not a finding about hook files.
        if !p.try_exists().unwrap_or(true) {
            bail!("cannot validate {}: no such file or directory", p.display());
        }
    }
    let opts = LoadOptions::default().with_dialect(args.dialect.map(Into::into));
    // Loaded into a real host (with a throwaway state folder), so the report also has what
    // loading would refuse: components that are missing, not files or incompatible, limits and
    // mounts beyond the policy, handler types the policy forbids.
    let project = std::env::current_dir().context("cannot read the current directory")?;
    let setup = HostSetup::ephemeral(&project)?;
    let mut report = setup.host.load(&args.paths, &opts);
    if args.strict {
        // CI's reading: an unknown key or a matcher that matches nothing fails the build.
        for d in &mut report.diagnostics {
            if d.severity == Severity::Warning {
                d.severity = Severity::Error;
                d.message.push_str(" [an error under --strict]");
            }
        }
    }
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&json_report(&report))
            .context("cannot encode the report")?;
        s.push('\n');
        s
    } else {
        human_report(&report)
    };
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")?;
    Ok(if report.has_errors() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One diagnostic as compilers print them, with the severity coloured (stripped when stdout is
/// not a terminal).
pub(crate) fn write_diagnostic(s: &mut String, d: &Diagnostic) {
    let mut loc = d.file.display().to_string();
    if let Some(l) = d.line {
        let _ = write!(loc, ":{l}");
        if let Some(c) = d.column {
            let _ = write!(loc, ":{c}");
        }
    }
    let sev = match d.severity {
        Severity::Warning => "warning".yellow().bold().to_string(),
        Severity::Error => "error".red().bold().to_string(),
    };
    let _ = write!(s, "{}: {sev}: {}", loc.bold(), d.message);
    if let Some(p) = &d.json_path {
        let _ = write!(s, " (at {p})");
    }
    s.push('\n');
    if let Some(fix) = &d.fix {
        let _ = writeln!(s, "  {}: {fix}", "fix".cyan());
    }
}

/// `3 rules (PreToolUse 2, Stop 1), 1 skipped` and the like.
fn file_status(report: &LoadReport, f: &FileSummary) -> String {
    let skipped = if f.skipped > 0 {
        format!(", {} skipped", f.skipped)
    } else {
        String::new()
    };
    match f.status {
        FileStatus::Loaded => {
            let mut per_event: Vec<(&str, usize)> = Vec::new();
            for r in report
                .rules
                .iter()
                .filter(|r| f.plugin == Some(r.plugin) && r.source.file == f.path)
            {
                match per_event.iter_mut().find(|(e, _)| *e == r.event.as_str()) {
                    Some((_, n)) => *n += 1,
                    None => per_event.push((r.event.as_str(), 1)),
                }
            }
            let events: Vec<String> = per_event.iter().map(|(e, n)| format!("{e} {n}")).collect();
            let detail = if events.is_empty() {
                String::new()
            } else {
                format!(" ({})", events.join(", "))
            };
            format!("{}{detail}{skipped}", plural(f.rules, "rule", "rules"))
        }
        FileStatus::Disabled => "disabled (disableAllHooks): nothing loaded".to_owned(),
        FileStatus::Failed => "not loaded (see the error above)".to_owned(),
        FileStatus::Rejected => {
            format!(
                "not loaded: the plugin was not registered (ghast: invalid config fails the whole plugin){skipped}"
            )
        }
        FileStatus::Foreign { format } => format!("not loaded: this is {}", format.describe()),
    }
}

fn shown_in(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

fn is_bare_file(p: &PluginInfo) -> bool {
    p.files.len() == 1 && p.files[0] == Path::new(&p.name)
}

/// The text report: diagnostics, then per plugin and file, then totals.
pub(crate) fn human_report(report: &LoadReport) -> String {
    let mut s = String::new();
    for d in &report.diagnostics {
        write_diagnostic(&mut s, d);
    }
    if !report.diagnostics.is_empty() {
        s.push('\n');
    }
    for (i, p) in report.plugins.iter().enumerate() {
        let files: Vec<&FileSummary> = report
            .files
            .iter()
            .filter(|f| f.plugin == Some(i))
            .collect();
        if is_bare_file(p)
            && let [f] = files.as_slice()
        {
            let _ = writeln!(
                s,
                "{} ({}): {}",
                f.path.display().bold(),
                p.dialect,
                file_status(report, f)
            );
            continue;
        }
        let _ = writeln!(
            s,
            "plugin {} ({}) at {}",
            p.name.bold(),
            p.dialect,
            p.root.display()
        );
        if files.is_empty() {
            let _ = writeln!(s, "  no hook files loaded");
        }
        for f in files {
            let _ = writeln!(
                s,
                "  {}: {}",
                shown_in(&p.root, &f.path),
                file_status(report, f)
            );
        }
    }
    for f in report.files.iter().filter(|f| f.plugin.is_none()) {
        let _ = writeln!(s, "{}: {}", f.path.display().bold(), file_status(report, f));
    }
    let errors = report.with_severity(Severity::Error).count();
    let warnings = report.with_severity(Severity::Warning).count();
    let _ = write!(
        s,
        "{} loaded from {}; {}, {}",
        plural(report.rules.len(), "rule", "rules"),
        plural(report.plugins.len(), "plugin or file", "plugins and files"),
        plural(warnings, "warning", "warnings"),
        plural(errors, "error", "errors"),
    );
    if !report.foreign.is_empty() {
        let _ = write!(
            s,
            "; {} in another agent's format, not loaded",
            plural(report.foreign.len(), "file", "files")
        );
    }
    s.push('\n');
    s
}

fn rule_json(r: &Rule) -> Value {
    json!({
        "index": r.index,
        "event": r.event,
        "type": r.handler.handler_type(),
        "matcher": r.matcher.describe(),
        "if": r.if_condition,
        "label": r.handler.label(),
        "handler": r.handler,
        "dialect": r.dialect,
        "on_failure": r.on_failure,
        "status_message": r.status_message,
        "plugin": r.plugin,
        "source": r.source,
    })
}

/// The `--json` report.
pub(crate) fn json_report(report: &LoadReport) -> Value {
    let foreign: Vec<Value> = report
        .foreign
        .iter()
        .map(|f| json!({"path": f.path, "format": f.format.as_str(), "description": f.format.describe()}))
        .collect();
    json!({
        "ok": !report.has_errors(),
        "summary": {
            "plugins": report.plugins.len(),
            "rules": report.rules.len(),
            "warnings": report.with_severity(Severity::Warning).count(),
            "errors": report.with_severity(Severity::Error).count(),
            "foreign": report.foreign.len(),
        },
        "plugins": report.plugins,
        "files": report.files,
        "rules": report.rules.iter().map(rule_json).collect::<Vec<_>>(),
        "diagnostics": report.diagnostics,
        "foreign": foreign,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use hookbox_core::Dialect;
    use hookbox_core::config::parse_hooks_str;

    use super::*;

    const TEXT: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "guard.sh"}]},
                 {"type": "command", "command": "audit.sh", "matcher": {"tool_name": "^Bash$"}}],
  "Stop": [{"hooks": [{"type": "prompt", "prompt": "no"}, {"type": "command", "command": "s.sh"}]}]
}}"#;

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn human_report_locates_and_summarises() {
        let report = parse_hooks_str(TEXT, Path::new("hooks.json"), Dialect::Claude);
        let out = plain(&human_report(&report));
        assert_eq!(
            out,
            "hooks.json:4:23: warning: Hook type 'prompt' is not supported for event 'Stop' — skipped. (Allowed for this event: ['command', 'wasm']) (at hooks.Stop[0].hooks[0])\n  \
             fix: prompt hooks run only on 'UserPromptSubmit'; use a command hook that prints the text\n\n\
             hooks.json (claude): 3 rules (PreToolUse 2, Stop 1), 1 skipped\n\
             3 rules loaded from 1 plugin or file; 1 warning, 0 errors\n"
        );
    }

    #[test]
    fn foreign_files_say_not_loaded() {
        let report = parse_hooks_str(
            r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "x"}]}}"#,
            Path::new(".cursor/hooks.json"),
            Dialect::Claude,
        );
        let out = plain(&human_report(&report));
        assert!(out.contains(".cursor/hooks.json: not loaded: this is a Cursor hooks file (.cursor/hooks.json, version 1)\n"), "{out}");
        assert!(
            out.ends_with("; 1 file in another agent's format, not loaded\n"),
            "{out}"
        );
    }

    #[test]
    fn json_report_shape() {
        let report = parse_hooks_str(TEXT, Path::new("hooks.json"), Dialect::Claude);
        let v = json_report(&report);
        assert_eq!(v["ok"], true);
        assert_eq!(
            v["summary"],
            json!({"plugins": 1, "rules": 3, "warnings": 1, "errors": 0, "foreign": 0})
        );
        assert_eq!(v["rules"][0]["event"], "PreToolUse");
        assert_eq!(v["rules"][0]["type"], "command");
        assert_eq!(
            v["rules"][0]["matcher"],
            json!({"kind": "names", "names": ["Bash", "Edit"]})
        );
        assert_eq!(
            v["rules"][1]["matcher"],
            json!({"kind": "object", "fields": {"tool_name": {"regex": "^Bash$"}}})
        );
        assert_eq!(v["rules"][2]["matcher"], json!({"kind": "all"}));
        // Claude Code's default command timeout (2.1.3+).
        assert_eq!(v["rules"][0]["handler"]["timeout_secs"], 600.0);
        assert_eq!(
            v["rules"][0]["source"]["json_path"],
            "hooks.PreToolUse[0].hooks[0]"
        );
        assert_eq!(v["rules"][0]["source"]["line"], 2);
        assert_eq!(v["diagnostics"][0]["severity"], "warning");
        assert_eq!(v["diagnostics"][0]["line"], 4);
        assert_eq!(v["files"][0]["status"], "loaded");
        assert_eq!(v["files"][0]["skipped"], 1);
        assert_eq!(v["plugins"][0]["dialect"], "claude");
    }
}
