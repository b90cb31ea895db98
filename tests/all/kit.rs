//! The plugin author's kit end to end: `hookbox new` writes plugins whose cases pass as
//! generated, `hookbox test` checks what each case expects — also in each agent's protocol — and
//! fails when a guard is broken, reports in JUnit (validated against the JUnit schema), TAP and
//! JSON, names rules no case fires, records cases from real runs, and refuses what a hostile
//! plugin folder or case could do (links out of the folder, `..` in names, a huge tests folder).

use std::fs;
use std::path::Path;

use crate::util::{Dir, hookbox_with_state, repo_root};

fn new_plugin(dir: &Dir, name: &str, kind: &str, lang: &str) -> std::path::PathBuf {
    let at = dir.path().join(name);
    let r = hookbox_with_state(
        ["new", name, "--kind", kind, "--lang", lang, "--dir"]
            .map(str::to_owned)
            .into_iter()
            .chain([at.display().to_string()]),
        dir.state(),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    at
}

fn test(dir: &Dir, args: &[&str]) -> crate::util::Run {
    hookbox_with_state(
        ["test"].iter().chain(args).map(|s| (*s).to_owned()),
        dir.state(),
    )
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn every_native_template_passes_its_own_tests_as_generated() {
    let dir = Dir::new();
    for kind in ["guard", "context", "stop", "audit"] {
        for lang in ["sh", "python", "node"] {
            let p = new_plugin(&dir, &format!("{kind}-{lang}"), kind, lang);
            let r = test(&dir, &[&path(&p)]);
            assert_eq!(r.code, Some(0), "{kind} {lang}: {r:?}");
            assert!(
                r.stdout.contains(" passed, 0 failed"),
                "{kind} {lang}: {}",
                r.stdout
            );
            assert!(!r.stdout.contains("FAIL"), "{kind} {lang}: {}", r.stdout);
            let v = hookbox_with_state(["validate", &path(&p)], dir.state());
            assert_eq!(v.code, Some(0), "{kind} {lang}: {v:?}");
        }
    }
}

#[test]
fn a_wasm_template_has_its_sdk_wit_and_build_script() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "wguard", "guard", "rust");
    for f in [
        "build.sh",
        "wit/hook.wit",
        "guest/Cargo.toml",
        "guest/Cargo.lock",
        "guest/.cargo/config.toml",
        "guest/src/lib.rs",
        "guest/hookbox-guest/src/lib.rs",
        "hooks/hooks.json",
        "tests/denies-rm-rf.json",
    ] {
        assert!(p.join(f).is_file(), "{f}");
    }
    assert_eq!(
        fs::read_to_string(p.join("wit/hook.wit")).unwrap(),
        fs::read_to_string(repo_root().join("wit/hook.wit")).unwrap()
    );
    // Before the build the component is missing, and the test run says so instead of passing.
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains("the plugin does not load"),
        "{}",
        r.stdout
    );
    let js = new_plugin(&dir, "wjs", "stop", "js");
    let lock = fs::read_to_string(js.join("package-lock.json")).unwrap();
    // The lock names the plugin and pins componentize-qjs (and nothing of componentize-js, which
    // `npm ci` would refuse as out of step with package.json).
    assert!(
        lock.contains("\"name\": \"wjs\"")
            && lock.contains("\"componentize-qjs\": \"0.4.5\"")
            && !lock.contains("componentize-js"),
        "{lock}"
    );
    let manifest = fs::read_to_string(js.join("package.json")).unwrap();
    assert!(
        manifest.contains("\"componentize-qjs\": \"0.4.5\""),
        "{manifest}"
    );
    let py = new_plugin(&dir, "wpy", "context", "python-wasm");
    assert!(
        fs::read_to_string(py.join("build.sh"))
            .unwrap()
            .contains("--stub-wasi")
    );
}

