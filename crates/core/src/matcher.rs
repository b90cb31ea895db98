//! Matchers (SPEC §3): which occurrences of an event a rule fires on.
//!
//! - absent, `null`, `""`, `"*"`: every occurrence;
//! - a string of letters, digits, `_`, `-`, spaces, `,` and `|`: exact names, a `|`/`,` list;
//! - any other string: an unanchored JavaScript regex ([`JsRegex`]);
//! - an object (the main source's shape): keys `tool_name`/`toolName`, `trigger`, `source`,
//!   `reason`, `agent_type`, `notification_type`; each value a glob or a `^…$` regex; all must match.
//!
//! Tool names are compared through [`ToolAliases`], so `Bash` and `run_shell_command` are one tool.
//! Backtracking regexes draw on one [`MatchBudget`] per dispatch (see `budget`). A tool matcher
//! that can match no tool any agent calls is found at load ([`unreachable_tool_matcher`]).

pub mod alias;
mod budget;
mod glob;
mod js_regex;
pub(crate) mod reach;

pub use alias::ToolAliases;
pub use budget::{BACKTRACK_LIMIT, MATCH_BUDGET_STEPS, MatchBudget, QUICK_BACKTRACK_LIMIT};
pub use glob::glob_match;
pub use js_regex::{
    JsRegex, REGEX_DFA_SIZE_LIMIT, REGEX_MAX_PROGRAM, REGEX_SIZE_LIMIT, RegexError,
};
pub use reach::{Unreachable, known_tools, unreachable_tool_matcher};

use serde_json::{Map, Value};

use crate::event::{Event, EventName, json_type};

/// Keys an object matcher may use, with the payload field each one reads.
pub const OBJECT_MATCHER_KEYS: &[(&str, &str)] = &[
    ("tool_name", "tool_name"),
    ("toolName", "tool_name"),
    ("trigger", "trigger"),
    ("source", "source"),
    ("reason", "reason"),
    ("agent_type", "agent_type"),
    ("notification_type", "notification_type"),
];

/// A compiled matcher.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// Every occurrence.
    All,
    /// One of these exact names.
    Names(Vec<String>),
    /// An unanchored JavaScript regex.
    Regex(JsRegex),
    /// The main source's object matcher: every (field, pattern) must match.
    Object(Vec<(String, ValuePattern)>),
}

/// One value of an object matcher.
#[derive(Debug, Clone, PartialEq)]
pub enum ValuePattern {
    /// `*` / `?` glob over the whole value.
    Glob(String),
    /// Written `^…$`: a whole-string JavaScript regex.
    Regex(JsRegex),
}

/// Why a matcher was refused at load time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatcherError {
    /// The regex does not compile.
    #[error(transparent)]
    Regex(#[from] RegexError),
    /// An object matcher key hookbox does not know.
    #[error(
        "unknown matcher key `{key}`; use one of tool_name, trigger, source, reason, agent_type, notification_type"
    )]
    UnknownKey {
        /// The key.
        key: String,
    },
    /// An object matcher value that is not a string.
    #[error("matcher key `{key}` must be a string pattern, found {found}")]
    NotAString {
        /// The key.
        key: String,
        /// The JSON type found.
        found: &'static str,
    },
    /// A matcher that is neither a string nor an object.
    #[error("a matcher must be a string or an object, found {found}")]
    WrongType {
        /// The JSON type found.
        found: &'static str,
    },
}

impl Matcher {
    /// How the matcher reads in JSON (`hookbox validate --json`, the server's tenant view):
    /// `{"kind": "all"}`, `{"kind": "names", "names": […]}`, `{"kind": "regex", "pattern": …}`
    /// or `{"kind": "object", "fields": {field: {"glob"|"regex": …}}}`.
    pub fn describe(&self) -> Value {
        match self {
            Matcher::All => serde_json::json!({"kind": "all"}),
            Matcher::Names(names) => serde_json::json!({"kind": "names", "names": names}),
            Matcher::Regex(re) => serde_json::json!({"kind": "regex", "pattern": re.as_str()}),
            Matcher::Object(parts) => {
                let fields: Map<String, Value> = parts
                    .iter()
                    .map(|(field, pat)| {
                        let v = match pat {
                            ValuePattern::Glob(g) => serde_json::json!({"glob": g}),
                            ValuePattern::Regex(re) => serde_json::json!({"regex": re.as_str()}),
                        };
                        (field.clone(), v)
                    })
                    .collect();
                serde_json::json!({"kind": "object", "fields": fields})
            }
        }
    }

