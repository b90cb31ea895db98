//! The conformance suite: one trial per folder under `tests/conformance/` (repository root).
//!
//! A case is data, not code:
//! - `hooks.json` — the hook file, loaded with the case's dialect;
//! - `event.json` — the event payload (Claude Code's flat shape, or the main source's envelope);
//! - `script.json` — the dialect, and the scripted result of each rule by its index: an exit code
//!   with stdout/stderr, a timeout, a classified failure, or a typed answer. No process runs;
//!   `finish_order` feeds reports in a chosen order to prove aggregation ignores it;
//! - `expected.json` — load diagnostics, matched rules, the aggregated verdict, the rendered
//!   user turn, the HookFired record and the warnings.
//!
//! `HOOKBOX_BLESS=1 cargo test -p hookbox-core --test conformance` rewrites `expected.json`;
//! otherwise a mismatch prints a unified diff.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hookbox_core::Verdict;
use hookbox_core::aggregate::{StopState, aggregate, warnings};
use hookbox_core::config::parse_hooks_str;
use hookbox_core::dialect::Dialect;
use hookbox_core::event::Event;
use hookbox_core::fired::HookFired;
use hookbox_core::index::RuleSet;
use hookbox_core::matcher::ToolAliases;
use hookbox_core::output::{
    HookFailure, HookResponse, RawOutput, RunOutput, effect_of, prompt_effect,
};
use hookbox_core::render::{render_tool_verdict, render_user_turn};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::{FailMode, Handler};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    /// What the case proves (shown nowhere but here).
    #[allow(dead_code, reason = "documentation for readers of the case")]
    description: String,
    #[serde(default = "claude")]
    dialect: Dialect,
    #[serde(default)]
    fail_mode: FailMode,
    #[serde(default)]
    results: BTreeMap<usize, Scripted>,
    /// Rule indices in the order their reports arrive (default: reverse rule order).
    #[serde(default)]
    finish_order: Option<Vec<usize>>,
    #[serde(default)]
    stop: Option<StopScript>,
    /// The hooks file name, for dialect-specific parsing (default `hooks.json`).
    #[serde(default)]
    file_name: Option<String>,
}

fn claude() -> Dialect {
    Dialect::Claude
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StopScript {
    reentries: u32,
    cap: u32,
}

#[derive(Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum Scripted {
    Exit {
        exit: i32,
        #[serde(default)]
        stdout: String,
        #[serde(default)]
        stderr: String,
    },
    Timeout {
        timeout: bool,
        #[serde(default)]
        stdout: String,
    },
    Failure {
        failure: HookFailure,
    },
    Response {
        /// A typed answer, written in Claude Code's JSON keys.
        response: Value,
    },
}