#[test]
fn new_refuses_bad_names_non_empty_folders_and_links_and_writes_nothing() {
    let dir = Dir::new();
    for name in ["../escape", "a/b", "Bad", ".."] {
        let r = hookbox_with_state(
            [
                "new",
                name,
                "--kind",
                "guard",
                "--lang",
                "sh",
                "--dir",
                &path(&dir.path().join("x")),
            ],
            dir.state(),
        );
        assert_eq!(r.code, Some(2), "{name}: {r:?}");
        assert!(r.stderr.contains("is not a plugin name"), "{}", r.stderr);
    }
    assert!(!dir.path().join("x").exists());
    dir.write("busy/keep.txt", "mine");
    let r = hookbox_with_state(
        [
            "new",
            "busy",
            "--kind",
            "guard",
            "--lang",
            "sh",
            "--dir",
            &path(&dir.path().join("busy")),
        ],
        dir.state(),
    );
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("is not empty (keep.txt"), "{}", r.stderr);
    assert_eq!(fs::read_dir(dir.path().join("busy")).unwrap().count(), 1);
    let outside = Dir::new();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let r = hookbox_with_state(
        [
            "new",
            "link",
            "--kind",
            "guard",
            "--lang",
            "sh",
            "--dir",
            &path(&dir.path().join("link")),
        ],
        dir.state(),
    );
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("is a symbolic link"), "{}", r.stderr);
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    // An empty folder is taken.
    fs::create_dir(dir.path().join("empty")).unwrap();
    let r = hookbox_with_state(
        [
            "new",
            "empty",
            "--kind",
            "stop",
            "--lang",
            "python",
            "--dir",
            &path(&dir.path().join("empty")),
        ],
        dir.state(),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn dry_run_lists_the_files_and_writes_nothing() {
    let dir = Dir::new();
    let at = dir.path().join("g");
    let r = hookbox_with_state(
        [
            "new",
            "g",
            "--kind",
            "guard",
            "--lang",
            "node",
            "--dry-run",
            "--json",
            "--dir",
            &path(&at),
        ],
        dir.state(),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let v = r.json();
    assert_eq!(v["written"], false);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    for f in [
        "hooks/hooks.json",
        "scripts/guard.cjs",
        "scripts/rules.cjs",
        "README.md",
        ".claude-plugin/plugin.json",
    ] {
        assert!(files.contains(&f), "{f}: {files:?}");
    }
    assert!(!at.exists());
}

#[test]
fn a_case_expecting_a_deny_fails_when_the_guard_is_broken() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "sh");
    // Someone "simplifies" the guard: it lets everything through.
    fs::write(
        p.join("scripts/guard.sh"),
        "#!/bin/sh\ncat >/dev/null\nexit 0\n",
    )
    .unwrap();
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("FAIL  denies-rm-rf"), "{}", r.stdout);
    assert!(
        r.stdout.contains("decision: expected deny, got none"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("agent cursor: expected a refusal Cursor honours"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("ok    lets-a-harmless-command-through"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1 passed, 2 failed"), "{}", r.stdout);
}

/// A plugin whose one rule blocks every prompt (exit 2): a block hookbox renders for every agent,
/// which GitHub Copilot ignores on userPromptSubmitted.
fn prompt_blocker(dir: &Dir) -> std::path::PathBuf {
    dir.write(
        "blocker/hooks/hooks.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'no prompts today' >&2; exit 2"}]}],
                      "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "exit 0"}]}]}}"#,
    );
    dir.path().join("blocker")
}

