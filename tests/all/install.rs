//! `hookbox install` / `uninstall` on each agent's real configuration shapes (issue 20): a new
//! file, a file with the user's own hooks, and comments where the format allows them (Gemini
//! CLI's JSONC, Kimi's TOML). Each round trip installs a guard plugin and a plugin with more
//! events, checks the agent's shape and timeout unit, installs again (nothing changes), runs the
//! command the agent would run on its `rm -rf /` payload (denied), and uninstalls (the file is
//! as it was, byte for byte, or gone when hookbox created it). Hostile files — a symlink, a
//! symlinked folder in a project, a FIFO, an oversized or malformed file — are refused.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::util::{Dir, Run, repo_root};

/// Runs `hookbox ARGS…` with HOME in the test folder (user-scope files and backups land there).
fn hookbox(d: &Dir, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(args)
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .env("HOME", d.path().join("home"))
        .env("HOOKBOX_STATE_DIR", d.state())
        .env_remove("XDG_STATE_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("HOOKBOX_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run hookbox");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A plugin with rules on PreToolUse (failing closed), UserPromptSubmit, Stop and
/// Notification, each with a 5 s timeout.
fn extra_plugin(d: &Dir) -> PathBuf {
    let rule = |on_failure: &str| json!([{"hooks": [{"type": "command", "command": "true", "timeout": 5, "onFailure": on_failure}]}]);
    d.write(
        "extra/hooks/hooks.json",
        &json!({"hooks": {
            "PreToolUse": rule("block"),
            "UserPromptSubmit": rule("allow"),
            "Stop": rule("allow"),
            "Notification": rule("allow"),
        }})
        .to_string(),
    );
    d.path().join("extra")
}

/// One agent's case: its file, a starting text (`None`: no file), and how to find hookbox's
/// entries in it.
struct Case {
    agent: &'static str,
    scope: &'static str,
    file: &'static str,
    original: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        agent: "claude",
        scope: "--project",
        file: ".claude/settings.json",
        original: None,
    },
    Case {
        agent: "claude",
        scope: "--user",
        file: "home/.claude/settings.json",
        original: Some(
            "{\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}\n    ]\n  }\n}\n",
        ),
    },
    Case {
        agent: "codex",
        scope: "--project",
        file: ".codex/hooks.json",
        original: Some(
            "{\n  \"description\": \"team hooks\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\", \"timeout\": 5}]}]\n  }\n}\n",
        ),
    },
    Case {
        agent: "gemini",
        scope: "--project",
        file: ".gemini/settings.json",
        original: Some(
            "{\n  // Gemini CLI strips comments from settings.json\n  \"general\": {\"vimMode\": true}, /* keep me */\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"lint.sh\", \"timeout\": 30000}]}\n    ]\n  }\n}\n",
        ),
    },
    Case {
        agent: "gemini",
        scope: "--user",
        file: "home/.gemini/settings.json",
        original: Some("{}"),
    },
    Case {
        agent: "cursor",
        scope: "--project",
        file: ".cursor/hooks.json",
        original: Some(
            "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [{\"command\": \".cursor/hooks/format.sh\"}]\n  }\n}\n",
        ),
    },
    Case {
        agent: "cursor",
        scope: "--user",
        file: "home/.cursor/hooks.json",
        original: None,
    },
    Case {
        agent: "copilot",
        scope: "--project",
        file: ".github/hooks/hookbox.json",
        original: None,
    },
    Case {
        agent: "vscode",
        scope: "--user",
        file: "home/.copilot/hooks/hookbox.json",
        original: Some(""),
    },
    Case {
        agent: "windsurf",
        scope: "--project",
        file: ".windsurf/hooks.json",
        original: Some(
            "{\n  \"hooks\": {\n    \"post_write_code\": [{\"command\": \"prettier --write\", \"show_output\": true}]\n  }\n}\n",
        ),
    },
    Case {
        agent: "windsurf",
        scope: "--user",
        file: "home/.codeium/windsurf/hooks.json",
        original: None,
    },
    Case {
        agent: "kimi",
        scope: "--user",
        file: "home/.kimi/config.toml",
        original: Some(
            "# Kimi settings\ndefault_model = \"kimi-k2\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"say done\" # mine\n",
        ),
    },
];

/// The commands of hookbox's entries, by agent event, from the written file.
fn installed(agent: &str, text: &str) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    if agent == "kimi" {
        let t: toml::Table = toml::from_str(text).unwrap();
        for h in t["hooks"].as_array().unwrap() {
            let cmd = h["command"].as_str().unwrap();
            if cmd.contains(" hook --agent ") {
                out.push((
                    h["event"].as_str().unwrap().to_owned(),
                    cmd.to_owned(),
                    json!(h["timeout"].as_integer()),
                ));
            }
        }
        return out;
    }
    let stripped: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
        .replace("/* keep me */", "");
    let v: Value = serde_json::from_str(&stripped).unwrap();
    for (event, list) in v["hooks"].as_object().unwrap() {
        for item in list.as_array().unwrap() {
            let handlers: Vec<&Value> = match item.get("hooks") {
                Some(Value::Array(h)) => h.iter().collect(),
                _ => vec![item],
            };
            for h in handlers {
                let cmd = h
                    .get("command")
                    .or(h.get("bash"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if cmd.contains(" hook --agent ") {
                    let timeout = h
                        .get("timeout")
                        .or(h.get("timeoutSec"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    out.push((event.clone(), cmd.to_owned(), timeout));
                }
            }
        }
    }
    out
}

#[test]
fn install_round_trips_on_every_agents_configuration() {
    let guard = repo_root().join("examples/plugins/shell-guard");
    for case in CASES {
        let d = Dir::new();
        std::fs::create_dir_all(d.path().join("home")).unwrap();
        let extra = extra_plugin(&d);
        let file = d.path().join(case.file);
        if let Some(text) = case.original {
            d.write(case.file, text);
        }
        let name = format!("{} {}", case.agent, case.scope);
        let args = |cmd: &'static str| -> Vec<String> {
            vec![
                cmd.into(),
                "--agent".into(),
                case.agent.into(),
                case.scope.into(),
                "--plugin".into(),
                guard.display().to_string(),
                "--plugin".into(),
                extra.display().to_string(),
            ]
        };
        let a = args("install");
        let run = hookbox(&d, &a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(run.code, Some(0), "{name}: {run:?}");
        assert!(run.stdout.contains("written: "), "{name}: {run:?}");
        let text = std::fs::read_to_string(&file).unwrap();
        // The user's own entries and comments are still there.
        if let Some(original) = case.original {
            for needle in [
                "./mine.sh",
                "notify-send done",
                "lint.sh",
                "// Gemini CLI strips",
                "/* keep me */",
                "format.sh",
                "prettier --write",
                "# Kimi settings",
                "say done\" # mine",
            ] {
                if original.contains(needle) {
                    assert!(text.contains(needle), "{name}: lost `{needle}`:\n{text}");
                }
            }
        }
        let entries = installed(case.agent, &text);
        let events: Vec<&str> = entries.iter().map(|(e, _, _)| e.as_str()).collect();
        let want: &[&str] = match case.agent {
            "claude" | "kimi" => &["PreToolUse", "UserPromptSubmit", "Stop", "Notification"],
            "codex" => &["PreToolUse", "UserPromptSubmit", "Stop"],
            "gemini" => &["BeforeTool", "BeforeAgent", "AfterAgent", "Notification"],
            "cursor" => &["preToolUse", "beforeSubmitPrompt", "stop"],
            "copilot" | "vscode" => &["preToolUse", "UserPromptSubmit", "Stop", "notification"],
            "windsurf" => &[
                "pre_read_code",
                "pre_write_code",
                "pre_run_command",
                "pre_mcp_tool_use",
                "pre_user_prompt",
                "post_cascade_response",
            ],
            _ => unreachable!(),
        };
        for w in want {
            assert!(
                events.contains(w),
                "{name}: no `{w}` entry in {events:?}\n{text}"
            );
        }
        assert_eq!(events.len(), want.len(), "{name}: {events:?}");
        // Timeouts in the agent's unit: the rules' 5 s plus the 10 s margin.
        let pre = entries
            .iter()
            .find(|(e, _, _)| {
                ["PreToolUse", "BeforeTool", "preToolUse", "pre_run_command"].contains(&e.as_str())
            })
            .unwrap();
        let (_, cmd, timeout) = pre;
        match case.agent {
            "gemini" => assert_eq!(timeout, &json!(15000), "{name}: milliseconds"),
            "windsurf" => assert!(timeout.is_null(), "{name}: no timeout field"),
            _ => assert_eq!(timeout, &json!(15), "{name}: seconds"),
        }
        assert!(
            cmd.contains("--on-error block"),
            "{name}: a rule fails closed: {cmd}"
        );
        if case.agent == "cursor" {
            assert!(text.contains("\"failClosed\": true"), "{name}:\n{text}");
        }
        if case.agent == "codex" {
            let v: Value = serde_json::from_str(&text).unwrap();
            for k in v.as_object().unwrap().keys() {
                assert!(
                    k == "hooks" || k == "description",
                    "{name}: Codex refuses root key `{k}`"
                );
            }
        }
        // Again: nothing changes.
        let run = hookbox(&d, &a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(run.stdout.contains("nothing to change"), "{name}: {run:?}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            text,
            "{name}: idempotent"
        );
        // The agent runs the installed command on its `rm -rf /` payload: denied.
        let fixture_agent = case.agent;
        let text_fx = std::fs::read_to_string(
            repo_root().join(format!("tests/agents/{fixture_agent}/guard-rm-rf.json")),
        )
        .unwrap()
        .replace("/work/project", &d.path().display().to_string());
        let fx: Value = serde_json::from_str(&text_fx).unwrap();
        let run = sh(&d, &pre.1, &fx["payload"]);
        let denied = match case.agent {
            "windsurf" | "kimi" => run.code == Some(2) && run.stderr.contains("shell-guard"),
            _ => {
                run.code == Some(0)
                    && run.stdout.contains("deny")
                    && run.stdout.contains("shell-guard")
            }
        };
        assert!(denied, "{name}: the installed hook did not deny: {run:?}");
        // Uninstall: exactly what was there before.
        let run = hookbox(&d, &["uninstall", "--agent", case.agent, case.scope]);
        assert_eq!(run.code, Some(0), "{name}: {run:?}");
        match case.original {
            // A file the user had is restored as it was, even `{}`: it is theirs.
            Some(original) if !original.trim().is_empty() => {
                assert_eq!(
                    std::fs::read_to_string(&file).unwrap(),
                    original,
                    "{name}: uninstall restores the file"
                );
            }
            // A file hookbox created (or found empty) goes once nothing is left in it.
            _ => assert!(
                !file.exists(),
                "{name}: a file left empty is removed: {run:?}"
            ),
        }
        // A backup of every version hookbox replaced.
        if case.original.is_some_and(|o| !o.is_empty()) {
            let backups: Vec<_> = std::fs::read_dir(d.state().join("backups"))
                .unwrap()
                .flatten()
                .collect();
            assert!(!backups.is_empty(), "{name}: no backup");
            let first =
                std::fs::read_to_string(backups.iter().map(|b| b.path()).min().unwrap()).unwrap();
            assert_eq!(
                Some(first.as_str()),
                case.original,
                "{name}: the backup holds the original"
            );
        }
    }
}

/// Runs `cmd` with `sh -c`, as an agent runs a command hook, with `payload` on stdin.
fn sh(d: &Dir, cmd: &str, payload: &Value) -> Run {
    sh_in(d, cmd, payload, None, &[])
}

/// [`sh`] in the folder `cwd` (default: this process's), with `env` set.
fn sh_in(d: &Dir, cmd: &str, payload: &Value, cwd: Option<&Path>, env: &[(&str, &OsStr)]) -> Run {
    let mut command = Command::new("sh");
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .args(["-c", cmd])
        .env("NO_COLOR", "1")
        .env("HOOKBOX_STATE_DIR", d.state())
        .env_remove("CLAUDE_PROJECT_DIR")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn install(d: &Dir, agent: &str, plugin: &Path, extra: &[&str]) -> Run {
    let p = plugin.display().to_string();
    let mut args = vec!["install", "--agent", agent, "--plugin", &p];
    args.extend_from_slice(extra);
    hookbox(d, &args)
}

#[cfg(unix)]
#[test]
fn symlinks_are_never_written_through() {
    let guard = repo_root().join("examples/plugins/shell-guard");
    // The config file itself is a link (a dotfile manager's, or a planted one).
    let d = Dir::new();
    let outside = d.write("outside/settings.json", "{}\n");
    std::fs::create_dir_all(d.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, d.path().join(".claude/settings.json")).unwrap();
    let run = install(&d, "claude", &guard, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("is a symlink") && run.stderr.contains("--config"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "{}\n",
        "the link's target is untouched"
    );
    // A project folder on the way is a link (a checkout's `.cursor -> ~/.ssh`).
    let d = Dir::new();
    let secret = d.path().join("dot-ssh");
    std::fs::create_dir_all(&secret).unwrap();
    std::os::unix::fs::symlink(&secret, d.path().join(".cursor")).unwrap();
    let run = install(&d, "cursor", &guard, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("on the way to"), "{run:?}");
    assert_eq!(
        std::fs::read_dir(&secret).unwrap().count(),
        0,
        "nothing written through the link"
    );
}

#[cfg(unix)]
#[test]
fn hostile_configuration_files_are_refused_with_a_reason() {
    let guard = repo_root().join("examples/plugins/shell-guard");
    let d = Dir::new();
    // Malformed: located.
    d.write(
        ".cursor/hooks.json",
        "{\n  \"version\": 1,\n  \"hooks\": {,}\n}\n",
    );
    let run = install(&d, "cursor", &guard, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("line 3"), "{run:?}");
    // Over the size bound: refused unread.
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(5 << 20));
    d.write(".cursor/hooks.json", &big);
    let run = install(&d, "cursor", &guard, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("over the limit"), "{run:?}");
    // A FIFO: refused at once, never waited on.
    let fifo = d.path().join(".windsurf/hooks.json");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let run = install(&d, "windsurf", &guard, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("not a regular file"), "{run:?}");
    // `hooks` of the wrong type: named.
    d.write(".codex/hooks.json", "{\"hooks\": [1]}");
    let run = install(&d, "codex", &guard, &[]);
    assert!(
        run.stderr.contains("`hooks` in") && run.stderr.contains("not an object"),
        "{run:?}"
    );
}

#[test]
fn dry_run_writes_nothing_and_plugins_merge_and_leave_one_by_one() {
    let guard = repo_root().join("examples/plugins/shell-guard");
    let d = Dir::new();
    let extra = extra_plugin(&d);
    let run = install(&d, "cursor", &guard, &["--dry-run"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("+") && run.stdout.contains("dry run"),
        "{run:?}"
    );
    assert!(!d.path().join(".cursor/hooks.json").exists());
    // Two installs merge their plugins into the same entries.
    assert_eq!(install(&d, "cursor", &guard, &[]).code, Some(0));
    assert_eq!(install(&d, "cursor", &extra, &[]).code, Some(0));
    let text = std::fs::read_to_string(d.path().join(".cursor/hooks.json")).unwrap();
    let entries = installed("cursor", &text);
    let pre = &entries
        .iter()
        .find(|(e, _, _)| e == "preToolUse")
        .unwrap()
        .1;
    // A plugin inside the project is named relative to it (Cursor names its project folder to
    // hooks); one outside by its full path.
    assert!(
        pre.contains("--plugin /") && pre.contains("shell-guard") && pre.contains("--plugin extra"),
        "{pre}"
    );
    // Removing one plugin keeps the other and drops the events only it used.
    let e = extra.display().to_string();
    let run = hookbox(&d, &["uninstall", "--agent", "cursor", "--plugin", &e]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let text = std::fs::read_to_string(d.path().join(".cursor/hooks.json")).unwrap();
    let entries = installed("cursor", &text);
    assert_eq!(entries.len(), 1, "{text}");
    assert!(!entries[0].1.contains("/extra"), "{text}");
    // A plugin that does not load is not installed.
    d.write("broken/hooks/hooks.json", "{ not json");
    let run = install(&d, "cursor", &d.path().join("broken"), &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    // Kimi has no project file.
    let run = install(&d, "kimi", &guard, &["--project"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--user"), "{run:?}");
}

#[test]
fn qwen_code_gets_claude_codes_shape_in_its_own_settings() {
    let d = Dir::new();
    let guard = repo_root().join("examples/plugins/shell-guard");
    let run = install(&d, "qwen", &guard, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join(".qwen/settings.json")).unwrap(),
    )
    .unwrap();
    let cmd = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(cmd.contains("--agent qwen"), "{cmd}");
    // Seconds (Qwen reads values of 1000 and more as milliseconds).
    assert!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"]
            .as_u64()
            .unwrap()
            < 1000
    );
}

#[test]
fn a_file_the_user_had_survives_install_and_uninstall() {
    let d = Dir::new();
    let guard = repo_root().join("examples/plugins/shell-guard");
    d.write(".claude/settings.json", "{}\n");
    assert_eq!(install(&d, "claude", &guard, &[]).code, Some(0));
    let run = hookbox(&d, &["uninstall", "--agent", "claude"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(d.path().join(".claude/settings.json")).unwrap(),
        "{}\n",
        "the user's file is kept as it was: {run:?}"
    );
    // A file hookbox created goes when nothing is left in it.
    assert_eq!(install(&d, "cursor", &guard, &[]).code, Some(0));
    assert_eq!(
        hookbox(&d, &["uninstall", "--agent", "cursor"]).code,
        Some(0)
    );
    assert!(!d.path().join(".cursor/hooks.json").exists());
}

#[cfg(unix)]
#[test]
fn a_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let guard = repo_root().join("examples/plugins/shell-guard");
    let d = Dir::new();
    std::fs::create_dir(d.path().join(".claude")).unwrap();
    std::fs::set_permissions(
        d.path().join(".claude"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let run = install(&d, "claude", &guard, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("writable by every user"), "{run:?}");
    assert!(!d.path().join(".claude/settings.json").exists());
    // Owned by another user (as root, the test can make it so).
    if rustix::process::geteuid().is_root() {
        let d = Dir::new();
        std::fs::create_dir(d.path().join(".cursor")).unwrap();
        std::os::unix::fs::chown(d.path().join(".cursor"), Some(4242), Some(4242)).unwrap();
        let run = install(&d, "cursor", &guard, &[]);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("belongs to uid 4242"), "{run:?}");
    }
}

#[test]
fn codex_trust_is_recorded_only_when_asked_and_said_loudly_otherwise() {
    let d = Dir::new();
    let guard = repo_root().join("examples/plugins/shell-guard");
    let run = install(&d, "codex", &guard, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("protects NOTHING in Codex"), "{run:?}");
    let config = d.path().join("home/.codex/config.toml");
    assert!(!config.exists());
    d.write("home/.codex/config.toml", "# mine\nmodel = \"x\"\n");
    let run = install(&d, "codex", &guard, &["--trust-codex"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("Codex's trust, recorded"), "{run:?}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# mine\nmodel = \"x\"\n"), "{text}");
    let t: toml::Table = toml::from_str(&text).unwrap();
    let state = t["hooks"]["state"].as_table().unwrap();
    assert_eq!(state.len(), 1, "{text}");
    let (key, rec) = state.iter().next().unwrap();
    let hooks = d.path().join(".codex/hooks.json");
    assert_eq!(
        *key,
        format!(
            "{}:pre_tool_use:0:0",
            hooks.canonicalize().unwrap().display()
        )
    );
    // Codex's own hash of the entry written.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&hooks).unwrap()).unwrap();
    let h = &v["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(
        rec["trusted_hash"].as_str().unwrap(),
        hookbox_agents::install::codex_trust::entry_hash(
            "PreToolUse",
            v["hooks"]["PreToolUse"][0]["matcher"].as_str(),
            h["command"].as_str().unwrap(),
            h["timeout"].as_u64().unwrap()
        )
    );
    // Uninstall takes the records away too, and leaves the user's lines.
    assert_eq!(
        hookbox(&d, &["uninstall", "--agent", "codex"]).code,
        Some(0)
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "# mine\nmodel = \"x\"\n"
    );
}

#[test]
fn install_and_uninstall_say_what_they_did_as_json() {
    let d = Dir::new();
    let guard = repo_root().join("examples/plugins/shell-guard");
    let report = |run: &Run| -> Value {
        assert_eq!(run.code, Some(0), "{run:?}");
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
    };
    let v = report(&install(&d, "claude", &guard, &["--json"]));
    assert_eq!(v["command"], "install");
    assert_eq!(v["agent"], "claude");
    assert_eq!(v["outcome"], "written");
    assert!(
        v["file"]
            .as_str()
            .unwrap()
            .ends_with(".claude/settings.json")
    );
    assert_eq!(v["entries"][0]["event"], "PreToolUse", "{v}");
    assert!(
        v["entries"][0]["command"]
            .as_str()
            .unwrap()
            .contains("hook --agent claude")
    );
    assert!(v["diff"].as_str().unwrap().contains("+++"), "{v}");
    assert_eq!(v["plugins"].as_array().unwrap().len(), 1);
    // Again: nothing to change, and the report says so.
    let v = report(&install(&d, "claude", &guard, &["--json"]));
    assert_eq!(v["outcome"], "unchanged");
    // A dry run of the uninstall, then the uninstall: the file hookbox created goes.
    let v = report(&hookbox(
        &d,
        &["uninstall", "--agent", "claude", "--dry-run", "--json"],
    ));
    assert_eq!(v["outcome"], "dry-run");
    assert!(d.path().join(".claude/settings.json").exists());
    let v = report(&hookbox(&d, &["uninstall", "--agent", "claude", "--json"]));
    assert_eq!(v["outcome"], "removed", "{v}");
    assert_eq!(v["entries"].as_array().unwrap().len(), 0);
    let v = report(&hookbox(&d, &["uninstall", "--agent", "claude", "--json"]));
    assert_eq!(v["outcome"], "nothing-to-remove");
    // Codex: the warning that it skips untrusted hooks is in the report, not lost on stderr;
    // with --trust-codex the records are.
    let run = install(&d, "codex", &guard, &["--json"]);
    let v = report(&run);
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("protects NOTHING in Codex"),
        "{v}"
    );
    assert!(v.get("codex_trust").is_none(), "{v}");
    let v = report(&install(&d, "codex", &guard, &["--json", "--trust-codex"]));
    let t = &v["codex_trust"];
    assert_eq!(t["outcome"], "written", "{v}");
    assert!(
        t["records"][0]["hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{v}"
    );
}

/// `install` says whether each plugin is approved, and `--approve` approves it in the same step
/// with `hookbox trust add`'s screen — refusing to ask without a terminal, and then installing
/// nothing (issue 33 item 3).
#[test]
fn install_shows_the_trust_state_and_approves_on_request() {
    let d = Dir::new();
    let guard = repo_root().join("examples/plugins/shell-guard");
    let run = install(&d, "claude", &guard, &["--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["trust"][0]["state"], "not approved", "{v}");
    let run = install(&d, "claude", &guard, &[]);
    assert!(run.stderr.contains("is not approved"), "{run:?}");
    assert!(run.stderr.contains("--approve"), "{run:?}");
    // --approve without a terminal and without --yes: refused, nothing written.
    let d2 = Dir::new();
    let run = install(&d2, "claude", &guard, &["--approve"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(!d2.path().join(".claude/settings.json").exists());
    // --approve --yes: the approval screen, then the install; the plugin is approved.
    let run = install(&d2, "claude", &guard, &["--approve", "--yes"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("trust: shell-guard is approved as it is"),
        "{run:?}"
    );
    assert!(d2.path().join(".claude/settings.json").exists());
    let v: Value =
        serde_json::from_str(&install(&d2, "claude", &guard, &["--json"]).stdout).unwrap();
    assert_eq!(v["trust"][0]["state"], "approved", "{v}");
}

/// Runs `hookbox ARGS…` as [`hookbox`] does, with `bin` first on PATH.
fn hookbox_on_path(d: &Dir, bin: &Path, args: &[&str]) -> Run {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(args)
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .env("HOME", d.path().join("home"))
        .env("HOOKBOX_STATE_DIR", d.state())
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Issue 33 item 5: what install writes into a project file is what a user would commit — a
/// matcher limited to the tools the rules can match (every agent's shell tool for a `Bash`
/// guard, not `Read`), `hookbox` from PATH, the plugin inside the project by relative path and
/// no `--project-dir` — and it still guards when the agent runs it from another folder of the
/// project, as Claude Code does (its CLAUDE_PROJECT_DIR set). `--absolute` writes full paths.
#[test]
fn an_installed_entry_is_one_a_user_would_commit_and_still_guards() {
    let d = Dir::new();
    let guard_src = repo_root().join("examples/plugins/shell-guard");
    for rel in ["hooks/hooks.json", "scripts/guard.sh"] {
        let text = std::fs::read_to_string(guard_src.join(rel)).unwrap();
        d.write(&format!("plugins/guard/{rel}"), &text);
    }
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hookbox"), bin.join("hookbox")).unwrap();
    let run = hookbox_on_path(
        &d,
        &bin,
        &["install", "--agent", "claude", "--plugin", "plugins/guard"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("from PATH") || run.stdout.contains("from PATH"),
        "{run:?}"
    );
    let file = d.path().join(".claude/settings.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let group = &v["hooks"]["PreToolUse"][0];
    let matcher = group["matcher"].as_str().unwrap();
    let tools: Vec<&str> = matcher.split('|').collect();
    for t in ["Bash", "run_shell_command", "PowerShell"] {
        assert!(tools.contains(&t), "{t} not in {matcher}");
    }
    assert!(!tools.contains(&"Read"), "{matcher}");
    let cmd = group["hooks"][0]["command"].as_str().unwrap();
    assert!(
        cmd.starts_with("hookbox hook --agent claude --event PreToolUse --plugin plugins/guard"),
        "{cmd}"
    );
    assert!(!cmd.contains("--project-dir"), "{cmd}");
    assert!(!text.contains(&*d.path().display().to_string()), "{text}");

    // Claude Code runs it with `sh -c` from wherever the session is, naming the project.
    let sub = d.path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let fx: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("tests/agents/claude/guard-rm-rf.json"))
            .unwrap()
            .replace("/work/project", &d.path().display().to_string()),
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = sh_in(
        &d,
        cmd,
        &fx["payload"],
        Some(&sub),
        &[
            ("PATH", OsStr::new(&path)),
            ("CLAUDE_PROJECT_DIR", d.path().as_os_str()),
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("deny") && run.stdout.contains("shell-guard"),
        "{run:?}"
    );

    // --absolute: full paths for hookbox and the plugin, and the project named.
    let run = hookbox_on_path(
        &d,
        &bin,
        &[
            "install",
            "--agent",
            "claude",
            "--plugin",
            "plugins/guard",
            "--absolute",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let groups = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v}");
    let cmd = groups[0]["hooks"][0]["command"].as_str().unwrap();
    let plugin = d.path().canonicalize().unwrap().join("plugins/guard");
    assert!(cmd.starts_with('/'), "{cmd}");
    assert!(cmd.contains("--project-dir"), "{cmd}");
    assert!(cmd.contains(&*plugin.display().to_string()), "{cmd}");
}