    /// Compiles a matcher from its JSON value; `event` decides the exact-name alphabet
    /// (`FileChanged` and `StopFailure` use the narrower one, as in Claude Code).
    pub fn from_json(value: Option<&Value>, event: EventName) -> Result<Matcher, MatcherError> {
        match value {
            None | Some(Value::Null) => Ok(Matcher::All),
            Some(Value::String(s)) => Matcher::from_str_for(s, event),
            Some(Value::Object(map)) => Matcher::from_object(map),
            Some(other) => Err(MatcherError::WrongType {
                found: json_type(other),
            }),
        }
    }

    /// Compiles a string matcher.
    pub fn from_str_for(s: &str, event: EventName) -> Result<Matcher, MatcherError> {
        if s.is_empty() || s == "*" {
            return Ok(Matcher::All);
        }
        if is_exact_list(s, event) {
            let names: Vec<String> = s
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            if names.is_empty() {
                return Ok(Matcher::All);
            }
            return Ok(Matcher::Names(names));
        }
        Ok(Matcher::Regex(JsRegex::new(s)?))
    }

    /// Compiles the main source's object matcher.
    pub fn from_object(map: &Map<String, Value>) -> Result<Matcher, MatcherError> {
        let mut parts = Vec::with_capacity(map.len());
        for (key, v) in map {
            let field = OBJECT_MATCHER_KEYS
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, f)| *f)
                .ok_or_else(|| MatcherError::UnknownKey { key: key.clone() })?;
            let pat = match v {
                Value::String(p) if is_anchored_regex(p) => ValuePattern::Regex(JsRegex::new(p)?),
                Value::String(p) => ValuePattern::Glob(p.clone()),
                Value::Null => continue,
                other => {
                    return Err(MatcherError::NotAString {
                        key: key.clone(),
                        found: json_type(other),
                    });
                }
            };
            parts.push((field.to_owned(), pat));
        }
        if parts.is_empty() {
            return Ok(Matcher::All);
        }
        Ok(Matcher::Object(parts))
    }

    /// The regular expressions [`Matcher::from_json`] would compile for this value, without
    /// compiling them: the loader caps each file's regex work before paying for it.
    pub fn regex_sources(value: Option<&Value>, event: EventName) -> Vec<&str> {
        match value {
            Some(Value::String(s)) if !(s.is_empty() || s == "*" || is_exact_list(s, event)) => {
                vec![s.as_str()]
            }
            Some(Value::Object(map)) => map
                .values()
                .filter_map(Value::as_str)
                .filter(|p| is_anchored_regex(p))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether this matcher fires for `event`. Events without a matcher field (Stop,
    /// UserPromptSubmit, …) match every string matcher, as Claude Code ignores it there.
    /// Backtracking is bounded per regex match; to bound it across many matchers, use
    /// [`Matcher::matches_within`].
    pub fn matches(&self, event: &Event, aliases: &ToolAliases) -> bool {
        self.matches_within(event, aliases, &mut MatchBudget::unlimited())
            .unwrap_or(false)
    }

    /// Whether this matcher fires for `event`, paying regex backtracking from `budget`:
    /// `None` when a regex could not decide (see [`JsRegex::is_match_within`]) and nothing else
    /// decided. Callers count `None` as no match, and report it.
    pub fn matches_within(
        &self,
        event: &Event,
        aliases: &ToolAliases,
        budget: &mut MatchBudget,
    ) -> Option<bool> {
        match self {
            Matcher::All => Some(true),
            Matcher::Names(_) | Matcher::Regex(_) => {
                let Some(field) = event.name.matcher_field() else {
                    return Some(true);
                };
                let Some(subject) = event.field_str(field) else {
                    return Some(false);
                };
                self.matches_subject_within(subject, field == "tool_name", aliases, budget)
            }
            Matcher::Object(parts) => {
                // All keys must match: one that does not decides; one undecided leaves it open.
                let mut answer = Some(true);
                for (field, pat) in parts {
                    let Some(subject) = event.field_str(field) else {
                        return Some(false);
                    };
                    let mut test = |s: &str| match pat {
                        ValuePattern::Glob(g) => Some(g == "*" || glob_match(g, s)),
                        ValuePattern::Regex(re) => re.is_match_within(s, budget),
                    };
                    let part = if field == "tool_name" {
                        any_of(aliases.names(subject).map(&mut test))
                    } else {
                        test(subject)
                    };
                    match part {
                        Some(false) => return Some(false),
                        None => answer = None,
                        Some(true) => {}
                    }
                }
                answer
            }
        }
    }

    /// Whether a string matcher matches `subject` (through aliases when it is a tool name).
    pub fn matches_subject(&self, subject: &str, is_tool: bool, aliases: &ToolAliases) -> bool {
        self.matches_subject_within(subject, is_tool, aliases, &mut MatchBudget::unlimited())
            .unwrap_or(false)
    }

    /// [`Matcher::matches_subject`], paying regex backtracking from `budget`.
    pub fn matches_subject_within(
        &self,
        subject: &str,
        is_tool: bool,
        aliases: &ToolAliases,
        budget: &mut MatchBudget,
    ) -> Option<bool> {
        let mut test = |s: &str| match self {
            Matcher::All => Some(true),
            Matcher::Names(names) => Some(names.iter().any(|n| n == s)),
            Matcher::Regex(re) => re.is_match_within(s, budget),
            Matcher::Object(_) => Some(false),
        };
        if is_tool {
            any_of(aliases.names(subject).map(&mut test))
        } else {
            test(subject)
        }
    }

    /// For the index: the exact values this matcher can only ever match, if it is that simple.
    pub fn exact_names(&self) -> Option<&[String]> {
        match self {
            Matcher::Names(n) => Some(n),
            _ => None,
        }
    }

    /// How many of its regexes need backtracking (and so draw on a dispatch's budget).
    pub fn backtracking_count(&self) -> usize {
        match self {
            Matcher::Regex(re) => usize::from(re.is_backtracking()),
            Matcher::Object(parts) => parts
                .iter()
                .filter(|(_, p)| matches!(p, ValuePattern::Regex(re) if re.is_backtracking()))
                .count(),
            Matcher::All | Matcher::Names(_) => 0,
        }
    }

    /// Whether this matcher matches every occurrence.
    pub fn is_all(&self) -> bool {
        matches!(self, Matcher::All)
    }
}

/// Whether a string matcher is a list of exact names: only letters, digits, `_`, `|`, and
/// (except on `FileChanged` and `StopFailure`, as in Claude Code) `-`, spaces and `,`.
fn is_exact_list(s: &str, event: EventName) -> bool {
    let narrow = matches!(event, EventName::FileChanged | EventName::StopFailure);
    s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || c == '_'
            || c == '|'
            || (!narrow && matches!(c, '-' | ' ' | ','))
    })
}

