//! `hookbox trust add|list|show|diff|remove|scan`: approvals pinned to content (SPEC §11).
//!
//! Every subcommand that looks at hooks loads them into a real host with trust on, so what it
//! shows — each rule's content and grants, the digests of the files it runs, what it runs
//! unpinned — is computed by the very code that enforces approvals at dispatch. Approvals are
//! written to the user's approval store (`<state root>/trust`), never inside a project.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use hookbox_core::config::{LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Severity;
use hookbox_host::trust::{Snapshot, SnapshotError, SnapshotLimits, SubjectReport, TrustPolicy};
use hookbox_host::{ApprovalStore, HostPolicy};
use hookbox_trust::Approval;
use serde_json::{Value, json};

use super::trust_files_diff::write_file_diffs;
use super::trust_show::{date, now, write_diff, write_subject};
// Plugin-written text on the approval screens: controls and format characters escaped.
use super::validate::write_diagnostic;
use super::{EXIT_FAILURE, EXIT_USAGE};
use crate::cli::{
    TrustAddArgs, TrustArgs, TrustCommand, TrustCommon, TrustListArgs, TrustPathArgs,
    TrustRemoveArgs,
};
use crate::host_setup::{HostSetup, default_trust_store, user_settings};
use hookbox_trust::escape_shown as untrusted;

/// Runs `hookbox trust …`.
pub(crate) fn run(args: &TrustArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        TrustCommand::Add(a) => add(a),
        TrustCommand::List(a) => list(a),
        TrustCommand::Show(a) => show(a),
        TrustCommand::Diff(a) => diff(a),
        TrustCommand::Remove(a) => remove(a),
        TrustCommand::Scan(a) => super::trust_scan::run(a),
    }
}

