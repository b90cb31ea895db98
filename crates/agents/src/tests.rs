//! Table tests of the adapters: each agent's payloads in, each verdict out — and each answer
//! read back by a model of how that agent reads its hooks' answers (from the sources each
//! adapter cites), so a row says what the agent *does*, not only what hookbox printed.

use serde_json::{Value, json};

use hookbox_core::aggregate::{PreToolUseResult, StopHookResult, UserPromptSubmitResult};
use hookbox_core::output::PermissionDecision;

use super::*;

/// A representative payload of `agent` for `event` ("pre", "prompt", "stop").
fn payload(agent: Agent, event: &str) -> (Value, Option<&'static str>) {
    let cmd = "rm -rf /";
    match (agent, event) {
        (Agent::Claude, "pre") => (
            json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/w", "tool_name": "Bash", "tool_input": {"command": cmd}}),
            None,
        ),
        (Agent::Codex, "pre") => (
            json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/w", "turn_id": "t1", "model": "gpt-5", "tool_name": "Bash", "tool_use_id": "u1", "tool_input": {"command": cmd}}),
            None,
        ),
        (Agent::Gemini, "pre") => (
            json!({"hook_event_name": "BeforeTool", "session_id": "s1", "cwd": "/w", "timestamp": "2026-08-21T10:00:00Z", "tool_name": "run_shell_command", "tool_input": {"command": cmd, "description": "clean"}}),
            None,
        ),
        (Agent::Cursor, "pre") => (
            json!({"hook_event_name": "preToolUse", "conversation_id": "s1", "generation_id": "g1", "cursor_version": "2.1", "workspace_roots": ["/w"], "cwd": "/w", "tool_name": "Shell", "tool_use_id": "u1", "tool_input": {"command": cmd, "working_directory": "/w"}}),
            None,
        ),
        (Agent::Copilot, "pre") => (
            json!({"sessionId": "s1", "timestamp": 1_788_547_866_483_u64, "cwd": "/w", "toolName": "bash", "toolArgs": {"command": cmd, "description": "clean", "mode": "sync", "initial_wait": 30}}),
            Some("preToolUse"),
        ),
        (Agent::VsCode, "pre") => (
            json!({"hookEventName": "PreToolUse", "sessionId": "s1", "timestamp": "2026-07-15T10:00:00Z", "cwd": "/w", "tool_name": "run_in_terminal", "tool_use_id": "u1", "tool_input": {"command": cmd, "explanation": "clean", "isBackground": false}}),
            None,
        ),
        (Agent::Windsurf, "pre") => (
            json!({"agent_action_name": "pre_run_command", "trajectory_id": "s1", "execution_id": "e1", "timestamp": "2026-07-01T10:00:00Z", "tool_info": {"command_line": cmd, "cwd": "/w"}}),
            None,
        ),
        (Agent::Kimi, "pre") => (
            json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/w", "tool_name": "Shell", "tool_call_id": "c1", "tool_input": {"command": cmd, "timeout": 60}}),
            None,
        ),
        (Agent::Qwen, "pre") => (
            json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/w", "tool_name": "run_shell_command", "tool_use_id": "u1", "tool_input": {"command": cmd, "description": "clean"}}),
            None,
        ),
        (Agent::Claude | Agent::Codex | Agent::Kimi | Agent::Qwen, "prompt") => (
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": "/w", "prompt": "hi"}),
            None,
        ),
        (Agent::Gemini, "prompt") => (
            json!({"hook_event_name": "BeforeAgent", "session_id": "s1", "cwd": "/w", "prompt": "hi"}),
            None,
        ),
        (Agent::Cursor, "prompt") => (
            json!({"hook_event_name": "beforeSubmitPrompt", "conversation_id": "s1", "generation_id": "g1", "workspace_roots": ["/w"], "prompt": "hi", "attachments": []}),
            None,
        ),
        (Agent::Copilot, "prompt") => (
            json!({"sessionId": "s1", "timestamp": 1, "cwd": "/w", "prompt": "hi"}),
            Some("userPromptSubmitted"),
        ),
        (Agent::VsCode, "prompt") => (
            json!({"hookEventName": "UserPromptSubmit", "sessionId": "s1", "prompt": "hi"}),
            None,
        ),
        (Agent::Windsurf, "prompt") => (
            json!({"agent_action_name": "pre_user_prompt", "trajectory_id": "s1", "tool_info": {"user_prompt": "hi"}}),
            None,
        ),
        (Agent::Claude | Agent::Codex | Agent::Kimi | Agent::Qwen, "stop") => (
            json!({"hook_event_name": "Stop", "session_id": "s1", "cwd": "/w", "stop_hook_active": false}),
            None,
        ),
        (Agent::Gemini, "stop") => (
            json!({"hook_event_name": "AfterAgent", "session_id": "s1", "cwd": "/w", "prompt": "hi", "prompt_response": "", "stop_hook_active": false}),
            None,
        ),
        (Agent::Cursor, "stop") => (
            json!({"hook_event_name": "stop", "conversation_id": "s1", "generation_id": "g1", "workspace_roots": ["/w"], "status": "completed", "loop_count": 0}),
            None,
        ),
        (Agent::Copilot, "stop") => (
            json!({"sessionId": "s1", "timestamp": 1, "cwd": "/w", "transcriptPath": "/t", "stopReason": "end_turn", "stop_hook_active": false}),
            Some("agentStop"),
        ),
        (Agent::VsCode, "stop") => (
            json!({"hookEventName": "Stop", "sessionId": "s1", "stop_hook_active": false}),
            None,
        ),
        (Agent::Windsurf, "stop") => (
            json!({"agent_action_name": "post_cascade_response", "trajectory_id": "s1", "tool_info": {"response": "done"}}),
            None,
        ),
        _ => unreachable!("{agent} {event}"),
    }
}