#[test]
fn a_block_fails_for_an_agent_whose_answer_would_not_block() {
    let dir = Dir::new();
    let p = prompt_blocker(&dir);
    dir.write(
        "blocker/tests/blocks.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"},
            "expect": {"outcome": "block", "reason": "no prompts today", "agents": ["claude", "codex", "gemini", "cursor", "copilot", "kimi"]}}"#,
    );
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains("agent copilot: expected a refusal GitHub Copilot honours, got goes on as if no hook had answered"),
        "{}",
        r.stdout
    );
    for agent in ["claude", "codex", "gemini", "cursor", "kimi"] {
        assert!(
            !r.stdout.contains(&format!("agent {agent}:")),
            "{agent}: {}",
            r.stdout
        );
    }
    // Without Copilot the case passes.
    dir.write(
        "blocker/tests/blocks.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"},
            "expect": {"outcome": "block", "reason": "no prompts today", "agents": ["claude", "codex", "gemini", "cursor", "kimi", "windsurf", "vscode"]}}"#,
    );
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn coverage_names_the_rule_no_case_fires() {
    let dir = Dir::new();
    let p = prompt_blocker(&dir);
    dir.write(
        "blocker/tests/blocks.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"}, "expect": {"outcome": "block"}}"#,
    );
    let r = test(&dir, &["--coverage", &path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout
            .contains("coverage: 1 of 2 rules fired in some case"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "never fired: hooks/hooks.json hooks.PostToolUse[0].hooks[0] (PostToolUse · exit 0)"
        ),
        "{}",
        r.stdout
    );
    let j = test(&dir, &["--format", "json", &path(&p)]);
    assert_eq!(
        j.json()["suites"][0]["coverage"]["never_fired"],
        serde_json::json!(["hooks/hooks.json hooks.PostToolUse[0].hooks[0]"])
    );
}

/// The Apache Ant JUnit schema, fetched from the npm registry at a pinned, integrity-checked
/// version by `scripts/fetch-junit-schema.sh` (kept under `target/`), not copied into the repo.
fn junit_schema() -> std::path::PathBuf {
    let root = repo_root();
    let out = std::process::Command::new(root.join("scripts/fetch-junit-schema.sh"))
        .current_dir(&root)
        .output()
        .expect("scripts/fetch-junit-schema.sh runs (it needs npm and the npm registry)");
    assert!(
        out.status.success(),
        "scripts/fetch-junit-schema.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    root.join(path)
}

#[test]
fn junit_output_validates_against_the_junit_schema() {
    let dir = Dir::new();
    let p = prompt_blocker(&dir);
    // A pass, a mismatch with hook-chosen text XML cannot hold raw, and a case that cannot run.
    dir.write("blocker/tests/a-pass.json", r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"}, "expect": {"outcome": "block"}}"#);
    dir.write(
        "blocker/tests/b-fail.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "x"}, "expect": {"outcome": "allow", "reason": "]]> <x> & \" \u001b[31m \u0000"}}"#,
    );
    dir.write(
        "blocker/tests/c-error.json",
        r#"{"event": "PreToolUse", "payload": {"tool_name": 7}, "expect": {}}"#,
    );
    let broken = dir.path().join("broken");
    dir.write("broken/hooks/hooks.json", "{ not json");
    let r = test(&dir, &["--format", "junit", &path(&p), &path(&broken)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains("<failure message=") && r.stdout.contains("<error message="),
        "{}",
        r.stdout
    );
    let xml = dir.write("report.xml", &r.stdout);
    let data = repo_root().join("tests/data/junit");
    let xsd = junit_schema();
    let java = std::process::Command::new("java")
        .arg(data.join("Validate.java"))
        .arg(&xsd)
        .arg(&xml)
        .output()
        .expect("java (a JDK 11 or later) runs the schema validator: apt-get install default-jdk-headless");
    assert!(
        java.status.success(),
        "the JUnit report does not validate: {}\n{}",
        String::from_utf8_lossy(&java.stderr),
        r.stdout
    );
    // And the validator does refuse what breaks the schema (a testcase without its time).
    let bad = dir.write("bad.xml", &r.stdout.replacen(" time=\"", " tim=\"", 2));
    let refused = std::process::Command::new("java")
        .arg(data.join("Validate.java"))
        .arg(&xsd)
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!refused.status.success());
}