fn project_of(common: &TrustCommon) -> anyhow::Result<PathBuf> {
    match &common.project_dir {
        Some(p) => Ok(p.clone()),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

/// The user's approval store folder; an error when there is no state folder at all.
fn store_dir() -> anyhow::Result<PathBuf> {
    default_trust_store()
        .context("no state folder for approvals: set HOOKBOX_STATE_DIR, XDG_STATE_HOME or HOME")
}

/// Loads `paths` with trust on and returns the load report and every subject.
pub(crate) fn survey(
    paths: &[PathBuf],
    project: &Path,
    common_dialect: Option<crate::cli::DialectArg>,
) -> anyhow::Result<(LoadReport, Vec<SubjectReport>)> {
    for p in paths {
        if !p.try_exists().unwrap_or(true) {
            bail!("cannot load {}: no such file or directory", p.display());
        }
    }
    let setup = HostSetup::for_trust(project)?;
    let opts = LoadOptions::default().with_dialect(common_dialect.map(Into::into));
    // Loaded as `HookHost::load` does, with Gemini CLI files read too (for review only).
    let mut report = load_paths(paths, &opts);
    super::trust_scan::read_gemini(&mut report, opts.max_file_bytes);
    let (rules, refused) = setup
        .host
        .install(report.plugins.clone(), std::mem::take(&mut report.rules));
    report.rules = rules;
    report.diagnostics.extend(refused);
    Ok((report, setup.host.trust_report()))
}

fn print_diagnostics(report: &LoadReport) {
    if report.diagnostics.is_empty() {
        return;
    }
    let mut s = String::new();
    for d in &report.diagnostics {
        write_diagnostic(&mut s, d);
    }
    eprint!("{}", anstream::adapter::strip_str(&s));
}

/// Prints our text on stdout, colours stripped when stdout is not a terminal (or `NO_COLOR`).
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")
}

fn print_json(v: &Value) -> anyhow::Result<()> {
    print(&(serde_json::to_string_pretty(v).context("cannot encode JSON")? + "\n"))
}

/// Asks on the terminal; `false` unless the answer starts with `y`.
fn confirm(question: &str) -> anyhow::Result<bool> {
    eprint!("{question} [y/N] ");
    std::io::stderr().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the answer")?;
    Ok(line.trim_start().to_ascii_lowercase().starts_with('y'))
}

fn add(args: &TrustAddArgs) -> anyhow::Result<ExitCode> {
    // Refuse before loading anything: a script must say --yes, never answer a prompt by
    // accident (a pipe, /dev/null, an agent driving the terminal's stdin).
    if !args.yes && !std::io::stdin().is_terminal() {
        eprintln!(
            "hookbox: error: refusing to ask for approval: stdin is not a terminal; review with `hookbox trust show PATH`, then pass --yes to approve without asking"
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let project = project_of(&args.common)?;
    let (report, subjects) = survey(&args.paths, &project, args.common.dialect)?;
    print_diagnostics(&report);
    if report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        eprintln!(
            "hookbox: nothing approved: fix the errors above first (`hookbox validate PATH` lists them); a rule that does not load cannot be reviewed"
        );
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    if subjects.is_empty() {
        bail!("no plugin or hooks file found to approve");
    }
    let dir = store_dir()?;
    HostPolicy::for_project(&project)
        .check_trust_store_outside(&dir)
        .context("cannot keep approvals there")?;
    let limits = snapshot_limits()?;
    let mut results = Vec::new();
    let mut declined = false;
    let mut store: Option<ApprovalStore> = None;
    for sub in &subjects {
        if sub.is_approved()
            && sub.approval_error.is_none()
            && snapshot_is_current(sub, &dir, &project, &limits)
        {
            if !args.common.json {
                eprintln!(
                    "{} ({}) is already approved as it is",
                    untrusted(&sub.plugin),
                    untrusted(&sub.subject)
                );
            }
            results.push((sub, "already_approved", None));
            continue;
        }
        let mut text = String::new();
        write_subject(&mut text, sub);
        // What will be approved goes to stderr when the answer is JSON, so stdout stays JSON.
        if args.common.json {
            eprint!("{}", anstream::adapter::strip_str(&text));
        } else {
            print(&text)?;
        }
        let n = sub.rules.len();
        let question = format!(
            "Approve {n} rule{} of {} as shown?",
            if n == 1 { "" } else { "s" },
            untrusted(&sub.plugin)
        );
        if !args.yes && !confirm(&question)? {
            declined = true;
            results.push((sub, "declined", None));
            continue;
        }
        if store.is_none() {
            store = Some(ApprovalStore::create(&dir)?);
        }
        let Some(s) = &store else { continue };
        // A plugin's approval is a snapshot of its folder, a bare hooks or settings file's one
        // of the project hook folders its commands run (`.claude/hooks/`): what its hooks run
        // from under `require`.
        let approval = take_snapshot(s, sub, &project, sub.to_approval(now()), &limits)
            .with_context(|| {
                format!(
                    "nothing approved: cannot snapshot {}",
                    untrusted(&sub.subject)
                )
            })?
            .map_or_else(|| sub.to_approval(now()), |(a, _)| a);
        let file = s.put(&approval)?;
        s.collect_snapshots()
            .context("approved, but the snapshots no approval keeps could not be removed")?;
        if !args.common.json {
            println!(
                "approved {} ({n} rule{}) — {}",
                untrusted(&sub.plugin),
                if n == 1 { "" } else { "s" },
                file.display()
            );
            if let Some(r) = approval.snapshot {
                println!(
                    "  its hooks run from snapshot {} ({} files, {} bytes) under trust = require",
                    &r.id.to_string()[..16],
                    r.files,
                    r.bytes
                );
            }
        }
        results.push((sub, "approved", Some(file)));
    }
    if args.common.json {
        let subjects: Vec<Value> = results
            .iter()
            .map(|(sub, result, file)| {
                let mut v = serde_json::to_value(sub).unwrap_or(Value::Null);
                v["result"] = json!(result);
                if let Some(f) = file {
                    v["record"] = json!(f);
                }
                v
            })
            .collect();
        print_json(&json!({"subjects": subjects}))?;
    }
    Ok(if declined {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn show(args: &TrustPathArgs) -> anyhow::Result<ExitCode> {
    let project = project_of(&args.common)?;
    let (report, subjects) = survey(&args.paths, &project, args.common.dialect)?;
    print_diagnostics(&report);
    if args.common.json {
        print_json(&json!({"subjects": subjects}))?;
    } else {
        let mut s = String::new();
        for (i, sub) in subjects.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            write_subject(&mut s, sub);
        }
        print(&s)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn diff(args: &TrustPathArgs) -> anyhow::Result<ExitCode> {
    let project = project_of(&args.common)?;
    let (report, subjects) = survey(&args.paths, &project, args.common.dialect)?;
    print_diagnostics(&report);
    let store = store_dir()?;
    let mut differs = false;
    let mut text = String::new();
    let mut out = Vec::new();
    for sub in &subjects {
        let d = sub.diff();
        let approved =
            d.as_ref().is_some_and(|d| !d.rules_changed()) && sub.approval_error.is_none();
        differs |= !approved;
        let mut files_differ = false;
        match &d {
            Some(d) => {
                write_diff(&mut text, sub, d);
                // What changed in the files themselves, from the snapshot approved.
                files_differ = write_file_diffs(&mut text, sub, &store, &project);
                differs |= files_differ;
            }
            None => {
                use owo_colors::OwoColorize as _;
                let why = sub
                    .approval_error
                    .as_deref()
                    .map(|e| format!(" (its record is unusable: {e})"))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "{} {} — {}{why}: {} rule{} to review with `hookbox trust add {}`\n",
                    untrusted(&sub.plugin).bold(),
                    untrusted(&sub.subject),
                    "not approved".yellow(),
                    sub.rules.len(),
                    if sub.rules.len() == 1 { "" } else { "s" },
                    untrusted(&sub.subject),
                ));
            }
        }
        out.push(json!({
            "subject": sub.subject,
            "plugin": sub.plugin,
            "approved_at": sub.approval.as_ref().map(|a| a.approved_at),
            "approved": approved,
            "files_differ": files_differ,
            "diff": d,
        }));
    }
    if args.common.json {
        print_json(&json!({"subjects": out}))?;
    } else {
        print(&text)?;
    }
    Ok(if differs {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn list(args: &TrustListArgs) -> anyhow::Result<ExitCode> {
    let dir = store_dir()?;
    let records = match ApprovalStore::open(&dir)? {
        Some(store) => store.list()?,
        None => Vec::new(),
    };
    let mut bad = false;
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for r in records {
        match r {
            Ok(a) => rows.push(a),
            Err(e) => {
                bad = true;
                errors.push(e.to_string());
            }
        }
    }
    if args.json {
        let approvals: Vec<Value> = rows
            .iter()
            .map(|a| {
                json!({
                    "subject": a.subject,
                    "plugin": a.plugin,
                    "approved_at": a.approved_at,
                    "rules": a.rules.len(),
                    "exists": Path::new(&a.subject).exists(),
                })
            })
            .collect();
        print_json(&json!({"store": dir, "approvals": approvals, "errors": errors}))?;
    } else {
        let mut s = String::new();
        if rows.is_empty() && errors.is_empty() {
            s.push_str(&format!("no approvals in {}\n", dir.display()));
        }
        for a in &rows {
            let gone = if Path::new(&a.subject).exists() {
                ""
            } else {
                " (no longer there)"
            };
            s.push_str(&format!(
                "{}  {} — {} rule{}, approved {}{gone}\n",
                untrusted(&a.plugin),
                untrusted(&a.subject),
                a.rules.len(),
                if a.rules.len() == 1 { "" } else { "s" },
                date(a.approved_at)
            ));
        }
        print(&s)?;
        for e in &errors {
            eprintln!("hookbox: {e}");
        }
    }
    Ok(if bad {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// `p` as a subject is named: canonical when it exists, else absolute with `.`/`..` resolved.
fn subject_path(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The snapshot `approval` of `sub` keeps: of a plugin's folder, or of the project hook
/// folders a bare hooks or settings file's commands run (`None` when they run none).
fn take_snapshot(
    store: &ApprovalStore,
    sub: &SubjectReport,
    project: &Path,
    approval: Approval,
    limits: &SnapshotLimits,
) -> Result<Option<(Approval, Snapshot)>, SnapshotError> {
    if sub.bare {
        let project = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_owned());
        store.snapshot_project_hooks(approval, &project, limits)
    } else {
        store
            .snapshot_plugin(approval, Path::new(&sub.subject), limits)
            .map(Some)
    }
}

/// Whether an approved subject's files are still what its approval's snapshot holds (a bare
/// file whose commands run no project file has none to compare). A library, module or data
/// file edited since is a change to approve again, though no rule changed: under `require`
/// the hooks run the snapshot.
fn snapshot_is_current(
    sub: &SubjectReport,
    dir: &Path,
    project: &Path,
    limits: &SnapshotLimits,
) -> bool {
    let approved = sub.approval.as_ref().and_then(|a| a.snapshot);
    let Ok(Some(store)) = ApprovalStore::open(dir) else {
        return approved.is_none() && sub.bare;
    };
    let now = take_snapshot(&store, sub, project, sub.to_approval(0), limits);
    let current = match (&now, approved) {
        (Ok(None), None) => true,
        (Ok(Some((a, _))), Some(approved)) => a.snapshot.map(|r| r.id) == Some(approved.id),
        _ => false,
    };
    if !current && approved.is_some() {
        eprintln!(
            "{}: files of its folder changed since the snapshot it was approved with{}",
            untrusted(&sub.subject),
            now.err().map(|e| format!(" ({e})")).unwrap_or_default()
        );
    }
    current
}

/// What one approval may copy into the store: the defaults, or the limits of the user's
/// `"trust"` settings table (`trust.max_snapshot_files`, `trust.max_snapshot_bytes`,
/// `trust.max_pinned_file_bytes`).
fn snapshot_limits() -> anyhow::Result<SnapshotLimits> {
    let mut policy = TrustPolicy::default();
    user_settings()?.trust_limits.apply(&mut policy);
    Ok(policy.snapshot_limits())
}

fn remove(args: &TrustRemoveArgs) -> anyhow::Result<ExitCode> {
    let dir = store_dir()?;
    let Some(store) = ApprovalStore::open(&dir)? else {
        if !args.json {
            eprintln!(
                "hookbox: nothing is approved yet ({} does not exist)",
                dir.display()
            );
        } else {
            print_json(&json!({"removed": []}))?;
        }
        return Ok(ExitCode::from(EXIT_FAILURE));
    };
    let targets: Vec<PathBuf> = args.paths.iter().map(|p| subject_path(p)).collect();
    let mut removed = Vec::new();
    for a in store.list()?.into_iter().flatten() {
        let s = Path::new(&a.subject);
        if targets.iter().any(|t| s == t || s.starts_with(t)) && store.remove(&a.subject)? {
            removed.push(a.subject);
        }
    }
    if !removed.is_empty() {
        store
            .collect_snapshots()
            .context("removed, but the snapshots no approval keeps could not be removed")?;
    }
    if args.json {
        print_json(&json!({"removed": removed}))?;
    } else if removed.is_empty() {
        eprintln!(
            "hookbox: no approval found for {}",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    } else {
        for r in &removed {
            println!("removed the approval of {}", untrusted(r));
        }
    }
    Ok(if removed.is_empty() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