fn incoming(agent: Agent, event: &str) -> Incoming {
    let (v, name) = payload(agent, event);
    let opts = ParseOptions {
        event: name.map(str::to_owned),
        default_session: "d".into(),
        default_cwd: "/d".into(),
        ..ParseOptions::default()
    };
    parse(agent, v.to_string().as_bytes(), &opts).unwrap_or_else(|e| panic!("{agent}: {e}"))
}

/// What an agent does with an answer, per its documented reading (the adapters' sources).
#[derive(Debug, Clone, PartialEq)]
enum Does {
    /// Goes on as if no hook had answered.
    Proceed,
    /// Goes on, showing that a hook failed.
    ProceedWithError,
    /// Refuses the call / prompt; the reason reaches the model or the user.
    Deny(String),
    /// Asks the user.
    Ask,
    /// Runs the call without asking.
    Allow,
    /// Runs the call with this input (in the agent's keys).
    Rewrite(Value),
    /// Adds this context.
    Context(String),
    /// Keeps the turn going with this prompt.
    Continue(String),
    /// Stops the agent.
    Stop,
}

/// A model of how `agent` reads `a` on the PreToolUse-like event `event`. Copilot has two
/// readings of non-zero exits; `copilot_nonzero_denies` picks one.
fn read(agent: Agent, kind: &str, a: &Answer, copilot_nonzero_denies: bool) -> Vec<Does> {
    let json: Value = if a.stdout.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&a.stdout)
            .unwrap_or_else(|e| panic!("{agent}: stdout not JSON: {e}: {}", a.stdout))
    };
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let hso = json.get("hookSpecificOutput").cloned().unwrap_or(json!({}));
    let mut does = Vec::new();
    match agent {
        // Qwen Code reads Claude Code's answer (its hooks page), but never `updatedInput`.
        Agent::Claude | Agent::Codex | Agent::Kimi | Agent::VsCode | Agent::Qwen => {
            if a.exit_code == 2 && (agent != Agent::Codex || !a.stderr.is_empty()) {
                let reason = match kind {
                    "stop" if agent == Agent::Kimi => {
                        return vec![Does::Continue(a.stderr.trim().to_owned())];
                    }
                    _ => a.stderr.trim().to_owned(),
                };
                does.push(Does::Deny(reason));
                return does;
            }
            if a.exit_code != 0 {
                return vec![Does::ProceedWithError];
            }
            if agent == Agent::Kimi {
                return vec![if hso["permissionDecision"] == "deny" {
                    Does::Deny(s(&hso["permissionDecisionReason"]))
                } else {
                    Does::Proceed
                }];
            }
            if agent == Agent::Codex {
                // Strict schema: only these keys may appear on these events.
                let allowed_top = [
                    "continue",
                    "stopReason",
                    "systemMessage",
                    "decision",
                    "reason",
                    "hookSpecificOutput",
                ];
                for k in json.as_object().unwrap().keys() {
                    assert!(
                        allowed_top.contains(&k.as_str()),
                        "Codex would reject `{k}`: {json}"
                    );
                }
                if kind == "pre" {
                    assert!(
                        json.get("continue").is_none(),
                        "Codex rejects continue on PreToolUse"
                    );
                    assert_ne!(hso["permissionDecision"], "ask", "Codex rejects ask");
                    if hso.get("updatedInput").is_some() {
                        assert_eq!(
                            hso["permissionDecision"], "allow",
                            "Codex needs allow with updatedInput"
                        );
                    }
                    if hso["permissionDecision"] == "deny" {
                        assert!(!s(&hso["permissionDecisionReason"]).is_empty());
                    }
                }
            }
            match hso["permissionDecision"].as_str() {
                Some("deny") => does.push(Does::Deny(s(&hso["permissionDecisionReason"]))),
                Some("ask") => does.push(Does::Ask),
                Some("allow") if hso.get("updatedInput").is_none() && agent != Agent::Codex => {
                    does.push(Does::Allow)
                }
                _ => {}
            }
            if let Some(u) = hso.get("updatedInput").filter(|_| agent != Agent::Qwen) {
                does.push(Does::Rewrite(u.clone()));
            }
            if let Some(c) = hso.get("additionalContext") {
                does.push(Does::Context(s(c)));
            }
            let decision = json.get("decision").or(hso.get("decision")).map(s);
            match (kind, decision.as_deref()) {
                ("stop", Some("block")) => {
                    does.push(Does::Continue(s(json
                        .get("reason")
                        .or(hso.get("reason"))
                        .unwrap())));
                }
                ("prompt", Some("block")) => does.push(Does::Deny(s(&json["reason"]))),
                _ => {}
            }
            if json["continue"] == false {
                does.push(if kind == "prompt" {
                    Does::Deny(s(&json["stopReason"]))
                } else {
                    Does::Stop
                });
            }
        }
        Agent::Gemini => {
            // The JSON decides whatever the exit code.
            match json["decision"].as_str() {
                Some("deny" | "block") if kind == "stop" => {
                    does.push(Does::Continue(s(&json["reason"])))
                }
                Some("deny" | "block") => does.push(Does::Deny(s(&json["reason"]))),
                Some("ask") => does.push(Does::Ask),
                _ => {}
            }
            if let Some(u) = hso.get("tool_input") {
                does.push(Does::Rewrite(u.clone()));
            }
            if let Some(c) = hso.get("additionalContext") {
                does.push(Does::Context(s(c)));
            }
            if json["continue"] == false {
                does.push(Does::Stop);
            }
            if does.is_empty()
                && json
                    .get("systemMessage")
                    .is_some_and(|m| s(m).starts_with("hookbox:"))
            {
                does.push(Does::ProceedWithError);
            }
        }
        Agent::Cursor => {
            if a.exit_code == 2 {
                return vec![Does::Deny(String::new())];
            }
            assert_eq!(a.exit_code, 0, "failClosed would block any other code");
            assert!(json.is_object(), "failClosed would block a non-JSON answer");
            match json["permission"].as_str() {
                Some("deny") => does.push(Does::Deny(s(&json["agent_message"]))),
                Some("ask") => does.push(Does::Ask),
                Some("allow") if json.get("updated_input").is_none() => does.push(Does::Allow),
                _ => {}
            }
            if let Some(u) = json.get("updated_input") {
                does.push(Does::Rewrite(u.clone()));
            }
            if let Some(c) = json.get("additional_context") {
                does.push(Does::Context(s(c)));
            }
            if json["continue"] == false {
                does.push(Does::Deny(s(&json["user_message"])));
            }
            if let Some(f) = json.get("followup_message") {
                does.push(Does::Continue(s(f)));
            }
        }
        Agent::Copilot => {
            if a.exit_code != 0 {
                return vec![if copilot_nonzero_denies && kind == "pre" {
                    Does::Deny(String::new())
                } else {
                    Does::Proceed
                }];
            }
            match json["permissionDecision"].as_str() {
                Some("deny") => does.push(Does::Deny(s(&json["permissionDecisionReason"]))),
                // With nobody to ask, Copilot denies after ≈25 s; interactively it asks.
                Some("ask") => does.push(Does::Ask),
                Some("allow") if json.get("modifiedArgs").is_none() => does.push(Does::Allow),
                _ => {}
            }
            if let Some(u) = json.get("modifiedArgs") {
                does.push(Does::Rewrite(u.clone()));
            }
            if kind == "stop" && json["decision"] == "block" {
                does.push(Does::Continue(s(&json["reason"])));
            }
            // Copilot CLI 1.0.102 hands it to the model on userPromptSubmitted (real-agent
            // suite), and on the tool events.
            if let Some(c) = json.get("additionalContext").filter(|_| kind != "pre") {
                does.push(Does::Context(s(c)));
            }
            // No block on a prompt, but a replacement: the user's text never reaches the model.
            if let Some(p) = json.get("modifiedPrompt").filter(|_| kind == "prompt") {
                does.push(Does::Deny(s(p)));
            }
        }
        Agent::Windsurf => {
            if a.exit_code == 2 && kind != "stop" {
                return vec![Does::Deny(a.stderr.trim().to_owned())];
            }
        }
    }
    if does.is_empty() {
        does.push(Does::Proceed);
    }
    does
}

