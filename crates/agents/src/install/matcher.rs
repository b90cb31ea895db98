//! The matcher of an installed entry: the agent's names for every tool the rules behind the entry
//! can match, so that the agent starts hookbox for those tools only, not for every tool call.
//!
//! It only narrows when that is exact. hookbox matches again inside `hookbox hook`, so an entry
//! matcher that is too wide costs a start-up; one that is too narrow would leave a guard silent
//! with nothing said. So an entry gets a matcher only when every rule behind it names its tools
//! by exact name and every name is one hookbox knows an agent to call ([`known_tools`]): the
//! matcher then lists every known name whose call those rules match — through the same alias
//! table `hookbox hook` matches with (`run_shell_command`, `shell`, `PowerShell` for `Bash`) —
//! which is exactly the set of calls that could reach a rule. A rule on every tool, a regex, an
//! object matcher, or a name hookbox cannot spell in the agent's words (an MCP tool, whose name
//! an agent may send in its own form) leaves the entry on every tool of the event.

use hookbox_core::agent::Agent;
use hookbox_core::matcher::{Matcher, ToolAliases, known_tools};

/// The tool names whose calls the rules with these tool `matchers` can match, or `None` when
/// that set cannot be listed exactly (see the module's comment).
pub fn tool_names(matchers: &[&Matcher]) -> Option<Vec<&'static str>> {
    let known = known_tools();
    let mut named: Vec<&str> = Vec::new();
    for m in matchers {
        let names = m.exact_names()?;
        for n in names {
            if !known.contains(&n.as_str()) {
                return None;
            }
            named.push(n);
        }
    }
    if named.is_empty() {
        return None;
    }
    let aliases = ToolAliases::default();
    let calls: Vec<&'static str> = known
        .into_iter()
        .filter(|tool| {
            matchers
                .iter()
                .any(|m| m.matches_subject(tool, true, &aliases))
        })
        .collect();
    // Every name a rule gives is a call the rule matches (it is known, so it is in the list).
    debug_assert!(named.iter().all(|n| calls.contains(n)));
    Some(calls)
}

/// The entry's `matcher` in `agent`'s dialect for calls of `tools`, or `None` where the agent's
/// file has no matcher on an entry hookbox writes (flat shapes, Kimi's TOML).
pub fn render(agent: Agent, tools: &[&str]) -> Option<String> {
    let simple = |n: &&str| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    match agent {
        // Claude Code reads letters, digits and `_` joined by `|` as a list of exact names.
        Agent::Claude if tools.iter().all(simple) => Some(tools.join("|")),
        // Claude Code's and Qwen Code's and Gemini CLI's JavaScript RegExp, Codex's Rust regex:
        // all unanchored, so the list is anchored whole.
        Agent::Claude | Agent::Qwen | Agent::Gemini | Agent::Codex => {
            let alternatives: Vec<String> = tools.iter().map(|t| escape(t)).collect();
            Some(format!("^(?:{})$", alternatives.join("|")))
        }
        _ => None,
    }
}

/// `name` as a regex matching itself (the syntax JavaScript and Rust's `regex` share).
fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::event::EventName;

    fn m(s: &str) -> Matcher {
        Matcher::from_str_for(s, EventName::PreToolUse).unwrap()
    }

    #[test]
    fn a_bash_guard_is_installed_for_every_shell_tool_of_every_agent() {
        let bash = m("Bash");
        let names = tool_names(&[&bash]).unwrap();
        for n in ["Bash", "run_shell_command", "PowerShell", "shell", "bash"] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        assert!(!names.contains(&"Read"), "{names:?}");
        assert!(!names.contains(&"BashOutput"), "{names:?}");
    }

    #[test]
    fn the_calls_listed_are_exactly_those_the_rules_match() {
        let rules = [m("Write|Edit"), m("Read")];
        let refs: Vec<&Matcher> = rules.iter().collect();
        let names = tool_names(&refs).unwrap();
        let aliases = ToolAliases::default();
        for tool in known_tools() {
            let matched = refs.iter().any(|r| r.matches_subject(tool, true, &aliases));
            assert_eq!(names.contains(&tool), matched, "{tool}");
        }
        // Codex's patches are writes: a Write guard must start for them.
        assert!(names.contains(&"apply_patch"), "{names:?}");
    }

    #[test]
    fn what_cannot_be_listed_exactly_leaves_the_entry_on_every_tool() {
        for s in [
            "*",
            "Edit.*",
            "mcp__memory__.*",
            "mcp__memory__create",
            "Bahs",
        ] {
            let x = m(s);
            assert_eq!(tool_names(&[&x]), None, "{s}");
        }
        // One rule that cannot be listed widens the whole entry.
        let (a, b) = (m("Bash"), m("Notebook.*"));
        assert_eq!(tool_names(&[&a, &b]), None);
    }

    #[test]
    fn each_agent_gets_its_own_dialect() {
        let tools = ["Bash", "run_shell_command"];
        assert_eq!(
            render(Agent::Claude, &tools).as_deref(),
            Some("Bash|run_shell_command")
        );
        assert_eq!(
            render(Agent::Codex, &tools).as_deref(),
            Some("^(?:Bash|run_shell_command)$")
        );
        assert_eq!(
            render(Agent::Claude, &["a.b"]).as_deref(),
            Some("^(?:a\\.b)$")
        );
        assert_eq!(render(Agent::Copilot, &tools), None);
        assert_eq!(render(Agent::Kimi, &tools), None);
    }

    #[test]
    fn a_rendered_regex_matches_its_names_and_nothing_longer() {
        let tools = ["Bash", "write_bash", "a.b"];
        let re = render(Agent::Codex, &tools).unwrap();
        let re = regex_lite(&re);
        for t in tools {
            assert!(re(t), "{t}");
        }
        for t in ["BashOutput", "xBash", "aXb", "Bash|write_bash"] {
            assert!(!re(t), "{t}");
        }
    }

    /// The rendered regex compiled by hookbox's own JavaScript-regex matcher (what Claude Code,
    /// Qwen Code and Gemini CLI run; Rust's `regex` reads this subset the same way).
    fn regex_lite(re: &str) -> impl Fn(&str) -> bool {
        let m = Matcher::from_str_for(re, EventName::PreToolUse).unwrap();
        move |s| m.matches_subject(s, false, &ToolAliases::none())
    }
}
