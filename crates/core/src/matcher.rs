//! Matchers (SPEC §3): which occurrences of an event a rule fires on.
//!
//! - absent, `null`, `""`, `"*"`: every occurrence;
//! - a string of letters, digits, `_`, `-`, spaces, `,` and `|`: exact names, a `|`/`,` list;
//! - any other string: an unanchored JavaScript regex ([`JsRegex`]);
//! - an object (the main source's shape): keys `tool_name`/`toolName`, `trigger`, `source`,
//!   `reason`, `agent_type`, `notification_type`; each value a glob or a `^…$` regex; all must match.
//!
//! Tool names are compared through [`ToolAliases`], so `Bash` and `run_shell_command` are one tool.

mod alias;
mod glob;
mod js_regex;

pub use alias::ToolAliases;
pub use glob::glob_match;
pub use js_regex::{BACKTRACK_LIMIT, JsRegex, RegexError};

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
        let narrow = matches!(event, EventName::FileChanged | EventName::StopFailure);
        let exact = s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || c == '_'
                || c == '|'
                || (!narrow && matches!(c, '-' | ' ' | ','))
        });
        if exact {
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
                Value::String(p) if p.starts_with('^') && p.ends_with('$') && p.len() >= 2 => {
                    ValuePattern::Regex(JsRegex::new(p)?)
                }
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

    /// Whether this matcher fires for `event`. Events without a matcher field (Stop,
    /// UserPromptSubmit, …) match every string matcher, as Claude Code ignores it there.
    pub fn matches(&self, event: &Event, aliases: &ToolAliases) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(_) | Matcher::Regex(_) => {
                let Some(field) = event.name.matcher_field() else {
                    return true;
                };
                let Some(subject) = event.field_str(field) else {
                    return false;
                };
                self.matches_subject(subject, field == "tool_name", aliases)
            }
            Matcher::Object(parts) => parts.iter().all(|(field, pat)| {
                let Some(subject) = event.field_str(field) else {
                    return false;
                };
                let test = |s: &str| match pat {
                    ValuePattern::Glob(g) => g == "*" || glob_match(g, s),
                    ValuePattern::Regex(re) => re.is_match(s),
                };
                if field == "tool_name" {
                    aliases.names(subject).any(test)
                } else {
                    test(subject)
                }
            }),
        }
    }

    /// Whether a string matcher matches `subject` (through aliases when it is a tool name).
    pub fn matches_subject(&self, subject: &str, is_tool: bool, aliases: &ToolAliases) -> bool {
        let test = |s: &str| match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == s),
            Matcher::Regex(re) => re.is_match(s),
            Matcher::Object(_) => false,
        };
        if is_tool {
            aliases.names(subject).any(test)
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

    /// Whether this matcher matches every occurrence.
    pub fn is_all(&self) -> bool {
        matches!(self, Matcher::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
