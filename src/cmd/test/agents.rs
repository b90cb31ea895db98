//! A case's expectations, checked on the answer each listed agent would receive: the verdict is
//! rendered by that agent's adapter (`hookbox_agents::render`, exactly what `hookbox hook`
//! prints), then read back the way the agent reads its hooks' answers — so "deny" holds for an
//! agent only if the agent would refuse the call, not merely if hookbox said so somewhere (an
//! `ask` Codex cannot express becomes a deny; a context Cursor drops on a prompt never reaches
//! the model; a rewrite Windsurf cannot apply is a deny of the original call).
//!
//! The reading follows the protocol facts of docs/agents.md ("Every verdict × every agent" and
//! "Failures"). Where an agent's readings disagree (Copilot's exit codes), the one that does
//! *less* is taken: a deny counts only if every reading denies.

use hookbox_agents::{self as agent, Agent, Answer, Failures, Native, agent_tool_names};
use hookbox_core::aggregate::Verdict;
use hookbox_core::{Event, EventName};
use serde_json::{Value, json};

/// What an agent does with an answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reading {
    /// The call (or the prompt) is refused; the reason it shows, when it shows one.
    pub(crate) deny: Option<String>,
    /// The user is asked.
    pub(crate) ask: bool,
    /// The call runs without asking (a grant).
    pub(crate) allow: bool,
    /// The call runs with this input (in Claude Code's keys).
    pub(crate) rewrite: Option<Value>,
    /// Texts that reach the model.
    pub(crate) contexts: Vec<String>,
    /// Stop: the turn goes on with this message.
    pub(crate) continue_with: Option<String>,
    /// The agent stops.
    pub(crate) stop: bool,
}

impl Reading {
    /// Says what the agent does, for a mismatch message.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.deny {
            parts.push(format!(
                "refuses ({})",
                if r.is_empty() { "no reason shown" } else { r }
            ));
        }
        if self.ask {
            parts.push("asks the user".to_owned());
        }
        if self.allow {
            parts.push("runs the call without asking".to_owned());
        }
        if let Some(u) = &self.rewrite {
            parts.push(format!("runs the call with {u}"));
        }
        if !self.contexts.is_empty() {
            parts.push(format!("adds context {:?}", self.contexts.join(" ")));
        }
        if let Some(f) = &self.continue_with {
            parts.push(format!("continues the turn with {f:?}"));
        }
        if self.stop {
            parts.push("stops".to_owned());
        }
        if parts.is_empty() {
            "goes on as if no hook had answered".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// The event's shape, as far as reading an answer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A tool call about to run (`PreToolUse`, `PermissionRequest`).
    Tool,
    /// A prompt about to be sent.
    Prompt,
    /// The turn is about to end.
    Stop,
    /// Anything else.
    Other,
}

impl Kind {
    pub(crate) fn of(event: EventName) -> Kind {
        match event {
            EventName::PreToolUse | EventName::PermissionRequest => Kind::Tool,
            EventName::UserPromptSubmit => Kind::Prompt,
            EventName::Stop | EventName::SubagentStop => Kind::Stop,
            _ => Kind::Other,
        }
    }
}

/// The agent's own spelling of `event`, for rendering its answer: the case's own when it came in
/// that agent's payload, else the event `hookbox install` registers for it there. `Err` says why
/// the agent never runs the hook for this event.
pub(crate) fn native_for(
    agent: Agent,
    event: &Event,
    given: Option<&Native>,
) -> Result<Native, String> {
    if let Some(n) = given.filter(|n| n.agent == agent) {
        return Ok(n.clone());
    }
    let names = agent::install::events(agent, event.name);
    let tool = event.tool_name();
    let pick = if agent == Agent::Windsurf && !names.is_empty() && tool.is_some() {
        // One Windsurf hook per kind of tool.
        let t = tool.unwrap_or_default();
        let kind = match t {
            "Bash" => "run_command",
            "Read" => "read_code",
            "Write" | "Edit" | "MultiEdit" => "write_code",
            _ if t.starts_with("mcp__") => "mcp_tool_use",
            _ => "",
        };
        names
            .iter()
            .find(|n| !kind.is_empty() && n.ends_with(kind))
            .copied()
    } else {
        names.first().copied()
    };
    let Some(native_event) = pick else {
        return Err(match tool {
            Some(t) if !names.is_empty() => {
                format!("{} has no hook for the tool {t}", agent.display_name())
            }
            _ => format!(
                "{} has no {} event: the hook never runs there",
                agent.display_name(),
                event.name
            ),
        });
    };
    let mut n = Native::new(agent, native_event);
    n.tool = tool.map(|t| {
        agent_tool_names(agent, t)
            .first()
            .map_or_else(|| t.to_owned(), |s| (*s).to_owned())
    });
    n.camel = agent == Agent::Copilot && native_event.starts_with(|c: char| c.is_ascii_lowercase());
    n.reentries = u32::from(event.stop_data().is_some_and(|s| s.stop_hook_active));
    Ok(n)
}

