//! A hook's structured answer: the JSON keys of Claude Code, of the main source and of the simple
//! dialect, normalised into one type. Typed wasm guests produce the same type directly.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::json_type;

/// A permission decision (PreToolUse, PermissionRequest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionDecision {
    /// Let the tool run.
    Allow,
    /// Ask the user.
    Ask,
    /// Defer to a later decision (Claude Code `-p` mode).
    Defer,
    /// Refuse the tool call.
    Deny,
}

impl PermissionDecision {
    /// Precedence across hooks: deny > defer > ask > allow (Claude Code).
    pub fn rank(self) -> u8 {
        match self {
            PermissionDecision::Allow => 0,
            PermissionDecision::Ask => 1,
            PermissionDecision::Defer => 2,
            PermissionDecision::Deny => 3,
        }
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionDecision::Allow => "allow",
            PermissionDecision::Ask => "ask",
            PermissionDecision::Defer => "defer",
            PermissionDecision::Deny => "deny",
        }
    }

    fn parse(s: &str) -> Option<PermissionDecision> {
        match s {
            "allow" | "approve" => Some(PermissionDecision::Allow),
            "ask" => Some(PermissionDecision::Ask),
            "defer" => Some(PermissionDecision::Defer),
            "deny" | "block" => Some(PermissionDecision::Deny),
            _ => None,
        }
    }
}

/// Claude Code's top-level `decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopDecision {
    /// `"block"`: block the prompt / keep the turn going (Stop) / deny (PreToolUse, deprecated).
    Block,
    /// `"approve"`: deprecated PreToolUse allow.
    Approve,
}

/// The structured answer of one hook.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HookResponse {
    /// `continue: false` stops the agent after this hook (takes precedence over decisions).
    pub continue_: Option<bool>,
    /// Shown to the user when the hook stops the agent (`stopReason`).
    pub stop_reason: Option<String>,
    /// `suppressOutput`.
    pub suppress_output: bool,
    /// `systemMessage`: a warning shown to the user.
    pub system_message: Option<String>,
    /// Top-level `decision`.
    pub decision: Option<TopDecision>,
    /// Top-level `reason` (with `decision`).
    pub reason: Option<String>,
    /// `hookSpecificOutput.hookEventName`, when given.
    pub hook_event_name: Option<String>,
    /// `permissionDecision` (in `hookSpecificOutput`, or top-level in the simple dialect).
    pub permission_decision: Option<PermissionDecision>,
    /// `permissionDecisionReason`.
    pub permission_decision_reason: Option<String>,
    /// `updatedInput`: replaces the whole tool input.
    pub updated_input: Option<Value>,
    /// `additionalContext` (hook-specific or top-level; string or list), in order.
    pub additional_contexts: Vec<String>,
    /// The main source's `blockingError`.
    pub blocking_error: Option<String>,
    /// The main source's `preventContinuation`.
    pub prevent_continuation: bool,
    /// A typed guest's force-continue follow-up (Stop): continue with this as the next message.
    pub follow_up: Option<String>,
}

/// Why a JSON answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// Not a JSON object.
    #[error("hook output must be a JSON object, found {found}")]
    NotAnObject {
        /// The JSON type found.
        found: &'static str,
    },
    /// A known key with the wrong type.
    #[error("hook output field `{field}` must be {expected}, found {found}")]
    WrongType {
        /// The key (dotted for nested keys).
        field: String,
        /// The expected type.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A value outside the allowed set.
    #[error("hook output field `{field}` has unknown value `{value}`; expected {expected}")]
    BadValue {
        /// The key.
        field: String,
        /// The value.
        value: String,
        /// The allowed values.
        expected: &'static str,
    },
}

fn get_str(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, ResponseError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ResponseError::WrongType {
            field: format!("{path}{key}"),
            expected: "a string",
            found: json_type(other),
        }),
    }
}

fn get_bool(m: &Map<String, Value>, key: &str) -> Result<Option<bool>, ResponseError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(ResponseError::WrongType {
            field: key.to_owned(),
            expected: "a boolean",
            found: json_type(other),
        }),
    }
}

/// `additionalContext` as a string or a list of strings.
fn get_contexts(
    m: &Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) -> Result<(), ResponseError> {
    match m.get("additionalContext") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) => {
            if !s.is_empty() {
                out.push(s.clone());
            }
            Ok(())
        }
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::String(s) => out.push(s.clone()),
                    other => {
                        return Err(ResponseError::WrongType {
                            field: format!("{path}additionalContext[]"),
                            expected: "a string",
                            found: json_type(other),
                        });
                    }
                }
            }
            Ok(())
        }
        Some(other) => Err(ResponseError::WrongType {
            field: format!("{path}additionalContext"),
            expected: "a string or a list of strings",
            found: json_type(other),
        }),
    }
}

fn get_permission(
    m: &Map<String, Value>,
    path: &str,
) -> Result<Option<PermissionDecision>, ResponseError> {
    match get_str(m, "permissionDecision", path)? {
        None => Ok(None),
        Some(s) => PermissionDecision::parse(&s)
            .map(Some)
            .ok_or(ResponseError::BadValue {
                field: format!("{path}permissionDecision"),
                value: s,
                expected: "allow, deny, ask or defer",
            }),
    }
}

