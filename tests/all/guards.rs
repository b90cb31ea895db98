//! A guard that silently stops guarding is always said (issue "A newcomer's first hour"): typos
//! in a rule's keys, matchers that do not compile or match no tool, scripts and components that
//! are missing or cannot run — at `validate`, and at `dispatch`, where a fail-closed rule that
//! cannot run blocks and says so. And `dispatch --explain`, rule by rule.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;

use crate::util::{Dir, Run, hookbox, hookbox_with_state};

fn validate(args: &[&OsStr]) -> Run {
    let mut all = vec![OsStr::new("validate")];
    all.extend_from_slice(args);
    hookbox(all)
}

/// A plugin `guard` whose one PreToolUse rule is `handler` (a JSON object) under `matcher`.
fn guard_plugin(d: &Dir, matcher: &str, handler: &str) -> std::path::PathBuf {
    d.write("guard/.claude-plugin/plugin.json", r#"{"name": "guard"}"#);
    d.write(
        "guard/hooks/hooks.json",
        &format!(
            r#"{{"hooks": {{"PreToolUse": [{{"matcher": {matcher}, "hooks": [{handler}]}}]}}}}"#
        ),
    );
    d.path().join("guard")
}

/// An executable script in the guard plugin that denies every call.
fn deny_script(d: &Dir) {
    let p = d.write(
        "guard/hooks/deny.sh",
        "#!/bin/sh\necho 'denied by the guard' >&2\nexit 2\n",
    );
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod the script");
}

#[test]
fn a_typo_in_a_rule_is_an_error_naming_the_key_it_misspells_and_strict_fails_on_any_unknown_key() {
    let d = Dir::new();
    deny_script(&d);
    // `profile` is near no key a group reads: a warning. The two typos are errors.
    let plugin = guard_plugin(
        &d,
        r#""Bash", "profile": "strict""#,
        r#"{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh", "timout": 5, "onfailure": "block"}"#,
    );
    let run = validate(&[plugin.as_os_str()]);
    assert_eq!(
        run.code,
        Some(1),
        "a misspelt setting fails validation: {run:?}"
    );
    assert!(
        run.stdout.contains(
            "error: unknown key 'timout' in a command hook — ignored, so it changes nothing (at hooks.PreToolUse[0].hooks[0].timout)\n  fix: did you mean 'timeout'?\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("error: unknown key 'onfailure' in a command hook — ignored, so it changes nothing (at hooks.PreToolUse[0].hooks[0].onfailure)\n  fix: did you mean 'onFailure'?\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("warning: unknown key 'profile' in a matcher group — ignored, so it changes nothing (at hooks.PreToolUse[0].profile)\n  fix: a matcher group reads matcher, hooks; remove 'profile', or rename it to one of them\n"),
        "{}",
        run.stdout
    );
    let json = validate(&[OsStr::new("--json"), plugin.as_os_str()]);
    assert_eq!(json.json()["summary"]["errors"], 2, "{}", json.stdout);
    let strict = validate(&[OsStr::new("--strict"), plugin.as_os_str()]);
    assert_eq!(strict.code, Some(1), "{strict:?}");
    assert!(
        strict
            .stdout
            .contains("error: unknown key 'profile' in a matcher group — ignored, so it changes nothing [an error under --strict]"),
        "{}",
        strict.stdout
    );
    let json = validate(&[
        OsStr::new("--strict"),
        OsStr::new("--json"),
        plugin.as_os_str(),
    ]);
    assert_eq!(json.json()["summary"]["errors"], 3, "{}", json.stdout);
}

#[test]
fn a_matcher_that_does_not_compile_fails_validation_and_names_the_if_it_meant() {
    let d = Dir::new();
    deny_script(&d);
    let plugin = guard_plugin(
        &d,
        r#""Bash(""#,
        r#"{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}"#,
    );
    let run = validate(&[plugin.as_os_str()]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.contains(
            ": error: Invalid matcher under 'PreToolUse': invalid JavaScript regex `Bash(`"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("fix: a matcher names tools; the argument pattern goes in the hook's \"if\": write \"matcher\": \"Bash\" and, on the handler, \"if\": \"Bash(<pattern>)\""),
        "{}",
        run.stdout
    );
}

#[test]
fn a_matcher_that_can_match_no_tool_is_named_with_why() {
    let d = Dir::new();
    deny_script(&d);
    d.write("guard/.claude-plugin/plugin.json", r#"{"name": "guard"}"#);
    d.write(
        "guard/hooks/hooks.json",
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash(git push:*)", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]},
            {"matcher": "Shel", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]}
        ]}}"#,
    );
    let run = validate(&[d.path().join("guard").as_os_str()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("warning: matcher \"Bash(git push:*)\" is permission-rule syntax: a matcher is tested against the tool name alone, and as a regular expression this one matches no tool (at hooks.PreToolUse[0].matcher)\n  fix: a matcher names tools; the argument pattern goes in the hook's \"if\": write \"matcher\": \"Bash\" and, on the handler, \"if\": \"Bash(git push:*)\"\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("warning: matcher name 'Shel' is no tool of any agent hookbox knows, so this rule never runs (at hooks.PreToolUse[1].matcher)\n  fix: did you mean 'Shell' for 'Shel'?\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("3 rules loaded from 1 plugin or file; 2 warnings, 0 errors\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn validate_checks_every_script_a_rule_names() {
    let d = Dir::new();
    d.write("guard/.claude-plugin/plugin.json", r#"{"name": "guard"}"#);
    let plain = d.write("guard/hooks/plain.sh", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    d.write(
        "guard/hooks/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/missing.sh"},
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/plain.sh"},
            {"type": "command", "command": "bash ${CLAUDE_PLUGIN_ROOT}/hooks/plain.sh"},
            {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/gone.py"}
        ]}]}}"#,
    );
    let run = validate(&[d.path().join("guard").as_os_str()]);
    assert_eq!(run.code, Some(0), "fail-open rules only warn: {run:?}");
    let warnings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": warning: "))
        .collect();
    assert_eq!(warnings.len(), 3, "{}", run.stdout);
    assert!(
        warnings[0].contains("command hook cannot run: its program ${CLAUDE_PLUGIN_ROOT}/hooks/missing.sh does not exist")
            && warnings[0].ends_with("— it fails open, so it guards nothing (at hooks.PreToolUse[0].hooks[0])"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains(
            "its program ${CLAUDE_PLUGIN_ROOT}/hooks/plain.sh is not executable (mode 644"
        ),
        "{}",
        warnings[1]
    );
    assert!(
        warnings[2].contains("its script ${CLAUDE_PLUGIN_ROOT}/hooks/gone.py does not exist"),
        "{}",
        warnings[2]
    );
}

