//! `hookbox validate`: exit codes, located diagnostics, the `--json` report, other agents'
//! files, hostile input, the corpus and the README's first command.

use std::collections::BTreeMap;

use crate::util::{Dir, corpus_tree, hookbox};

const PLUGIN_MANIFEST: &str = r#"{"name": "guard", "version": "1.0.0"}"#;
const GUARD_HOOKS: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "timeout": 5}]}]}}"#;

/// The executable script GUARD_HOOKS names, in the plugin `guard` of `d` (`validate` checks it).
fn guard_script(d: &Dir) {
    use std::os::unix::fs::PermissionsExt as _;
    let p = d.write("guard/hooks/guard.sh", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod the script");
}

#[test]
fn a_clean_plugin_exits_zero() {
    let d = Dir::new();
    d.write("guard/.claude-plugin/plugin.json", PLUGIN_MANIFEST);
    d.write("guard/hooks/hooks.json", GUARD_HOOKS);
    guard_script(&d);
    let run = hookbox([
        std::ffi::OsStr::new("validate"),
        d.path().join("guard").as_os_str(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("plugin guard (claude) at "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("  hooks/hooks.json: 1 rule (PreToolUse 1)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("1 rule loaded from 1 plugin or file; 0 warnings, 0 errors\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn a_skipped_rule_is_a_located_warning() {
    let d = Dir::new();
    let f = d.write(
        "hooks.json",
        "{\n  \"hooks\": {\n    \"Stop\": [\n      { \"hooks\": [ { \"type\": \"prompt\", \"prompt\": \"x\" } ] }\n    ]\n  }\n}\n",
    );
    let run = hookbox([std::ffi::OsStr::new("validate"), f.as_os_str()]);
    assert_eq!(
        run.code,
        Some(0),
        "warnings do not fail validation: {run:?}"
    );
    let expected = format!(
        "{}:4:20: warning: Hook type 'prompt' is not supported for event 'Stop' — skipped. (Allowed for this event: ['command', 'wasm']) (at hooks.Stop[0].hooks[0])\n  fix: prompt hooks run only on 'UserPromptSubmit'; use a command hook that prints the text\n",
        f.display()
    );
    assert!(run.stdout.starts_with(&expected), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("hooks.json (claude): 0 rules, 1 skipped\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn invalid_json_exits_one_with_its_location() {
    let d = Dir::new();
    let f = d.write("settings.json", "{\n  \"hooks\": {\"Stop\": [],}\n}");
    let run = hookbox([std::ffi::OsStr::new("validate"), f.as_os_str()]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "{}:2:24: error: invalid JSON: trailing comma\n",
            f.display()
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn usage_errors_exit_two() {
    let run = hookbox(["validate", "does/not/exist.json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "hookbox: error: cannot validate does/not/exist.json: no such file or directory\n"
    );
    let run = hookbox(["validate"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("<PATH>"), "{}", run.stderr);
    let run = hookbox(["validate", "--dialect", "cursor", "x"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("possible values: claude, agentao, ghast, simple"),
        "{}",
        run.stderr
    );
    let run = hookbox(["frobnicate"]);
    assert_eq!(run.code, Some(2));
}

#[test]
fn help_and_version_exit_zero() {
    for args in [
        &["--help"][..],
        &["validate", "--help"],
        &["--version"],
        &["help", "validate"],
    ] {
        let run = hookbox(args);
        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        assert!(!run.stdout.is_empty());
    }
    let run = hookbox(["validate", "--help"]);
    assert!(run.stdout.contains("--json"), "{}", run.stdout);
    assert!(run.stdout.contains("Exit codes: 0"), "{}", run.stdout);
}

#[test]
fn json_report() {
    let d = Dir::new();
    d.write(
        "guard/.claude-plugin/plugin.json",
        r#"{"name": "guard", "hooks": "./hooks/hooks.json"}"#,
    );
    d.write("guard/hooks/hooks.json", GUARD_HOOKS);
    guard_script(&d);
    let run = hookbox([
        std::ffi::OsStr::new("validate"),
        "--json".as_ref(),
        d.path().join("guard").as_os_str(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let v = run.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["summary"]["rules"], 1);
    assert_eq!(v["summary"]["warnings"], 1);
    assert_eq!(v["plugins"][0]["name"], "guard");
    assert_eq!(v["plugins"][0]["dialect"], "claude");
    let rule = &v["rules"][0];
    assert_eq!(rule["event"], "PreToolUse");
    assert_eq!(rule["type"], "command");
    assert_eq!(
        rule["matcher"],
        serde_json::json!({"kind": "names", "names": ["Bash"]})
    );
    assert_eq!(rule["handler"]["timeout_secs"], 5.0);
    assert_eq!(rule["source"]["json_path"], "hooks.PreToolUse[0].hooks[0]");
    assert_eq!(rule["source"]["line"], 1);
    let diag = &v["diagnostics"][0];
    assert_eq!(diag["severity"], "warning");
    assert_eq!(diag["json_path"], "hooks");
    assert!(
        diag["message"]
            .as_str()
            .unwrap()
            .starts_with("Duplicate hooks file detected: ./hooks/hooks.json")
    );
    assert_eq!(v["files"][0]["status"], "loaded");
    assert_eq!(v["foreign"], serde_json::json!([]));
}

#[test]
fn a_cursor_file_is_named_and_not_loaded() {
    let d = Dir::new();
    let f = d.write(
        ".cursor/hooks.json",
        r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "x"}]}}"#,
    );
    let run = hookbox([std::ffi::OsStr::new("validate"), f.as_os_str()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "{}:1:1: warning: this is a Cursor hooks file (.cursor/hooks.json, version 1); hookbox reads Claude Code, Agentao, Ghast and .hooks.json files — not loaded\n",
            f.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("beforeShellExecution → PreToolUse"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(": not loaded: this is a Cursor hooks file"),
        "{}",
        run.stdout
    );
    let run = hookbox([
        std::ffi::OsStr::new("validate"),
        "--json".as_ref(),
        d.path().as_os_str(),
    ]);
    assert_eq!(run.json()["foreign"][0]["format"], "cursor");
}

#[test]
fn dialect_flag_applies_the_ghast_rule() {
    let d = Dir::new();
    let f = d.write(
        "hooks.json",
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "a"}]}], "Stop": [{"type": "command", "command": "b"}]}}"#,
    );
    let run = hookbox([std::ffi::OsStr::new("validate"), f.as_os_str()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("1 rule (Stop 1), 1 skipped"),
        "{}",
        run.stdout
    );
    let run = hookbox([
        std::ffi::OsStr::new("validate"),
        "--dialect".as_ref(),
        "ghast".as_ref(),
        f.as_os_str(),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout
            .contains("error: plugin 'hooks.json' not registered"),
        "{}",
        run.stdout
    );
}

#[test]
fn hostile_files_are_reported_not_fatal() {
    let d = Dir::new();
    let big = d.path().join("big/hooks.json");
    std::fs::create_dir_all(big.parent().unwrap()).unwrap();
    // Sparse: 100 MB on paper, nothing on disk; it must be refused from its metadata.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(100 * 1024 * 1024)
        .unwrap();
    let deep = d.write(
        "deep/hooks.json",
        &format!("{{\"hooks\": {}", "[".repeat(10_000)),
    );
    let mut utf8 = b"{\"hooks\": {\"Stop\": [\"".to_vec();
    utf8.extend_from_slice(b"\xc3\x28\"]}}");
    let bad = d.path().join("utf8/hooks.json");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, utf8).unwrap();
    let list = d.write("list/hooks.json", "[]");
    let run = hookbox(
        [
            big.as_os_str(),
            deep.as_os_str(),
            bad.as_os_str(),
            list.as_os_str(),
        ]
        .iter()
        .fold(vec![std::ffi::OsString::from("validate")], |mut v, p| {
            v.push(p.into());
            v
        }),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let expect = [
        format!(
            "{}: error: file is 104857600 bytes, over the limit of 8388608 bytes\n",
            big.display()
        ),
        format!(
            "{}:1:137: error: invalid JSON: recursion limit exceeded\n",
            deep.display()
        ),
        format!("{}:1:22: error: invalid UTF-8 at byte 21\n", bad.display()),
        format!(
            "{}:1:1: error: a hooks file must be a JSON object, found an array\n",
            list.display()
        ),
    ];
    for e in expect {
        assert!(run.stdout.contains(&e), "missing {e:?} in\n{}", run.stdout);
    }
    assert!(
        run.stdout
            .ends_with("0 rules loaded from 2 plugins and files; 0 warnings, 4 errors\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_corpus_loads_without_errors() {
    let d = Dir::new();
    let files = corpus_tree(&d);
    let mut args = vec![std::ffi::OsString::from("validate"), "--json".into()];
    args.extend(files.iter().map(|f| f.as_os_str().to_owned()));
    let run = hookbox(args);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    let v = run.json();
    assert_eq!(v["summary"]["errors"], 0);
    let mut formats: BTreeMap<String, usize> = BTreeMap::new();
    for f in v["foreign"].as_array().unwrap() {
        *formats
            .entry(f["format"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    let expected: BTreeMap<String, usize> = [
        ("copilot", 1),
        ("cursor", 4),
        ("cursor_plugin", 1),
        ("windsurf", 1),
    ]
    .map(|(k, n)| (k.to_owned(), n))
    .into();
    assert_eq!(formats, expected);
    // Every file in Claude Code's format loaded (none failed or was rejected) and gave rules.
    for f in v["files"].as_array().unwrap() {
        assert!(
            matches!(f["status"].as_str(), Some("loaded" | "foreign")),
            "{f}"
        );
    }
    let loaded_files = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "loaded")
        .count();
    assert!(loaded_files >= 35, "{loaded_files} files loaded");
    assert!(
        v["summary"]["rules"].as_u64().unwrap() >= loaded_files as u64 - 3,
        "{}",
        v["summary"]
    );

    let run = hookbox([
        std::ffi::OsStr::new("validate"),
        files
            .iter()
            .find(|f| f.ends_with(".github/hooks/hooks.json"))
            .unwrap()
            .as_os_str(),
    ]);
    assert!(
        run.stdout.contains("this is a GitHub Copilot hooks file"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_readme_validate_command_is_clean_once_the_example_guests_are_built() {
    // As the README says: `scripts/build-example-guests.sh` puts the wasm guests the example
    // plugins name in place; here they come from this build's guests.
    let d = Dir::new();
    let examples = crate::util::examples_with_components(&d);
    let run = hookbox([std::ffi::OsStr::new("validate"), examples.as_os_str()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("plugin "),
        "no diagnostics expected:\n{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("; 0 warnings, 0 errors\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn validate_reports_what_loading_would_refuse() {
    // Before the guests are built, the wasm examples name components that are not there: an
    // error each, located at the rule, as `dispatch` would refuse them. (Run on a copy without
    // components, so copies `scripts/build-example-guests.sh` left in the checkout do not count.)
    let clean = Dir::new();
    let run = crate::util::in_examples_without_components(&clean, ["validate", "examples/"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": error: "))
        .collect();
    // polyglot-guests (two), runaway-hook and wasm-shell-guard.
    assert_eq!(errors.len(), 4, "{}", run.stdout);
    assert!(
        errors.iter().any(|e| e.starts_with("examples/plugins/runaway-hook/hooks/hooks.json:5:7: error: wasm hook not loaded: cannot read component `hooks/runaway.wasm`")),
        "{}",
        run.stdout
    );
    assert!(
        errors.iter().any(
            |e| e.starts_with("examples/plugins/polyglot-guests/hooks/hooks.json:")
                && e.contains("cannot read component `hooks/shell_guard_py.wasm`")
        ),
        "{}",
        run.stdout
    );
    // Limits over the policy, mounts outside the allowed folders and special files are refused
    // at load too, and `validate` says so.
    let d = Dir::new();
    std::fs::create_dir_all(d.path().join("p/hooks")).unwrap();
    std::fs::copy(
        hookbox_test_artifacts::NOOP,
        d.path().join("p/hooks/ok.wasm"),
    )
    .unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(d.path().join("p/hooks/fifo.wasm"))
            .status()
            .unwrap()
            .success()
    );
    d.write(
        "p/hooks/hooks.json",
        r#"{"hooks": {"PreToolUse": [
            {"type": "wasm", "component": "hooks/ok.wasm", "memory_mb": 100000},
            {"type": "wasm", "component": "hooks/ok.wasm", "mounts": [{"host": "/etc", "guest": "/etc"}]},
            {"type": "wasm", "component": "hooks/fifo.wasm"}
        ]}}"#,
    );
    let run = hookbox([
        std::ffi::OsStr::new("validate"),
        d.path().join("p").as_os_str(),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    for want in [
        "memory_mb",
        "/etc is outside the folders",
        "not a regular file",
    ] {
        assert!(run.stdout.contains(want), "{want}:\n{}", run.stdout);
    }
}

#[test]
fn a_typo_in_a_wasm_rule_fails_validation() {
    let d = Dir::new();
    let f = d.write(
        "hooks.json",
        r#"{"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/guard.wasm", "fule": 1000}]}}"#,
    );
    let run = hookbox([std::ffi::OsStr::new("validate"), f.as_os_str()]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "{}:1:77: error: unknown key 'fule' in a wasm hook — skipped. (at hooks.PreToolUse[0].fule)\n  fix: did you mean 'fuel'?\n",
            f.display()
        )),
        "{}",
        run.stdout
    );
}

/// A reader that goes away (`hookbox validate … | head -1`) ends hookbox quietly: exit 0 and no
/// "Broken pipe" error. The pipe's read end is closed before hookbox starts, so every write fails.
#[test]
fn a_closed_stdout_ends_quietly() {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(["validate", "examples/plugins/shell-guard"])
        .current_dir(crate::util::repo_root())
        .env("NO_COLOR", "1")
        .env_remove("HOOKBOX_LOG")
        .stdout(writer)
        .output()
        .expect("run hookbox");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
