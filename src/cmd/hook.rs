//! `hookbox hook --agent NAME --plugin DIR…`: one event from any coding agent's hook command.
//! The agent's payload is parsed by its adapter (`hookbox_agents`), run through the same host
//! `dispatch` builds (matching, native and wasm rules, aggregation, replay), and answered in the
//! agent's own protocol.
//!
//! Whatever goes wrong, the agent gets an answer in its protocol, never a bare error: an exit
//! code of 2 means "block" to most agents, so a missing current folder, an unreadable payload, a
//! plugin that does not load, even a command line this hookbox does not understand
//! ([`answer_usage_error`]) is answered as `--on-error` says (a fail-open error, or the agent's
//! deny). A payload too large or too deep to read, whose event and tool can still be read, meets
//! the fail modes of the rules that would have matched it: a fail-closed guard blocks.
//!
//! Around the dispatch, what the agent's payload cannot say is found out here: how often this
//! turn's Stop hooks already continued it ([`stop_store`]), whether Gemini CLI runs headless
//! ([`headless`]), which MCP servers Copilot has configured ([`copilot_mcp`]).

mod copilot_mcp;
mod headless;
mod stop_store;
mod trust_notice;

use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hookbox_agents::{
    self as agent, Agent, AgentError, Answer, Failures, Native, ParseOptions, limits,
};
use hookbox_core::aggregate::Verdict;
use hookbox_core::config::LoadOptions;
use hookbox_core::event::EventName;
use hookbox_core::matcher::{Matcher, ToolAliases};
use hookbox_core::rule::{FailMode, Rule};
use hookbox_core::stop_loop::StopCount;
use hookbox_host::default_state_root;

use self::stop_store::StopStore;
use super::term::untrusted;
use super::validate::write_diagnostic;
use crate::cli::{FailureArg, HookArgs};
use crate::host_setup::{HostSetup, SetupOptions, block_on};

/// The agents' project-folder variables, first set wins (hookbox's own flag comes first).
const PROJECT_VARS: &[&str] = &[
    "CLAUDE_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "QWEN_PROJECT_DIR",
];

impl From<FailureArg> for FailMode {
    fn from(f: FailureArg) -> FailMode {
        match f {
            FailureArg::Allow => FailMode::Allow,
            FailureArg::Block => FailMode::Block,
        }
    }
}

/// What is known of the event before (or without) its payload: enough to answer a failure in
/// the right protocol.
struct Known {
    native: Native,
    event: Option<EventName>,
    mode: FailMode,
}

impl Known {
    /// The agent's answer to "hookbox could not run the hooks: `message`".
    fn fail(&self, message: &str) -> ExitCode {
        emit(
            &agent::render_error(&self.native, self.event, message, self.mode),
            &[],
        )
    }
}

/// Runs `hookbox hook`. Every failure is an answer in the agent's protocol; the `Result` is
/// only the dispatcher's shape.
pub(crate) fn run(args: &HookArgs) -> anyhow::Result<ExitCode> {
    let given = args.agent.map(Agent::from);
    let guess = given.unwrap_or(Agent::Claude);
    let known = Known {
        native: Native::new(guess, args.event.clone().unwrap_or_default()),
        event: args.event.as_deref().and_then(|e| guess.event_of(e)),
        mode: FailMode::from(args.on_error),
    };
    let mut stdin = Vec::new();
    let max = u64::try_from(limits::MAX_PAYLOAD_BYTES).unwrap_or(u64::MAX);
    if let Err(e) = std::io::stdin().take(max + 1).read_to_end(&mut stdin) {
        return Ok(known.fail(&format!("cannot read the hook payload from stdin: {e}")));
    }
    // Only a default: the payload's `cwd` is the folder that matters.
    let cwd = std::env::current_dir()
        .map(|c| c.display().to_string())
        .unwrap_or_default();
    let mut opts = ParseOptions {
        event: args.event.clone(),
        default_session: "hookbox-hook".into(),
        default_cwd: cwd,
        ..ParseOptions::default()
    };
    if given == Some(Agent::Gemini) {
        opts.headless = headless::gemini_headless() == Some(true);
    }
    if given == Some(Agent::Copilot) {
        opts.mcp_servers = copilot_mcp::server_names(args.project_dir.as_deref());
    }
    let incoming = match agent::parse_any(given, &stdin, &opts) {
        Ok(i) => i,
        Err((agent, e)) => return Ok(unreadable(args, &known, agent, &stdin, &e)),
    };
    let native = incoming.native.clone();
    let name = incoming.event.name;
    match dispatch(args, incoming) {
        Ok((answer, extra)) => Ok(emit(&answer, &extra)),
        Err(e) => Ok(Known {
            native,
            event: Some(name),
            mode: known.mode,
        }
        .fail(&format!("{e:#}"))),
    }
}

