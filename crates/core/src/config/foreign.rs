//! Other agents' hook formats (Cursor, GitHub Copilot, Windsurf, Gemini CLI): recognised so that
//! such a file gets one diagnostic naming its format instead of a pile of unknown-event warnings,
//! and so that an unknown event name written the way another agent spells it gets the Claude
//! Code name as its fix.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::EventName;

/// A hook format hookbox recognises but does not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForeignFormat {
    /// Cursor's `.cursor/hooks.json` (`version: 1`, camelCase events, flat entries).
    Cursor,
    /// Cursor's plugin manifest `.cursor-plugin/plugin.json`.
    CursorPlugin,
    /// GitHub Copilot's `.github/hooks/*.json` (`version: 1`, `bash`/`powershell`, `timeoutSec`).
    Copilot,
    /// Windsurf Cascade's `.windsurf/hooks.json` (snake_case events such as `pre_run_command`).
    Windsurf,
    /// Gemini CLI's hooks (`BeforeTool`, `AfterTool`, … with timeouts in milliseconds).
    Gemini,
}

impl ForeignFormat {
    /// The format's name and where such files live, as printed in messages.
    pub fn describe(self) -> &'static str {
        match self {
            ForeignFormat::Cursor => "a Cursor hooks file (.cursor/hooks.json, version 1)",
            ForeignFormat::CursorPlugin => "a Cursor plugin manifest (.cursor-plugin/plugin.json)",
            ForeignFormat::Copilot => {
                "a GitHub Copilot hooks file (.github/hooks/*.json, version 1)"
            }
            ForeignFormat::Windsurf => {
                "a Windsurf Cascade hooks file (.windsurf/hooks.json, snake_case events)"
            }
            ForeignFormat::Gemini => {
                "a Gemini CLI hooks file (BeforeTool/AfterTool events, timeouts in milliseconds)"
            }
        }
    }

    /// Short name: `cursor`, `cursor_plugin`, `copilot`, `windsurf`, `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            ForeignFormat::Cursor => "cursor",
            ForeignFormat::CursorPlugin => "cursor_plugin",
            ForeignFormat::Copilot => "copilot",
            ForeignFormat::Windsurf => "windsurf",
            ForeignFormat::Gemini => "gemini",
        }
    }

    /// The one diagnostic's message.
    pub fn message(self) -> String {
        format!(
            "this is {}; hookbox reads Claude Code, Agentao, Ghast and .hooks.json files — not loaded",
            self.describe()
        )
    }
}

/// A file in another agent's format: found, named, not loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignFile {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: ForeignFormat,
}

