//! hookbox-agents: each coding agent's hook wire protocol (issue 20) and hook configuration
//! (issue 28) — Claude Code, Codex, Gemini CLI, Cursor, GitHub Copilot (CLI and cloud agent), VS
//! Code agent hooks, Windsurf and Kimi Code CLI. Pure like `hookbox-core`: no async runtime, no
//! wasm engine, no processes (CI checks its dependency tree). The agents' names and event names
//! are `hookbox_core::agent`'s; their tool names the matcher's alias table.
//!
//! An adapter does two pure things:
//! - [`parse`]: the agent's stdin payload → hookbox's [`Event`] (Claude Code's event names, tool
//!   names and tool-input keys, so a Claude Code plugin's hooks see what they would see under
//!   Claude Code), plus what the answer needs to know about the agent's own spelling
//!   ([`Native`]);
//! - [`render`]: an aggregated [`Verdict`] → that agent's answer ([`Answer`]: stdout, stderr,
//!   exit code). Where the agent cannot express a verdict the answer takes the safe side and
//!   says so in [`Answer::notes`]: an `ask` where there is no ask is a deny with the reason, a
//!   rewrite where rewrites are impossible is a deny naming the rewrite, context that cannot be
//!   carried is dropped with a note.
//!
//! The protocol facts and their sources are in `docs/agents.md` and the team's reference notes;
//! each agent's file cites what it follows. Payloads are bounded ([`limits`]); a bad payload is an
//! [`AgentError`] naming the agent's own field.

mod claude;
mod codex;
mod copilot;
mod cursor;
mod detect;
mod error;
mod fields;
mod gemini;
pub mod install;
mod kimi;
pub mod limits;
mod peek;
mod plan;
mod qwen;
mod tools;
mod vscode;
mod windsurf;

use serde_json::Value;

pub use claude::{claude_code_json, claude_response};
pub use detect::{detect, resolve};
pub use error::AgentError;
pub use peek::{Peeked, peek};
pub use plan::{Answer, Failures};
pub use tools::{agent_tool_names, canonical_tool};

pub use hookbox_core::agent::{Agent, UnknownAgent};
use hookbox_core::aggregate::{StopState, Verdict, aggregate};
use hookbox_core::event::{Event, EventName};
use hookbox_core::output::{Effect, FailureClass, HookFailure};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::FailMode;

/// What the answer needs to know about how the agent spelled the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Native {
    /// Whose payload it was.
    pub agent: Agent,
    /// The event as the agent named it (`BeforeTool`, `beforeShellExecution`, `preToolUse`).
    pub event: String,
    /// The tool as the agent named it, for tool events.
    pub tool: Option<String>,
    /// Tool-input keys renamed to Claude Code's, as (agent's key, Claude Code's key): a
    /// rewrite is renamed back before it is sent.
    pub renamed: Vec<(String, String)>,
    /// Copilot: the payload was camelCase (a camelCase event name in the config). The answer
    /// keys are Copilot's top-level ones either way.
    pub camel: bool,
    /// How many times the agent says this turn's Stop hooks already continued it (Cursor's
    /// `loop_count`, else 1 when `stop_hook_active`): the re-entry count the Stop cap applies to.
    pub reentries: u32,
    /// The agent says only *whether* the turn was re-entered (`stop_hook_active`), not how often:
    /// the caller keeps the count per session and turn (`hookbox_core::stop_loop::StopCount`).
    pub reentry_is_a_flag: bool,
    /// The agent's turn, where its payload names one (Codex's `turn_id`).
    pub turn: Option<String>,
    /// Nobody can answer an `ask` (the agent runs headless, [`ParseOptions::headless`]).
    pub headless: bool,
    /// What the adapter noticed and could not act on (a tool name it does not know, an MCP tool
    /// it cannot map back): for stderr beside the answer.
    pub warnings: Vec<String>,
}

impl Native {
    /// The native record of an event the agent names `event`, with nothing else known.
    pub fn new(agent: Agent, event: impl Into<String>) -> Native {
        Native {
            agent,
            event: event.into(),
            tool: None,
            renamed: Vec::new(),
            camel: false,
            reentries: 0,
            reentry_is_a_flag: false,
            turn: None,
            headless: false,
            warnings: Vec::new(),
        }
    }

    /// The Stop loop state for this event under a cap of `cap` re-entries.
    pub fn stop_state(&self, cap: u32) -> StopState {
        StopState {
            reentries: self.reentries,
            cap,
        }
    }
}

/// A parsed payload: the event hooks see, and the agent's own spelling of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The event, in hookbox's (Claude Code's) vocabulary.
    pub event: Event,
    /// How the agent spelled it.
    pub native: Native,
}

/// What [`parse`] needs besides the bytes.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// The event as the agent names it, from the hook's command line (`--event`). Copilot's
    /// camelCase payloads carry no event name, so its hooks need this; elsewhere it must agree
    /// with the payload's.
    pub event: Option<String>,
    /// `session_id` when the payload has none.
    pub default_session: String,
    /// `cwd` when the payload has none (VS Code sends none unless the hook sets one).
    pub default_cwd: String,
    /// The agent runs headless: nobody can answer an `ask` (Gemini CLI's `-p`; the caller finds
    /// out, the payload does not say).
    pub headless: bool,
    /// The MCP servers the agent has configured, by name: Copilot names an MCP tool
    /// `<server>-<tool>`, and these map it back to `mcp__<server>__<tool>`.
    pub mcp_servers: Vec<String>,
}

