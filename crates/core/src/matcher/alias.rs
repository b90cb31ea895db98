//! Tool-name aliases, resolved both ways: a rule for `Bash` matches a `run_shell_command` call and
//! a rule for `run_shell_command` matches a `Bash` call. The default table covers Agentao's names
//! and those of every coding agent hookbox speaks (`crate::agent`); each name says which agents
//! send it, so an agent's adapter can map a Claude Code name back to the agent's own. Embedders
//! add their own.
//!
//! Some tools are also another tool one way only ([`DEFAULT_IMPLIED`]): a PowerShell call runs a
//! shell, so a `Bash` guard must see it, but a `PowerShell` rule is not about `bash`; Codex's
//! `apply_patch` edits *and* creates files, so `Write` rules see it as Codex's own matchers do.
//!
//! Sources of the names: each agent's tool list as it offers it to its model, read from the
//! requests of the pinned versions in the real-agent suite (`tests/agents-e2e/`: Claude Code
//! 2.1.328, Codex 0.169.0, Gemini CLI 0.61.0, Copilot CLI 1.0.102, Qwen Code 0.24.4, kimi-cli
//! 1.52.0), and the documentation of the editors (`docs/agents.md`).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::agent::Agent;

/// Another agent's name for a tool, with the agents that send it.
pub type AgentName = (&'static str, &'static [Agent]);

