//! The rule index: which rules fire for an event, without scanning every rule of every tenant
//! (SPEC §3). Rules are bucketed by event, then by the canonical exact value their matcher names
//! (tool names through the alias table); only regex, glob-object and match-all rules are tested
//! one by one. Results come back in rule declaration order, with the account of the dispatch's
//! matching budget ([`Matching`]).

mod matching;

use std::collections::HashMap;

use regex::{RegexSet, RegexSetBuilder};

pub use matching::Matching;

use crate::event::{Event, EventName};
use crate::matcher::{
    MATCH_BUDGET_STEPS, MatchBudget, Matcher, ToolAliases, ValuePattern, glob_match,
};
use crate::rule::{IfCondition, PluginInfo, Rule};

/// The most heap the per-event `RegexSet` of regular matchers may take: 4 MiB. Measured: a set
/// of 1,000 `^mcp__srvN__.*$` patterns compiles to 1.5 MiB, so this holds about 2,500 real
/// matchers; a larger set is not built and its patterns are tested one by one instead (each
/// already bounded by [`REGEX_SIZE_LIMIT`](crate::matcher::REGEX_SIZE_LIMIT)).
pub const REGEX_SET_SIZE_LIMIT: usize = 4 * 1024 * 1024;

/// The most the per-event `RegexSet`'s lazy DFA may cache, per thread: 2 MiB (the regex
/// crate's default). A set's DFA states hold many patterns' positions at once, so they are far
/// larger than a single matcher's: with the single-matcher cap (256 KiB) the lazy DFA of a
/// 700-pattern set kept giving up and fell back to the NFA simulation, and an event that
/// matches nothing among 10,000 rules went from 1.1 µs to 20 µs per dispatch (`hookbox bench`).
/// The cache fills only with states actually visited; a tool name visits a few hundred.
pub const REGEX_SET_DFA_SIZE_LIMIT: usize = 2 * 1024 * 1024;

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
#[derive(Debug, Clone)]
pub struct RuleSet {
    plugins: Vec<PluginInfo>,
    rules: Vec<Rule>,
    by_event: HashMap<EventName, EventRules>,
    aliases: ToolAliases,
    /// Backtracking steps one [`RuleSet::matching`] call may spend (default
    /// [`MATCH_BUDGET_STEPS`]).
    match_budget: u64,
}

impl Default for RuleSet {
    fn default() -> Self {
        RuleSet {
            plugins: Vec::new(),
            rules: Vec::new(),
            by_event: HashMap::new(),
            aliases: ToolAliases::default(),
            match_budget: MATCH_BUDGET_STEPS,
        }
    }
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
            let built: Result<RegexSet, regex::Error> =
                RegexSetBuilder::new(list.iter().map(|(p, _, _)| p))
                    .size_limit(REGEX_SET_SIZE_LIMIT)
                    .dfa_size_limit(REGEX_SET_DFA_SIZE_LIMIT)
                    .build();
            match built {
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
            match_budget: MATCH_BUDGET_STEPS,
        }
    }

    /// Sets the backtracking steps one [`RuleSet::matching`] call may spend on all its
    /// matchers together (default [`MATCH_BUDGET_STEPS`]).
    pub fn with_match_budget(mut self, steps: u64) -> RuleSet {
        self.match_budget = steps;
        self
    }

    /// The backtracking steps one [`RuleSet::matching`] call may spend.
    pub fn match_budget(&self) -> u64 {
        self.match_budget
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

    /// The rules that fire for `event`, in declaration order. Backtracking matchers share one
    /// budget of [`RuleSet::match_budget`] steps; a matcher it cannot pay for, or one that gives
    /// up, counts as no match and is listed in [`Matching::undecided`].
    pub fn matching(&self, event: &Event) -> Matching<'_> {
        let mut budget = MatchBudget::new(self.match_budget);
        let Some(bucket) = self.by_event.get(&event.name) else {
            return self.account(event, Vec::new(), Vec::new(), &budget);
        };
        let mut hits: Vec<usize> = bucket.all.clone();
        let mut undecided: Vec<usize> = Vec::new();
        let mut verify = |pos: usize, budget: &mut MatchBudget, hits: &mut Vec<usize>| match self
            .rules[pos]
            .matcher
            .matches_within(event, &self.aliases, budget)
        {
            Some(true) => hits.push(pos),
            Some(false) => {}
            None => undecided.push(pos),
        };
        let is_tool = event.name.matcher_field() == Some("tool_name");
        if let Some(subject) = event.matcher_subject() {
            // A tool call is found under its canonical name and those it implies (a
            // PowerShell call under `Bash` too).
            let mut find = |key: &str| {
                if let Some(list) = bucket.exact.get(key) {
                    hits.extend(list);
                }
            };
            if is_tool {
                self.aliases.canonicals(subject).for_each(&mut find);
            } else {
                find(subject);
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
                        let (pos, needs_check) = ps.rules[i];
                        if needs_check {
                            verify(pos, &mut budget, &mut hits);
                        } else {
                            hits.push(pos);
                        }
                    }
                }
            }
        }
        for &pos in &bucket.scan {
            verify(pos, &mut budget, &mut hits);
        }
        hits.sort_unstable();
        hits.dedup();
        // A rule undecided for one alias but matched for another did fire.
        undecided.sort_unstable();
        undecided.dedup();
        undecided.retain(|p| hits.binary_search(p).is_err());
        self.account(event, hits, undecided, &budget)
    }

    /// The [`Matching`] of positions `hits` (sorted), after the `if` conditions.
    fn account(
        &self,
        event: &Event,
        hits: Vec<usize>,
        undecided: Vec<usize>,
        budget: &MatchBudget,
    ) -> Matching<'_> {
        Matching {
            rules: hits
                .into_iter()
                .map(|p| &self.rules[p])
                .filter(|r| {
                    r.if_condition
                        .as_ref()
                        .is_none_or(|c| if_matches(c, event, &self.aliases))
                })
                .collect(),
            steps: budget.spent(),
            budget_exhausted: budget.exhausted(),
            undecided: undecided.into_iter().map(|p| self.rules[p].index).collect(),
        }
    }
}