fn tool_verdict(f: impl FnOnce(&mut PreToolUseResult)) -> Verdict {
    let mut r = PreToolUseResult::default();
    f(&mut r);
    Verdict::PreToolUse(r)
}

fn answer(agent: Agent, kind: &str, verdict: &Verdict, failures: &Failures) -> Answer {
    let inc = incoming(agent, kind);
    render(&inc.native, &inc.event, verdict, failures)
}

#[test]
fn every_agents_shell_payload_is_claude_codes_bash_call() {
    for agent in Agent::ALL {
        let inc = incoming(agent, "pre");
        let ev = &inc.event;
        assert_eq!(ev.name, EventName::PreToolUse, "{agent}");
        assert_eq!(ev.tool_name(), Some("Bash"), "{agent}");
        assert_eq!(ev.tool_input().unwrap()["command"], "rm -rf /", "{agent}");
        assert_eq!(ev.session_id, "s1", "{agent}");
        assert_eq!(ev.cwd, "/w", "{agent}");
        assert_eq!(inc.native.agent, agent);
    }
}

#[test]
fn deny_is_a_deny_with_its_reason_in_every_agent() {
    let v = tool_verdict(|r| {
        r.decision = Some(PermissionDecision::Deny);
        r.reason = Some("shell-guard: rm -rf /".into());
        r.blocking_error = r.reason.clone();
    });
    for agent in Agent::ALL {
        for copilot_reading in [false, true] {
            let a = answer(agent, "pre", &v, &Failures::default());
            let does = read(agent, "pre", &a, copilot_reading);
            assert!(
                matches!(&does[..], [Does::Deny(r)] if r.is_empty() || r.contains("rm -rf /")),
                "{agent}: {does:?} from {a:?}"
            );
        }
    }
}