#[test]
fn a_fail_closed_guard_whose_script_is_missing_is_an_error_and_blocks_at_dispatch() {
    let d = Dir::new();
    let plugin = guard_plugin(
        &d,
        r#""Bash""#,
        r#"{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "onFailure": "block"}"#,
    );
    let run = validate(&[plugin.as_os_str()]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.contains(": error: command hook cannot run: its program ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh does not exist"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "— it fails closed (onFailure: block), so every action it matches is blocked"
        ),
        "{}",
        run.stdout
    );
    let project = d.path().display().to_string();
    let dispatch = hookbox_with_state(
        [
            "dispatch",
            "--project-dir",
            project.as_str(),
            "--event",
            "PreToolUse",
            "--plugin",
            &plugin.display().to_string(),
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"git push --force"}"#,
            "--trust",
            "off",
        ],
        d.state(),
    );
    assert_eq!(dispatch.code, Some(1), "a load error: {dispatch:?}");
    assert!(
        dispatch
            .stdout
            .starts_with("PreToolUse · session cli-session · 1 rule matched · "),
        "{}",
        dispatch.stdout
    );
    assert!(
        dispatch
            .stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(" · 1 failed"),
        "{}",
        dispatch.stdout
    );
    assert!(
        dispatch
            .stdout
            .contains("verdict: block — deny: hook failed (spawn_error): command hook cannot run"),
        "{}",
        dispatch.stdout
    );
    assert!(
        dispatch
            .stdout
            .contains("  [0] guard failed closed: it blocks — spawn_error: command hook cannot run: its program ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh does not exist"),
        "{}",
        dispatch.stdout
    );
}

#[test]
fn a_fail_closed_wasm_guard_whose_component_is_missing_blocks() {
    let d = Dir::new();
    let plugin = guard_plugin(
        &d,
        r#""Bash""#,
        r#"{"type": "wasm", "component": "hooks/guard.wasm", "onFailure": "block"}"#,
    );
    let project = d.path().display().to_string();
    let run = hookbox_with_state(
        [
            "dispatch",
            "--project-dir",
            project.as_str(),
            "--event",
            "PreToolUse",
            "--plugin",
            &plugin.display().to_string(),
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"git push --force"}"#,
            "--trust",
            "off",
            "--json",
        ],
        d.state(),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let v = run.json();
    assert_eq!(v["outcome"], "block", "{v}");
    assert_eq!(v["matched_rule_count"], 1, "{v}");
    let reason = v["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("wasm hook not loaded") && reason.contains("hooks/guard.wasm"),
        "{reason}"
    );
}