#[test]
fn tap_output_numbers_every_case() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "stopper", "stop", "sh");
    let r = test(&dir, &["--format", "tap", &path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.starts_with("TAP version 13\n1..4\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("ok 1 - ") && r.stdout.contains("ok 4 - "),
        "{}",
        r.stdout
    );
}

#[test]
fn a_case_cannot_write_outside_its_scratch_project() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "ctx", "context", "sh");
    for (file, path_in_case) in [
        ("up.json", "../../../../escaped.txt"),
        ("abs.json", "/tmp/hookbox-escaped.txt"),
    ] {
        dir.write(
            &format!("ctx/tests/{file}"),
            &format!(r#"{{"event": "UserPromptSubmit", "project": {{"files": {{"{path_in_case}": "x"}}}}, "expect": {{}}}}"#),
        );
        let r = test(&dir, &[&path(&p)]);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert!(
            r.stderr
                .contains("a case writes only inside its scratch project"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(file), "{}", r.stderr);
        fs::remove_file(p.join("tests").join(file)).unwrap();
    }
    assert!(!Path::new("/tmp/hookbox-escaped.txt").exists());
    // The files a case may write are in its project, and its hooks read them there.
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn links_out_of_the_plugin_folder_are_not_followed() {
    let dir = Dir::new();
    let outside = Dir::new();
    outside.write("secret.json", r#"{"event": "Stop", "expect": {}}"#);
    let p = new_plugin(&dir, "stopper", "stop", "sh");
    std::os::unix::fs::symlink(
        outside.path().join("secret.json"),
        p.join("tests/linked.json"),
    )
    .unwrap();
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("linked.json"), "{}", r.stderr);
    fs::remove_file(p.join("tests/linked.json")).unwrap();
    fs::rename(p.join("tests"), dir.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("moved"), p.join("tests")).unwrap();
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("a symbolic link is not followed"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_huge_tests_folder_and_a_huge_case_are_refused() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "stopper", "stop", "sh");
    for i in 0..4100 {
        fs::write(p.join(format!("tests/gen-{i}.json")), "{}").unwrap();
    }
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("more than 4096 case files (MAX_CASES)"),
        "{}",
        r.stderr
    );
    let p = new_plugin(&dir, "stopper2", "stop", "sh");
    let big = format!(
        r#"{{"event": "Stop", "description": "{}", "expect": {{}}}}"#,
        "x".repeat(2 << 20)
    );
    fs::write(p.join("tests/big.json"), big).unwrap();
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("big.json"), "{}", r.stderr);
}

#[test]
fn hostile_payloads_get_a_verdict_or_a_clear_error() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "python");
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    dir.write(
        "guard/tests/deep.json",
        &format!(r#"{{"event": "PreToolUse", "payload": {{"tool_name": "Bash", "tool_input": {{"command": "ls", "x": {deep}}}}}, "expect": {{}}}}"#),
    );
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("deep.json") && r.stderr.contains("recursion limit"),
        "{}",
        r.stderr
    );
    fs::remove_file(p.join("tests/deep.json")).unwrap();
    // Escapes, NUL, a terminal escape and a long command: the guard still denies, and the
    // report carries no escape sequence.
    dir.write(
        "guard/tests/weird.json",
        &format!(
            r#"{{"event": "PreToolUse", "payload": {{"tool_name": "Bash", "tool_input": {{"command": "echo \u0000\u001b]52;c;AAAA\u0007 && rm -rf / {}"}}}}, "expect": {{"decision": "deny", "agents": "all"}}}}"#,
            "y".repeat(100_000)
        ),
    );
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!r.stdout.contains('\u{1b}'), "{}", r.stdout);
}

#[test]
fn the_project_files_and_env_of_a_case_reach_its_hooks() {
    let dir = Dir::new();
    dir.write(
        "envy/hooks/hooks.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "printf '%s %s %s' \"$GREETING\" \"$(cat \"$CLAUDE_PROJECT_DIR/notes/today.txt\")\" \"${ANTHROPIC_API_KEY:-no-key}\""}]}]}}"#,
    );
    dir.write(
        "envy/tests/hello.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"}, "env": {"GREETING": "hello"},
            "project": {"files": {"notes/today.txt": "from the project"}},
            "expect": {"context": "hello from the project no-key"}}"#,
    );
    dir.write(
        "envy/tests/other.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"}, "env": {"GREETING": "bonjour"},
            "project": {"files": {"notes/today.txt": "du projet"}},
            "expect": {"context": "bonjour du projet no-key"}}"#,
    );
    // A case's env cannot hand hooks what the credential deny-list keeps from them.
    dir.write(
        "envy/tests/key.json",
        r#"{"event": "UserPromptSubmit", "payload": {"prompt": "hi"}, "env": {"GREETING": "hi", "ANTHROPIC_API_KEY": "sk-ant-not-for-hooks"},
            "project": {"files": {"notes/today.txt": "there"}},
            "expect": {"context": "hi there no-key"}}"#,
    );
    let r = test(&dir, &[&path(&dir.path().join("envy"))]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("3 passed, 0 failed"), "{}", r.stdout);
}