#[test]
fn ask_asks_where_the_agent_can_and_denies_where_it_cannot() {
    let v = tool_verdict(|r| {
        r.decision = Some(PermissionDecision::Ask);
        r.reason = Some("force push".into());
    });
    for agent in Agent::ALL {
        let a = answer(agent, "pre", &v, &Failures::default());
        let does = read(agent, "pre", &a, true);
        let can_ask = matches!(
            agent,
            Agent::Claude | Agent::Gemini | Agent::Copilot | Agent::VsCode | Agent::Qwen
        );
        if can_ask {
            assert_eq!(does, vec![Does::Ask], "{agent}: {a:?}");
        } else {
            assert!(
                matches!(&does[..], [Does::Deny(r)] if r.is_empty() || (r.contains("force push") && r.contains("cannot ask"))),
                "{agent}: {does:?} from {a:?}"
            );
            if agent != Agent::Windsurf && agent != Agent::Kimi {
                assert!(!a.notes.is_empty(), "{agent}: the change is noted");
            }
        }
    }
}

#[test]
fn a_rewrite_is_applied_where_possible_and_a_named_deny_elsewhere() {
    let new = json!({"command": "rm -rf ./build", "description": "clean"});
    // A rewrite with an allow: every agent that can rewrite does.
    let v = tool_verdict(|r| {
        r.decision = Some(PermissionDecision::Allow);
        r.updated_input = Some(new.clone());
    });
    for agent in Agent::ALL {
        let a = answer(agent, "pre", &v, &Failures::default());
        let does = read(agent, "pre", &a, true);
        match agent {
            Agent::Windsurf | Agent::Kimi | Agent::Qwen => assert!(
                matches!(&does[..], [Does::Deny(r)] if r.contains("rm -rf ./build")),
                "{agent}: {does:?}"
            ),
            _ => assert!(
                does.iter()
                    .any(|d| matches!(d, Does::Rewrite(u) if u["command"] == "rm -rf ./build")),
                "{agent}: {does:?} from {a:?}"
            ),
        }
    }
    // A rewrite without an allow: Codex would run the original, so it is a named deny there.
    let v = tool_verdict(|r| r.updated_input = Some(new.clone()));
    let a = answer(Agent::Codex, "pre", &v, &Failures::default());
    let does = read(Agent::Codex, "pre", &a, true);
    assert!(
        matches!(&does[..], [Does::Deny(r)] if r.contains("rm -rf ./build")),
        "{does:?}"
    );
    // Gemini merges: a rewrite that drops a key cannot be said.
    let v = tool_verdict(|r| r.updated_input = Some(json!({"command": "ls"})));
    let does = read(
        Agent::Gemini,
        "pre",
        &answer(Agent::Gemini, "pre", &v, &Failures::default()),
        true,
    );
    assert!(
        matches!(&does[..], [Does::Deny(r)] if r.contains("description")),
        "{does:?}"
    );
}

#[test]
fn rewrites_go_back_in_the_agents_own_keys() {
    let (v, _) = (
        json!({"hookEventName": "PreToolUse", "tool_name": "replace_string_in_file", "tool_input": {"filePath": "/a", "oldString": "x", "newString": "y"}}),
        (),
    );
    let inc = parse(
        Agent::VsCode,
        v.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.event.tool_name(), Some("Edit"));
    assert_eq!(inc.event.tool_input().unwrap()["file_path"], "/a");
    let verdict = tool_verdict(|r| {
        r.updated_input = Some(json!({"file_path": "/a", "old_string": "x", "new_string": "z"}))
    });
    let a = render(&inc.native, &inc.event, &verdict, &Failures::default());
    let out: Value = serde_json::from_str(&a.stdout).unwrap();
    assert_eq!(
        out["hookSpecificOutput"]["updatedInput"],
        json!({"filePath": "/a", "oldString": "x", "newString": "z"})
    );
    let v = json!({"sessionId": "s", "toolName": "edit", "toolArgs": "{\"path\":\"/a\",\"old_str\":\"x\",\"new_str\":\"y\"}"});
    let opts = ParseOptions {
        event: Some("preToolUse".into()),
        ..ParseOptions::default()
    };
    let inc = parse(Agent::Copilot, v.to_string().as_bytes(), &opts).unwrap();
    assert_eq!(
        inc.event.tool_input().unwrap(),
        &json!({"file_path": "/a", "old_string": "x", "new_string": "y"})
    );
    let a = render(&inc.native, &inc.event, &verdict, &Failures::default());
    let out: Value = serde_json::from_str(&a.stdout).unwrap();
    assert_eq!(
        out["modifiedArgs"],
        json!({"path": "/a", "old_str": "x", "new_str": "z"})
    );
}

