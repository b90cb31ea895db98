//! Tool names and tool-input keys between an agent and Claude Code, both ways, from the one
//! alias table the matcher uses (`hookbox_core::matcher::ToolAliases`): an agent's `run_shell_command`
//! becomes `Bash` for hooks, and a rewrite of `file_path` goes back as the agent's `filePath`.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use hookbox_core::matcher::ToolAliases;
use hookbox_core::matcher::alias::DEFAULT_ALIASES;

use super::Agent;

fn aliases() -> &'static ToolAliases {
    static TABLE: OnceLock<ToolAliases> = OnceLock::new();
    TABLE.get_or_init(ToolAliases::default)
}

/// Names kept as the agent sends them even though the table aliases them: their input is not
/// Claude Code's (`apply_patch` carries a patch, not a file path and strings), so renaming the
/// tool would hand an `Edit` hook an input it cannot read. Matchers still see them as `Edit`.
const KEPT_AS_SENT: &[&str] = &["apply_patch"];

/// Claude Code's name for the tool an agent calls `name` (`run_shell_command` → `Bash`); a name
/// the table does not know (an MCP tool, a tool Claude Code lacks) is itself.
pub fn canonical_tool(name: &str) -> &str {
    if KEPT_AS_SENT.contains(&name) {
        return name;
    }
    aliases().canonical(name)
}

/// The names `agent` gives the tool Claude Code calls `canonical`: those the table lists for the
/// agent, else `canonical` itself (the agent uses Claude Code's name, as Codex does for `Bash`).
pub fn agent_tool_names(agent: Agent, canonical: &str) -> Vec<&'static str> {
    let listed: Vec<&'static str> = DEFAULT_ALIASES
        .iter()
        .filter(|(c, _)| *c == canonical)
        .flat_map(|(_, names)| names.iter())
        .filter(|(_, agents)| agents.contains(&agent))
        .map(|(n, _)| *n)
        .collect();
    if !listed.is_empty() {
        return listed;
    }
    DEFAULT_ALIASES
        .iter()
        .find(|(c, _)| *c == canonical)
        .map(|(c, _)| vec![*c])
        .unwrap_or_default()
}

/// (agent's key, Claude Code's key) renamed in the input of the tool Claude Code calls
/// `canonical`, for `agent`. Only keys with the same meaning are renamed; the rest pass as the
/// agent sent them (Copilot's `bash` keeps its `mode` and `initial_wait`).
fn renames(agent: Agent, canonical: &str) -> &'static [(&'static str, &'static str)] {
    const FILE_TOOLS: &[&str] = &["Read", "Write", "Edit"];
    if !FILE_TOOLS.contains(&canonical) {
        return &[];
    }
    match agent {
        // Copilot's file tools take `path` (and its editor's `old_str`/`new_str`/`file_text`).
        Agent::Copilot => &[
            ("path", "file_path"),
            ("old_str", "old_string"),
            ("new_str", "new_string"),
            ("file_text", "content"),
        ],
        // VS Code's tools take camelCase keys.
        Agent::VsCode => &[
            ("filePath", "file_path"),
            ("oldString", "old_string"),
            ("newString", "new_string"),
        ],
        // Kimi's file tools take `path`.
        Agent::Kimi => &[("path", "file_path")],
        _ => &[],
    }
}

/// Renames `input`'s keys to Claude Code's for the tool `canonical`, where the Claude Code key
/// is not already there; returns the renames done, to undo them in a rewrite.
pub(crate) fn to_claude_keys(
    agent: Agent,
    canonical: &str,
    input: &mut Value,
) -> Vec<(String, String)> {
    let Value::Object(map) = input else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for (theirs, ours) in renames(agent, canonical) {
        if map.contains_key(*ours) {
            continue;
        }
        if let Some(v) = map.remove(*theirs) {
            map.insert((*ours).to_owned(), v);
            done.push(((*theirs).to_owned(), (*ours).to_owned()));
        }
    }
    done
}

/// Undoes [`to_claude_keys`] on a rewritten input, so the agent receives its own keys.
pub(crate) fn to_agent_keys(renamed: &[(String, String)], input: &Value) -> Value {
    let Value::Object(map) = input else {
        return input.clone();
    };
    let mut out = Map::new();
    for (k, v) in map {
        let key = renamed
            .iter()
            .find(|(_, ours)| ours == k)
            .map_or(k.as_str(), |(theirs, _)| theirs.as_str());
        out.insert(key.to_owned(), v.clone());
    }
    Value::Object(out)
}