/// The answer to a payload that does not read. When its event (and tool) can still be read,
/// the rules that would have matched it decide with their own fail modes: a fail-closed one
/// blocks, else the call proceeds with the failure said. When not, `--on-error` decides.
fn unreadable(
    args: &HookArgs,
    known: &Known,
    agent: Agent,
    stdin: &[u8],
    error: &AgentError,
) -> ExitCode {
    let native_event = args.event.clone().unwrap_or_default();
    let fallback = Known {
        native: Native::new(agent, native_event.clone()),
        event: args.event.as_deref().and_then(|e| agent.event_of(e)),
        mode: known.mode,
    };
    let Some(peeked) = agent::peek(agent, stdin, args.event.as_deref()) else {
        return fallback.fail(&error.to_string());
    };
    let Ok(project) = project_dir(args, "") else {
        return fallback.fail(&error.to_string());
    };
    let plugins = plugins(args, &project);
    let setup = HostSetup::new(&project, &setup_options(args)).and_then(|setup| {
        let report = setup.load(&plugins, &load_options(args))?;
        Ok((setup, report))
    });
    let Ok((_, report)) = setup.as_ref() else {
        return fallback.fail(&error.to_string());
    };
    let matching: Vec<&Rule> = report
        .rules
        .iter()
        .filter(|r| would_match(r, peeked.event, peeked.tool.as_deref()))
        .collect();
    let closed: Vec<&Rule> = matching
        .iter()
        .copied()
        .filter(|r| r.on_failure == Some(FailMode::Block))
        .collect();
    let what = match &peeked.tool {
        Some(t) => format!("{} of {t}", peeked.event),
        None => peeked.event.to_string(),
    };
    let (mode, message) = match (closed.first(), matching.is_empty()) {
        (Some(rule), _) => (
            FailMode::Block,
            format!(
                "{error}; the {what} is denied: rule {} of {} fails closed and could not run on it",
                rule.index, rule.source.plugin
            ),
        ),
        (None, true) => (
            FailMode::Allow,
            format!("{error}; no rule would have run on this {what}"),
        ),
        (None, false) => (
            FailMode::Allow,
            format!(
                "{error}; {} rule(s) for this {what} could not run, and none fails closed",
                matching.len()
            ),
        ),
    };
    let mut native = Native::new(agent, peeked.native_event.clone());
    native.tool = peeked.tool.clone();
    emit(
        &agent::render_error(&native, Some(peeked.event), &message, mode),
        &[],
    )
}

/// Whether `rule` could have matched an event `event` of tool `tool` whose payload could not be
/// read: by its event and its matcher on the tool name; a matcher on other fields, or an `if`
/// condition, cannot be checked without the payload, and counts as a match (the safe side).
fn would_match(rule: &Rule, event: EventName, tool: Option<&str>) -> bool {
    if rule.event != event {
        return false;
    }
    let (Some(tool), Some("tool_name")) = (tool, event.matcher_field()) else {
        return true;
    };
    match &rule.matcher {
        Matcher::Object(_) => true,
        m => m.matches_subject(tool, true, &ToolAliases::default()),
    }
}

/// The project folder: `--project-dir`, else the agent's project variable, else the event's
/// folder, else the current one.
fn project_dir(args: &HookArgs, event_cwd: &str) -> anyhow::Result<PathBuf> {
    if let Some(p) = &args.project_dir {
        return Ok(p.clone());
    }
    // The agent's own variable first: another agent's can be inherited from the terminal the
    // agent was started in.
    let own = args
        .agent
        .map(Agent::from)
        .and_then(hookbox_agents::install::project_variable);
    for var in own.iter().chain(PROJECT_VARS) {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(v));
        }
    }
    let from_event = PathBuf::from(event_cwd);
    if from_event.is_absolute() && from_event.is_dir() {
        return Ok(from_event);
    }
    std::env::current_dir().map_err(|e| {
        anyhow::anyhow!(
            "cannot tell the project folder: no --project-dir, no project variable, no usable cwd in the payload, and the current directory cannot be read ({e})"
        )
    })
}

