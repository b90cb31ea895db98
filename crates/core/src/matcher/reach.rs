//! Whether a tool event's matcher can match a tool at all: the names of every tool hookbox knows
//! an agent to call, and the check the loader runs on each tool matcher against them. A matcher
//! that matches none of them — a typo (`Shel`), Claude Code's permission-rule syntax written as a
//! matcher (`Bash(git push:*)`, a regex that only matches `Bashgit push…`), an MCP server's bare
//! name (`mcp__memory`) — would leave its guard silent with nothing said; the loader warns,
//! naming why and the fix.
//!
//! A warning, never an error: an agent may call a tool this table does not list. MCP tools are
//! open-ended, so any matcher that names one (`mcp__…`, Gemini CLI's `mcp_…`) counts as reachable.

use super::alias::DEFAULT_ALIASES;
use super::{MatchBudget, Matcher, ValuePattern, glob_match};
use crate::suggest::closest;

/// Claude Code's tools, current and past (its documentation, and names real hook files match),
/// beyond the canonical names of the alias table.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterPlanMode",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillBash",
    "KillShell",
    "LS",
    "LSP",
    "ListMcpResourcesTool",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "PowerShell",
    "Read",
    "ReadMcpResourceTool",
    "Skill",
    "SlashCommand",
    "Task",
    "TaskOutput",
    "TaskStop",
    "TodoRead",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// Codex's tools that the alias table does not list.
const CODEX_TOOLS: &[&str] = &[
    "apply_patch",
    "exec_command",
    "local_shell",
    "shell",
    "update_plan",
    "view_image",
    "web_search",
    "write_stdin",
];

/// Steps one reachability test of a regex may take: it runs at load, against a few dozen short
/// names; a regex that needs more is counted as reachable (nothing is said).
const REACH_STEPS: u64 = 100_000;

/// Every tool name hookbox knows an agent to call (Claude Code's, Codex's, and every name of
/// the alias table), each once, in a stable order.
pub fn known_tools() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = CLAUDE_CODE_TOOLS.to_vec();
    names.extend(CODEX_TOOLS);
    for (canonical, others) in DEFAULT_ALIASES {
        names.push(canonical);
        names.extend(others.iter().map(|(n, _)| *n));
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(*n));
    names
}

/// Why a tool matcher can never match a known tool, with the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// What is wrong, naming the matcher.
    pub message: String,
    /// What to write instead.
    pub fix: String,
}

/// Whether `name` is an MCP tool's name as an agent sends it (`mcp__server__tool`, Gemini CLI's
/// `mcp_server_tool`).
fn is_mcp_tool(name: &str) -> bool {
    match name.strip_prefix("mcp__") {
        Some(rest) => rest
            .split_once("__")
            .is_some_and(|(server, tool)| !server.is_empty() && !tool.is_empty()),
        None => name.starts_with("mcp_"),
    }
}

/// A pattern that names MCP tools: open-ended, so never called unreachable.
fn mentions_mcp(pattern: &str) -> bool {
    pattern.contains("mcp")
}

/// Claude Code's permission-rule syntax (`Bash(git push:*)`): a tool name, then a parenthesised
/// argument pattern. Returns the tool name.
pub(crate) fn permission_rule_tool(s: &str) -> Option<&str> {
    let (tool, rest) = s.split_once('(')?;
    let tool = tool.trim();
    let named = !tool.is_empty()
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (named && rest.trim_end().ends_with(')')).then_some(tool)
}

/// The fix for a matcher written as a permission rule (`raw`, possibly unfinished: `Bash(`).
pub(crate) fn permission_rule_fix(raw: &str, tool: &str) -> String {
    let rule = if raw.trim_end().ends_with(')') {
        raw.to_owned()
    } else {
        format!("{tool}(<pattern>)")
    };
    format!(
        "a matcher names tools; the argument pattern goes in the hook's \"if\": write \"matcher\": \"{tool}\" and, on the handler, \"if\": {}",
        serde_json::Value::String(rule)
    )
}

