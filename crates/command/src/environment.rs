//! A hook's environment per dialect (SPEC §4.1) and the values of its `${VAR}` placeholders.

use std::ffi::OsString;
use std::path::Path;

use hookbox_core::Dialect;
use hookbox_core::event::wire::simple_env;

use crate::env_policy::EnvPolicy;
use crate::request::HookContext;

/// The variables substituted as `${NAME}` in the command text and in each `args` element.
///
/// Only these paths: the simple dialect's `HOOK_TOOL_INPUT` holds agent-controlled JSON, and
/// pasting it into shell text would let a tool call inject shell code. Hooks read it from the
/// environment instead, where it is data.
pub const PLACEHOLDER_VARS: &[&str] = &[
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "PLUGIN_ROOT",
    "PLUGIN_DATA",
];

/// Variables hookbox sets from the [`HookContext`]. They are removed from the inherited
/// environment first: when hookbox itself runs inside an agent (say as a Claude Code hook), the
/// outer values describe another plugin, and `GHAST_HOOK` must appear only in the ghast dialect.
pub const MANAGED_VARS: &[&str] = &[
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "PLUGIN_ROOT",
    "PLUGIN_DATA",
    "GHAST_HOOK",
    "HOOK_EVENT",
    "HOOK_TOOL_NAME",
    "HOOK_TOOL_INPUT",
    "HOOK_TOOL_OUTPUT",
];

/// The inherited part of every hook's environment: `vars` without the deny-listed and the
/// managed names. Computed once per runner, not per run.
pub(crate) fn inherited(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    policy: &EnvPolicy,
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            !MANAGED_VARS.contains(&name.as_ref()) && !policy.denies(&name)
        })
        .collect()
}

/// The variables the context adds, in order; later ones win on a repeated name.
pub(crate) fn context_vars(ctx: &HookContext) -> Vec<(&'static str, OsString)> {
    let mut vars = Vec::new();
    let path = |p: &Path| p.as_os_str().to_owned();
    if let Some(dir) = &ctx.project_dir {
        vars.push(("CLAUDE_PROJECT_DIR", path(dir)));
    }
    if let Some(dir) = &ctx.plugin_root {
        vars.push(("CLAUDE_PLUGIN_ROOT", path(dir)));
        vars.push(("PLUGIN_ROOT", path(dir)));
    }
    if let Some(dir) = &ctx.plugin_data {
        vars.push(("CLAUDE_PLUGIN_DATA", path(dir)));
        vars.push(("PLUGIN_DATA", path(dir)));
    }
    if ctx.dialect == Dialect::Ghast {
        vars.push(("GHAST_HOOK", OsString::from("true")));
    }
    if let (Dialect::Simple, Some(event)) = (ctx.dialect, &ctx.event) {
        for (name, value) in simple_env(event) {
            if let Some(name) = MANAGED_VARS.iter().find(|m| **m == name) {
                // A NUL cannot cross `execve`; a tool output containing one would make the spawn
                // fail, so it is dropped from the value instead.
                vars.push((name, OsString::from(value.replace('\0', ""))));
            }
        }
    }
    vars
}

/// The values of [`PLACEHOLDER_VARS`] known in this context. Names without a value are left
/// as written, so the shell expands them (to nothing) in shell form.
pub(crate) fn placeholder_values(ctx: &HookContext) -> Vec<(&'static str, String)> {
    context_vars(ctx)
        .into_iter()
        .filter(|(name, _)| PLACEHOLDER_VARS.contains(name))
        .map(|(name, value)| (name, value.to_string_lossy().into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use hookbox_core::event::{Event, EventData, EventName, ToolCall};
    use serde_json::json;

    use super::*;

    fn names(vars: &[(&'static str, OsString)]) -> Vec<&'static str> {
        vars.iter().map(|(n, _)| *n).collect()
    }

    fn event() -> Arc<Event> {
        let mut ev = Event::new(EventName::PostToolUse, "s", "/w");
        ev.data = EventData::PostToolUse {
            call: ToolCall {
                tool_name: "Bash".into(),
                tool_input: json!({"command": "ls"}),
                tool_use_id: None,
            },
            tool_response: json!("a\0b"),
        };
        Arc::new(ev)
    }

    fn full(dialect: Dialect) -> HookContext {
        HookContext::new(dialect)
            .with_project_dir("/proj")
            .with_plugin_root("/plug")
            .with_plugin_data("/data")
            .with_event(event())
    }

    #[test]
    fn claude_gets_the_paths_only() {
        let vars = context_vars(&full(Dialect::Claude));
        assert_eq!(
            names(&vars),
            [
                "CLAUDE_PROJECT_DIR",
                "CLAUDE_PLUGIN_ROOT",
                "PLUGIN_ROOT",
                "CLAUDE_PLUGIN_DATA",
                "PLUGIN_DATA"
            ]
        );
        assert_eq!(names(&context_vars(&full(Dialect::Agentao))), names(&vars));
    }

    #[test]
    fn ghast_adds_ghast_hook() {
        let vars = context_vars(&full(Dialect::Ghast));
        assert!(vars.contains(&("GHAST_HOOK", OsString::from("true"))));
        assert!(!names(&vars).contains(&"HOOK_EVENT"));
    }

    #[test]
    fn simple_adds_hook_vars_without_nul() {
        let vars = context_vars(&full(Dialect::Simple));
        assert!(vars.contains(&("HOOK_EVENT", OsString::from("PostToolUse"))));
        assert!(vars.contains(&("HOOK_TOOL_NAME", OsString::from("Bash"))));
        assert!(vars.contains(&("HOOK_TOOL_INPUT", OsString::from(r#"{"command":"ls"}"#))));
        assert!(vars.contains(&("HOOK_TOOL_OUTPUT", OsString::from("ab"))));
        assert!(!names(&vars).contains(&"GHAST_HOOK"));
    }

    #[test]
    fn unknown_paths_are_not_set() {
        assert!(context_vars(&HookContext::new(Dialect::Claude)).is_empty());
        assert!(
            placeholder_values(&HookContext::new(Dialect::Simple).with_event(event())).is_empty()
        );
    }

    #[test]
    fn inherited_drops_denied_and_managed_names() {
        let host = [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk"),
            ("GHAST_HOOK", "true"),
            ("PLUGIN_ROOT", "/old"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let kept = inherited(host, &EnvPolicy::default());
        assert_eq!(kept, [(OsString::from("PATH"), OsString::from("/bin"))]);
    }
}
