//! `hookbox install --agent NAME --plugin DIR…` and `hookbox uninstall`: write (or clean) the
//! agent's own hook configuration so that every event the plugins use runs `hookbox hook`.
//!
//! The plugins are loaded first (a plugin that does not load is not installed), their events
//! mapped to the agent's (`hookbox_agents::install::events`), and one entry per agent
//! event is written with a timeout in the agent's unit: the longest timeout of the rules behind
//! it plus [`STARTUP_MARGIN_SECS`], so hookbox — and a rule that fails closed — answers before
//! the agent gives up. A tool event's entry carries a matcher only where the tools its rules
//! match can be listed exactly in the agent's words (`hookbox_agents::install::matcher`), else
//! none: hookbox matches again, so a wide entry costs a start-up and a narrow one is never
//! guessed. A project file names hookbox as `hookbox` when that is the one on PATH, and plugins
//! inside the project relative to it where the agent tells hooks its project folder, so the file
//! can be committed (`--absolute` for full paths). Installing again merges the plugin set;
//! uninstall removes exactly hookbox's entries (`hookbox_agents::install::command::is_ours`).

mod codex;
mod diff;
mod owned;
mod report;
pub(crate) mod write;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use hookbox_agents::Agent;
use hookbox_agents::install::command::{HookCommand, plugins_of, split};
use hookbox_agents::install::{self, Applied, Entry, Owned, kimi_toml, shape};
use hookbox_core::config::LoadOptions;
use hookbox_core::matcher::Matcher;
use hookbox_core::rule::{FailMode, Handler, Rule};
use hookbox_host::default_state_root;

use super::EXIT_FAILURE;
use super::term::untrusted;
use super::validate::write_diagnostic;
use crate::cli::{
    InstallArgs, ScopeArgs, TrustAddArgs, TrustArgs, TrustCommand, TrustCommon, UninstallArgs,
};
use crate::host_setup::HostSetup;

use self::report::{EntryReport, Out};

/// Seconds added to the rules' longest timeout for hookbox to start, load the plugins and
/// answer (a component not yet in the compile cache takes longer once: `hookbox compile`).
pub(crate) const STARTUP_MARGIN_SECS: f64 = 10.0;

/// The longest a hookbox hook runs: the CLI host's dispatch deadline (600 s).
const MAX_TIMEOUT_SECS: u64 = 600;

/// Where the configuration is, and what the entries' commands say about the project.
struct Target {
    agent: Agent,
    path: PathBuf,
    /// `--project-dir` for the commands (project files only).
    project: Option<PathBuf>,
    /// The folder the plugins are loaded against.
    load_root: PathBuf,
    /// Folders below this one, down to the file, must not be symlinks.
    check_root: Option<PathBuf>,
}

/// The agent's file for `scope` (relative to the project or the home folder).
fn agent_file(agent: Agent, user: bool) -> anyhow::Result<&'static str> {
    Ok(match (agent, user) {
        (Agent::Claude, _) => ".claude/settings.json",
        (Agent::Codex, _) => ".codex/hooks.json",
        (Agent::Gemini, _) => ".gemini/settings.json",
        (Agent::Cursor, _) => ".cursor/hooks.json",
        (Agent::Copilot | Agent::VsCode, false) => ".github/hooks/hookbox.json",
        (Agent::Copilot | Agent::VsCode, true) => ".copilot/hooks/hookbox.json",
        (Agent::Windsurf, false) => ".windsurf/hooks.json",
        (Agent::Windsurf, true) => ".codeium/windsurf/hooks.json",
        (Agent::Kimi, true) => ".kimi/config.toml",
        (Agent::Qwen, _) => ".qwen/settings.json",
        (Agent::Kimi, false) => bail!(
            "Kimi Code CLI has no project configuration, only ~/.kimi/config.toml: use --user"
        ),
    })
}