/// (other agent's event name, Claude Code's equivalent, whose name it is).
const EVENT_EQUIVALENTS: &[(&str, Option<EventName>, ForeignFormat)] = {
    use EventName::*;
    use ForeignFormat::{Copilot, Cursor, Gemini, Windsurf};
    &[
        ("beforeShellExecution", Some(PreToolUse), Cursor),
        ("beforeMCPExecution", Some(PreToolUse), Cursor),
        ("beforeReadFile", Some(PreToolUse), Cursor),
        ("beforeTabFileRead", Some(PreToolUse), Cursor),
        ("afterShellExecution", Some(PostToolUse), Cursor),
        ("afterMCPExecution", Some(PostToolUse), Cursor),
        ("afterFileEdit", Some(PostToolUse), Cursor),
        ("afterTabFileEdit", Some(PostToolUse), Cursor),
        ("beforeSubmitPrompt", Some(UserPromptSubmit), Cursor),
        ("afterAgentResponse", Some(Stop), Cursor),
        ("afterAgentThought", None, Cursor),
        ("stop", Some(Stop), Cursor),
        ("sessionStart", Some(SessionStart), Cursor),
        ("sessionEnd", Some(SessionEnd), Cursor),
        ("preToolUse", Some(PreToolUse), Cursor),
        ("postToolUse", Some(PostToolUse), Cursor),
        ("postToolUseFailure", Some(PostToolUseFailure), Cursor),
        ("preCompact", Some(PreCompact), Cursor),
        ("subagentStart", Some(SubagentStart), Cursor),
        ("subagentStop", Some(SubagentStop), Cursor),
        ("userPromptSubmitted", Some(UserPromptSubmit), Copilot),
        ("agentStop", Some(Stop), Copilot),
        ("errorOccurred", None, Copilot),
        ("notification", Some(Notification), Copilot),
        ("permissionRequest", Some(PermissionRequest), Copilot),
        ("pre_run_command", Some(PreToolUse), Windsurf),
        ("post_run_command", Some(PostToolUse), Windsurf),
        ("pre_read_code", Some(PreToolUse), Windsurf),
        ("post_read_code", Some(PostToolUse), Windsurf),
        ("pre_write_code", Some(PreToolUse), Windsurf),
        ("post_write_code", Some(PostToolUse), Windsurf),
        ("pre_mcp_tool_use", Some(PreToolUse), Windsurf),
        ("post_mcp_tool_use", Some(PostToolUse), Windsurf),
        ("pre_user_prompt", Some(UserPromptSubmit), Windsurf),
        ("post_cascade_response", Some(Stop), Windsurf),
        ("BeforeTool", Some(PreToolUse), Gemini),
        ("AfterTool", Some(PostToolUse), Gemini),
        ("BeforeAgent", Some(UserPromptSubmit), Gemini),
        ("AfterAgent", Some(Stop), Gemini),
        ("PreCompress", Some(PreCompact), Gemini),
        ("BeforeModel", None, Gemini),
        ("AfterModel", None, Gemini),
        ("BeforeToolSelection", None, Gemini),
    ]
};

/// Gemini CLI events that Claude Code also has under the same name.
const GEMINI_SHARED: &[&str] = &["SessionStart", "SessionEnd", "Notification"];

fn agent_of(name: &str) -> Option<ForeignFormat> {
    EVENT_EQUIVALENTS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, f)| *f)
}

/// Another agent's name that is also a mere case variant of a Claude name (`stop`,
/// `preToolUse`): on its own it is more likely a typo than proof of a foreign file.
fn is_case_variant(name: &str) -> bool {
    let n = normalize(name);
    EventName::ALL.iter().any(|e| normalize(e.as_str()) == n)
}

/// A name only that agent uses.
fn is_own(name: &str, f: ForeignFormat) -> bool {
    agent_of(name) == Some(f) && !is_case_variant(name)
}

/// The Claude Code name for an event name hookbox does not know, with a word on why: a case or
/// separator variant (`preToolUse`, `pre_tool_use`) or another agent's name (`BeforeTool`).
pub(crate) fn suggest_event(name: &str) -> Option<(EventName, String)> {
    if let Some((_, Some(e), fmt)) = EVENT_EQUIVALENTS.iter().find(|(n, _, _)| *n == name) {
        let who = match fmt {
            ForeignFormat::Cursor | ForeignFormat::CursorPlugin => "Cursor",
            ForeignFormat::Copilot => "GitHub Copilot",
            ForeignFormat::Windsurf => "Windsurf",
            ForeignFormat::Gemini => "Gemini CLI",
        };
        let normalized = normalize(name);
        if normalized == normalize(e.as_str()) {
            return Some((
                *e,
                format!("did you mean '{e}'? event names are case-sensitive"),
            ));
        }
        return Some((
            *e,
            format!("did you mean '{e}'? '{name}' is {who}'s name for it"),
        ));
    }
    let normalized = normalize(name);
    EventName::ALL
        .iter()
        .find(|e| normalize(e.as_str()) == normalized)
        .map(|e| {
            (
                *e,
                format!("did you mean '{e}'? event names are case-sensitive"),
            )
        })
}

fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn path_has(path: &Path, dir: &str) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(s) if s == dir))
}