fn setup_options(args: &HookArgs) -> SetupOptions {
    SetupOptions {
        no_replay: args.no_replay,
        stop_reentry_cap: args.stop_reentry_cap,
        lenient_settings: true,
        // Trust: the user's `trust` setting (else warn) and approval store.
        ..SetupOptions::default()
    }
}

fn load_options(args: &HookArgs) -> LoadOptions {
    LoadOptions::default().with_dialect(args.dialect.map(Into::into))
}

/// Loads the plugins and runs the event; the answer and the lines for stderr beside it.
fn dispatch(
    args: &HookArgs,
    mut incoming: agent::Incoming,
) -> anyhow::Result<(Answer, Vec<String>)> {
    let project = project_dir(args, &incoming.event.cwd)?;
    let plugins = plugins(args, &project);
    if let Some(gone) = moved_plugin(&plugins) {
        anyhow::bail!("{}", moved_plugin_message(incoming.native.agent, &gone));
    }
    let setup = HostSetup::new(&project, &setup_options(args))?;
    let report = setup.load(&plugins, &load_options(args))?;
    if report.has_errors() {
        let mut s = String::new();
        for d in &report.diagnostics {
            write_diagnostic(&mut s, d);
        }
        anyhow::bail!(
            "the plugins do not load, so their hooks cannot run:\n{}",
            anstream::adapter::strip_str(&s).to_string().trim_end()
        );
    }
    let mut extra: Vec<String> = setup
        .warnings
        .iter()
        .map(|w| format!("hookbox: {w}"))
        .collect();
    extra.extend(incoming.native.warnings.iter().cloned());
    let host = setup.host.clone();
    // The Stop loop's count, kept here where the agent says only whether it was re-entered.
    let stop = stop_count(&incoming, &mut extra);
    if let Some((count, _)) = &stop {
        incoming.native.reentries = count.reentries(incoming.native.reentries);
    }
    let native = incoming.native;
    let stop_state = native.stop_state(host.stop_reentry_cap());
    let state_root = default_state_root();
    let (answer, continued, more) = block_on(async move {
        let mut wakes = host.subscribe_wakes();
        let d = host
            .dispatch_with_stop_state(incoming.event, stop_state)
            .await;
        let failures = Failures::from_reports(&d.reports);
        // Under `warn`, rules that are not approved as they are ran (under `require`, changed
        // rules ran their approved snapshot): the user hears of it where the agent shows hook
        // output, once per session.
        let mut verdict = d.verdict.clone();
        if let Some(m) = trust_notice::message(&d.trust)
            && state_root.as_deref().is_none_or(|root| {
                trust_notice::first_time(root, native.agent.as_str(), &d.event.session_id, &m)
            })
        {
            trust_notice::add_to(&mut verdict, m);
        }
        let answer = agent::render(&native, &d.event, &verdict, &failures);
        let continued = matches!(&d.verdict, Verdict::Stop(r) if r.force_continue);
        // Background (`async`) hooks run to completion, as in `dispatch`; the answer waits for
        // them only because this process is the agent's hook and ends with them.
        if host.runtime().background_hooks() > 0 {
            host.runtime().drain(host.policy().dispatch_deadline).await;
        } else {
            host.runtime().flush_replay();
        }
        // A failure is in the answer already; every other warning is said beside it.
        let mut more: Vec<String> = d
            .warnings
            .iter()
            .filter(|w| !failures.open.contains(w) && !failures.closed.contains(w))
            .map(|w| format!("hookbox: {w}"))
            .collect();
        while let Ok(w) = wakes.try_recv() {
            more.push(format!(
                "hookbox: {} ({}) asks to wake the agent: {}",
                w.plugin, w.hook, w.message
            ));
        }
        (answer, continued, more)
    })?;
    extra.extend(more);
    if let Some((count, store)) = stop
        && let Err(e) = store.save(count.after(continued))
    {
        extra.push(format!(
            "hookbox: cannot keep the Stop loop's count ({e}); the cap may be reached later"
        ));
    }
    Ok((answer, extra))
}

