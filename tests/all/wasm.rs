//! `hookbox inspect`, `compile` and `exec` on the guests built from `guest-examples/` and
//! `tests/guests/`.

use std::io::Write as _;
use std::process::{Command, Stdio};

use hookbox_test_artifacts as guests;

use crate::util::{Dir, hookbox};

/// Runs `hookbox exec ARGS…` with `payload` on stdin and a private cache folder.
fn exec(cache: &Dir, args: &[&str], payload: &str) -> crate::util::Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .arg("exec")
        .args(args)
        .env("HOOKBOX_CACHE_DIR", cache.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hookbox exec");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.as_bytes())
        .expect("write payload");
    let out = child.wait_with_output().expect("wait");
    crate::util::Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const RM: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#;
const LS: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls"}}"#;

#[test]
fn inspect_accepts_a_hook_and_names_the_network_imports_it_refuses() {
    let run = hookbox(["inspect", guests::SHELL_GUARD]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("kind:        typed hook"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("hookbox:hook@0.1.0"));
    assert!(run.stdout.contains("accepted:    yes"));
    let run = hookbox(["inspect", guests::NET, "--json"]);
    assert_eq!(run.code, Some(1));
    let v = run.json();
    assert_eq!(v["accepted"], false);
    let refused: Vec<&str> = v["imports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["grant"] == "network")
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(
        refused.iter().any(|n| n.starts_with("wasi:sockets/tcp@")),
        "{refused:?}"
    );
    let run = hookbox(["inspect", guests::CLI_GUARD]);
    assert!(run.stdout.contains("wasi:cli command"), "{}", run.stdout);
    let d = Dir::new();
    let bogus = d.write("x.wasm", "not wasm");
    let run = hookbox([std::ffi::OsStr::new("inspect"), bogus.as_os_str()]);
    assert_eq!(run.code, Some(1));
    assert!(run.stdout.contains("not WebAssembly"), "{}", run.stdout);
}

#[test]
fn inspect_says_which_hooks_need_no_wasi_context_and_what_one_event_instantiates() {
    let run = hookbox(["inspect", guests::NOOP]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("WASI:        none: it runs without a WASI context"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("per event:   1 core instance(s)"),
        "{}",
        run.stdout
    );
    let run = hookbox(["inspect", guests::SHELL_GUARD]);
    assert!(
        run.stdout
            .contains("interfaces (its WASI context is made at its first WASI call)"),
        "{}",
        run.stdout
    );
}

#[test]
fn exec_is_a_claude_code_command_hook() {
    let cache = Dir::new();
    let run = exec(&cache, &[guests::SHELL_GUARD, "--timeout", "2"], RM);
    assert_eq!(run.code, Some(0), "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    let run = exec(&cache, &[guests::SHELL_GUARD], LS);
    assert_eq!((run.code, run.stdout.trim()), (Some(0), "{}"));
    // A wasi:cli component's own stdout and exit code pass through.
    let run = exec(&cache, &[guests::CLI_GUARD], RM);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("\"permissionDecision\":\"deny\""),
        "{}",
        run.stdout
    );
}

/// `PreToolUse` of `rm -rf /` whose tool input also holds arrays nested `levels` deep.
fn deep_rm(levels: usize) -> String {
    format!(
        r#"{{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{{"command":"rm -rf /","x":{}1{}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

/// The example guests' 64 KiB stack (guest-examples/.cargo/config.toml) against hostile input:
/// parsing the tool input takes ~400 bytes of it per level of nesting (a 16 KiB stack overflows
/// at 40 levels, 32 KiB at 80: docs/performance.md, issue 30 third round), and a guard that
/// overflows traps, so a fail-open rule would let the call through. At the deepest input each
/// way in accepts, the guard still decides.
#[test]
fn an_example_guard_decides_at_the_deepest_input_the_host_accepts() {
    let cache = Dir::new();
    // The agents' protocol (`hookbox hook`, `exec`): 64 levels with the payload object, 62 in `x`.
    let run = exec(&cache, &[guests::SHELL_GUARD], &deep_rm(62));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(r#""permissionDecision":"deny""#),
        "{run:?}"
    );
    assert_eq!(
        exec(&cache, &[guests::SHELL_GUARD], &deep_rm(63)).code,
        Some(2)
    );
    // `dispatch`, `serve` and the library read JSON to serde_json's 128 levels: 125 in `x`.
    let d = Dir::new();
    d.write(
        "guard/hooks/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"type": "wasm", "component": "hooks/shell_guard.wasm", "matcher": "Bash", "on_failure": "allow"}]}}"#,
    );
    std::fs::copy(
        guests::SHELL_GUARD,
        d.path().join("guard/hooks/shell_guard.wasm"),
    )
    .unwrap();
    d.write("deep.json", &deep_rm(125));
    let (guard, deep) = (d.path().join("guard"), d.path().join("deep.json"));
    let run = crate::util::hookbox_with_state(
        [
            "dispatch",
            "--project-dir",
            d.path().to_str().unwrap(),
            "--event",
            "PreToolUse",
            "--plugin",
            guard.to_str().unwrap(),
            "--payload",
            deep.to_str().unwrap(),
            "--no-replay",
            "--json",
        ],
        d.state(),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let v = run.json();
    assert!(v["hooks"][0]["effect"]["failure"].is_null(), "{v}");
    assert_eq!(v["verdict"]["decision"], "deny", "{v}");
}

#[test]
fn exec_failures_follow_claude_codes_exit_codes() {
    let cache = Dir::new();
    let spin =
        r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"spin"}}"#;
    let run = exec(&cache, &[guests::CHAOS, "--timeout", "0.3"], spin);
    assert_eq!(run.code, Some(1), "fail-open: non-blocking error {run:?}");
    assert!(run.stderr.contains("timeout"), "{}", run.stderr);
    let run = exec(
        &cache,
        &[guests::CHAOS, "--timeout", "0.3", "--on-failure", "block"],
        spin,
    );
    assert_eq!(run.code, Some(2), "fail-closed: blocking error {run:?}");
    let run = exec(&cache, &[guests::NET], LS);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("hooks have no network"),
        "{}",
        run.stderr
    );
    let run = exec(&cache, &[guests::SHELL_GUARD, "--memory-mb", "100000"], LS);
    assert_eq!(
        run.code,
        Some(2),
        "limits beyond policy are a usage error {run:?}"
    );
    assert!(run.stderr.contains("memory_mb"), "{}", run.stderr);
    let run = exec(&cache, &[guests::SHELL_GUARD], "not json");
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("stdin is not a JSON hook payload"),
        "{}",
        run.stderr
    );
}

#[test]
fn exec_mounts_are_read_only_by_default() {
    let cache = Dir::new();
    let d = Dir::new();
    d.write("data/secret.txt", "s3cret");
    let mount = format!("{}:/data", d.path().join("data").display());
    let read = r#"{"hook_event_name":"UserPromptSubmit","prompt":"fs-read:/data/secret.txt"}"#;
    let run = exec(&cache, &[guests::CHAOS, "--mount", &mount], read);
    assert!(run.stdout.contains("s3cret"), "{run:?}");
    let write = r#"{"hook_event_name":"UserPromptSubmit","prompt":"fs-write:/data/new.txt"}"#;
    exec(&cache, &[guests::CHAOS, "--mount", &mount], write);
    assert!(
        !d.path().join("data/new.txt").exists(),
        "ro mount was written"
    );
    exec(
        &cache,
        &[guests::CHAOS, "--mount", &format!("{mount}:rw")],
        write,
    );
    assert!(
        d.path().join("data/new.txt").exists(),
        "rw mount was not writable"
    );
}

#[test]
fn compile_fills_the_cache_then_hits_it() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path().join("p/hooks")).unwrap();
    std::fs::copy(guests::NOOP, d.path().join("p/hooks/noop.wasm")).unwrap();
    d.write("p/hooks/hooks.json", r#"{"hooks":{"Stop":[{"type":"wasm","component":"hooks/noop.wasm"},{"type":"wasm","component":"${PLUGIN_ROOT}/hooks/noop.wasm"}],"PreToolUse":[{"type":"wasm","component":"hooks/missing.wasm"}]}}"#);
    let cache = d.path().join("cache");
    let run_compile = || {
        let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
            .args(["compile", &d.path().join("p").display().to_string()])
            .env("HOOKBOX_CACHE_DIR", &cache)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run_compile();
    assert_eq!(
        code,
        Some(1),
        "a missing component fails the command: {out}"
    );
    assert!(
        out.contains("compiled ") && out.contains("noop.wasm"),
        "{out}"
    );
    assert!(
        out.contains("failed ") && out.contains("missing.wasm"),
        "{out}"
    );
    assert_eq!(
        out.matches("noop.wasm").count(),
        1,
        "one component named twice is compiled once: {out}"
    );
    let (_, out) = run_compile();
    assert!(out.contains("cached ") && out.contains("disk"), "{out}");
    assert!(std::fs::read_dir(&cache).unwrap().count() > 0);
}

fn prompt(behaviour: &str) -> String {
    serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": behaviour}).to_string()
}

#[test]
fn exec_is_quiet_by_default_and_log_level_lets_lines_through() {
    let cache = Dir::new();
    let run = exec(&cache, &[guests::CHAOS], &prompt("log:3"));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("logged 3"), "{run:?}");
    assert!(
        !run.stderr.contains("chaos log line"),
        "info lines stay off stderr by default: {run:?}"
    );
    let run = exec(
        &cache,
        &[guests::CHAOS, "--log-level", "info"],
        &prompt("log:3"),
    );
    assert!(run.stderr.contains("[Info] chaos log line 2"), "{run:?}");
    let run = exec(
        &cache,
        &[guests::CHAOS, "--log-level", "error"],
        &prompt("log:3"),
    );
    assert!(!run.stderr.contains("chaos log line"), "{run:?}");
}

#[test]
fn exec_flags_set_every_limit_a_component_can_exceed() {
    let cache = Dir::new();
    // log_calls: the third line is dropped.
    let run = exec(
        &cache,
        &[guests::CHAOS, "--log-level", "info", "--log-calls", "2"],
        &prompt("log:3"),
    );
    assert!(run.stderr.contains("chaos log line 1"), "{run:?}");
    assert!(!run.stderr.contains("chaos log line 2"), "{run:?}");
    // response_bytes: obeyed, then violated.
    let run = exec(
        &cache,
        &[guests::CHAOS, "--response-bytes", "4096"],
        &prompt("respond:2048"),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = exec(
        &cache,
        &[guests::CHAOS, "--response-bytes", "1024"],
        &prompt("respond:2048"),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains("`response_bytes` limit of 1024"),
        "{run:?}"
    );
    // instances: refused with the count the component needs.
    let run = exec(&cache, &[guests::CHAOS, "--instances", "1"], &prompt("ok"));
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains("raise `instances` to at least"),
        "{run:?}"
    );
    // table_elements.
    let run = exec(
        &cache,
        &[guests::CHAOS, "--table-elements", "1"],
        &prompt("ok"),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("table limit of 1"), "{run:?}");
    // max_component_bytes: the file is refused before it is compiled.
    let run = exec(
        &cache,
        &[guests::CHAOS, "--max-component-bytes", "1000"],
        &prompt("ok"),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("max_component_bytes"), "{run:?}");
    // write_bytes and write_files: the write fails inside the guest, the run goes on.
    let d = Dir::new();
    d.write("out/.keep", "");
    let mount = format!("{}:/out:rw", d.path().join("out").display());
    let run = exec(
        &cache,
        &[guests::CHAOS, "--mount", &mount, "--write-bytes", "10"],
        &prompt("fs-write-n:/out/x:100"),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("err:"),
        "the write was refused: {run:?}"
    );
    let run = exec(
        &cache,
        &[guests::CHAOS, "--mount", &mount, "--write-bytes", "1000"],
        &prompt("fs-write-n:/out/y:100"),
    );
    assert!(!run.stdout.contains("err:"), "{run:?}");
    assert_eq!(std::fs::read(d.path().join("out/y")).unwrap().len(), 100);
    let run = exec(
        &cache,
        &[guests::CHAOS, "--mount", &mount, "--write-files", "2"],
        &prompt("fs-create:/out:5"),
    );
    assert!(run.stdout.contains("created 2;"), "{run:?}");
}

fn sha256_hex(path: &str) -> String {
    use sha2::{Digest as _, Sha256};
    let bytes = std::fs::read(path).expect("read guest");
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn exec_sha256_runs_only_the_pinned_bytes_and_refuses_others_before_compiling() {
    let cache = Dir::new();
    let right = sha256_hex(guests::SHELL_GUARD);
    let run = exec(
        &cache,
        &[guests::SHELL_GUARD, "--sha256", &right.to_uppercase()],
        RM,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    // Another component's digest: refused, nothing compiled, fail-open by default …
    let fresh = Dir::new();
    let wrong = sha256_hex(guests::NOOP);
    let run = exec(&fresh, &[guests::SHELL_GUARD, "--sha256", &wrong], RM);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("refused before compiling"), "{run:?}");
    assert!(
        run.stderr.contains(&right) && run.stderr.contains(&wrong),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_dir(fresh.path()).unwrap().count(),
        0,
        "nothing reached the compile cache"
    );
    // … and a deny under --on-failure block.
    let run = exec(
        &fresh,
        &[
            guests::SHELL_GUARD,
            "--sha256",
            &wrong,
            "--on-failure",
            "block",
        ],
        LS,
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    let run = exec(&fresh, &[guests::SHELL_GUARD, "--sha256", "abc"], LS);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("64 hexadecimal digits"), "{run:?}");
}

#[test]
fn exec_answers_each_agent_in_its_protocol() {
    let cache = Dir::new();
    let gemini = r#"{"hook_event_name":"BeforeTool","session_id":"s","cwd":"/tmp","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}"#;
    let run = exec(&cache, &[guests::SHELL_GUARD], gemini);
    assert_eq!(run.code, Some(0), "detected as Gemini CLI: {run:?}");
    assert_eq!(run.json()["decision"], "deny", "{run:?}");
    let windsurf = r#"{"agent_action_name":"pre_run_command","trajectory_id":"t","tool_info":{"command_line":"rm -rf /","cwd":"/tmp"}}"#;
    let run = exec(
        &cache,
        &[guests::SHELL_GUARD, "--agent", "windsurf"],
        windsurf,
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("shell-guard"), "{run:?}");
    let copilot = r#"{"sessionId":"s","timestamp":1,"cwd":"/tmp","toolName":"bash","toolArgs":{"command":"rm -rf /"}}"#;
    let run = exec(
        &cache,
        &[
            guests::SHELL_GUARD,
            "--agent",
            "copilot",
            "--event",
            "preToolUse",
        ],
        copilot,
    );
    assert_eq!(run.json()["permissionDecision"], "deny", "{run:?}");
    // A wasi:cli component's Claude Code answer, said again in Kimi's protocol.
    let kimi = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Shell","tool_input":{"command":"rm -rf /"},"tool_call_id":"c"}"#;
    let run = exec(&cache, &[guests::CLI_GUARD, "--agent", "kimi"], kimi);
    assert_eq!(run.code, Some(2), "{run:?}");
}