fn entries<'a>(
    events: &'a Map<String, Value>,
) -> impl Iterator<Item = &'a Map<String, Value>> + 'a {
    events.values().flat_map(|v| match v {
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_object)
            .collect::<Vec<_>>(),
        Value::Object(o) => vec![o],
        _ => Vec::new(),
    })
}

/// Whether a parsed hooks document is another agent's. `path` gives hints (`.github/hooks/…`).
pub(crate) fn sniff(root: &Map<String, Value>, path: &Path) -> Option<ForeignFormat> {
    let wrapped = root.get("hooks").and_then(Value::as_object);
    let events = wrapped.unwrap_or(root);
    let copilot_entry = entries(events).any(|e| {
        e.contains_key("bash") || e.contains_key("powershell") || e.contains_key("timeoutSec")
    });
    let names: Vec<&str> = events
        .keys()
        .map(String::as_str)
        .filter(|k| wrapped.is_some() || !matches!(*k, "description" | "$schema" | "version"))
        .collect();
    let copilot_name = names.iter().any(|n| is_own(n, ForeignFormat::Copilot));

    // Only Cursor and Copilot files carry a `version`; Claude Code files never do.
    if wrapped.is_some() && root.get("version").is_some_and(Value::is_number) {
        let copilot = copilot_entry
            || copilot_name
            || (path_has(path, ".github") && path_has(path, "hooks"))
            || path_has(path, ".copilot");
        return Some(if copilot {
            ForeignFormat::Copilot
        } else {
            ForeignFormat::Cursor
        });
    }
    if names.is_empty() {
        return None;
    }
    let all = |pred: &dyn Fn(&str) -> bool| names.iter().all(|n| pred(n));
    let any_own = |f: ForeignFormat| names.iter().any(|n| is_own(n, f));
    if all(&|n| agent_of(n) == Some(ForeignFormat::Windsurf)) {
        return Some(ForeignFormat::Windsurf);
    }
    if any_own(ForeignFormat::Gemini)
        && all(&|n| agent_of(n) == Some(ForeignFormat::Gemini) || GEMINI_SHARED.contains(&n))
    {
        return Some(ForeignFormat::Gemini);
    }
    let camel = |n: &str| {
        matches!(
            agent_of(n),
            Some(ForeignFormat::Cursor | ForeignFormat::Copilot)
        )
    };
    if all(&camel) {
        if copilot_entry || copilot_name || path_has(path, ".github") {
            return Some(ForeignFormat::Copilot);
        }
        if any_own(ForeignFormat::Cursor) || path_has(path, ".cursor") {
            return Some(ForeignFormat::Cursor);
        }
    }
    if copilot_entry && names.iter().all(|n| n.parse::<EventName>().is_err()) {
        return Some(ForeignFormat::Copilot);
    }
    None
}

