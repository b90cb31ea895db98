//! The rule index: which rules fire for an event, without scanning every rule of every tenant
//! (SPEC §3). Rules are bucketed by event, then by the canonical exact value their matcher names
//! (tool names through the alias table); only regex, glob-object and match-all rules are tested
//! one by one. Results come back in rule declaration order.

use std::collections::HashMap;

use regex::RegexSet;

use crate::event::{Event, EventName};
use crate::matcher::{Matcher, ToolAliases, ValuePattern, glob_match};
use crate::rule::{IfCondition, PluginInfo, Rule};

/// Patterns of one event tested in one pass over the subject: regular regexes, and the glob or
/// regex an object matcher puts on the event's matcher field (then checked in full on a hit).
#[derive(Debug, Clone)]
struct PatternSet {
    set: RegexSet,
    /// Pattern i belongs to rule `rules[i].0`; `.1` says the whole matcher must still be checked.
    rules: Vec<(usize, bool)>,
}

#[derive(Debug, Default, Clone)]
struct EventRules {
    /// Canonical exact subject → positions of rules whose matcher lists it.
    exact: HashMap<String, Vec<usize>>,
    /// Rules that fire on every occurrence (match-all, or a string matcher on an event that has
    /// no matcher field).
    all: Vec<usize>,
    /// Regular patterns, tested together.
    set: Option<PatternSet>,
    /// Everything else (backtracking regexes, object matchers on other fields), one by one.
    scan: Vec<usize>,
}

/// An immutable, indexed set of loaded rules: what one dispatch reads. Hosts swap whole sets
/// atomically, so a dispatch sees the old rules or the new ones, never a mix.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    plugins: Vec<PluginInfo>,
    rules: Vec<Rule>,
    by_event: HashMap<EventName, EventRules>,
    aliases: ToolAliases,
}

/// A whole-string glob as a `regex`-crate pattern.
fn glob_regex(glob: &str) -> String {
    let mut out = String::from("(?s)^");
    for c in glob.chars() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out.push('$');
    out
}

impl RuleSet {
    /// Indexes `rules` (positions in `rules` are declaration order).
    pub fn new(plugins: Vec<PluginInfo>, rules: Vec<Rule>, aliases: ToolAliases) -> RuleSet {
        let mut by_event: HashMap<EventName, EventRules> = HashMap::new();
        let mut patterns: HashMap<EventName, Vec<(String, usize, bool)>> = HashMap::new();
        for (pos, rule) in rules.iter().enumerate() {
            let bucket = by_event.entry(rule.event).or_default();
            let field = rule.event.matcher_field();
            let is_tool = field == Some("tool_name");
            match (&rule.matcher, field) {
                (Matcher::All, _) | (Matcher::Names(_) | Matcher::Regex(_), None) => {
                    bucket.all.push(pos)
                }
                (Matcher::Names(names), Some(_)) => {
                    let mut keys: Vec<String> = names
                        .iter()
                        .map(|n| {
                            if is_tool {
                                aliases.canonical(n).to_owned()
                            } else {
                                n.clone()
                            }
                        })
                        .collect();
                    keys.sort();
                    keys.dedup();
                    for key in keys {
                        bucket.exact.entry(key).or_default().push(pos);
                    }
                }
                (Matcher::Regex(re), Some(_)) => match re.regular() {
                    Some(p) => {
                        patterns
                            .entry(rule.event)
                            .or_default()
                            .push((p.to_owned(), pos, false))
                    }
                    None => bucket.scan.push(pos),
                },
                (Matcher::Object(parts), field) => {
                    let on_field = parts.iter().find(|(k, _)| Some(k.as_str()) == field);
                    let prefilter = on_field.and_then(|(_, pat)| match pat {
                        ValuePattern::Glob(g) => Some(glob_regex(g)),
                        ValuePattern::Regex(re) => re.regular().map(str::to_owned),
                    });
                    match prefilter {
                        Some(p) => patterns.entry(rule.event).or_default().push((p, pos, true)),
                        None => bucket.scan.push(pos),
                    }
                }
            }
        }
        for (event, list) in patterns {
            let bucket = by_event.entry(event).or_default();
            match RegexSet::new(list.iter().map(|(p, _, _)| p)) {
                Ok(set) => {
                    bucket.set = Some(PatternSet {
                        set,
                        rules: list.iter().map(|(_, pos, v)| (*pos, *v)).collect(),
                    });
                }
                // A set too large for the engine's size limit: fall back to testing one by one.
                Err(_) => bucket.scan.extend(list.iter().map(|(_, pos, _)| *pos)),
            }
            bucket.scan.sort_unstable();
        }
        RuleSet {
            plugins,
            rules,
            by_event,
            aliases,
        }
    }