fn run_case(dir: &Path) -> Result<Value, String> {
    let read =
        |name: &str| std::fs::read_to_string(dir.join(name)).map_err(|e| format!("{name}: {e}"));
    let script: Script =
        serde_json::from_str(&read("script.json")?).map_err(|e| format!("script.json: {e}"))?;
    let file_name = script
        .file_name
        .clone()
        .unwrap_or_else(|| "hooks.json".into());
    let text = read("hooks.json")?;
    let report = parse_hooks_str(&text, Path::new(&file_name), script.dialect);
    let diagnostics: Vec<String> = report.diagnostics.iter().map(|d| d.to_string()).collect();
    let payload: Value =
        serde_json::from_str(&read("event.json")?).map_err(|e| format!("event.json: {e}"))?;
    let event = Event::from_payload(None, payload, "conformance-session", "/project")
        .map_err(|e| e.to_string())?;
    let set = RuleSet::new(report.plugins, report.rules, ToolAliases::default());
    let matched: Vec<usize> = set.matching(&event).iter().map(|r| r.index).collect();
    let mut reports = Vec::new();
    for &i in &matched {
        let rule = &set.rules()[i];
        let (effect, exit_code) = match &rule.handler {
            Handler::Prompt { prompt } => (prompt_effect(prompt, &event), None),
            _ => {
                let out = match script.results.get(&i) {
                    Some(Scripted::Exit {
                        exit,
                        stdout,
                        stderr,
                    }) => {
                        RunOutput::Command(RawOutput::exited(*exit, stdout.clone(), stderr.clone()))
                    }
                    Some(Scripted::Timeout {
                        timeout: true,
                        stdout,
                    }) => RunOutput::Command(RawOutput::timed_out(stdout.clone(), "")),
                    Some(Scripted::Timeout { .. }) => {
                        return Err(format!("rule {i}: `timeout` must be true"));
                    }
                    Some(Scripted::Failure { failure }) => RunOutput::Failed(failure.clone()),
                    Some(Scripted::Response { response }) => RunOutput::Response(Box::new(
                        HookResponse::from_json(response).map_err(|e| format!("rule {i}: {e}"))?,
                    )),
                    None => {
                        return Err(format!(
                            "rule {i} matched but script.json has no result for it"
                        ));
                    }
                };
                let exit = match &out {
                    RunOutput::Command(r) => r.exit_code,
                    _ => None,
                };
                (effect_of(rule, &event, &out, script.fail_mode), exit)
            }
        };
        reports.push(HookReport {
            hook: HookRef {
                rule_index: i,
                plugin: rule.source.plugin.as_str().into(),
                hook_name: rule.handler.label().into(),
                handler_type: rule.handler.handler_type(),
                hook_event: event.name,
            },
            effect,
            duration_ms: 0.0,
            exit_code,
            output: None,
            fuel_consumed: None,
        });
    }
    // Reports arrive in finish order, not rule order: aggregation must not care.
    let order: Vec<usize> = script
        .finish_order
        .clone()
        .unwrap_or_else(|| matched.iter().rev().copied().collect());
    let arrived: Vec<HookReport> = order
        .iter()
        .filter_map(|i| reports.iter().find(|r| r.hook.rule_index == *i).cloned())
        .chain(
            reports
                .iter()
                .filter(|r| !order.contains(&r.hook.rule_index))
                .cloned(),
        )
        .collect();
    let stop = script
        .stop
        .map(|s| StopState {
            reentries: s.reentries,
            cap: s.cap,
        })
        .unwrap_or_default();
    let verdict = aggregate(&event, &arrived, stop);
    let fired = HookFired::for_dispatch(&event, &verdict, matched.len());
    let rendered = match &verdict {
        Verdict::UserPromptSubmit(r) => json!(render_user_turn(r, event.prompt().unwrap_or(""))),
        Verdict::PreToolUse(r) => json!(render_tool_verdict(r)),
        _ => Value::Null,
    };
    let handler_types: Vec<&str> = matched
        .iter()
        .map(|i| set.rules()[*i].handler.handler_type().as_str())
        .collect();
    Ok(json!({
        "diagnostics": diagnostics,
        "rules_loaded": set.rules().len(),
        "matched": matched,
        "matched_types": handler_types,
        "outcome": verdict.outcome(),
        "verdict": verdict,
        "rendered": rendered,
        "hook_fired": fired,
        "warnings": warnings(&arrived),
    }))
}

fn check(dir: PathBuf) -> Result<(), Failed> {
    let got = run_case(&dir).map_err(|e| Failed::from(format!("{}: {e}", dir.display())))?;
    let got_text = format!(
        "{}\n",
        serde_json::to_string_pretty(&got).map_err(|e| Failed::from(e.to_string()))?
    );
    let expected_path = dir.join("expected.json");
    if std::env::var_os("HOOKBOX_BLESS").is_some() {
        std::fs::write(&expected_path, &got_text).map_err(|e| Failed::from(e.to_string()))?;
        return Ok(());
    }
    let want = std::fs::read_to_string(&expected_path).map_err(|e| {
        Failed::from(format!(
            "{}: {e} (run with HOOKBOX_BLESS=1 to create it)",
            expected_path.display()
        ))
    })?;
    if want == got_text {
        return Ok(());
    }
    let diff = similar::TextDiff::from_lines(&want, &got_text)
        .unified_diff()
        .header("expected.json", "got")
        .to_string();
    Err(Failed::from(format!(
        "{} differs (HOOKBOX_BLESS=1 rewrites it):\n{diff}",
        dir.display()
    )))
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("script.json").exists())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    assert!(
        !dirs.is_empty(),
        "no conformance cases under {}",
        root.display()
    );
    let trials = dirs
        .into_iter()
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(name, move || check(d))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