/// Parses `bytes`, the stdin of `agent`'s hook command, into an event (see the module doc).
/// The payload is bounded by [`limits::MAX_PAYLOAD_BYTES`] and [`limits::MAX_PAYLOAD_DEPTH`].
pub fn parse(agent: Agent, bytes: &[u8], opts: &ParseOptions) -> Result<Incoming, AgentError> {
    let map = limits::read_payload(agent, bytes)?;
    parse_map(agent, map, opts)
}

/// Reads `bytes` and parses them as the payload of [`resolve`]`(given, payload)`: `given`
/// (`--agent`), or the agent the payload shows (VS Code's under a Claude Code or Copilot hook,
/// Cursor's under a Claude Code one), or, with no `given`, the detected agent. When the agent
/// switches, `opts.event` — the other agent's name for the event — is not used: those payloads
/// name their event. The error comes with the agent whose protocol should answer it.
pub fn parse_any(
    given: Option<Agent>,
    bytes: &[u8],
    opts: &ParseOptions,
) -> Result<Incoming, (Agent, AgentError)> {
    let fallback = given.unwrap_or(Agent::Claude);
    let map = limits::read_payload(fallback, bytes).map_err(|e| (fallback, e))?;
    let agent = resolve(given, &map);
    let switched;
    let opts = if given.is_some_and(|g| g != agent) {
        switched = ParseOptions {
            event: None,
            ..opts.clone()
        };
        &switched
    } else {
        opts
    };
    parse_map(agent, map, opts).map_err(|e| (agent, e))
}

/// [`parse`] for a payload already read into a JSON object (bounds are the caller's).
pub fn parse_map(
    agent: Agent,
    map: serde_json::Map<String, Value>,
    opts: &ParseOptions,
) -> Result<Incoming, AgentError> {
    let mut incoming = match agent {
        Agent::Claude => claude::parse(Agent::Claude, map, opts),
        Agent::Codex => claude::parse(Agent::Codex, map, opts),
        Agent::Gemini => gemini::parse(map, opts),
        Agent::Cursor => cursor::parse(map, opts),
        Agent::Copilot => copilot::parse(map, opts),
        Agent::VsCode => vscode::parse(map, opts),
        Agent::Windsurf => windsurf::parse(map, opts),
        Agent::Kimi => kimi::parse(map, opts),
        Agent::Qwen => claude::parse(Agent::Qwen, map, opts),
    }?;
    let native = &mut incoming.native;
    native.headless = opts.headless;
    // Cursor's `loop_count` is exact; everyone else's `stop_hook_active` is a flag.
    native.reentry_is_a_flag = agent != Agent::Cursor
        && matches!(
            incoming.event.name,
            EventName::Stop | EventName::SubagentStop
        );
    native.turn = incoming
        .event
        .extra
        .get("turn_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(sent) = &native.tool
        && let Some(w) = tools::unknown_tool_warning(native.agent, sent)
    {
        native.warnings.push(w);
    }
    Ok(incoming)
}

/// The answer to `native.agent` for `verdict` on `event`, where `failures` are the hooks that
/// failed inside hookbox (a fail-open failure with nothing else to say still tells the agent
/// something failed, in the way that agent shows a non-blocking error).
pub fn render(native: &Native, event: &Event, verdict: &Verdict, failures: &Failures) -> Answer {
    let plan = plan::Plan::of(verdict);
    match native.agent {
        Agent::Claude => claude::render(event, verdict, failures),
        Agent::Codex => codex::render(native, event, &plan, failures),
        Agent::Gemini => gemini::render(native, event, &plan, failures),
        Agent::Cursor => cursor::render(native, event, &plan, failures),
        Agent::Copilot if native.camel => copilot::render(native, event, &plan, failures),
        // Copilot's PascalCase events are "VS Code compatible": one answer serves both.
        Agent::Copilot | Agent::VsCode => vscode::render(native, event, &plan, failures),
        Agent::Windsurf => windsurf::render(native, event, &plan, failures),
        Agent::Kimi => kimi::render(native, event, &plan, failures),
        Agent::Qwen => qwen::render(event, verdict, failures),
    }
}

/// The answer when hookbox itself could not run the hooks (an unreadable payload, plugins that
/// failed to load): `mode` says whether that blocks, exactly as a rule's `on_failure` would.
/// `native` is what is known of the event (from `--event` or the payload); when even its kind
/// is unknown, a block is exit 2 with the reason on stderr — the code every agent but Copilot
/// reads as a block on its pre-events — and an allow is the agent's non-blocking error.
pub fn render_error(
    native: &Native,
    event: Option<EventName>,
    message: &str,
    mode: FailMode,
) -> Answer {
    let Some(name) = event else {
        return plan::unknown_event_error(native.agent, message, mode);
    };
    let ev = Event::new(name, "", "");
    let failure = HookFailure::new(FailureClass::Internal, message);
    let effect = Effect::from_failure(failure, mode, name);
    let report = HookReport {
        hook: HookRef {
            rule_index: 0,
            plugin: "hookbox".into(),
            hook_name: "hookbox".into(),
            handler_type: hookbox_core::event::HandlerType::Command,
            hook_event: name,
        },
        effect,
        duration_ms: 0.0,
        exit_code: None,
        output: None,
        fuel_consumed: None,
    };
    let verdict = aggregate(&ev, std::slice::from_ref(&report), StopState::default());
    let text = vec![format!("cannot run the hooks: {message}")];
    let failures = match mode {
        FailMode::Allow => Failures {
            open: text,
            closed: Vec::new(),
        },
        FailMode::Block => Failures {
            open: Vec::new(),
            closed: text,
        },
    };
    render(native, &ev, &verdict, &failures)
}

#[cfg(test)]
mod tests;