/// Whether an object-matcher value is written as a whole-string regex (`^…$`).
fn is_anchored_regex(p: &str) -> bool {
    p.starts_with('^') && p.ends_with('$') && p.len() >= 2
}

/// Any of several answers: a match decides; otherwise one undecided answer leaves it open.
/// Stops at the first match, so later aliases cost nothing.
fn any_of(answers: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    let mut answer = Some(false);
    for a in answers {
        match a {
            Some(true) => return Some(true),
            None => answer = None,
            Some(false) => {}
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_matcher_describes_itself_as_json() {
        let e = EventName::PreToolUse;
        assert_eq!(Matcher::All.describe(), serde_json::json!({"kind": "all"}));
        assert_eq!(
            Matcher::from_str_for("Edit|Write", e).unwrap().describe(),
            serde_json::json!({"kind": "names", "names": ["Edit", "Write"]})
        );
        assert_eq!(
            Matcher::from_str_for("^mcp__.*$", e).unwrap().describe(),
            serde_json::json!({"kind": "regex", "pattern": "^mcp__.*$"})
        );
        let object =
            Matcher::from_json(Some(&serde_json::json!({"tool_name": "mcp__*"})), e).unwrap();
        assert_eq!(
            object.describe(),
            serde_json::json!({"kind": "object", "fields": {"tool_name": {"glob": "mcp__*"}}})
        );
    }

    fn tool_event(name: &str) -> Event {
        Event::from_payload(
            Some(EventName::PreToolUse),
            json!({"tool_name": name}),
            "s",
            "/",
        )
        .unwrap()
    }

    fn mat(v: Value) -> Matcher {
        Matcher::from_json(Some(&v), EventName::PreToolUse).unwrap()
    }

    #[test]
    fn all_forms() {
        for v in [json!(null), json!(""), json!("*"), json!({})] {
            assert!(mat(v).is_all());
        }
        assert!(
            Matcher::from_json(None, EventName::PreToolUse)
                .unwrap()
                .is_all()
        );
    }

    #[test]
    fn exact_lists_and_regexes() {
        let a = ToolAliases::default();
        assert_eq!(
            mat(json!("Bash|Edit")),
            Matcher::Names(vec!["Bash".into(), "Edit".into()])
        );
        assert_eq!(
            mat(json!("Edit, Write")),
            Matcher::Names(vec!["Edit".into(), "Write".into()])
        );
        assert!(mat(json!("Edit|Write")).matches(&tool_event("Write"), &a));
        assert!(!mat(json!("Edit")).matches(&tool_event("NotebookEdit"), &a));
        assert!(mat(json!("Edit.*")).matches(&tool_event("NotebookEdit"), &a));
        assert!(!mat(json!("mcp__memory")).matches(&tool_event("mcp__memory__x"), &a));
        assert!(mat(json!("mcp__memory__.*")).matches(&tool_event("mcp__memory__x"), &a));
        assert!(mat(json!("code-reviewer")).exact_names().is_some());
    }

    #[test]
    fn aliases_apply_to_string_and_object_matchers() {
        let a = ToolAliases::default();
        assert!(mat(json!("Bash")).matches(&tool_event("run_shell_command"), &a));
        assert!(mat(json!("run_shell_command")).matches(&tool_event("Bash"), &a));
        assert!(mat(json!({"tool_name": "run_shell_command"})).matches(&tool_event("Bash"), &a));
        assert!(mat(json!({"toolName": "Bash"})).matches(&tool_event("run_shell_command"), &a));
        assert!(
            !mat(json!("Bash")).matches(&tool_event("run_shell_command"), &ToolAliases::none())
        );
    }

    #[test]
    fn object_values_are_globs_or_anchored_regexes() {
        let a = ToolAliases::default();
        assert!(mat(json!({"tool_name": "mcp__*"})).matches(&tool_event("mcp__gh__x"), &a));
        assert!(mat(json!({"tool_name": "^(Edit|Write)$"})).matches(&tool_event("Write"), &a));
        assert!(
            !mat(json!({"tool_name": "^(Edit|Write)$"})).matches(&tool_event("MultiWrite"), &a)
        );
        let pc = Event::from_payload(
            Some(EventName::PreCompact),
            json!({"trigger": "manual"}),
            "s",
            "/",
        )
        .unwrap();
        assert!(
            !mat(json!({"trigger": "manual|auto"})).matches(&pc, &a),
            "globs are not lists"
        );
        assert!(mat(json!({"trigger": "^(manual|auto)$"})).matches(&pc, &a));
        assert!(
            !mat(json!({"tool_name": "Bash"})).matches(&pc, &a),
            "absent field never matches"
        );
    }

    #[test]
    fn bad_matchers_are_refused() {
        let e =
            Matcher::from_json(Some(&json!({"tool": "Bash"})), EventName::PreToolUse).unwrap_err();
        assert!(e.to_string().contains("`tool`"), "{e}");
        let e =
            Matcher::from_json(Some(&json!({"tool_name": 3})), EventName::PreToolUse).unwrap_err();
        assert!(e.to_string().contains("a number"), "{e}");
        let e = Matcher::from_json(Some(&json!(["Bash"])), EventName::PreToolUse).unwrap_err();
        assert!(matches!(e, MatcherError::WrongType { .. }));
        assert!(Matcher::from_json(Some(&json!("Bash(")), EventName::PreToolUse).is_err());
    }

    #[test]
    fn events_without_matcher_field_ignore_string_matchers() {
        let stop = Event::new(EventName::Stop, "s", "/");
        assert!(
            Matcher::from_str_for("Bash", EventName::Stop)
                .unwrap()
                .matches(&stop, &ToolAliases::default())
        );
    }

    #[test]
    fn narrow_alphabet_for_file_changed() {
        assert!(matches!(
            Matcher::from_str_for("a-b", EventName::FileChanged).unwrap(),
            Matcher::Regex(_)
        ));
    }
}