#[test]
fn allow_is_a_grant_only_where_the_agent_has_one() {
    let v = tool_verdict(|r| r.decision = Some(PermissionDecision::Allow));
    for agent in Agent::ALL {
        let does = read(
            agent,
            "pre",
            &answer(agent, "pre", &v, &Failures::default()),
            true,
        );
        let grants = matches!(
            agent,
            Agent::Claude | Agent::Cursor | Agent::Copilot | Agent::VsCode | Agent::Qwen
        );
        assert_eq!(
            does,
            vec![if grants { Does::Allow } else { Does::Proceed }],
            "{agent}"
        );
    }
}

#[test]
fn nothing_to_say_proceeds_everywhere() {
    let v = tool_verdict(|_| {});
    for agent in Agent::ALL {
        for reading in [false, true] {
            let a = answer(agent, "pre", &v, &Failures::default());
            assert_eq!(
                read(agent, "pre", &a, reading),
                vec![Does::Proceed],
                "{agent}: {a:?}"
            );
            assert!(a.notes.is_empty(), "{agent}");
        }
    }
}

#[test]
fn failures_block_when_the_rule_fails_closed_and_proceed_when_it_fails_open() {
    let timeout = "guard.wasm: hook failed (timeout: killed after 2 s)".to_owned();
    // Fail-open: nothing decided, one failure.
    let open = Failures {
        open: vec![timeout.clone()],
        closed: vec![],
    };
    let v = tool_verdict(|_| {});
    for agent in Agent::ALL {
        for reading in [false, true] {
            let a = answer(agent, "pre", &v, &open);
            let does = read(agent, "pre", &a, reading);
            assert!(
                matches!(&does[..], [Does::Proceed | Does::ProceedWithError]),
                "{agent} (copilot nonzero denies: {reading}): {does:?} from {a:?}"
            );
        }
    }
    // Fail-closed: the verdict is a deny whose reason names the failure.
    let closed = Failures {
        open: vec![],
        closed: vec![timeout.clone()],
    };
    let v = tool_verdict(|r| {
        r.decision = Some(PermissionDecision::Deny);
        r.reason = Some("hook failed (timeout): killed after 2 s".into());
    });
    for agent in Agent::ALL {
        for reading in [false, true] {
            let a = answer(agent, "pre", &v, &closed);
            let does = read(agent, "pre", &a, reading);
            assert!(
                matches!(&does[..], [Does::Deny(_)]),
                "{agent}: {does:?} from {a:?}"
            );
        }
    }
    // Claude Code: also exit 2, so even a Claude Code that ignores JSON on exit 2 blocks.
    assert_eq!(answer(Agent::Claude, "pre", &v, &closed).exit_code, 2);
}

#[test]
fn hookbox_errors_follow_the_on_error_mode() {
    for agent in Agent::ALL {
        let native = incoming(agent, "pre").native;
        let a = render_error(
            &native,
            Some(EventName::PreToolUse),
            "cannot load plugins",
            FailMode::Block,
        );
        assert!(
            matches!(&read(agent, "pre", &a, false)[..], [Does::Deny(_)]),
            "{agent}: {a:?}"
        );
        let a = render_error(
            &native,
            Some(EventName::PreToolUse),
            "cannot load plugins",
            FailMode::Allow,
        );
        assert!(
            matches!(
                &read(agent, "pre", &a, true)[..],
                [Does::Proceed | Does::ProceedWithError]
            ),
            "{agent}: {a:?}"
        );
        let a = render_error(&native, None, "no payload", FailMode::Block);
        assert_eq!((a.exit_code, a.stderr_is_reason), (2, true), "{agent}");
    }
}

#[test]
fn contexts_reach_the_model_or_are_dropped_with_a_note() {
    let v = tool_verdict(|r| r.additional_contexts = vec!["lint first".into()]);
    for agent in Agent::ALL {
        let a = answer(agent, "pre", &v, &Failures::default());
        let does = read(agent, "pre", &a, true);
        let carries = matches!(
            agent,
            Agent::Claude | Agent::Codex | Agent::VsCode | Agent::Qwen
        );
        if carries {
            assert_eq!(does, vec![Does::Context("lint first".into())], "{agent}");
        } else {
            assert_eq!(does, vec![Does::Proceed], "{agent}");
            assert!(
                a.notes.iter().any(|n| n.contains("dropped")),
                "{agent}: {a:?}"
            );
        }
    }
}