#[test]
fn an_agents_own_payload_is_read_by_its_adapter() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "node");
    dir.write(
        "guard/tests/cursor.json",
        r#"{"agent": "cursor",
            "payload": {"hook_event_name": "beforeShellExecution", "conversation_id": "c1", "generation_id": "g1",
                        "command": "mkfs.ext4 /dev/sda1"},
            "expect": {"decision": "deny", "reason": "`mkfs` is not allowed here", "agents": ["cursor", "claude"]}}"#,
    );
    let r = test(&dir, &[&path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn a_time_budget_fails_a_slow_hook() {
    let dir = Dir::new();
    dir.write(
        "slow/hooks/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sleep 1"}]}]}}"#,
    );
    dir.write(
        "slow/tests/quick.json",
        r#"{"event": "Stop", "expect": {"max_ms": 50}}"#,
    );
    let r = test(&dir, &[&path(&dir.path().join("slow"))]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains("max_ms: expected at most 50 ms, got "),
        "{}",
        r.stdout
    );
}

#[test]
fn under_trust_require_an_unapproved_guard_does_not_run() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "sh");
    let r = test(
        &dir,
        &["--trust", "require", "--filter", "denies-rm-rf", &path(&p)],
    );
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.contains("failure: expected none, got untrusted"),
        "{}",
        r.stdout
    );
    let add = hookbox_with_state(
        [
            "trust",
            "add",
            "--yes",
            &path(&p),
            "--project-dir",
            &path(dir.path()),
        ],
        dir.state(),
    );
    assert_eq!(add.code, Some(0), "{add:?}");
    let r = test(&dir, &["--trust", "require", &path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn a_saved_dispatch_becomes_a_passing_case_without_its_secrets() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "sh");
    let case = p.join("tests/saved.json");
    let r = hookbox_with_state(
        [
            "dispatch",
            "--event",
            "PreToolUse",
            "--plugin",
            &path(&p),
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"mkfs /dev/sda # ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}"#,
            "--no-replay",
            "--save-case",
            &path(&case),
        ],
        dir.state(),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let text = fs::read_to_string(&case).unwrap();
    assert!(
        !text.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["expect"]["decision"], "deny");
    assert_eq!(v["expect"]["outcome"], "block");
    let r = test(&dir, &["--filter", "saved", &path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    // A second save never replaces the case.
    let again = hookbox_with_state(
        [
            "dispatch",
            "--event",
            "Stop",
            "--plugin",
            &path(&p),
            "--no-replay",
            "--save-case",
            &path(&case),
        ],
        dir.state(),
    );
    assert_eq!(again.code, Some(2), "{again:?}");
}

#[test]
fn record_rewrites_expectations_with_todays_answer() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "sh");
    dir.write(
        "guard/tests/wrong.json",
        r#"{"event": "PreToolUse", "payload": {"tool_name": "Bash", "tool_input": {"command": "mkfs /dev/sdb"}},
            "expect": {"decision": "allow", "agents": ["claude"]}}"#,
    );
    assert_eq!(test(&dir, &[&path(&p)]).code, Some(1));
    let r = test(&dir, &["--record", &path(&p)]);
    assert!(
        r.stderr.contains("recorded today's answers into 1 case"),
        "{r:?}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(p.join("tests/wrong.json")).unwrap()).unwrap();
    assert_eq!(v["expect"]["decision"], "deny");
    assert_eq!(v["expect"]["agents"], serde_json::json!(["claude"]));
    assert_eq!(test(&dir, &[&path(&p)]).code, Some(0));
}

#[test]
fn a_replay_file_becomes_cases_to_complete() {
    let dir = Dir::new();
    let p = new_plugin(&dir, "guard", "guard", "sh");
    let project = dir.path().join("proj");
    fs::create_dir(&project).unwrap();
    let r = hookbox_with_state(
        [
            "dispatch",
            "--event",
            "PreToolUse",
            "--plugin",
            &path(&p),
            "--tool",
            "Bash",
            "--tool-input",
            r#"{"command":"rm -rf /"}"#,
            "--project-dir",
            &path(&project),
            "--json",
        ],
        dir.state(),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let replay = r.json()["replay_file"].as_str().unwrap().to_owned();
    let out = test(&dir, &["--from-replay", &replay, &path(&p)]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(p.join("tests/replay-001-pretooluse.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v["event"], "PreToolUse");
    assert_eq!(v["payload"]["tool_name"], "Bash");
    assert_eq!(v["expect"]["outcome"], "block");
    assert!(
        v["description"]
            .as_str()
            .unwrap()
            .contains("replay keeps no payload")
    );
}

#[test]
fn the_schema_is_printed_and_names_every_field_the_reader_takes() {
    let dir = Dir::new();
    let r = test(&dir, &["--print-schema"]);
    assert_eq!(r.code, Some(0));
    let schema = r.json();
    let expect: Vec<&String> = schema["properties"]["expect"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        expect,
        [
            "outcome",
            "decision",
            "reason",
            "context",
            "system_message",
            "updated_input",
            "failure",
            "max_ms",
            "agents"
        ]
    );
    let failures: Vec<&str> = schema["properties"]["expect"]["properties"]["failure"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut want = vec!["none"];
    want.extend(hookbox_core::output::FailureClass::ALL.map(|c| c.as_str()));
    assert_eq!(failures, want);
    let top: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        top,
        [
            "$schema",
            "description",
            "event",
            "agent",
            "payload",
            "project",
            "env",
            "reentries",
            "expect"
        ]
    );
    let agents: Vec<&str> = schema["properties"]["agent"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(agents, hookbox_core::agent::Agent::ALL.map(|a| a.as_str()));
    // Every key the schema names is one the reader takes: a case using them all parses.
    let dir2 = Dir::new();
    let p = new_plugin(&dir2, "stopper", "stop", "sh");
    dir2.write(
        "stopper/tests/every-field.json",
        r#"{"$schema": "x", "description": "d", "event": "Stop", "payload": {"last_assistant_message": "ok"},
            "project": {"files": {"a/b.txt": "x"}}, "env": {"A": "1"}, "reentries": 0,
            "expect": {"outcome": "allow", "decision": "none", "reason": null, "context": null, "system_message": null,
                       "updated_input": null, "failure": "none", "max_ms": 60000, "agents": ["claude"]}}"#,
    );
    let r = test(&dir2, &["--filter", "every-field", &path(&p)]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn the_example_plugins_pass_their_own_tests() {
    let dir = Dir::new();
    let examples = crate::util::examples_with_components(&dir);
    let mut plugins: Vec<String> = fs::read_dir(examples.join("plugins"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("tests").is_dir())
        .map(|e| path(&e.path()))
        .collect();
    plugins.sort();
    // `layout-guards` runs node and python3 hooks: left out (loudly) where they are missing.
    let runs = |p: &str| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let interpreters = runs("node") && runs("python3");
    if !interpreters {
        assert!(
            std::env::var_os("HOOKBOX_REQUIRE_POLYGLOT").is_none(),
            "node and python3 are required (HOOKBOX_REQUIRE_POLYGLOT is set)"
        );
        eprintln!("SKIPPED: layout-guards (node or python3 is not installed)");
        plugins.retain(|p| !p.ends_with("layout-guards"));
    }
    // Every example but the polyglot one when its toolchains are not installed.
    let want = 10 + usize::from(hookbox_test_artifacts::POLYGLOT_BUILT) + usize::from(interpreters);
    assert_eq!(plugins.len(), want, "{plugins:?}");
    let args: Vec<&str> = plugins.iter().map(String::as_str).collect();
    let r = test(&dir, &args);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(" passed, 0 failed"), "{}", r.stdout);
}
