//! Tool-name aliases, resolved both ways: a rule for `Bash` matches a `run_shell_command` call and
//! a rule for `run_shell_command` matches a `Bash` call. The default table covers the main source
//! system's names (Agentao) and those of every coding agent hookbox speaks (`crate::agent`); each
//! name says which agents send it, so an agent's adapter can map a Claude Code name back to the
//! agent's own. Embedders add their own.

use std::collections::HashMap;

use crate::agent::Agent;

/// Another agent's name for a tool, with the agents that send it.
pub type AgentName = (&'static str, &'static [Agent]);

/// Claude Code name → the names the same tool has in other agents, each with the agents that
/// send it (an empty list: Agentao's, matched but sent by no adapter). Sources: the agents'
/// tool tables in `docs/agents.md`. Codex's `apply_patch` carries a patch, not a file path; its
/// matchers treat it as `Edit` (and `Write`), so it joins `Edit` here.
pub const DEFAULT_ALIASES: &[(&str, &[AgentName])] = {
    use Agent::{Codex, Copilot, Cursor, Gemini, Kimi, VsCode};
    &[
        (
            "Bash",
            &[
                ("run_shell_command", &[Gemini]),
                ("shell", &[]),
                ("Shell", &[Cursor, Kimi]),
                ("bash", &[Copilot]),
                ("run_in_terminal", &[VsCode]),
                ("runTerminalCommand", &[]),
            ],
        ),
        ("PowerShell", &[("powershell", &[Copilot])]),
        (
            "Read",
            &[
                ("read_file", &[Gemini, VsCode]),
                ("view", &[Copilot]),
                ("ReadFile", &[Kimi]),
            ],
        ),
        (
            "Write",
            &[
                ("write_file", &[Gemini]),
                ("create", &[Copilot]),
                ("create_file", &[VsCode]),
                ("WriteFile", &[Kimi]),
            ],
        ),
        (
            "Edit",
            &[
                ("replace", &[Gemini]),
                ("edit", &[Copilot]),
                ("replace_string_in_file", &[VsCode]),
                ("editFiles", &[]),
                ("StrReplaceFile", &[Kimi]),
                ("apply_patch", &[Codex, Copilot]),
            ],
        ),
        ("Glob", &[("glob", &[Gemini, Copilot])]),
        (
            "Grep",
            &[
                ("search_file_content", &[]),
                ("grep_search", &[Gemini]),
                ("grep", &[Copilot]),
            ],
        ),
        (
            "WebFetch",
            &[
                ("web_fetch", &[Gemini, Copilot]),
                ("fetch_webpage", &[VsCode]),
                ("FetchURL", &[Kimi]),
            ],
        ),
        (
            "WebSearch",
            &[
                ("web_search", &[]),
                ("google_web_search", &[Gemini]),
                ("SearchWeb", &[Kimi]),
            ],
        ),
        ("LS", &[("list_directory", &[Gemini])]),
        // Claude Code's own earlier name for `Agent` is `Task` (real hook files still match it).
        (
            "Agent",
            &[
                ("Task", &[Cursor]),
                ("task", &[Copilot]),
                ("invoke_agent", &[Gemini]),
            ],
        ),
        ("SaveMemory", &[("save_memory", &[Gemini])]),
        ("AskUser", &[("ask_user", &[Gemini, Copilot])]),
        (
            "TodoWrite",
            &[
                ("todo_write", &[]),
                ("write_todos", &[Gemini]),
                ("SetTodoList", &[Kimi]),
            ],
        ),
        ("PlanSave", &[("plan_save", &[])]),
        ("PlanFinalize", &[("plan_finalize", &[])]),
        ("ActivateSkill", &[("activate_skill", &[Gemini])]),
        ("ReadManyFiles", &[("read_many_files", &[Gemini])]),
    ]
};

/// A bidirectional alias table: names in one group are the same tool.
#[derive(Debug, Clone)]
pub struct ToolAliases {
    /// name → index of its group in `groups`.
    group_of: HashMap<String, usize>,
    /// Each group's names; the first is the canonical (Claude Code) name.
    groups: Vec<Vec<String>>,
}

impl Default for ToolAliases {
    /// The built-in table (Claude Code ↔ Agentao ↔ every agent of `crate::agent`).
    fn default() -> Self {
        let mut t = ToolAliases {
            group_of: HashMap::new(),
            groups: Vec::new(),
        };
        for (canonical, others) in DEFAULT_ALIASES {
            for (other, _) in *others {
                t.add(canonical, other);
            }
        }
        t
    }
}

impl ToolAliases {
    /// An empty table: every tool is only itself.
    pub fn none() -> Self {
        ToolAliases {
            group_of: HashMap::new(),
            groups: Vec::new(),
        }
    }

    /// Declares that `a` and `b` name the same tool (merging their groups).
    pub fn add(&mut self, a: &str, b: &str) {
        match (self.group_of.get(a).copied(), self.group_of.get(b).copied()) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                let moved = std::mem::take(&mut self.groups[y]);
                for n in &moved {
                    self.group_of.insert(n.clone(), x);
                }
                self.groups[x].extend(moved);
            }
            (Some(x), None) => {
                self.group_of.insert(b.to_owned(), x);
                self.groups[x].push(b.to_owned());
            }
            (None, Some(y)) => {
                self.group_of.insert(a.to_owned(), y);
                self.groups[y].push(a.to_owned());
            }
            (None, None) => {
                let id = self.groups.len();
                self.groups.push(vec![a.to_owned(), b.to_owned()]);
                self.group_of.insert(a.to_owned(), id);
                self.group_of.insert(b.to_owned(), id);
            }
        }
    }

    /// The canonical name of `tool` (its Claude Code name when known, else itself).
    pub fn canonical<'a>(&'a self, tool: &'a str) -> &'a str {
        match self.group_of.get(tool) {
            Some(&g) => &self.groups[g][0],
            None => tool,
        }
    }

    /// `tool` and every alias of it, `tool` first.
    pub fn names<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let others = self
            .group_of
            .get(tool)
            .map(|&g| self.groups[g].as_slice())
            .unwrap_or(&[])
            .iter()
            .map(String::as_str)
            .filter(move |n| *n != tool);
        std::iter::once(tool).chain(others)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_both_ways() {
        let t = ToolAliases::default();
        assert_eq!(t.canonical("run_shell_command"), "Bash");
        assert_eq!(t.canonical("Bash"), "Bash");
        assert!(t.names("Bash").any(|n| n == "run_shell_command"));
        assert!(t.names("run_shell_command").any(|n| n == "Bash"));
        assert_eq!(t.names("mcp__x__y").collect::<Vec<_>>(), vec!["mcp__x__y"]);
    }

    #[test]
    fn table_is_extensible_and_merges_groups() {
        let mut t = ToolAliases::default();
        t.add("Bash", "exec_command");
        assert_eq!(t.canonical("exec_command"), "Bash");
        assert!(t.names("exec_command").any(|n| n == "run_shell_command"));
    }
}