    /// An empty set.
    pub fn empty() -> RuleSet {
        RuleSet::default()
    }

    /// Every rule, in declaration order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The plugins the rules came from.
    pub fn plugins(&self) -> &[PluginInfo] {
        &self.plugins
    }

    /// The alias table matching uses.
    pub fn aliases(&self) -> &ToolAliases {
        &self.aliases
    }

    /// Whether any rule is declared for `event` (a dispatch with none costs one hash lookup).
    pub fn has_rules_for(&self, event: EventName) -> bool {
        self.by_event.contains_key(&event)
    }

    /// The rules that fire for `event`, in declaration order.
    pub fn matching(&self, event: &Event) -> Vec<&Rule> {
        let Some(bucket) = self.by_event.get(&event.name) else {
            return Vec::new();
        };
        let mut hits: Vec<usize> = bucket.all.clone();
        let is_tool = event.name.matcher_field() == Some("tool_name");
        if let Some(subject) = event.matcher_subject() {
            let key = if is_tool {
                self.aliases.canonical(subject)
            } else {
                subject
            };
            if let Some(list) = bucket.exact.get(key) {
                hits.extend(list);
            }
            if let Some(ps) = &bucket.set {
                let names: Vec<&str> = if is_tool {
                    self.aliases.names(subject).collect()
                } else {
                    vec![subject]
                };
                // `is_match` stops at the first hit and needs no per-pattern bookkeeping: most
                // dispatches match nothing, so test that cheaply first.
                for name in names.into_iter().filter(|n| ps.set.is_match(n)) {
                    for i in ps.set.matches(name).iter() {
                        let (pos, verify) = ps.rules[i];
                        if !verify || self.rules[pos].matcher.matches(event, &self.aliases) {
                            hits.push(pos);
                        }
                    }
                }
            }
        }
        hits.extend(
            bucket
                .scan
                .iter()
                .copied()
                .filter(|&p| self.rules[p].matcher.matches(event, &self.aliases)),
        );
        hits.sort_unstable();
        hits.dedup();
        hits.into_iter()
            .map(|p| &self.rules[p])
            .filter(|r| {
                r.if_condition
                    .as_ref()
                    .is_none_or(|c| if_matches(c, event, &self.aliases))
            })
            .collect()
    }
}

