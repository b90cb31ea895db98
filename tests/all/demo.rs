//! `hookbox demo`: the scripted session runs end to end, shows every verdict the issue asks
//! for, prints no colour codes when piped, and accepts a custom scenario.

use std::process::Command;

use crate::util::{Dir, hookbox};

fn run_demo(args: &[&str], cache: &Dir) -> crate::util::Run {
    let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .arg("demo")
        .args(args)
        .env("HOOKBOX_CACHE_DIR", cache.path())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("run hookbox demo");
    crate::util::Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn the_bundled_session_shows_every_verdict() {
    let cache = Dir::new();
    let run = run_demo(&["--json"], &cache);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v = run.json();
    let steps = v["steps"].as_array().unwrap();
    let outcome = |i: usize| {
        steps[i]["dispatches"].as_array().unwrap().last().unwrap()["outcome"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // SessionStart context.
    assert_eq!(
        steps[0]["dispatches"][0]["verdict"]["additional_contexts"][0],
        "session started"
    );
    // Context injected in tags; then a blocked prompt with its marker.
    assert!(
        steps[1]["dispatches"][0]["rendered"]["text"]
            .as_str()
            .unwrap()
            .starts_with("<user-prompt-submit-hook>\nProject code name ATLAS.")
    );
    assert!(
        steps[2]["dispatches"][0]["rendered"]["text"]
            .as_str()
            .unwrap()
            .starts_with("[Blocked by hook] ")
    );
    // A wasm guard denies; a force-push is rewritten.
    assert_eq!(steps[3]["dispatches"][0]["verdict"]["decision"], "deny");
    assert_eq!(
        steps[3]["dispatches"][0]["hooks"][0]["handler_type"],
        "wasm"
    );
    assert_eq!(
        steps[4]["dispatches"][0]["verdict"]["updated_input"]["command"],
        "git push --force-with-lease origin release"
    );
    // PostToolUse audit ran.
    assert_eq!(steps[5]["dispatches"][0]["matched_rule_count"], 1);
    // Stop rescue: continue, then a second round that ends the turn.
    let rescue = steps[6]["dispatches"].as_array().unwrap();
    assert_eq!(rescue.len(), 2);
    assert_eq!(rescue[0]["outcome"], "continue");
    assert_eq!(outcome(6), "allow");
    // The second turn hits the re-entry cap (default 3).
    let capped = steps[7]["dispatches"].as_array().unwrap();
    assert_eq!(capped.len(), 4);
    assert_eq!(outcome(7), "reentry_capped");
    // PreCompact stays allow although the audit asked to block.
    assert_eq!(outcome(8), "allow");
    assert!(steps[8]["dispatches"][0]["verdict"]["ignored_block"].is_string());
    // The hostile wasm hook is contained by its timeout, and the session goes on.
    assert_eq!(
        steps[9]["dispatches"][0]["hooks"][0]["effect"]["failure"]["class"],
        "timeout"
    );
    assert_eq!(outcome(9), "allow");
    assert_eq!(steps[10]["dispatches"][0]["matched_rule_count"], 0);
    assert!(steps[10]["dispatches"][0]["hook_fired"].is_null());
}

#[test]
fn the_transcript_is_readable_and_plain_when_piped() {
    let cache = Dir::new();
    let run = run_demo(&[], &cache);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        !run.stdout.contains('\u{1b}'),
        "no ANSI escapes when stdout is not a terminal"
    );
    for needle in [
        "agent returns: [Blocked by hook] ",
        "verdict: block — deny: shell-guard:",
        "tool input: {\"command\":\"git push --force origin release\"} → {\"command\":\"git push --force-with-lease origin release\"}",
        "agent sends as the next user message: Your last answer was empty.",
        "verdict: reentry_capped",
        "verdict: allow — observe-only; ignored request to block",
        "timeout (ran past its 0.25 s timeout)",
        "done: 15 dispatches",
    ] {
        assert!(
            run.stdout.contains(needle),
            "missing {needle:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn a_custom_scenario_and_its_errors() {
    let d = Dir::new();
    let cache = Dir::new();
    let ok = d.write(
        "s.json",
        r#"{"description": "one step", "session_id": "x", "plugins": ["shell-guard"],
            "steps": [{"title": "guarded", "event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "mkfs /dev/sda"}}}]}"#,
    );
    let run = run_demo(&["--scenario", ok.to_str().unwrap(), "--json"], &cache);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.json()["steps"][0]["dispatches"][0]["verdict"]["decision"],
        "deny"
    );
    let bad = d.write(
        "bad.json",
        r#"{"description": "", "session_id": "x", "plugins": ["nope"], "steps": []}"#,
    );
    let run = hookbox(["demo", "--scenario", bad.to_str().unwrap()]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains(
            "scenario plugin `nope` is not one of the example plugins this binary carries"
        ),
        "{}",
        run.stderr
    );
}