#[test]
fn a_blocked_prompt_is_blocked_where_the_agent_can_block_one() {
    let v = Verdict::UserPromptSubmit(UserPromptSubmitResult {
        blocking_error: Some("no secrets in prompts".into()),
        ..UserPromptSubmitResult::default()
    });
    for agent in Agent::ALL {
        let a = answer(agent, "prompt", &v, &Failures::default());
        let does = read(agent, "prompt", &a, true);
        // Copilot takes no block but replaces the prompt (`modifiedPrompt`, seen in the
        // real-agent suite): the user's text never reaches the model.
        assert!(
            does.iter()
                .any(|d| matches!(d, Does::Deny(r) if r.is_empty() || r.contains("no secrets"))),
            "{agent}: {does:?} from {a:?}"
        );
    }
}

#[test]
fn a_stop_continuation_continues_where_the_agent_can() {
    let v = Verdict::Stop(StopHookResult {
        blocking_error: None,
        force_continue: true,
        follow_up_message: Some("the answer is empty: answer the question".into()),
        additional_contexts: vec![],
        stop_reason: None,
        suppress_output: false,
        system_message: None,
        messages: vec![],
        matched_rule_count: 1,
        outcome: hookbox_core::Outcome::Continue,
    });
    for agent in Agent::ALL {
        let a = answer(agent, "stop", &v, &Failures::default());
        let does = read(agent, "stop", &a, true);
        if agent == Agent::Windsurf {
            assert_eq!(does, vec![Does::Proceed]);
            assert!(
                a.notes.iter().any(|n| n.contains("cannot continue")),
                "{a:?}"
            );
        } else {
            assert!(
                does.contains(&Does::Continue(
                    "the answer is empty: answer the question".into()
                )),
                "{agent}: {does:?} from {a:?}"
            );
        }
    }
}

#[test]
fn stop_on_pre_tool_use_never_lets_the_call_run() {
    let v = tool_verdict(|r| {
        r.prevent_continuation = true;
        r.stop_reason = Some("quota used up".into());
    });
    for agent in Agent::ALL {
        let does = read(
            agent,
            "pre",
            &answer(agent, "pre", &v, &Failures::default()),
            true,
        );
        // A deny, not only a stop: Claude Code 2.1.328 runs the call under `continue: false`
        // and ends the session only afterwards (real-agent suite).
        assert!(
            does.iter().any(|d| matches!(d, Does::Deny(_))),
            "{agent}: {does:?} from {:?}",
            answer(agent, "pre", &v, &Failures::default())
        );
    }
}