/// Claude Code's `if` (`Bash(git commit:*)`, `Edit(*.ts)`): the tool must match, and the glob
/// must match the call's main argument — for shell commands, the whole command or any of its
/// `&&`/`||`/`;`/`|` segments.
fn if_matches(cond: &IfCondition, event: &Event, aliases: &ToolAliases) -> bool {
    if !event.name.evaluates_if() {
        return false;
    }
    let Some(tool) = event.tool_name() else {
        return false;
    };
    if !aliases
        .names(tool)
        .any(|n| Matcher::Names(vec![cond.tool.clone()]).matches_subject(n, false, aliases))
    {
        return false;
    }
    let Some(pattern) = &cond.pattern else {
        return true;
    };
    // Claude's prefix form `git commit:*` means the glob `git commit*`.
    let glob = pattern
        .strip_suffix(":*")
        .map(|p| format!("{p}*"))
        .unwrap_or_else(|| pattern.clone());
    let input = event.tool_input();
    let arg = |k: &str| input.and_then(|i| i.get(k)).and_then(|v| v.as_str());
    if let Some(cmd) = arg("command") {
        return glob_match(&glob, cmd.trim())
            || cmd
                .split(['&', '|', ';'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .any(|s| glob_match(&glob, s));
    }
    ["file_path", "path", "url", "pattern"]
        .iter()
        .filter_map(|k| arg(k))
        .any(|v| {
            glob_match(&glob, v)
                || v.rsplit('/')
                    .next()
                    .is_some_and(|base| glob_match(&glob, base))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::rule::{CommandSpec, Handler, RuleSource};
    use serde_json::json;

    fn rule(
        index: usize,
        event: EventName,
        matcher: &str,
        if_condition: Option<IfCondition>,
    ) -> Rule {
        Rule {
            if_condition,
            ..Rule::new(
                index,
                event,
                Matcher::from_str_for(matcher, event).unwrap(),
                Handler::Command(CommandSpec::shell(format!("r{index}"), 60.0)),
                Dialect::Claude,
                0,
                RuleSource::new("p", "hooks.json"),
            )
        }
    }

    fn tool(name: &str, command: &str) -> Event {
        Event::from_payload(
            Some(EventName::PreToolUse),
            json!({"tool_name": name, "tool_input": {"command": command}}),
            "s",
            "/",
        )
        .unwrap()
    }

    fn ids(set: &RuleSet, ev: &Event) -> Vec<usize> {
        set.matching(ev).iter().map(|r| r.index).collect()
    }

    #[test]
    fn exact_regex_and_all_in_declaration_order() {
        let set = RuleSet::new(
            vec![],
            vec![
                rule(0, EventName::PreToolUse, "Edit.*", None),
                rule(1, EventName::PreToolUse, "Bash", None),
                rule(2, EventName::PreToolUse, "*", None),
                rule(3, EventName::PreToolUse, "run_shell_command|Write", None),
                rule(4, EventName::PostToolUse, "Bash", None),
            ],
            ToolAliases::default(),
        );
        assert_eq!(ids(&set, &tool("Bash", "ls")), vec![1, 2, 3]);
        assert_eq!(ids(&set, &tool("run_shell_command", "ls")), vec![1, 2, 3]);
        assert_eq!(ids(&set, &tool("NotebookEdit", "")), vec![0, 2]);
        assert!(!set.has_rules_for(EventName::Stop));
        assert!(
            set.matching(&Event::new(EventName::Stop, "s", "/"))
                .is_empty()
        );
    }

    #[test]
    fn regex_sets_and_object_prefilters_agree_with_the_matchers() {
        let obj = |i: usize, v: serde_json::Value| {
            let mut r = rule(i, EventName::PreToolUse, "", None);
            r.matcher = Matcher::from_json(Some(&v), EventName::PreToolUse).unwrap();
            r
        };
        let rules = vec![
            rule(0, EventName::PreToolUse, "^mcp__gh__.*$", None),
            rule(1, EventName::PreToolUse, r"(?<x>mcp)__\k<x>", None),
            obj(2, json!({"tool_name": "mcp__*"})),
            obj(3, json!({"tool_name": "Bash", "trigger": "x"})),
            obj(4, json!({"toolName": "run_shell_command"})),
            obj(5, json!({"tool_name": "^(Edit|Write)$"})),
            rule(6, EventName::PreToolUse, "Notebook.*", None),
        ];
        let set = RuleSet::new(vec![], rules, ToolAliases::default());
        assert_eq!(ids(&set, &tool("mcp__gh__issue", "")), vec![0, 2]);
        assert_eq!(ids(&set, &tool("mcp__mcp", "")), vec![1, 2]);
        assert_eq!(
            ids(&set, &tool("Bash", "")),
            vec![4],
            "object matcher needs every key; aliases apply"
        );
        assert_eq!(ids(&set, &tool("Write", "")), vec![5]);
        assert_eq!(ids(&set, &tool("NotebookEdit", "")), vec![6]);
        // Every rule the index returns is one the matcher itself accepts, and vice versa.
        for name in [
            "mcp__gh__issue",
            "mcp__mcp",
            "Bash",
            "run_shell_command",
            "Write",
            "NotebookEdit",
            "Read",
        ] {
            let ev = tool(name, "");
            let brute: Vec<usize> = set
                .rules()
                .iter()
                .filter(|r| r.matcher.matches(&ev, set.aliases()))
                .map(|r| r.index)
                .collect();
            assert_eq!(ids(&set, &ev), brute, "{name}");
        }
    }

    #[test]
    fn if_conditions() {
        let cond = |raw: &str, tool: &str, pat: Option<&str>| IfCondition {
            raw: raw.into(),
            tool: tool.into(),
            pattern: pat.map(str::to_owned),
        };
        let set = RuleSet::new(
            vec![],
            vec![
                rule(
                    0,
                    EventName::PreToolUse,
                    "",
                    Some(cond("Bash(git commit:*)", "Bash", Some("git commit:*"))),
                ),
                rule(
                    1,
                    EventName::PreToolUse,
                    "",
                    Some(cond("Bash", "Bash", None)),
                ),
                rule(2, EventName::Stop, "", Some(cond("Bash", "Bash", None))),
            ],
            ToolAliases::default(),
        );
        assert_eq!(
            ids(&set, &tool("Bash", "cd x && git commit -m hi")),
            vec![0, 1]
        );
        assert_eq!(ids(&set, &tool("Bash", "git status")), vec![1]);
        assert_eq!(ids(&set, &tool("Read", "")), Vec::<usize>::new());
        assert!(
            set.matching(&Event::new(EventName::Stop, "s", "/"))
                .is_empty(),
            "`if` never runs off tool events"
        );
    }
}