fn target(agent: Agent, scope: &ScopeArgs, project_dir: Option<&Path>) -> anyhow::Result<Target> {
    let project = match project_dir {
        Some(p) => p.to_owned(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let project = project
        .canonicalize()
        .with_context(|| format!("--project-dir {}: no such folder", project.display()))?;
    let user = scope.user || (agent == Agent::Kimi && !scope.project);
    let home = || {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("HOME is not set, so the user's configuration cannot be found")
    };
    let (path, base) = match &scope.config {
        Some(c) => (
            std::path::absolute(c).context("cannot resolve --config")?,
            None,
        ),
        None if user => {
            let home = home()?;
            // Codex and Copilot move their folders with CODEX_HOME and COPILOT_HOME.
            let path = match (
                agent,
                std::env::var_os("CODEX_HOME"),
                std::env::var_os("COPILOT_HOME"),
            ) {
                (Agent::Codex, Some(h), _) if !h.is_empty() => PathBuf::from(h).join("hooks.json"),
                (Agent::Copilot | Agent::VsCode, _, Some(h)) if !h.is_empty() => {
                    PathBuf::from(h).join("hooks/hookbox.json")
                }
                _ => home.join(agent_file(agent, true)?),
            };
            (path, Some(home))
        }
        None => (
            project.join(agent_file(agent, false)?),
            Some(project.clone()),
        ),
    };
    let check_root = base
        .or_else(|| Some(project.clone()))
        .filter(|b| path.starts_with(b));
    Ok(Target {
        agent,
        path,
        project: (!user).then(|| project.clone()),
        load_root: project,
        check_root,
    })
}

/// The commands of hookbox's entries in the file.
fn existing(t: &Target, text: &str) -> anyhow::Result<Vec<String>> {
    let file = t.path.display().to_string();
    match t.agent {
        Agent::Kimi => kimi_toml::existing(text, &file),
        a => shape::existing(a, text, &file),
    }
    .map_err(anyhow::Error::from)
}

/// The file's text with exactly `wanted` as hookbox's entries, what hookbox now owns in it, and
/// whether nothing is left in a file hookbox created.
fn apply(t: &Target, text: &str, wanted: &[Entry], owned: &Owned) -> anyhow::Result<Applied> {
    let file = t.path.display().to_string();
    match t.agent {
        Agent::Kimi => kimi_toml::apply(text, wanted, &file, owned),
        a => shape::apply(a, text, wanted, &file, owned),
    }
    .map_err(anyhow::Error::from)
}

/// The plugins of the existing entries, in order, once each; a relative one (a plugin in the
/// project) by its full path.
fn plugin_set(t: &Target, commands: &[String]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for c in commands {
        for p in plugins_of(c) {
            let p = if p == Path::new(".") {
                t.load_root.clone()
            } else if p.is_relative() {
                t.load_root.join(p)
            } else {
                p
            };
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// A rule's own time budget, in seconds.
fn rule_timeout(rule: &Rule) -> f64 {
    match &rule.handler {
        Handler::Command(c) => c.timeout_secs,
        Handler::Http(h) => h.timeout_secs,
        Handler::Wasm(w) => w
            .timeout_secs
            .unwrap_or(hookbox_wasm::WasmLimits::DEFAULT_TIMEOUT.as_secs_f64()),
        Handler::Prompt { .. } => 0.0,
    }
}

/// The first `name` on `PATH`, resolved (what an agent's `sh -c "name …"` runs, given the same
/// PATH).
fn first_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .and_then(|p| p.canonicalize().ok())
}

/// The entries to write, and the notes on what could not be installed.
type Planned = (Vec<Entry>, Vec<String>);

/// One agent event's entry being planned.
struct Slot<'r> {
    /// The agent's event.
    event: &'static str,
    /// The longest timeout of the rules behind it.
    longest: f64,
    /// A rule behind it fails closed.
    fail_closed: bool,
    /// The tool matchers of the rules behind it; `None` once a rule is not on a tool event.
    tools: Option<Vec<&'r Matcher>>,
}

/// The `--project-dir` and the plugins as the entries name them. In a project file of an agent
/// that tells hooks its project folder, plugins inside the project are named relative to it
/// and no `--project-dir` is written (`hookbox hook` takes the agent's variable), so the file
/// works in any clone; elsewhere, or with `--absolute`, full paths.
fn plugin_words<'t>(
    t: &'t Target,
    plugins: &[PathBuf],
    absolute: bool,
) -> (Option<&'t Path>, Vec<PathBuf>) {
    let root = t
        .project
        .as_deref()
        .filter(|_| !absolute && install::project_variable(t.agent).is_some());
    match root {
        Some(root) => (
            None,
            plugins
                .iter()
                .map(|p| match p.strip_prefix(root) {
                    Ok(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
                    Ok(rel) => rel.to_path_buf(),
                    Err(_) => p.clone(),
                })
                .collect(),
        ),
        None => (t.project.as_deref(), plugins.to_vec()),
    }
}

/// The entries `plugins` need in `t`'s agent, and what could not be installed; `Err` with the
/// exit code when the plugins do not load.
fn entries(
    t: &Target,
    plugins: &[PathBuf],
    bin: &Path,
    absolute: bool,
) -> anyhow::Result<Result<Planned, ExitCode>> {
    let setup = HostSetup::ephemeral(&t.load_root)?;
    let report = setup.load(plugins, &LoadOptions::default())?;
    if report.has_errors() {
        let mut s = String::new();
        for d in &report.diagnostics {
            write_diagnostic(&mut s, d);
        }
        eprint!("{}", anstream::adapter::strip_str(&s));
        eprintln!("hookbox install: the plugins do not load; fix them first (`hookbox validate`)");
        return Ok(Err(ExitCode::from(EXIT_FAILURE)));
    }
    let agent = t.agent;
    let mut notes = Vec::new();
    let mut per: Vec<Slot> = Vec::new();
    for rule in &report.rules {
        let natives = install::events(agent, rule.event);
        if natives.is_empty() {
            let note = format!(
                "{}: its {} hooks cannot run under {}, which has no such event",
                rule.source.plugin,
                rule.event,
                agent.display_name()
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        let closed = rule.on_failure == Some(FailMode::Block);
        // A rule on a tool event narrows the entry to its tools; any other widens it to all.
        let tools = (rule.event.matcher_field() == Some("tool_name")).then_some(&rule.matcher);
        for n in natives {
            match per.iter_mut().find(|s| s.event == n) {
                Some(slot) => {
                    slot.longest = slot.longest.max(rule_timeout(rule));
                    slot.fail_closed |= closed;
                    match (&mut slot.tools, tools) {
                        (Some(list), Some(m)) => list.push(m),
                        (slot_tools, _) => *slot_tools = None,
                    }
                }
                None => per.push(Slot {
                    event: n,
                    longest: rule_timeout(rule),
                    fail_closed: closed,
                    tools: tools.map(|m| vec![m]),
                }),
            }
        }
    }
    let (project, named) = plugin_words(t, plugins, absolute);
    // Copilot and VS Code share one file, whose commands name Copilot (which hands VS Code's
    // payloads to VS Code's adapter).
    let cmd_agent = if agent == Agent::VsCode {
        Agent::Copilot
    } else {
        agent
    };
    let mut out = Vec::new();
    for Slot {
        event,
        longest,
        fail_closed,
        tools,
    } in per
    {
        let matcher = tools
            .and_then(|m| install::matcher::tool_names(&m))
            .and_then(|names| install::matcher::render(agent, &names));
        let mut secs = ((longest + STARTUP_MARGIN_SECS).ceil() as u64).clamp(1, MAX_TIMEOUT_SECS);
        if agent == Agent::Kimi {
            secs = secs.min(kimi_toml::MAX_TIMEOUT_SECS);
        }
        if agent == Agent::Codex && matches!(event, "SessionEnd" | "Interrupt") && secs > 3 {
            notes.push(format!(
                "Codex stops {event} hooks after 3 s whatever the configuration says; hookbox's {event} rules may not finish"
            ));
        }
        let command = HookCommand {
            bin,
            agent: cmd_agent,
            event,
            project,
            plugins: &named,
            block_on_error: fail_closed,
        }
        .render();
        out.push(Entry {
            event,
            command,
            timeout_secs: secs,
            fail_closed,
            matcher,
        });
    }
    Ok(Ok((out, notes)))
}

/// What the agent needs besides the file, said once it is written.
fn agent_hint(agent: Agent) -> Option<&'static str> {
    match agent {
        // Codex's trust is said by `codex::trust` (loudly, when it is not recorded).
        Agent::Gemini => Some("Gemini CLI runs project hooks only in a trusted folder"),
        Agent::Cursor => Some("Cursor runs project hooks only in a trusted workspace"),
        Agent::Copilot | Agent::VsCode => Some(
            "GitHub Copilot and VS Code both read this file (VS Code converts its camelCase events); the cloud agent reads it from the default branch",
        ),
        Agent::Windsurf => {
            Some("Windsurf hooks have no timeout field: hookbox's own deadlines bound each hook")
        }
        _ => None,
    }
}

/// Shows the change and, unless `dry_run`, writes it (with a backup of the old file).
fn finish(
    out: &mut Out,
    t: &Target,
    before: Option<&str>,
    after: &str,
    delete: bool,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let file = t.path.display().to_string();
    let old = before.unwrap_or("");
    let shown_after = if delete { "" } else { after };
    let unchanged = match before {
        Some(b) => b == shown_after,
        None => shown_after.is_empty(),
    };
    if unchanged {
        out.report.outcome = "unchanged";
        out.line(&format!("{file}: nothing to change"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let change = diff::diff(&file, old, shown_after);
    out.line(untrusted(change.trim_end_matches('\n')).as_ref())?;
    out.report.diff = change;
    if dry_run {
        out.report.outcome = "dry-run";
        out.line(&format!("dry run: {file} not written"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(old) = before.filter(|o| !o.is_empty()) {
        let saved = write::backup(default_state_root(), &t.path, t.agent.as_str(), old)?;
        out.line(&format!("backup: {}", saved.display()))?;
        out.report.backup = Some(saved.display().to_string());
    }
    write::refuse_symlinks(t.check_root.as_deref(), &t.path)?;
    write::refuse_shared_folders(t.check_root.as_deref(), &t.path)?;
    if delete {
        write::remove(&t.path)?;
        out.report.outcome = "removed";
        out.line(&format!("removed {file} (nothing was left in it)"))?;
    } else {
        write::replace(&t.path, after.as_bytes())?;
        out.report.outcome = "written";
        out.line(&format!("written: {file}"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The file's current text, after the symlink checks.
fn read_target(t: &Target) -> anyhow::Result<Option<String>> {
    write::refuse_symlinks(t.check_root.as_deref(), &t.path)?;
    write::refuse_shared_folders(t.check_root.as_deref(), &t.path)?;
    write::read(&t.path)
}

/// Runs `hookbox install`.
pub(crate) fn run_install(args: &InstallArgs) -> anyhow::Result<ExitCode> {
    let agent = Agent::from(args.agent);
    let t = target(agent, &args.scope, args.project_dir.as_deref())?;
    let before = read_target(&t)?;
    let text = before.clone().unwrap_or_default();
    let mut plugins = plugin_set(&t, &existing(&t, &text)?);
    for p in &args.plugin {
        let abs = p
            .canonicalize()
            .with_context(|| format!("--plugin {}: no such file or folder", p.display()))?;
        if !plugins.contains(&abs) {
            plugins.push(abs);
        }
    }
    let (bin, on_path) = match &args.bin {
        Some(b) => (
            std::path::absolute(b).context("cannot resolve --bin")?,
            None,
        ),
        None => {
            let me = std::env::current_exe()
                .and_then(|p| p.canonicalize())
                .context("cannot find this hookbox's own path (pass --bin)")?;
            match first_on_path("hookbox").filter(|p| !args.absolute && *p == me) {
                Some(found) => (PathBuf::from("hookbox"), Some(found)),
                None => (me, None),
            }
        }
    };
    let (wanted, mut notes) = match entries(&t, &plugins, &bin, args.absolute)? {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    if let Some(found) = on_path {
        notes.push(format!(
            "the entries run `hookbox` from PATH ({}): an agent started with another PATH would not find it; `--absolute` writes its full path",
            found.display()
        ));
    }
    if args.approve {
        let code = approve(args, &t)?;
        if code != ExitCode::SUCCESS {
            eprintln!("hookbox install: nothing installed: the plugins are not approved");
            return Ok(code);
        }
    }
    let mut out = Out::new(
        args.json,
        "install",
        agent.as_str(),
        t.path.display().to_string(),
    );
    report_entries(&mut out, &plugins, &wanted);
    out.line(&format!(
        "hookbox install: {} ({}), {} plugin{}",
        agent.display_name(),
        t.path.display(),
        plugins.len(),
        if plugins.len() == 1 { "" } else { "s" }
    ))?;
    for e in &wanted {
        out.line(&format!(
            "  {} → hookbox hook (timeout {} s{})",
            e.event,
            e.timeout_secs,
            if e.fail_closed {
                ", a rule fails closed: hookbox errors block"
            } else {
                ""
            }
        ))?;
    }
    for n in notes {
        out.note(n);
    }
    trust_state(&mut out, &plugins, &t.load_root)?;
    if wanted.is_empty() {
        if out.json() {
            out.report.outcome = "nothing-to-install";
            out.end()?;
        } else {
            eprintln!(
                "hookbox install: none of the plugins' events exists in {}; nothing to install",
                agent.display_name()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let state = default_state_root();
    let mut owned = owned::load(state.as_deref(), &t.path);
    // A file that is not there, or holds nothing, has nothing of the user's to keep.
    owned.file |= before.as_deref().is_none_or(|b| b.trim().is_empty());
    let applied = apply(&t, &text, &wanted, &owned)?;
    let code = finish(
        &mut out,
        &t,
        before.as_deref(),
        &applied.text,
        false,
        args.dry_run,
    )?;
    if !args.dry_run {
        remember(&mut out, state.as_deref(), &t, &applied.owned);
    }
    if agent == Agent::Codex {
        codex::trust(
            &mut out,
            &t.path,
            &applied.text,
            args.trust_codex,
            true,
            args.dry_run,
        )?;
    }
    if let Some(h) = agent_hint(agent).filter(|_| !args.dry_run) {
        out.note(h.to_owned());
    }
    out.end()?;
    Ok(code)
}

/// `install --approve`: `hookbox trust add` on the plugins given, its screen and its question.
fn approve(args: &InstallArgs, t: &Target) -> anyhow::Result<ExitCode> {
    super::trust::run(&TrustArgs {
        command: TrustCommand::Add(TrustAddArgs {
            paths: args.plugin.clone(),
            yes: args.yes,
            common: TrustCommon {
                project_dir: Some(t.load_root.clone()),
                dialect: None,
                json: false,
            },
        }),
    })
}

/// Says whether each plugin is approved as it is: under trust `warn` (the default) an
/// unapproved one runs with a warning to the agent's user, under `require` it does not run.
fn trust_state(out: &mut Out, plugins: &[PathBuf], project: &Path) -> anyhow::Result<()> {
    let subjects = match super::trust::survey(plugins, project, None) {
        Ok((_, subjects)) => subjects,
        Err(e) => {
            out.warning(format!("cannot tell the plugins' trust state: {e:#}"));
            return Ok(());
        }
    };
    for s in subjects {
        let changed = s.rules.iter().filter(|r| !r.trust.is_approved()).count();
        let state = match (changed, &s.approval) {
            (0, _) => "approved",
            (_, None) => "not approved",
            (_, Some(_)) => "changed since it was approved",
        };
        out.report.trust.push(serde_json::json!({
            "plugin": s.plugin, "subject": s.subject, "state": state,
        }));
        if changed == 0 {
            out.line(&format!(
                "trust: {} is approved as it is",
                untrusted(&s.plugin)
            ))?;
        } else {
            out.note(format!(
                "trust: {} is {state}: under trust warn (the default) its rules run and the agent's user is told once per session; under require they do not run. Review with `hookbox trust show {1}`, approve with `hookbox trust add {1}` (or install again with --approve)",
                s.plugin, s.subject
            ));
        }
    }
    Ok(())
}

/// The plugins and entries after the change, for the JSON report.
fn report_entries(out: &mut Out, plugins: &[PathBuf], wanted: &[Entry]) {
    out.report.plugins = plugins.iter().map(|p| p.display().to_string()).collect();
    out.report.entries = wanted
        .iter()
        .map(|e| EntryReport {
            event: e.event,
            timeout_secs: e.timeout_secs,
            fail_closed: e.fail_closed,
            command: e.command.clone(),
        })
        .collect();
}

/// Keeps what hookbox owns in the file for the next uninstall (a failure only costs that
/// uninstall's tidying, so it is a warning).
fn remember(out: &mut Out, state: Option<&Path>, t: &Target, owned: &Owned) {
    let Some(state) = state else { return };
    if let Err(e) = owned::save(state, &t.path, owned) {
        out.warning(format!(
            "cannot record what hookbox added to {} ({e}); uninstall will remove only hookbox's entries",
            t.path.display()
        ));
    }
}

/// Runs `hookbox uninstall`.
pub(crate) fn run_uninstall(args: &UninstallArgs) -> anyhow::Result<ExitCode> {
    let agent = Agent::from(args.agent);
    let t = target(agent, &args.scope, args.project_dir.as_deref())?;
    let before = read_target(&t)?;
    let mut out = Out::new(
        args.json,
        "uninstall",
        agent.as_str(),
        t.path.display().to_string(),
    );
    let Some(text) = before.clone() else {
        out.report.outcome = "nothing-to-remove";
        out.line(&format!(
            "{}: no such file; nothing to remove",
            t.path.display()
        ))?;
        out.end()?;
        return Ok(ExitCode::SUCCESS);
    };
    let commands = existing(&t, &text)?;
    if commands.is_empty() {
        out.report.outcome = "nothing-to-remove";
        out.line(&format!(
            "{}: no hookbox entries; nothing to remove",
            t.path.display()
        ))?;
        out.end()?;
        return Ok(ExitCode::SUCCESS);
    }
    let leaving: Vec<PathBuf> = args
        .plugin
        .iter()
        .map(|p| p.canonicalize().or_else(|_| std::path::absolute(p)))
        .collect::<Result<_, _>>()
        .context("cannot resolve --plugin")?;
    let remaining: Vec<PathBuf> = if leaving.is_empty() {
        Vec::new()
    } else {
        plugin_set(&t, &commands)
            .into_iter()
            .filter(|p| !leaving.contains(p))
            .collect()
    };
    let wanted = if remaining.is_empty() {
        Vec::new()
    } else {
        // The hookbox the entries already run.
        let bin = split(&commands[0])
            .and_then(|w| w.into_iter().next())
            .map(PathBuf::from)
            .context("cannot read hookbox's entry")?;
        // Written as the entries already were: full paths if they had `--project-dir`.
        let absolute = commands.iter().any(|c| c.contains("--project-dir"));
        match entries(&t, &remaining, &bin, absolute)? {
            Ok((w, _)) => w,
            Err(code) => return Ok(code),
        }
    };
    report_entries(&mut out, &remaining, &wanted);
    let state = default_state_root();
    let owned = owned::load(state.as_deref(), &t.path);
    let applied = apply(&t, &text, &wanted, &owned)?;
    let code = finish(
        &mut out,
        &t,
        before.as_deref(),
        &applied.text,
        applied.empty,
        args.dry_run,
    )?;
    if !args.dry_run {
        remember(&mut out, state.as_deref(), &t, &applied.owned);
    }
    if agent == Agent::Codex {
        if wanted.is_empty() {
            codex::untrust(&mut out, args.dry_run)?;
        } else {
            codex::trust(&mut out, &t.path, &applied.text, false, false, args.dry_run)?;
        }
    }
    out.end()?;
    Ok(code)
}