/// The fix for a foreign file: how its events map to Claude Code's.
pub(crate) fn conversion_hint(root: &Map<String, Value>) -> String {
    let events = root.get("hooks").and_then(Value::as_object).unwrap_or(root);
    let mut pairs: Vec<String> = Vec::new();
    for name in events.keys() {
        let pair = match EVENT_EQUIVALENTS.iter().find(|(n, _, _)| n == name) {
            Some((_, Some(e), _)) => format!("{name} → {e}"),
            Some((_, None, _)) => format!("{name} → (no equivalent)"),
            None => continue,
        };
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    let base = "rewrite it in Claude Code's format, {\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"…\"}]}]}}";
    if pairs.is_empty() {
        base.to_owned()
    } else {
        format!("{base}; its events map to: {}", pairs.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sniff_v(v: Value, path: &str) -> Option<ForeignFormat> {
        sniff(v.as_object().unwrap(), Path::new(path))
    }

    #[test]
    fn versioned_files_are_cursor_or_copilot() {
        let cursor = json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "x"}]}});
        assert_eq!(sniff_v(cursor, "hooks.json"), Some(ForeignFormat::Cursor));
        let copilot =
            json!({"version": 1, "hooks": {"PreToolUse": [{"command": "x", "timeout": 15}]}});
        assert_eq!(
            sniff_v(copilot.clone(), "repo/.github/hooks/hooks.json"),
            Some(ForeignFormat::Copilot)
        );
        assert_eq!(sniff_v(copilot, "hooks.json"), Some(ForeignFormat::Cursor));
        let copilot = json!({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "x", "timeoutSec": 5}]}});
        assert_eq!(sniff_v(copilot, "a.json"), Some(ForeignFormat::Copilot));
    }

    #[test]
    fn event_names_give_the_format_away() {
        let w = json!({"hooks": {"pre_run_command": [{"command": "x", "show_output": true}]}});
        assert_eq!(sniff_v(w, "hooks.json"), Some(ForeignFormat::Windsurf));
        let g = json!({"hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": []}], "SessionStart": []}});
        assert_eq!(sniff_v(g, "settings.json"), Some(ForeignFormat::Gemini));
        let c = json!({"hooks": {"afterFileEdit": [{"command": "x"}], "stop": []}});
        assert_eq!(sniff_v(c, "hooks.json"), Some(ForeignFormat::Cursor));
        let c = json!({"hooks": {"sessionStart": [{"command": "x"}]}});
        assert_eq!(
            sniff_v(c, "repo/.cursor/hooks.json"),
            Some(ForeignFormat::Cursor)
        );
    }

    #[test]
    fn claude_files_and_mixed_files_are_not_foreign() {
        let claude = json!({"description": "d", "hooks": {"PreToolUse": [{"hooks": []}]}});
        assert_eq!(sniff_v(claude, ".cursor/hooks.json"), None);
        let mixed = json!({"hooks": {"PreToolUse": [], "BeforeTool": []}});
        assert_eq!(sniff_v(mixed, "hooks.json"), None);
        let bare = json!({"description": "d", "Stop": []});
        assert_eq!(sniff_v(bare, "hooks.json"), None);
        assert_eq!(sniff_v(json!({}), "hooks.json"), None);
        // A lone camelCase name shared by Cursor and Copilot with no other signal: a typo.
        assert_eq!(
            sniff_v(json!({"hooks": {"preToolUse": []}}), "hooks.json"),
            None
        );
        assert_eq!(sniff_v(json!({"hooks": {"stop": []}}), "hooks.json"), None);
    }

    #[test]
    fn suggestions() {
        let s = |n: &str| suggest_event(n).map(|(e, why)| (e.as_str(), why));
        assert_eq!(s("preToolUse").unwrap().0, "PreToolUse");
        assert!(s("preToolUse").unwrap().1.contains("case-sensitive"));
        assert_eq!(s("pre_tool_use").unwrap().0, "PreToolUse");
        assert_eq!(s("beforeShellExecution").unwrap().0, "PreToolUse");
        assert!(s("beforeShellExecution").unwrap().1.contains("Cursor"));
        assert_eq!(s("BeforeTool").unwrap().0, "PreToolUse");
        assert_eq!(s("stop").unwrap().0, "Stop");
        assert_eq!(s("Foo"), None);
        assert_eq!(s("BeforeModel"), None);
    }

    #[test]
    fn messages_name_the_format() {
        assert_eq!(
            ForeignFormat::Cursor.message(),
            "this is a Cursor hooks file (.cursor/hooks.json, version 1); hookbox reads Claude Code, Agentao, Ghast and .hooks.json files — not loaded"
        );
        let hint = conversion_hint(
            json!({"hooks": {"beforeShellExecution": [], "stop": []}})
                .as_object()
                .unwrap(),
        );
        assert!(
            hint.ends_with("its events map to: beforeShellExecution → PreToolUse, stop → Stop"),
            "{hint}"
        );
    }
}
