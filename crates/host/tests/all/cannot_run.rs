//! A rule that cannot run is kept, failing, never dropped: a missing or non-executable script, a
//! missing component. At load it is named (an error when the rule fails closed); at dispatch it
//! matches as written and fails with that reason, so a fail-closed guard blocks instead of
//! vanishing and letting `git push --force` through.

use hookbox_core::Dialect;
use hookbox_core::diagnostic::Severity;
use hookbox_core::output::FailureClass;
use hookbox_core::{Outcome, config::LoadOptions};
use hookbox_host::{HookHost, HostPolicy};
use serde_json::json;

use crate::util::{dispatch, load_project};

fn push_force() -> serde_json::Value {
    json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": "git push --force"}})
}

#[tokio::test]
async fn a_fail_closed_guard_whose_script_is_missing_blocks() {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "onFailure": "block"}
    ]}]}});
    let p = load_project(Dialect::Claude, hooks, &[], |_| {});
    let [d] = p.report.diagnostics.as_slice() else {
        panic!("{:#?}", p.report.diagnostics)
    };
    assert_eq!(d.severity, Severity::Error);
    assert!(
        d.message.starts_with(
            "command hook cannot run: its program ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh does not exist"
        ) && d.message.ends_with(
            "— it fails closed (onFailure: block), so every action it matches is blocked"
        ),
        "{}",
        d.message
    );
    assert_eq!(d.json_path.as_deref(), Some("hooks.PreToolUse[0].hooks[0]"));
    assert_eq!(p.report.rules.len(), 1, "kept, failing");
    let out = dispatch(&p, push_force()).await;
    assert_eq!(out.verdict.outcome(), Outcome::Block);
    assert_eq!(out.matched_rule_count, 1);
    let f = out.reports[0].effect.failure.as_ref().unwrap();
    assert_eq!(f.class, FailureClass::SpawnError);
    assert!(
        f.message.contains("guard.sh does not exist"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_fail_open_rule_whose_program_cannot_run_is_a_warning_and_warns_at_dispatch() {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/plain.sh"}
    ]}]}});
    let p = load_project(Dialect::Claude, hooks, &[], |_| {});
    let plain = p.path().join("plugin/hooks/plain.sh");
    // Written after the load: what was checked at load is what runs (a reload sees it).
    std::fs::write(&plain, "#!/bin/sh\nexit 0\n").unwrap();
    let [d] = p.report.diagnostics.as_slice() else {
        panic!("{:#?}", p.report.diagnostics)
    };
    assert_eq!(d.severity, Severity::Warning);
    assert!(
        d.message.ends_with("— it fails open, so it guards nothing"),
        "{}",
        d.message
    );
    let out = dispatch(&p, push_force()).await;
    assert_eq!(out.verdict.outcome(), Outcome::Allow);
    assert!(
        out.warnings.iter().any(|w| w.contains("spawn_error")),
        "{:?}",
        out.warnings
    );
    // Reloaded: the script is there but not executable — named as such.
    let report = p
        .host
        .load(&[p.path().join("plugin")], &LoadOptions::default());
    let [d] = report.diagnostics.as_slice() else {
        panic!("{:#?}", report.diagnostics)
    };
    assert!(
        d.message.contains("is not executable (mode 644"),
        "{}",
        d.message
    );
}

#[tokio::test]
async fn a_fail_closed_wasm_guard_whose_component_is_missing_blocks_and_says_how_to_fix_it() {
    let hooks = json!({"hooks": {"PreToolUse": [
        {"type": "wasm", "component": "hooks/guard.wasm", "matcher": {"tool_name": "Bash"}, "onFailure": "block"}
    ]}});
    let p = load_project(Dialect::Claude, hooks, &[], |_| {});
    let [d] = p.report.diagnostics.as_slice() else {
        panic!("{:#?}", p.report.diagnostics)
    };
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("cannot read component"), "{}", d.message);
    assert!(
        d.fix
            .as_deref()
            .is_some_and(|f| f.contains("scripts/build-example-guests.sh")),
        "{d:?}"
    );
    let out = dispatch(&p, push_force()).await;
    assert_eq!(out.verdict.outcome(), Outcome::Block);
    assert!(out.reports[0].effect.failure.is_some());
}

#[tokio::test]
async fn a_rule_the_policy_forbids_is_kept_failing() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    std::fs::write(
        plugin.join("hooks/hooks.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true", "onFailure": "block"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut policy = HostPolicy::for_project(dir.path()).with_state_dir(state.path());
    policy.allow_native_commands = false;
    let host = HookHost::new(policy).unwrap();
    let report = host.load(&[&plugin], &LoadOptions::default());
    assert!(report.has_errors());
    let out = host
        .dispatch(crate::util::event(push_force(), dir.path()))
        .await;
    assert_eq!(out.verdict.outcome(), Outcome::Block);
}