/// The answer `native.agent` receives for `verdict`.
pub(crate) fn answer(
    native: &Native,
    event: &Event,
    verdict: &Verdict,
    failures: &Failures,
) -> Answer {
    agent::render(native, event, verdict, failures)
}

/// What `agent` does with `a` on an event of `kind`; `Err` when the agent could not read it at
/// all (stdout that is not the JSON it expects).
pub(crate) fn read(agent: Agent, kind: Kind, a: &Answer) -> Result<Reading, String> {
    let mut r = Reading::default();
    let stderr = a.stderr.trim().to_owned();
    let json: Value = if a.stdout.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&a.stdout).map_err(|e| {
            format!(
                "{} cannot read the answer: stdout is not JSON ({e}): {}",
                agent.display_name(),
                a.stdout
            )
        })?
    };
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let hso = json.get("hookSpecificOutput").cloned().unwrap_or(json!({}));
    match agent {
        Agent::Claude | Agent::Codex | Agent::VsCode | Agent::Kimi | Agent::Qwen => {
            // Exit 2 blocks with stderr (Codex needs the text); another non-zero exit is a
            // non-blocking error.
            if a.exit_code == 2 && (agent != Agent::Codex || !stderr.is_empty()) {
                if kind == Kind::Stop {
                    r.continue_with = Some(stderr);
                } else {
                    r.deny = Some(stderr);
                }
                return Ok(r);
            }
            if a.exit_code != 0 {
                return Ok(r);
            }
            if agent == Agent::Kimi {
                // Kimi reads only a deny from the JSON.
                if hso["permissionDecision"] == "deny" {
                    r.deny = Some(s(&hso["permissionDecisionReason"]));
                }
                return Ok(r);
            }
            match hso["permissionDecision"].as_str() {
                Some("deny") => r.deny = Some(s(&hso["permissionDecisionReason"])),
                Some("ask") => r.ask = true,
                // A bare allow is no grant in Codex.
                Some("allow") if agent != Agent::Codex => r.allow = true,
                _ => {}
            }
            if let Some(b) = hso.get("decision").and_then(|d| d.get("behavior")) {
                match b.as_str() {
                    Some("deny") => r.deny = Some(s(&hso["decision"]["message"])),
                    Some("allow") => r.allow = true,
                    _ => {}
                }
            }
            // Qwen Code never reads `updatedInput` (the real-agent suite).
            if let Some(u) = hso.get("updatedInput").filter(|_| agent != Agent::Qwen) {
                r.rewrite = Some(u.clone());
            }
            if let Some(c) = hso.get("additionalContext") {
                r.contexts.push(s(c));
            }
            let decision = json.get("decision").or(hso.get("decision")).map(s);
            if decision.as_deref() == Some("block") {
                let reason = s(json
                    .get("reason")
                    .or(hso.get("reason"))
                    .unwrap_or(&Value::Null));
                match kind {
                    Kind::Stop => r.continue_with = Some(reason),
                    _ => r.deny = Some(reason),
                }
            }
            if json["continue"] == false {
                if kind == Kind::Prompt {
                    r.deny.get_or_insert_with(|| s(&json["stopReason"]));
                } else {
                    r.stop = true;
                }
            }
        }
        Agent::Gemini => {
            // The JSON decides whatever the exit code.
            match json["decision"].as_str() {
                Some("deny" | "block") if kind == Kind::Stop => {
                    r.continue_with = Some(s(&json["reason"]));
                }
                Some("deny" | "block") => r.deny = Some(s(&json["reason"])),
                Some("ask") => r.ask = true,
                _ => {}
            }
            if let Some(u) = hso.get("tool_input") {
                r.rewrite = Some(u.clone());
            }
            if let Some(c) = hso.get("additionalContext") {
                r.contexts.push(s(c));
            }
            if json["continue"] == false {
                r.stop = true;
            }
        }
        Agent::Cursor => {
            if a.exit_code == 2 {
                r.deny = Some(stderr);
                return Ok(r);
            }
            match json["permission"].as_str() {
                Some("deny") => r.deny = Some(s(&json["agent_message"])),
                Some("ask") => r.ask = true,
                Some("allow") => r.allow = true,
                _ => {}
            }
            if let Some(u) = json.get("updated_input") {
                r.rewrite = Some(u.clone());
            }
            if let Some(c) = json.get("additional_context") {
                r.contexts.push(s(c));
            }
            if json["continue"] == false {
                r.deny.get_or_insert_with(|| s(&json["user_message"]));
            }
            if let Some(f) = json.get("followup_message") {
                r.continue_with = Some(s(f));
            }
        }
        Agent::Copilot => {
            // GitHub's reference: a non-zero exit is logged and skipped (a later reading has
            // preToolUse deny on it; the reading that does less is taken).
            if a.exit_code != 0 {
                return Ok(r);
            }
            match json["permissionDecision"].as_str() {
                Some("deny") => r.deny = Some(s(&json["permissionDecisionReason"])),
                Some("ask") => r.ask = true,
                Some("allow") => r.allow = true,
                _ => {}
            }
            if let Some(b) = json.get("behavior").and_then(Value::as_str) {
                match b {
                    "deny" => r.deny = Some(s(&json["message"])),
                    "allow" => r.allow = true,
                    _ => {}
                }
            }
            if let Some(u) = json.get("modifiedArgs") {
                r.rewrite = Some(u.clone());
            }
            if let Some(c) = json.get("additionalContext") {
                r.contexts.push(s(c));
            }
            if kind == Kind::Stop && json["decision"] == "block" {
                r.continue_with = Some(s(&json["reason"]));
            }
        }
        Agent::Windsurf => {
            // Exit codes only: exit 2 blocks a pre-hook; nothing else is read.
            if a.exit_code == 2 && kind != Kind::Stop {
                r.deny = Some(stderr);
            }
        }
    }
    // An allow that carries a rewrite runs the rewritten call: that is the rewrite, not a grant
    // of the call as it was.
    if r.allow && r.rewrite.is_some() {
        r.allow = false;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::aggregate::PreToolUseResult;
    use hookbox_core::output::PermissionDecision;

    fn bash(cmd: &str) -> Event {
        Event::from_payload(
            Some(EventName::PreToolUse),
            json!({"tool_name": "Bash", "tool_input": {"command": cmd}}),
            "s",
            "/p",
        )
        .unwrap()
    }

    fn reading(agent: Agent, event: &Event, verdict: &Verdict) -> Reading {
        let native = native_for(agent, event, None).unwrap();
        let a = answer(&native, event, verdict, &Failures::default());
        read(agent, Kind::of(event.name), &a).unwrap()
    }

    #[test]
    fn a_deny_is_read_as_a_deny_by_every_agent() {
        let e = bash("rm -rf /");
        let v = Verdict::PreToolUse(PreToolUseResult {
            decision: Some(PermissionDecision::Deny),
            reason: Some("no".into()),
            ..PreToolUseResult::default()
        });
        for agent in Agent::ALL {
            let r = reading(agent, &e, &v);
            assert!(r.deny.is_some(), "{agent}: {}", r.describe());
        }
    }

    #[test]
    fn an_ask_is_a_deny_where_the_agent_cannot_ask() {
        let e = bash("make deploy");
        let v = Verdict::PreToolUse(PreToolUseResult {
            decision: Some(PermissionDecision::Ask),
            reason: Some("sure?".into()),
            ..PreToolUseResult::default()
        });
        assert!(reading(Agent::Claude, &e, &v).ask);
        let codex = reading(Agent::Codex, &e, &v);
        assert!(!codex.ask && codex.deny.is_some(), "{}", codex.describe());
    }

    #[test]
    fn an_event_an_agent_lacks_is_named() {
        let e = Event::from_payload(
            Some(EventName::PermissionRequest),
            json!({"tool_name": "Bash", "tool_input": {}}),
            "s",
            "/p",
        )
        .unwrap();
        let why = native_for(Agent::Gemini, &e, None).unwrap_err();
        assert!(
            why.contains("Gemini CLI has no PermissionRequest event"),
            "{why}"
        );
        let glob = Event::from_payload(
            Some(EventName::PreToolUse),
            json!({"tool_name": "Glob", "tool_input": {}}),
            "s",
            "/p",
        )
        .unwrap();
        let why = native_for(Agent::Windsurf, &glob, None).unwrap_err();
        assert!(
            why.contains("Windsurf has no hook for the tool Glob"),
            "{why}"
        );
    }
}