/// Each agent's tools that are deliberately not in the alias table (no Claude Code rule is about
/// them: a plan, a todo list, a terminal's output), so their names are known and not warned
/// about. Sources: the tools each pinned agent offers its model (the real-agent suite's
/// requests), the editors' documentation.
const OTHER_TOOLS: &[(Agent, &[&str])] = &[
    (
        Agent::Codex,
        &[
            "request_user_input",
            "view_image",
            "multi_agent_v1",
            "get_goal",
            "create_goal",
            "update_goal",
            "update_plan",
            "web_search",
        ],
    ),
    (
        Agent::Gemini,
        &[
            "update_topic",
            "list_background_processes",
            "read_background_output",
            "enter_plan_mode",
            "exit_plan_mode",
        ],
    ),
    (
        Agent::Copilot,
        &[
            "read_bash",
            "stop_bash",
            "list_bash",
            "read_powershell",
            "stop_powershell",
            "list_powershell",
            "fetch_copilot_cli_documentation",
            "skill",
            "sql",
            "session_store_sql",
            "read_agent",
            "list_agents",
            "write_agent",
            "report_intent",
            "update_todo",
        ],
    ),
    (
        Agent::Qwen,
        &[
            "get_goal",
            "update_goal",
            "list_agents",
            "skill",
            "tool_call",
            "tool_search",
            "todo_write",
            "save_memory",
            "exit_plan_mode",
        ],
    ),
    (
        Agent::Kimi,
        &[
            "AskUserQuestion",
            "TaskList",
            "TaskOutput",
            "TaskStop",
            "ExitPlanMode",
            "EnterPlanMode",
            "Agent",
        ],
    ),
    (Agent::Cursor, &["Delete"]),
    (
        Agent::VsCode,
        &[
            "get_terminal_output",
            "create_directory",
            "list_dir",
            "file_search",
            "semantic_search",
            "get_errors",
            "run_task",
            "get_task_output",
            "runSubagent",
            "manage_todo_list",
            "edit_notebook_file",
            "run_notebook_cell",
            "runTests",
            "test_failure",
            "get_changed_files",
            "github_repo",
        ],
    ),
];

/// A warning naming `sent`, a tool name `agent` sent that hookbox's table does not know — so a
/// `Bash`, `Write` or `Edit` rule cannot see it as one of those — or `None` when the name is
/// known. MCP tools are named by their servers and not warned about; Claude Code's own names
/// are the table's vocabulary.
pub(crate) fn unknown_tool_warning(agent: Agent, sent: &str) -> Option<String> {
    if agent == Agent::Claude
        || sent.starts_with("mcp__")
        || (agent == Agent::Gemini && sent.starts_with("mcp_"))
        || aliases().names(sent).nth(1).is_some()
        || DEFAULT_ALIASES.iter().any(|(c, _)| *c == sent)
        || OTHER_TOOLS
            .iter()
            .any(|(a, names)| *a == agent && names.contains(&sent))
        || (agent == Agent::Copilot && sent.contains('-'))
    {
        return None;
    }
    Some(format!(
        "hookbox: {} sent a tool hookbox's table does not know, `{sent}`: a rule for Bash, Write, Edit or Read does not see it as one (match it by this name, and tell hookbox's maintainers)",
        agent.display_name()
    ))
}

/// Claude Code's name for an MCP tool: `mcp__<server>__<tool>`.
pub(crate) fn mcp_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_agent_name_maps_to_claude_and_back() {
        for (canonical, names) in DEFAULT_ALIASES {
            for (name, agents) in *names {
                if KEPT_AS_SENT.contains(name) {
                    assert_eq!(canonical_tool(name), *name);
                } else {
                    assert_eq!(canonical_tool(name), *canonical, "{name}");
                }
                for agent in *agents {
                    assert!(
                        agent_tool_names(*agent, canonical).contains(name),
                        "{agent} {canonical} → {name}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_shell_tool_of_every_agent() {
        let cases = [
            (Agent::Claude, "Bash"),
            (Agent::Codex, "Bash"),
            (Agent::Gemini, "run_shell_command"),
            (Agent::Cursor, "Shell"),
            (Agent::Copilot, "bash"),
            (Agent::VsCode, "run_in_terminal"),
            (Agent::Kimi, "Shell"),
        ];
        for (agent, name) in cases {
            assert_eq!(canonical_tool(name), "Bash");
            // The agent's main shell tool first (Copilot's `write_bash` and VS Code's tasks follow).
            assert_eq!(agent_tool_names(agent, "Bash")[0], name, "{agent}");
        }
        assert_eq!(
            canonical_tool("mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            agent_tool_names(Agent::Gemini, "mcp__x__y"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn input_keys_round_trip() {
        let mut input = json!({"filePath": "/a", "oldString": "x", "newString": "y", "other": 1});
        let done = to_claude_keys(Agent::VsCode, "Edit", &mut input);
        assert_eq!(
            input,
            json!({"file_path": "/a", "old_string": "x", "new_string": "y", "other": 1})
        );
        let back = to_agent_keys(
            &done,
            &json!({"file_path": "/b", "old_string": "x", "new_string": "z", "other": 1}),
        );
        assert_eq!(
            back,
            json!({"filePath": "/b", "oldString": "x", "newString": "z", "other": 1})
        );
        // A key already in Claude Code's spelling is left alone.
        let mut input = json!({"path": "/a", "file_path": "/b"});
        assert!(to_claude_keys(Agent::Kimi, "Read", &mut input).is_empty());
        // Shell input passes as sent.
        let mut input = json!({"command": "ls", "mode": "sync"});
        assert!(to_claude_keys(Agent::Copilot, "Bash", &mut input).is_empty());
    }
}