impl HookResponse {
    /// Parses a hook's JSON answer. Unknown keys are ignored (hooks written for newer agents
    /// keep working); known keys with the wrong type are refused.
    pub fn from_json(value: &Value) -> Result<HookResponse, ResponseError> {
        let Value::Object(m) = value else {
            return Err(ResponseError::NotAnObject {
                found: json_type(value),
            });
        };
        let mut r = HookResponse {
            continue_: get_bool(m, "continue")?,
            stop_reason: get_str(m, "stopReason", "")?,
            suppress_output: get_bool(m, "suppressOutput")?.unwrap_or(false),
            system_message: get_str(m, "systemMessage", "")?,
            reason: get_str(m, "reason", "")?,
            prevent_continuation: get_bool(m, "preventContinuation")?.unwrap_or(false),
            ..HookResponse::default()
        };
        r.decision = match get_str(m, "decision", "")?.as_deref() {
            None => None,
            Some("block") => Some(TopDecision::Block),
            Some("approve") => Some(TopDecision::Approve),
            Some(other) => {
                return Err(ResponseError::BadValue {
                    field: "decision".into(),
                    value: other.into(),
                    expected: "\"block\" or \"approve\"",
                });
            }
        };
        // The main source's blockingError is stringified whatever its type.
        r.blocking_error = match m.get("blockingError") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        get_contexts(m, "", &mut r.additional_contexts)?;
        // The simple dialect puts these at the top level.
        r.permission_decision = get_permission(m, "")?;
        r.updated_input = m.get("updatedInput").filter(|v| !v.is_null()).cloned();
        match m.get("hookSpecificOutput") {
            None | Some(Value::Null) => {}
            Some(Value::Object(h)) => {
                let p = "hookSpecificOutput.";
                r.hook_event_name = get_str(h, "hookEventName", p)?;
                if let Some(d) = get_permission(h, p)? {
                    r.permission_decision = Some(d);
                }
                r.permission_decision_reason = get_str(h, "permissionDecisionReason", p)?;
                if let Some(u) = h.get("updatedInput").filter(|v| !v.is_null()) {
                    r.updated_input = Some(u.clone());
                }
                get_contexts(h, p, &mut r.additional_contexts)?;
                // PermissionRequest: `decision: {behavior, message, updatedInput}`.
                if let Some(Value::Object(d)) = h.get("decision") {
                    let q = "hookSpecificOutput.decision.";
                    if let Some(b) = get_str(d, "behavior", q)? {
                        r.permission_decision = Some(PermissionDecision::parse(&b).ok_or(
                            ResponseError::BadValue {
                                field: format!("{q}behavior"),
                                value: b,
                                expected: "allow or deny",
                            },
                        )?);
                    }
                    if let Some(msg) = get_str(d, "message", q)? {
                        r.permission_decision_reason = Some(msg);
                    }
                    if let Some(u) = d.get("updatedInput").filter(|v| !v.is_null()) {
                        r.updated_input = Some(u.clone());
                    }
                }
            }
            Some(other) => {
                return Err(ResponseError::WrongType {
                    field: "hookSpecificOutput".into(),
                    expected: "an object",
                    found: json_type(other),
                });
            }
        }
        Ok(r)
    }

    /// The answer of a hook that said nothing.
    pub fn empty() -> HookResponse {
        HookResponse::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_keys() {
        let r = HookResponse::from_json(&json!({
            "continue": true, "suppressOutput": true, "systemMessage": "careful",
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "no", "updatedInput": {"command": "ls"},
                "additionalContext": "ctx"}
        }))
        .unwrap();
        assert_eq!(r.permission_decision, Some(PermissionDecision::Deny));
        assert_eq!(r.permission_decision_reason.as_deref(), Some("no"));
        assert_eq!(r.updated_input, Some(json!({"command": "ls"})));
        assert_eq!(r.additional_contexts, vec!["ctx"]);
        assert!(r.suppress_output);
    }

    #[test]
    fn main_source_and_simple_keys() {
        let r = HookResponse::from_json(&json!({
            "blockingError": "stop", "preventContinuation": true, "stopReason": "why",
            "additionalContext": ["a", "b"], "permissionDecision": "ask", "updatedInput": {"x": 1}
        }))
        .unwrap();
        assert_eq!(r.blocking_error.as_deref(), Some("stop"));
        assert!(r.prevent_continuation);
        assert_eq!(r.additional_contexts, vec!["a", "b"]);
        assert_eq!(r.permission_decision, Some(PermissionDecision::Ask));
    }

    #[test]
    fn permission_request_decision_object() {
        let r = HookResponse::from_json(
            &json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "nope"}}}),
        )
        .unwrap();
        assert_eq!(r.permission_decision, Some(PermissionDecision::Deny));
        assert_eq!(r.permission_decision_reason.as_deref(), Some("nope"));
    }

    #[test]
    fn wrong_types_are_named() {
        let e = HookResponse::from_json(&json!({"continue": "no"})).unwrap_err();
        assert!(e.to_string().contains("`continue`"), "{e}");
        let e = HookResponse::from_json(&json!({"hookSpecificOutput": {"additionalContext": 3}}))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("hookSpecificOutput.additionalContext"),
            "{e}"
        );
        let e = HookResponse::from_json(&json!({"decision": "maybe"})).unwrap_err();
        assert!(e.to_string().contains("maybe"), "{e}");
        assert!(HookResponse::from_json(&json!([1])).is_err());
        assert!(HookResponse::from_json(&json!({"unknownKey": 1})).is_ok());
    }
}
