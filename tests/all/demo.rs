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
    // One compile cache for both runs: the first compiles the components (the Python guest's
    // 18.5 MB take tens of seconds in a debug build), the transcript run takes them from it.
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
    the_polyglot_guests_join_in_or_are_left_out_saying_why(&v);
    the_transcript_is_readable_and_plain_when_piped(&cache);
}

/// The JavaScript and Python guests run in the same session with their plugin's config and
/// nothing else — or, in a binary built without their tooling, their plugin is left out and the
/// demo says why (never in CI, which requires the tooling).
fn the_polyglot_guests_join_in_or_are_left_out_saying_why(v: &serde_json::Value) {
    let steps = v["steps"].as_array().expect("steps");
    let polyglot_hook = |step: usize| {
        steps[step]["dispatches"][0]["hooks"]
            .as_array()
            .expect("hooks")
            .iter()
            .find(|h| h["plugin"] == "polyglot-guests")
            .cloned()
    };
    let left_out = v["left_out"].as_array().expect("left_out");
    if let Some(entry) = left_out.first() {
        assert_ne!(
            std::env::var("HOOKBOX_REQUIRE_POLYGLOT").as_deref(),
            Ok("1"),
            "the polyglot guests are required but the demo left them out: {entry}"
        );
        assert_eq!(entry["plugin"], "polyglot-guests");
        assert!(
            entry["why"]
                .as_str()
                .unwrap_or_default()
                .contains("scripts/setup-polyglot.sh"),
            "{entry}"
        );
        assert!(polyglot_hook(1).is_none() && polyglot_hook(3).is_none());
        return;
    }
    // JavaScript: its context follows the project's, in the text the model receives.
    let js = polyglot_hook(1).expect("the JavaScript guest ran on the prompt");
    assert!(js["effect"]["failure"].is_null(), "{js}");
    assert_eq!(
        js["effect"]["contexts"][0],
        "Release freeze: no deploys to prod after Thursday 18:00 UTC (added by a hook written in JavaScript)."
    );
    assert!(
        steps[1]["dispatches"][0]["rendered"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("added by a hook written in JavaScript"),
        "{}",
        steps[1]["dispatches"][0]["rendered"]
    );
    // Python: it denies the same command the Rust guard denies, with its own reason.
    let py = polyglot_hook(3).expect("the Python guest ran on the Bash call");
    assert!(py["effect"]["failure"].is_null(), "{py}");
    assert_eq!(py["effect"]["permission"], "deny", "{py}");
    assert!(
        py["effect"]["permission_reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("shell-guard: the command "),
        "{py}"
    );
    // A force-push is no business of the Python guard: it says nothing, the rewrite stands.
    let quiet = polyglot_hook(4).expect("the Python guest ran on the push");
    assert!(quiet["effect"]["permission"].is_null(), "{quiet}");
}

fn the_transcript_is_readable_and_plain_when_piped(cache: &Dir) {
    let run = run_demo(&[], cache);
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

#[test]
fn an_optional_plugin_without_its_components_is_left_out_saying_why() {
    // What a binary built without the JavaScript/Python tooling does with `polyglot-guests`,
    // shown with a component no binary carries: the plugin is left out, the reason names what is
    // missing, and the session runs with the rest.
    let d = Dir::new();
    let cache = Dir::new();
    d.write(
        "plugins/extra/hooks/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/not_built.wasm", "matcher": "Bash"}]}}"#,
    );
    d.write(
        "plugins/guard/hooks/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"type": "command", "command": "echo '{\"decision\": \"block\", \"reason\": \"no\"}'", "matcher": "Bash"}]}}"#,
    );
    let scenario = d.write(
        "s.json",
        r#"{"description": "", "session_id": "x", "plugins": ["guard"], "optional_plugins": ["extra"],
            "steps": [{"title": "guarded", "event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "ls"}}}]}"#,
    );
    let plugins = d.path().join("plugins");
    let args = [
        "--scenario",
        scenario.to_str().unwrap(),
        "--plugins-dir",
        plugins.to_str().unwrap(),
    ];
    let run = run_demo(&[&args[..], &["--json"]].concat(), &cache);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["left_out"][0]["plugin"], "extra", "{v}");
    assert_eq!(
        v["left_out"][0]["why"],
        "its hooks name components that are not there: hooks/not_built.wasm"
    );
    let hooks = v["steps"][0]["dispatches"][0]["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1, "only the guard ran: {hooks:?}");
    assert_eq!(hooks[0]["plugin"], "guard");
    let text = run_demo(&args, &cache);
    assert!(
        text.stdout.contains(
            "left out extra: its hooks name components that are not there: hooks/not_built.wasm"
        ),
        "{}",
        text.stdout
    );
}

#[test]
fn a_plugin_hook_file_over_the_limit_is_refused_before_the_demo_reads_it_whole() {
    // The demo reads each plugin's hooks.json (to supply components) with the loader's limit
    // (8 MiB): a bigger one is refused by name, not read into memory whole.
    let d = Dir::new();
    let cache = Dir::new();
    let big = format!(
        "{{\"hooks\": {{}}, \"pad\": \"{}\"}}",
        "x".repeat(hookbox_core::config::DEFAULT_MAX_FILE_BYTES as usize)
    );
    d.write("plugins/huge/hooks/hooks.json", &big);
    let scenario = d.write(
        "s.json",
        r#"{"description": "", "session_id": "x", "plugins": ["huge"], "steps": []}"#,
    );
    let plugins = d.path().join("plugins");
    let run = run_demo(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--plugins-dir",
            plugins.to_str().unwrap(),
        ],
        &cache,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("hooks.json is over 8388608 bytes, the most a hook file may hold"),
        "{}",
        run.stderr
    );
}

#[test]
fn each_step_is_printed_as_soon_as_it_completes() {
    // Issue 16: the demo kept every dispatch of the session and printed them at the end (RSS
    // grew by each hook's output, event after event). Now each step is printed when it is done:
    // this test reads step 1 from stdout while step 2's hook waits for it to have done so.
    use std::io::BufRead as _;
    let d = Dir::new();
    let cache = Dir::new();
    let seen = d.path().join("step-one-was-read");
    let wait = format!(
        "for i in $(seq 600); do if [ -e '{}' ]; then echo step one was read first; exit 0; fi; sleep 0.1; done; echo gave up waiting",
        seen.display()
    );
    let hooks = serde_json::json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo first"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": wait, "timeout": 120}]}]
    }});
    d.write("plugins/p/hooks/hooks.json", &hooks.to_string());
    let scenario = d.write(
        "s.json",
        r#"{"description": "", "session_id": "x", "plugins": ["p"], "steps": [
            {"title": "step one", "event": "SessionStart"},
            {"title": "step two", "event": "UserPromptSubmit", "payload": {"prompt": "hi"}}]}"#,
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(["demo", "--scenario"])
        .arg(&scenario)
        .arg("--plugins-dir")
        .arg(d.path().join("plugins"))
        .env("HOOKBOX_CACHE_DIR", cache.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run hookbox demo");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut transcript = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        transcript.push_str(&line);
        transcript.push('\n');
        if line.contains("step one") {
            std::fs::write(&seen, "").unwrap();
            break;
        }
    }
    for line in lines {
        transcript.push_str(&line.unwrap());
        transcript.push('\n');
    }
    assert!(child.wait().unwrap().success(), "{transcript}");
    assert!(
        transcript.contains("step one was read first") && !transcript.contains("gave up"),
        "step one was not printed before step two ran:\n{transcript}"
    );
}