#[test]
fn explain_names_the_part_of_each_rule_that_failed() {
    let d = Dir::new();
    deny_script(&d);
    d.write("guard/.claude-plugin/plugin.json", r#"{"name": "guard"}"#);
    d.write(
        "guard/hooks/hooks.json",
        r#"{"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh", "if": "Bash(git push:*)"}]},
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]}]
        }}"#,
    );
    let project = d.path().display().to_string();
    let plugin = d.path().join("guard").display().to_string();
    let args = [
        "dispatch",
        "--project-dir",
        project.as_str(),
        "--event",
        "PreToolUse",
        "--plugin",
        plugin.as_str(),
        "--tool",
        "run_shell_command",
        "--tool-input",
        r#"{"command":"ls -la"}"#,
        "--trust",
        "off",
        "--explain",
    ];
    let run = hookbox_with_state(args, d.state());
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[1], "explain: 3 rules of PreToolUse loaded; other events: Stop 1",
        "{}",
        run.stdout
    );
    assert!(
        lines[2].starts_with("  [0] guard · command ${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh — did not fire (if): matcher \"Bash\" matches tool_name \"run_shell_command\" as \"Bash\", its alias, but \"if\": \"Bash(git push:*)\" does not hold for run_shell_command with command \"ls -la\""),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("— did not fire (matcher): matcher \"Edit|Write\" (exact names, case-sensitive) does not match tool_name \"run_shell_command\" nor its aliases \"Bash\""),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].contains("— fired: matcher \"Bash\" matches tool_name \"run_shell_command\" as \"Bash\", its alias"),
        "{}",
        lines[4]
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let v = hookbox_with_state(json_args, d.state()).json();
    assert_eq!(v["explain"]["rules"][1]["part"], "matcher", "{v}");
    assert_eq!(v["explain"]["rules"][0]["part"], "if", "{v}");
    assert_eq!(v["explain"]["rules"][2]["matched"], true, "{v}");
}

#[test]
fn dispatch_says_why_no_rule_matched_without_being_asked() {
    let d = Dir::new();
    deny_script(&d);
    let plugin = guard_plugin(
        &d,
        r#""Edit|Write""#,
        r#"{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}"#,
    );
    let project = d.path().display().to_string();
    let plugin = plugin.display().to_string();
    let run = hookbox_with_state(
        [
            "dispatch",
            "--project-dir",
            project.as_str(),
            "--event",
            "PreToolUse",
            "--plugin",
            plugin.as_str(),
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"ls"}"#,
            "--trust",
            "off",
        ],
        d.state(),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(" · 0 rules matched · "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("— did not fire (matcher): matcher \"Edit|Write\""),
        "{}",
        run.stdout
    );
}

#[test]
fn hookbox_schema_prints_the_committed_schema() {
    let run = hookbox(["schema"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let committed =
        std::fs::read_to_string(crate::util::repo_root().join("schema/hooks.schema.json")).unwrap();
    assert_eq!(run.stdout, committed);
}

#[test]
fn completions_generate_for_three_shells() {
    for (shell, marker) in [
        ("bash", "complete -F _hookbox"),
        ("zsh", "#compdef hookbox"),
        ("fish", "complete -c hookbox"),
    ] {
        let run = hookbox(["completions", shell]);
        assert_eq!(run.code, Some(0), "{shell}: {run:?}");
        assert!(run.stdout.contains(marker), "{shell}: {}", run.stdout);
        for sub in ["validate", "dispatch", "schema", "completions", "explain"] {
            assert!(run.stdout.contains(sub), "{shell} lacks {sub}");
        }
    }
    let run = hookbox(["completions", "powershell-9"]);
    assert_eq!(run.code, Some(2), "{run:?}");
}

#[test]
fn compile_prints_json() {
    let d = Dir::new();
    let examples = crate::util::examples_with_components(&d);
    let cache = d.path().join("cache");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(["compile", "--json"])
        .arg(examples.join("plugins/wasm-shell-guard"))
        .arg(examples.join("plugins/shell-guard"))
        .env("HOOKBOX_CACHE_DIR", &cache)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["cache_dir"], cache.display().to_string(), "{v}");
    assert_eq!(v["components"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["components"][0]["outcome"], "compiled", "{v}");
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(["compile", "--json"])
        .arg(examples.join("plugins/wasm-shell-guard"))
        .env("HOOKBOX_CACHE_DIR", &cache)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["components"][0]["outcome"], "cached", "{v}");
    assert_eq!(v["components"][0]["cached_in"], "disk", "{v}");
}