/// Claude Code's `if` (`Bash(git commit:*)`, `Edit(*.ts)`): the tool must match, and the glob
/// must match the call's main argument — for shell commands, the whole command or any of its
/// `&&`/`||`/`;`/`|` segments.
pub(crate) fn if_matches(cond: &IfCondition, event: &Event, aliases: &ToolAliases) -> bool {
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
    fn every_agent_s_spelling_of_a_tool_matches_every_rule_for_it() {
        use crate::matcher::alias::{DEFAULT_ALIASES, DEFAULT_IMPLIED};
        // One rule per spelling of every tool (the canonical name and each agent's), plus one
        // per implied tool and one for a tool the table does not know.
        let mut spellings: Vec<&str> = DEFAULT_ALIASES
            .iter()
            .flat_map(|(c, others)| std::iter::once(*c).chain(others.iter().map(|(n, _)| *n)))
            .collect();
        spellings.extend(DEFAULT_IMPLIED.iter().flat_map(|(a, b)| [*a, *b]));
        spellings.push("mcp__srv__tool");
        let rules: Vec<Rule> = spellings
            .iter()
            .enumerate()
            .map(|(i, name)| rule(i, EventName::PreToolUse, name, None))
            .collect();
        let set = RuleSet::new(vec![], rules, ToolAliases::default());
        for name in &spellings {
            let ev = tool(name, "");
            let brute: Vec<usize> = set
                .rules()
                .iter()
                .filter(|r| r.matcher.matches(&ev, set.aliases()))
                .map(|r| r.index)
                .collect();
            assert_eq!(ids(&set, &ev), brute, "{name}");
            assert!(
                brute.len() > 1 || *name == "mcp__srv__tool",
                "{name}: {brute:?}"
            );
        }
        // A Copilot `bash` call fires a rule written for Gemini's `run_shell_command`, and a
        // PowerShell call the Bash rules, but a Bash call no PowerShell rule.
        let names = |ev: &str| -> Vec<&str> {
            ids(&set, &tool(ev, ""))
                .into_iter()
                .map(|i| spellings[i])
                .collect()
        };
        assert!(names("bash").contains(&"run_shell_command"));
        assert!(names("powershell").contains(&"Bash"));
        assert!(!names("Bash").contains(&"PowerShell"));
        assert!(names("apply_patch").contains(&"write_file"));
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

    #[test]
    fn backtracking_shares_one_budget_per_dispatch() {
        // 500 rules of a pattern that backtracks 2^17 ways on `run_shell_command` (an alias of
        // Bash): unbounded per dispatch they cost ~50 M steps, i.e. seconds.
        let mut rules: Vec<Rule> = (0..500)
            .map(|i| rule(i, EventName::PreToolUse, r"(.|.)*\1Z", None))
            .collect();
        rules.push(rule(500, EventName::PreToolUse, "Bash", None));
        rules.push(rule(501, EventName::PreToolUse, "^Ba.*$", None));
        let set = RuleSet::new(vec![], rules, ToolAliases::default());
        let m = set.matching(&tool("Bash", "ls"));
        assert!(m.budget_exhausted);
        assert!(m.steps <= MATCH_BUDGET_STEPS, "{} steps", m.steps);
        // Regular and exact matchers never depend on the budget.
        assert_eq!(
            m.iter().map(|r| r.index).collect::<Vec<_>>(),
            vec![500, 501]
        );
        assert_eq!(m.undecided, (0..500).collect::<Vec<_>>());
        // Without the shared budget, 15 such rules already cost more than it allows.
        let few: Vec<Rule> = (0..15)
            .map(|i| rule(i, EventName::PreToolUse, r"(.|.)*\1Z", None))
            .collect();
        let rich = RuleSet::new(vec![], few, ToolAliases::default()).with_match_budget(u64::MAX);
        let m = rich.matching(&tool("Bash", "ls"));
        assert!(!m.budget_exhausted);
        assert!(m.steps > MATCH_BUDGET_STEPS, "{} steps", m.steps);
        // `run_shell_command` gives up at BACKTRACK_LIMIT for every rule: still undecided.
        assert_eq!(m.undecided.len(), 15);
    }

    #[test]
    fn a_rule_undecided_for_one_alias_but_matched_for_another_fires() {
        // Matches `shell` quickly; `run_shell_command` makes it give up.
        let set = RuleSet::new(
            vec![],
            vec![rule(
                0,
                EventName::PreToolUse,
                r"^(?:(.|.)*\1Z|shell)$",
                None,
            )],
            ToolAliases::default(),
        );
        let m = set.matching(&tool("Bash", "ls"));
        assert_eq!(m.len(), 1);
        assert!(m.undecided.is_empty(), "{:?}", m.undecided);
    }
}