/// Claude Code name → the names the same tool has in other agents, each with the agents that
/// send it (an empty list: Agentao's, matched but sent by no adapter). Sources: the agents'
/// tool tables in `docs/agents.md`. Codex's `apply_patch` carries a patch, not a file path; its
/// matchers treat it as `Edit` (and `Write`), so it joins `Edit` here.
pub const DEFAULT_ALIASES: &[(&str, &[AgentName])] = {
    use Agent::{Codex, Copilot, Cursor, Gemini, Kimi, Qwen, VsCode};
    &[
        (
            "Bash",
            &[
                ("run_shell_command", &[Gemini, Qwen]),
                ("shell", &[]),
                ("Shell", &[Cursor, Kimi]),
                ("bash", &[Copilot]),
                // Copilot's input to a running shell session: it runs in that shell.
                ("write_bash", &[Copilot]),
                ("run_in_terminal", &[VsCode]),
                ("create_and_run_task", &[VsCode]),
                ("runTerminalCommand", &[]),
                // Codex's shell tool as its model calls it, and its input to a running command:
                // its hook payloads say `Bash` (so no agent is named as sending them), but a
                // payload that carries them is a shell call all the same.
                ("exec_command", &[]),
                ("write_stdin", &[]),
            ],
        ),
        ("PowerShell", &[("powershell", &[Copilot])]),
        (
            "Read",
            &[
                ("read_file", &[Gemini, VsCode, Qwen]),
                ("view", &[Copilot]),
                ("ReadFile", &[Kimi]),
            ],
        ),
        (
            "Write",
            &[
                ("write_file", &[Gemini, Qwen]),
                ("create", &[Copilot]),
                ("create_file", &[VsCode]),
                ("WriteFile", &[Kimi]),
            ],
        ),
        (
            "Edit",
            &[
                ("replace", &[Gemini]),
                ("edit", &[Copilot, Qwen]),
                ("replace_string_in_file", &[VsCode]),
                ("multi_replace_string_in_file", &[VsCode]),
                ("insert_edit_into_file", &[VsCode]),
                ("editFiles", &[]),
                ("StrReplaceFile", &[Kimi]),
                ("apply_patch", &[Codex, Copilot]),
            ],
        ),
        ("Glob", &[("glob", &[Gemini, Copilot, Qwen])]),
        (
            "Grep",
            &[
                ("search_file_content", &[]),
                ("grep_search", &[Gemini, Qwen]),
                ("grep", &[Copilot]),
            ],
        ),
        (
            "WebFetch",
            &[
                ("web_fetch", &[Gemini, Copilot, Qwen]),
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
                ("agent", &[Qwen]),
            ],
        ),
        ("NotebookEdit", &[("notebook_edit", &[Qwen])]),
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

/// (tool, also this tool): calls of the first are also calls of the second for matching, one way.
pub const DEFAULT_IMPLIED: &[(&str, &str)] = &[
    // A shell is a shell: a `Bash` guard sees PowerShell calls (Claude Code's and Copilot's).
    ("PowerShell", "Bash"),
    // Codex's patches create files as well as edit them; Codex matches it as `Write` too.
    ("apply_patch", "Write"),
];

/// A bidirectional alias table: names in one group are the same tool.
#[derive(Debug, Clone)]
pub struct ToolAliases {
    /// name → index of its group in `groups`.
    group_of: HashMap<String, usize>,
    /// Each group's names; the first is the canonical (Claude Code) name.
    groups: Vec<Vec<String>>,
    /// name → names whose rules also match it, one way ([`ToolAliases::imply`]).
    implied: HashMap<String, Vec<String>>,
    /// Every name the table knows, with its answers to [`ToolAliases::canonicals`] and
    /// [`ToolAliases::names`] worked out once, at the first lookup after the table last changed:
    /// matching asks them on every tool event, and working them out walked the name's whole group
    /// with a hash lookup per name and allocated (≈ 3,100 instructions of a typed dispatch,
    /// docs/performance.md). A name the table does not know is only itself.
    resolved: OnceLock<HashMap<String, Resolved>>,
}

/// A known name's answers, in the order the lookups give them.
#[derive(Debug, Clone)]
struct Resolved {
    canonicals: Box<[String]>,
    names: Box<[String]>,
}

impl Default for ToolAliases {
    /// The built-in table (Claude Code ↔ Agentao ↔ every agent of `crate::agent`).
    fn default() -> Self {
        let mut t = ToolAliases::none();
        for (canonical, others) in DEFAULT_ALIASES {
            for (other, _) in *others {
                t.add(canonical, other);
            }
        }
        for (tool, also) in DEFAULT_IMPLIED {
            t.imply(tool, also);
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
            implied: HashMap::new(),
            resolved: OnceLock::new(),
        }
    }

    /// Every known name's answers (made at the first call after a change).
    fn resolved(&self) -> &HashMap<String, Resolved> {
        self.resolved.get_or_init(|| {
            let known = self.group_of.keys().chain(self.implied.keys());
            known
                .map(|name| {
                    let r = Resolved {
                        canonicals: self
                            .work_out_canonicals(name)
                            .into_iter()
                            .map(str::to_owned)
                            .collect(),
                        names: self.work_out_names(name).map(str::to_owned).collect(),
                    };
                    (name.clone(), r)
                })
                .collect()
        })
    }

    /// Declares that a call of `tool` (or any alias of it) is also a call of `also` for
    /// matching, one way: rules for `also` (and its aliases) see it, rules for `tool` do not
    /// see `also`'s calls.
    pub fn imply(&mut self, tool: &str, also: &str) {
        self.resolved.take();
        let list = self.implied.entry(tool.to_owned()).or_default();
        if !list.iter().any(|a| a == also) {
            list.push(also.to_owned());
        }
    }

    /// The names whose rules also match `tool` one way: what its group implies.
    fn implied_of<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.group_names(tool)
            .filter_map(|n| self.implied.get(n))
            .flatten()
            .map(String::as_str)
    }

    /// `tool`'s group, `tool` first.
    fn group_names<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
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

    /// The canonical names a rule keyed by canonical name must have to match `tool`: its own,
    /// then those it implies.
    pub fn canonicals<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        match self.resolved().get(tool) {
            Some(r) => known(&r.canonicals, None),
            None => known(&[], Some(tool)),
        }
    }

    /// [`ToolAliases::canonicals`] worked out from the table.
    fn work_out_canonicals<'a>(&'a self, tool: &'a str) -> Vec<&'a str> {
        let mut out = vec![self.canonical(tool)];
        for also in self.implied_of(tool) {
            let c = self.canonical(also);
            if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// Declares that `a` and `b` name the same tool (merging their groups).
    pub fn add(&mut self, a: &str, b: &str) {
        self.resolved.take();
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

    /// `tool` and every alias of it, `tool` first, then the names of the tools it implies (a rule
    /// naming any of these matches a `tool` call).
    pub fn names<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        match self.resolved().get(tool) {
            Some(r) => known(&r.names, None),
            None => known(&[], Some(tool)),
        }
    }

    /// [`ToolAliases::names`] worked out from the table.
    fn work_out_names<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let implied = self
            .implied_of(tool)
            .flat_map(move |also| self.group_names(also));
        self.group_names(tool).chain(implied)
    }
}

/// A known name's list, or (`own`) an unknown name alone.
fn known<'a>(list: &'a [String], own: Option<&'a str>) -> impl Iterator<Item = &'a str> + 'a {
    own.into_iter().chain(list.iter().map(String::as_str))
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
    fn a_shell_guard_sees_every_agent_s_shell_tools_one_way() {
        let t = ToolAliases::default();
        for shell in [
            "powershell",
            "PowerShell",
            "write_bash",
            "create_and_run_task",
            "exec_command",
            "write_stdin",
        ] {
            assert!(t.names(shell).any(|n| n == "Bash"), "{shell}");
            assert!(t.canonicals(shell).any(|c| c == "Bash"), "{shell}");
        }
        // One way: a PowerShell rule is not about bash.
        assert!(!t.names("bash").any(|n| n == "PowerShell"));
        assert_eq!(t.canonicals("bash").collect::<Vec<_>>(), vec!["Bash"]);
        // Codex's patches are edits and writes.
        assert_eq!(
            t.canonicals("apply_patch").collect::<Vec<_>>(),
            vec!["Edit", "Write"]
        );
        assert!(!t.names("Write").any(|n| n == "apply_patch"));
    }

    #[test]
    fn the_answers_worked_out_once_are_the_table_s_for_every_name() {
        let t = ToolAliases::default();
        let mut names: Vec<&str> = DEFAULT_ALIASES
            .iter()
            .flat_map(|(c, others)| std::iter::once(*c).chain(others.iter().map(|(n, _)| *n)))
            .collect();
        names.extend(["mcp__x__y", "", "bash ", "BASH"]);
        for name in names {
            assert_eq!(
                t.canonicals(name).collect::<Vec<_>>(),
                t.work_out_canonicals(name),
                "{name}"
            );
            assert_eq!(
                t.names(name).collect::<Vec<_>>(),
                t.work_out_names(name).collect::<Vec<_>>(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_table_changed_after_a_lookup_answers_with_the_change() {
        let mut t = ToolAliases::default();
        assert_eq!(
            t.canonicals("my_shell").collect::<Vec<_>>(),
            vec!["my_shell"]
        );
        t.add("Bash", "my_shell");
        assert_eq!(t.canonicals("my_shell").collect::<Vec<_>>(), vec!["Bash"]);
        assert!(t.names("Bash").any(|n| n == "my_shell"));
        t.imply("my_tool", "Read");
        assert_eq!(
            t.canonicals("my_tool").collect::<Vec<_>>(),
            vec!["my_tool", "Read"]
        );
        assert!(t.names("my_tool").any(|n| n == "read_file"));
    }

    #[test]
    fn table_is_extensible_and_merges_groups() {
        let mut t = ToolAliases::default();
        t.add("Bash", "exec_command");
        assert_eq!(t.canonical("exec_command"), "Bash");
        assert!(t.names("exec_command").any(|n| n == "run_shell_command"));
    }
}
