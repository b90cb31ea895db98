//! Tool-name aliases, resolved both ways: a rule for `Bash` matches a `run_shell_command` call and
//! a rule for `run_shell_command` matches a `Bash` call. The default table covers the main source
//! system's names (Agentao) and Gemini CLI's; embedders add their own.

use std::collections::HashMap;

/// Claude Code name → names the same tool has in other agents (Agentao, Gemini CLI).
const DEFAULT_ALIASES: &[(&str, &[&str])] = &[
    ("Bash", &["run_shell_command", "shell"]),
    ("Read", &["read_file"]),
    ("Write", &["write_file"]),
    ("Edit", &["replace"]),
    ("Glob", &["glob"]),
    ("Grep", &["search_file_content", "grep_search"]),
    ("WebFetch", &["web_fetch"]),
    ("WebSearch", &["web_search", "google_web_search"]),
    ("LS", &["list_directory"]),
    ("SaveMemory", &["save_memory"]),
    ("AskUser", &["ask_user"]),
    ("TodoWrite", &["todo_write", "write_todos"]),
    ("PlanSave", &["plan_save"]),
    ("PlanFinalize", &["plan_finalize"]),
    ("ActivateSkill", &["activate_skill"]),
    ("ReadManyFiles", &["read_many_files"]),
];

/// A bidirectional alias table: names in one group are the same tool.
#[derive(Debug, Clone)]
pub struct ToolAliases {
    /// name → index of its group in `groups`.
    group_of: HashMap<String, usize>,
    /// Each group's names; the first is the canonical (Claude Code) name.
    groups: Vec<Vec<String>>,
}

impl Default for ToolAliases {
    /// The built-in table (Claude Code ↔ Agentao ↔ Gemini CLI).
    fn default() -> Self {
        let mut t = ToolAliases {
            group_of: HashMap::new(),
            groups: Vec::new(),
        };
        for (canonical, others) in DEFAULT_ALIASES {
            for other in *others {
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