#[test]
fn copilot_events_come_from_the_command_line_and_must_agree() {
    let (v, _) = payload(Agent::Copilot, "pre");
    let e = parse(
        Agent::Copilot,
        v.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("pass --event NAME"), "{e}");
    let perm = json!({"hookName": "permissionRequest", "sessionId": "s", "toolName": "bash", "toolInput": {"command": "ls"}});
    let opts = ParseOptions {
        event: Some("preToolUse".into()),
        ..ParseOptions::default()
    };
    let e = parse(Agent::Copilot, perm.to_string().as_bytes(), &opts).unwrap_err();
    assert!(matches!(e, AgentError::EventMismatch { .. }), "{e}");
    let inc = parse(
        Agent::Copilot,
        perm.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.event.name, EventName::PermissionRequest);
    assert_eq!(inc.event.tool_name(), Some("Bash"));
    // The PascalCase ("VS Code compatible") dialect names its event.
    let pascal = json!({"hook_event_name": "PreToolUse", "session_id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w", "tool_name": "bash", "tool_input": {"command": "ls"}});
    let inc = parse(
        Agent::Copilot,
        pascal.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(!inc.native.camel);
    assert_eq!(inc.event.tool_name(), Some("Bash"));
}

#[test]
fn bad_payloads_name_the_agents_field() {
    let cases: [(Agent, Value, Option<&str>, &str); 8] = [
        (
            Agent::Gemini,
            json!({"hook_event_name": "BeforeTool", "tool_name": 3}),
            None,
            "field `tool_name` must be a string",
        ),
        (
            Agent::Gemini,
            json!({"hook_event_name": "BeforeModel"}),
            None,
            "is about a model request",
        ),
        (
            Agent::Cursor,
            json!({"hook_event_name": "beforeShellExecution"}),
            None,
            "needs field `command`",
        ),
        (
            Agent::Copilot,
            json!({"sessionId": "s", "toolArgs": {}}),
            Some("preToolUse"),
            "needs field `toolName`",
        ),
        (
            Agent::Windsurf,
            json!({"agent_action_name": "pre_run_command", "tool_info": {"command_line": ["ls"]}}),
            None,
            "field `tool_info.command_line` must be a string",
        ),
        (
            Agent::Windsurf,
            json!({"agent_action_name": "pre_teleport"}),
            None,
            "is not a Windsurf hook event",
        ),
        (
            Agent::Kimi,
            json!({"hook_event_name": "Stop", "stop_hook_active": "yes"}),
            None,
            "field `stop_hook_active` must be a boolean",
        ),
        (
            Agent::Cursor,
            json!({"hook_event_name": "stop", "loop_count": -1}),
            None,
            "field `loop_count` must be a non-negative integer",
        ),
    ];
    for (agent, v, event, want) in cases {
        let opts = ParseOptions {
            event: event.map(str::to_owned),
            ..ParseOptions::default()
        };
        let e = parse(agent, v.to_string().as_bytes(), &opts).unwrap_err();
        assert!(
            e.to_string().contains(want),
            "{agent}: `{e}` lacks `{want}`"
        );
    }
}

#[test]
fn stop_reentries_come_from_the_agent() {
    let v = json!({"hook_event_name": "stop", "conversation_id": "c", "loop_count": 4});
    let inc = parse(
        Agent::Cursor,
        v.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.native.reentries, 4);
    assert!(inc.event.stop_data().unwrap().stop_hook_active);
    let v = json!({"hook_event_name": "Stop", "session_id": "s", "stop_hook_active": true});
    let inc = parse(
        Agent::Claude,
        v.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.native.stop_state(3).reentries, 1);
}

#[test]
fn every_native_event_maps_and_install_events_round_trip() {
    for agent in Agent::ALL {
        for (native, event) in agent.events() {
            assert_eq!(agent.event_of(native), Some(*event), "{agent} {native}");
        }
        for event in EventName::ALL {
            for native in install::events(agent, *event) {
                let back = agent
                    .event_of(native)
                    .unwrap_or_else(|| panic!("{agent} {native}"));
                let same = back == *event
                    || (agent == Agent::Gemini && *event == EventName::PostToolUseFailure);
                assert!(same, "{agent}: {event} installs {native}, which is {back}");
            }
        }
    }
    assert_eq!(
        install::events(Agent::Cursor, EventName::PreToolUse),
        vec!["preToolUse"]
    );
    assert_eq!(
        install::events(Agent::Windsurf, EventName::PreToolUse).len(),
        4
    );
    assert!(install::events(Agent::Codex, EventName::Notification).is_empty());
}

#[test]
fn agent_names_parse() {
    for a in Agent::ALL {
        assert_eq!(a.as_str().parse::<Agent>().unwrap(), a);
    }
    assert!("claude-code".parse::<Agent>().is_err());
}

#[test]
fn a_prompts_context_reaches_the_model_where_the_agent_takes_one() {
    let v = Verdict::UserPromptSubmit(UserPromptSubmitResult {
        additional_contexts: vec!["the repo is frozen".into()],
        ..UserPromptSubmitResult::default()
    });
    for agent in Agent::ALL {
        let a = answer(agent, "prompt", &v, &Failures::default());
        let does = read(agent, "prompt", &a, true);
        // Copilot's is seen in the real-agent suite (a top-level `additionalContext`).
        let takes = matches!(
            agent,
            Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Copilot | Agent::Qwen
        );
        if takes {
            assert_eq!(
                does,
                vec![Does::Context("the repo is frozen".into())],
                "{agent}: {a:?}"
            );
        } else {
            assert_eq!(does, vec![Does::Proceed], "{agent}");
            assert!(a.notes.iter().any(|n| n.contains("dropped")), "{agent}");
        }
    }
    // What `hookbox install` writes for Copilot is its PascalCase `UserPromptSubmit` (the file
    // VS Code shares): the context is at the top level there too.
    let pascal = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": "/w", "prompt": "hi"});
    let inc = parse(
        Agent::Copilot,
        pascal.to_string().as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(!inc.native.camel);
    let a = render(&inc.native, &inc.event, &v, &Failures::default());
    let out: Value = serde_json::from_str(&a.stdout).unwrap();
    assert_eq!(out["additionalContext"], "the repo is frozen", "{a:?}");
}

#[test]
fn a_headless_gemini_is_denied_what_nobody_can_confirm() {
    let v = tool_verdict(|r| {
        r.decision = Some(PermissionDecision::Ask);
        r.reason = Some("force push".into());
    });
    let mut inc = incoming(Agent::Gemini, "pre");
    inc.native.headless = true;
    let a = render(&inc.native, &inc.event, &v, &Failures::default());
    let does = read(Agent::Gemini, "pre", &a, true);
    assert!(
        matches!(&does[..], [Does::Deny(r)] if r.contains("force push") && r.contains("headless")),
        "{does:?}"
    );
    // Interactive, the ask stays an ask.
    let a = answer(Agent::Gemini, "pre", &v, &Failures::default());
    assert_eq!(read(Agent::Gemini, "pre", &a, true), vec![Does::Ask]);
}

#[test]
fn copilot_mcp_tools_are_mapped_back_from_the_configured_servers() {
    let payload = json!({"sessionId": "s", "cwd": "/w", "toolName": "my-db-run_query", "toolArgs": {"sql": "drop table x"}});
    let opts = ParseOptions {
        event: Some("preToolUse".into()),
        mcp_servers: vec!["my".into(), "my-db".into(), "github-mcp-server".into()],
        ..ParseOptions::default()
    };
    let inc = parse(Agent::Copilot, payload.to_string().as_bytes(), &opts).unwrap();
    // The longest configured name that starts it.
    assert_eq!(inc.event.tool_name(), Some("mcp__my-db__run_query"));
    assert_eq!(inc.native.tool.as_deref(), Some("my-db-run_query"));
    assert!(inc.native.warnings.is_empty(), "{:?}", inc.native.warnings);
    // No configured server starts it: named in a warning, passed on as sent.
    let opts = ParseOptions {
        event: Some("preToolUse".into()),
        ..ParseOptions::default()
    };
    let inc = parse(Agent::Copilot, payload.to_string().as_bytes(), &opts).unwrap();
    assert_eq!(inc.event.tool_name(), Some("my-db-run_query"));
    assert!(
        inc.native
            .warnings
            .iter()
            .any(|w| w.contains("my-db-run_query")),
        "{:?}",
        inc.native.warnings
    );
}

#[test]
fn a_tool_input_sent_as_a_json_string_is_read_as_its_object() {
    for agent in [Agent::Claude, Agent::Codex, Agent::Qwen] {
        let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
            "tool_name": "Bash", "tool_input": "{\"command\": \"rm -rf /\"}"});
        let inc = parse(
            agent,
            payload.to_string().as_bytes(),
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(
            inc.event.tool_input(),
            Some(&json!({"command": "rm -rf /"})),
            "{agent}"
        );
    }
}

#[test]
fn agents_own_tool_names_reach_hooks_as_claude_codes_and_unknown_ones_are_named() {
    let payload = |tool: &str| {
        json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "turn_id": "t",
            "tool_name": tool, "tool_input": {"cmd": "ls"}})
        .to_string()
    };
    let inc = parse(
        Agent::Codex,
        payload("exec_command").as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.event.tool_name(), Some("Bash"));
    assert_eq!(inc.native.turn.as_deref(), Some("t"));
    // Codex's patch stays as sent (its input is a patch), but is an Edit and a Write to rules.
    let inc = parse(
        Agent::Codex,
        payload("apply_patch").as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.event.tool_name(), Some("apply_patch"));
    let inc = parse(
        Agent::Qwen,
        payload("run_shell_command").as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(inc.event.tool_name(), Some("Bash"));
    assert!(inc.native.warnings.is_empty());
    let inc = parse(
        Agent::Codex,
        payload("shell_v9").as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(
        inc.native.warnings.iter().any(|w| w.contains("`shell_v9`")),
        "{:?}",
        inc.native.warnings
    );
    // Claude Code's own names are the table's vocabulary: never warned about.
    let inc = parse(
        Agent::Claude,
        payload("SomeNewTool").as_bytes(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(inc.native.warnings.is_empty());
}

/// Attacks on the payload (issue 28 item 5): fields at unexpected nesting, duplicate keys and
/// unicode in tool names. Each is read as the agent itself reads it, or refused by name; none
/// panics, none lets a guard miss a call it should see.
#[test]
fn hostile_payload_shapes_are_read_as_the_agent_reads_them() {
    let opts = ParseOptions::default();
    // A duplicate `tool_input`: the last is the one the agent runs (JSON.parse keeps the last).
    let twice = br#"{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_input": {"command": "rm -rf /"}}"#;
    let inc = parse(Agent::Claude, twice, &opts).unwrap();
    assert_eq!(
        inc.event.tool_input(),
        Some(&json!({"command": "rm -rf /"}))
    );
    // The event's fields nested one level down are not the event's: no tool name is made up.
    let nested = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
        "payload": {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}});
    match parse(Agent::Claude, nested.to_string().as_bytes(), &opts) {
        Ok(inc) => assert_eq!(inc.event.tool_name(), None),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    // A tool name of the wrong type is refused by its field's name.
    let wrong = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
        "tool_name": {"name": "Bash"}, "tool_input": {}});
    let err = parse(Agent::Claude, wrong.to_string().as_bytes(), &opts).unwrap_err();
    assert!(err.to_string().contains("tool_name"), "{err}");
    // Unicode in tool names: a look-alike or a zero-width join is not `Bash` (exactly as the agent
    // would not run its shell for it), kept byte for byte, and named as unknown; an MCP tool
    // with non-ASCII names maps back without splitting a character.
    for tool in ["Ваsh", r"Bash\u200b", r"Ba\u0000sh", "mcp__сервер__удалить"] {
        let text = format!(
            r#"{{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": "{tool}", "tool_input": {{}}}}"#
        );
        let inc = parse(Agent::Codex, text.as_bytes(), &opts).unwrap();
        let name = inc.event.tool_name().unwrap().to_owned();
        assert_ne!(name, "Bash", "{tool}");
        assert_eq!(canonical_tool(&name), name, "{tool}");
    }
    let copilot = ParseOptions {
        event: Some("preToolUse".into()),
        mcp_servers: vec!["сервер".into()],
        ..ParseOptions::default()
    };
    let inc = parse(
        Agent::Copilot,
        r#"{"sessionId": "s", "cwd": "/w", "toolName": "сервер-удалить", "toolArgs": {}}"#
            .as_bytes(),
        &copilot,
    )
    .unwrap();
    assert_eq!(inc.event.tool_name(), Some("mcp__сервер__удалить"));
}