/// The `--plugin`s, a relative one taken inside the project folder: `hookbox install` writes
/// plugins that live in the project by relative path (for an agent that names its project
/// folder in a variable), so a committed entry works in every clone whatever the hook's
/// current folder.
fn plugins(args: &HookArgs, project: &Path) -> Vec<PathBuf> {
    args.plugin
        .iter()
        .map(|p| {
            if p.is_relative() {
                project.join(p)
            } else {
                p.clone()
            }
        })
        .collect()
}

/// The first plugin that is not there any more: an entry `hookbox install` wrote for a
/// plugin folder that was moved or deleted since.
fn moved_plugin(plugins: &[PathBuf]) -> Option<PathBuf> {
    plugins
        .iter()
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .cloned()
}

/// What the agent (and its user) is told when a plugin of the entry is gone: which one, that its
/// rules cannot run (the entry's `--on-error` decides the call), and the two ways out.
fn moved_plugin_message(agent: Agent, gone: &std::path::Path) -> String {
    format!(
        "the plugin {gone} is not there any more (moved or deleted?), so its rules cannot run; reinstall it where it is now (`hookbox install --agent {agent} --plugin NEW_PATH`) or remove the entry (`hookbox uninstall --agent {agent} --plugin {gone}`)",
        gone = gone.display(),
        agent = agent.as_str(),
    )
}

/// The count of continuations this turn already had, and where it is kept, for a Stop event of
/// an agent that says only whether the turn was re-entered.
fn stop_count(
    incoming: &agent::Incoming,
    extra: &mut Vec<String>,
) -> Option<(StopCount, StopStore)> {
    if !incoming.native.reentry_is_a_flag {
        return None;
    }
    let active = incoming.event.stop_data()?.stop_hook_active;
    let Some(root) = default_state_root() else {
        extra.push("hookbox: no state folder (HOOKBOX_STATE_DIR, XDG_STATE_HOME or HOME), so the Stop loop is capped by the agent's own count only".into());
        return None;
    };
    let turn = format!(
        "{}:{}",
        incoming.event.name,
        incoming.native.turn.as_deref().unwrap_or("")
    );
    let store = StopStore::new(
        &root,
        incoming.native.agent.as_str(),
        &incoming.event.session_id,
        &turn,
    );
    Some((StopCount::at_stop(active, store.load()), store))
}

/// Answers a `hookbox hook` command line this hookbox does not understand (an entry written by
/// another version, a typo) in the agent's protocol, as `--on-error` says — read from the words
/// themselves, since the parser refused them — instead of clap's usage error, whose exit 2 most
/// agents read as a block of everything.
pub(crate) fn answer_usage_error(argv: &[OsString], message: &str) -> ExitCode {
    let words: Vec<String> = argv
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let value = |flag: &str| {
        words.iter().enumerate().find_map(|(i, w)| {
            w.strip_prefix(&format!("{flag}="))
                .map(str::to_owned)
                .or_else(|| (w == flag).then(|| words.get(i + 1).cloned()).flatten())
        })
    };
    let agent = value("--agent")
        .and_then(|a| a.parse::<Agent>().ok())
        .unwrap_or(Agent::Claude);
    let event = value("--event");
    let mode = match value("--on-error").as_deref() {
        Some("block") => FailMode::Block,
        _ => FailMode::Allow,
    };
    let first_line = message.lines().next().unwrap_or(message).trim();
    Known {
        native: Native::new(agent, event.clone().unwrap_or_default()),
        event: event.as_deref().and_then(|e| agent.event_of(e)),
        mode,
    }
    .fail(&format!(
        "this hookbox does not understand the hook's command line ({first_line}); check the entry `hookbox install` wrote, or install it again"
    ))
}

/// Writes `answer` (and `extra` lines on stderr where the agent does not read stderr as the
/// reason) and returns its exit code. A write that fails cannot be answered any other way: the
/// exit code still says what it would have.
fn emit(answer: &Answer, extra: &[String]) -> ExitCode {
    if !answer.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", answer.stdout).and_then(|()| out.flush());
    }
    // Hooks chose some of this text: no escape sequence reaches a terminal showing it.
    let err = untrusted(&answer.stderr_text(extra)).into_owned();
    if !err.is_empty() {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(err.as_bytes());
    }
    ExitCode::from(answer.exit_code)
}
