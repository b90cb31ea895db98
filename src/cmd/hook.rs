//! `hookbox hook --agent NAME --plugin DIR…`: one event from any coding agent's hook command.
//! The agent's payload is parsed by its adapter (`hookbox_agents`), run through the same
//! host `dispatch` builds (matching, native and wasm rules, aggregation, replay), and answered in
//! the agent's own protocol.
//!
//! Whatever goes wrong, the agent gets an answer in its protocol, never a bare usage error: an
//! exit code of 2 means "block" to most agents, so an unreadable payload or a plugin that does not
//! load is answered as `--on-error` says (a fail-open error, or the agent's deny).

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use hookbox_agents::{self as agent, Agent, Answer, Failures, Native, ParseOptions, limits};
use hookbox_core::config::LoadOptions;
use hookbox_core::rule::FailMode;

use super::term::untrusted;
use super::validate::write_diagnostic;
use crate::cli::{FailureArg, HookArgs};
use crate::host_setup::{HostSetup, SetupOptions, block_on};

/// The agents' project-folder variables, first set wins (hookbox's own flag comes first).
const PROJECT_VARS: &[&str] = &[
    "CLAUDE_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
];

impl From<FailureArg> for FailMode {
    fn from(f: FailureArg) -> FailMode {
        match f {
            FailureArg::Allow => FailMode::Allow,
            FailureArg::Block => FailMode::Block,
        }
    }
}

/// Runs `hookbox hook`.
pub(crate) fn run(args: &HookArgs) -> anyhow::Result<ExitCode> {
    let given = args.agent.map(Agent::from);
    let mode = FailMode::from(args.on_error);
    // What is known before the payload is read: enough to answer an error in the right protocol.
    let guess = given.unwrap_or(Agent::Claude);
    let guess_native = Native::new(guess, args.event.clone().unwrap_or_default());
    let guess_event = args.event.as_deref().and_then(|e| guess.event_of(e));

    let mut stdin = Vec::new();
    let max = u64::try_from(limits::MAX_PAYLOAD_BYTES).unwrap_or(u64::MAX);
    if let Err(e) = std::io::stdin().take(max + 1).read_to_end(&mut stdin) {
        let msg = format!("cannot read the hook payload from stdin: {e}");
        return emit(
            &agent::render_error(&guess_native, guess_event, &msg, mode),
            &[],
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let opts = ParseOptions {
        event: args.event.clone(),
        default_session: "hookbox-hook".into(),
        default_cwd: cwd.display().to_string(),
    };
    let incoming = match agent::parse_any(given, &stdin, &opts) {
        Ok(i) => i,
        Err((agent, e)) => {
            let native = Native::new(agent, guess_native.event.clone());
            let event = args.event.as_deref().and_then(|e| agent.event_of(e));
            return emit(
                &agent::render_error(&native, event, &e.to_string(), mode),
                &[],
            );
        }
    };
    let native = incoming.native.clone();
    let name = incoming.event.name;
    match dispatch(args, incoming) {
        Ok((answer, extra)) => emit(&answer, &extra),
        Err(e) => emit(
            &agent::render_error(&native, Some(name), &format!("{e:#}"), mode),
            &[],
        ),
    }
}

/// The project folder: `--project-dir`, else the agent's project variable, else the event's
/// folder, else the current one.
fn project_dir(args: &HookArgs, event_cwd: &str) -> anyhow::Result<PathBuf> {
    if let Some(p) = &args.project_dir {
        return Ok(p.clone());
    }
    for var in PROJECT_VARS {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(v));
        }
    }
    let from_event = PathBuf::from(event_cwd);
    if from_event.is_absolute() && from_event.is_dir() {
        return Ok(from_event);
    }
    std::env::current_dir().context("cannot read the current directory")
}

/// Loads the plugins and runs the event; the answer and the lines for stderr beside it.
fn dispatch(args: &HookArgs, incoming: agent::Incoming) -> anyhow::Result<(Answer, Vec<String>)> {
    let project = project_dir(args, &incoming.event.cwd)?;
    let setup = HostSetup::new(
        &project,
        &SetupOptions {
            no_replay: args.no_replay,
            stop_reentry_cap: args.stop_reentry_cap,
            // Trust: the user's `trust` setting (else warn) and approval store.
            ..SetupOptions::default()
        },
    )?;
    let opts = LoadOptions::default().with_dialect(args.dialect.map(Into::into));
    let report = setup.load(&args.plugin, &opts)?;
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
    let host = setup.host.clone();
    let native = incoming.native;
    let stop = native.stop_state(host.stop_reentry_cap());
    block_on(async move {
        let mut wakes = host.subscribe_wakes();
        let d = host.dispatch_with_stop_state(incoming.event, stop).await;
        let failures = Failures::from_reports(&d.reports);
        let answer = agent::render(&native, &d.event, &d.verdict, &failures);
        // Background (`async`) hooks run to completion, as in `dispatch`; the answer waits for
        // them only because this process is the agent's hook and ends with them.
        if host.runtime().background_hooks() > 0 {
            host.runtime().drain(host.policy().dispatch_deadline).await;
        } else {
            host.runtime().flush_replay();
        }
        // A failure is in the answer already; every other warning is said beside it.
        let mut extra: Vec<String> = d
            .warnings
            .iter()
            .filter(|w| !failures.open.contains(w) && !failures.closed.contains(w))
            .map(|w| format!("hookbox: {w}"))
            .collect();
        while let Ok(w) = wakes.try_recv() {
            extra.push(format!(
                "hookbox: {} ({}) asks to wake the agent: {}",
                w.plugin, w.hook, w.message
            ));
        }
        (answer, extra)
    })
}

/// Writes `answer` (and `extra` lines on stderr where the agent does not read stderr as the
/// reason) and returns its exit code.
fn emit(answer: &Answer, extra: &[String]) -> anyhow::Result<ExitCode> {
    if !answer.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", answer.stdout).context("cannot write to stdout")?;
        out.flush().context("cannot write to stdout")?;
    }
    // Hooks chose some of this text: no escape sequence reaches a terminal showing it.
    let err = untrusted(&answer.stderr_text(extra)).into_owned();
    if !err.is_empty() {
        let mut e = std::io::stderr().lock();
        // Nothing sensible is left to do if even this write fails.
        let _ = e.write_all(err.as_bytes());
    }
    Ok(ExitCode::from(answer.exit_code))
}