/// Whether a tool event's matcher `m` can never match any tool in [`known_tools`], and why.
/// `None` when it can (or might: an MCP pattern, a regex too costly to test here).
pub fn unreachable_tool_matcher(m: &Matcher) -> Option<Unreachable> {
    let known = known_tools();
    let mut budget = MatchBudget::new(REACH_STEPS);
    match m {
        Matcher::All => None,
        Matcher::Names(names) => unknown_names(names, &known),
        Matcher::Regex(re) => {
            let src = re.as_str();
            if mentions_mcp(src) {
                return None;
            }
            let hits = known
                .iter()
                .map(|n| re.is_match_within(n, &mut budget))
                .any(|r| r != Some(false));
            if hits {
                return None;
            }
            if let Some(tool) = permission_rule_tool(src) {
                return Some(Unreachable {
                    message: format!(
                        "matcher {} is permission-rule syntax: a matcher is tested against the tool name alone, and as a regular expression this one matches no tool",
                        serde_json::Value::String(src.to_owned())
                    ),
                    fix: permission_rule_fix(src, tool),
                });
            }
            Some(Unreachable {
                message: format!(
                    "matcher {} matches no tool of any agent hookbox knows (it is an unanchored regular expression, tested against the tool name)",
                    serde_json::Value::String(src.to_owned())
                ),
                fix: "name the tools (Bash, Edit|Write), or check the expression against the tool names in docs/agents.md; if your agent has a tool by another name, ignore this".to_owned(),
            })
        }
        Matcher::Object(parts) => {
            let (_, pat) = parts.iter().find(|(field, _)| field == "tool_name")?;
            let (shown, hits) = match pat {
                ValuePattern::Glob(g) => (
                    g.as_str(),
                    mentions_mcp(g) || known.iter().any(|n| g == "*" || glob_match(g, n)),
                ),
                ValuePattern::Regex(re) => (
                    re.as_str(),
                    mentions_mcp(re.as_str())
                        || known
                            .iter()
                            .any(|n| re.is_match_within(n, &mut budget) != Some(false)),
                ),
            };
            if hits {
                return None;
            }
            let mut fix = "name a tool the agent calls (docs/agents.md lists them); if your agent has a tool by another name, ignore this".to_owned();
            if let ValuePattern::Glob(g) = pat
                && let Some(near) = closest(g, known.iter().copied())
            {
                fix = format!("did you mean '{near}'?");
            }
            Some(Unreachable {
                message: format!(
                    "matcher tool_name {} matches no tool of any agent hookbox knows",
                    serde_json::Value::String(shown.to_owned())
                ),
                fix,
            })
        }
    }
}

/// The exact names of a list that no agent calls, as one finding.
fn unknown_names(names: &[String], known: &[&'static str]) -> Option<Unreachable> {
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !known.iter().any(|k| k == n) && !is_mcp_tool(n))
        .collect();
    let first = unknown.first()?;
    let quoted: Vec<String> = unknown.iter().map(|n| format!("'{n}'")).collect();
    let list = quoted.join(", ");
    let all = unknown.len() == names.len();
    let (what, is) = if unknown.len() == 1 {
        ("name", "is")
    } else {
        ("names", "are")
    };
    let effect = if all {
        "so this rule never runs"
    } else {
        "so that part of the list never matches"
    };
    if let Some(server) = first.strip_prefix("mcp__") {
        return Some(Unreachable {
            message: format!(
                "matcher {what} {list} {is} not an MCP tool's full name (MCP tools are named mcp__<server>__<tool>), {effect}"
            ),
            fix: format!(
                "to match every tool of the server, write the regular expression mcp__{server}__.*"
            ),
        });
    }
    let suggestions: Vec<String> = unknown
        .iter()
        .filter_map(|n| closest(n, known.iter().copied()).map(|k| format!("'{k}' for '{n}'")))
        .collect();
    let fix = if suggestions.is_empty() {
        "name a tool the agent calls (docs/agents.md lists them; names are case-sensitive); if your agent has a tool by that name, ignore this".to_owned()
    } else {
        format!("did you mean {}?", suggestions.join(", "))
    };
    Some(Unreachable {
        message: format!("matcher {what} {list} {is} no tool of any agent hookbox knows, {effect}"),
        fix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventName;
    use serde_json::json;

    fn check(v: serde_json::Value) -> Option<Unreachable> {
        unreachable_tool_matcher(&Matcher::from_json(Some(&v), EventName::PreToolUse).unwrap())
    }

    #[test]
    fn matchers_of_known_tools_are_reachable() {
        for v in [
            json!("Bash"),
            json!("Edit|Write|MultiEdit|NotebookEdit"),
            json!("CronCreate|CronDelete|CronList"),
            json!("run_shell_command"),
            json!("Shell"),
            json!("apply_patch"),
            json!("Edit.*"),
            json!("Notebook.*"),
            json!("^Bash$"),
            json!("mcp__memory__.*"),
            json!("mcp__github__create_issue"),
            json!("mcp_github_create_issue"),
            json!(".*"),
            json!({"tool_name": "Bash"}),
            json!({"tool_name": "mcp__*"}),
            json!({"tool_name": "^(Edit|Write)$"}),
            json!({"trigger": "manual"}),
        ] {
            assert_eq!(check(v.clone()), None, "{v}");
        }
    }

    #[test]
    fn a_typo_is_named_with_the_tool_it_misspells() {
        let u = check(json!("Shel")).unwrap();
        assert_eq!(
            u.message,
            "matcher name 'Shel' is no tool of any agent hookbox knows, so this rule never runs"
        );
        assert_eq!(u.fix, "did you mean 'Shell' for 'Shel'?");
        let u = check(json!("Bash|Wirte")).unwrap();
        assert!(u.message.contains("'Wirte'"), "{u:?}");
        assert!(u.message.ends_with("that part of the list never matches"));
        assert_eq!(u.fix, "did you mean 'Write' for 'Wirte'?");
        let u = check(json!("bash_tool_of_mine")).unwrap();
        assert!(u.fix.contains("ignore this"), "{u:?}");
    }

    #[test]
    fn permission_rule_syntax_is_named_as_such() {
        let u = check(json!("Bash(git push:*)")).unwrap();
        assert!(u.message.contains("permission-rule syntax"), "{u:?}");
        assert_eq!(
            u.fix,
            "a matcher names tools; the argument pattern goes in the hook's \"if\": write \"matcher\": \"Bash\" and, on the handler, \"if\": \"Bash(git push:*)\""
        );
        assert_eq!(permission_rule_tool("Bash("), None);
        assert_eq!(permission_rule_tool("Edit(*.ts)"), Some("Edit"));
    }

    #[test]
    fn a_bare_mcp_server_name_matches_no_tool() {
        let u = check(json!("mcp__memory")).unwrap();
        assert!(u.message.contains("mcp__<server>__<tool>"), "{u:?}");
        assert_eq!(
            u.fix,
            "to match every tool of the server, write the regular expression mcp__memory__.*"
        );
    }

    #[test]
    fn regexes_and_object_matchers_that_match_nothing_are_named() {
        assert!(check(json!("^Shel$")).is_some());
        let u = check(json!({"tool_name": "Bsh"})).unwrap();
        assert_eq!(u.fix, "did you mean 'Bash'?");
    }

    #[test]
    fn the_known_names_hold_every_alias_once() {
        let names = known_tools();
        for n in [
            "Bash",
            "run_shell_command",
            "Shell",
            "bash",
            "invoke_agent",
            "Task",
        ] {
            assert_eq!(names.iter().filter(|x| **x == n).count(), 1, "{n}");
        }
    }
}
