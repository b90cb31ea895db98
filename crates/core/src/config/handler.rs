//! One hook handler, from its JSON object to a [`Rule`]: its type (and whether the event allows
//! it), matcher, `if`, timeout, failure mode (`on_failure`, or Claude Code's `onFailure`), and
//! the fields of each type. An unknown key is a warning naming the closest known one (see
//! `keys`: a typo such as `timout` must not pass for a setting), except the notes real files
//! carry (`id`, `description`…); the wasm block, being hookbox's own, is strict (see `wasm`),
//! and so is the http block, which reaches the network (see `http`).

use serde_json::{Map, Value};

use super::command;
use super::document::{Ctx, compile_matcher, describe};
use super::http;
use super::keys;
use super::span::JsonPath;
use super::timeout;
use super::wasm;
use crate::event::{EventName, HandlerType, KNOWN_UNSUPPORTED_HOOK_TYPES};
use crate::limits::{MAX_PROMPT_PLACEHOLDERS, MAX_PROMPT_TEXT_BYTES, PROMPT_PLACEHOLDER};
use crate::matcher::Matcher;
use crate::rule::{FailMode, Handler, IfCondition, Rule, RuleSource};

/// What the fix of an unsupported type says.
const RUNS: &str = "hookbox runs 'command', 'prompt', 'http' and 'wasm' hooks";

/// `['command', 'wasm']`, as the source document prints the allowlist.
fn allowed_list(event: EventName) -> String {
    let names: Vec<String> = event
        .allowed_types()
        .iter()
        .map(|t| format!("'{}'", t.as_str()))
        .collect();
    format!("[{}]", names.join(", "))
}

/// Why a prompt rule's text is refused at load, with the fix: longer than any rule may add,
/// or more `{userMessage}` placeholders than [`MAX_PROMPT_PLACEHOLDERS`] (each one repeats the
/// user's whole prompt in the answer).
fn prompt_problem(text: &str) -> Option<(String, String)> {
    if text.len() > MAX_PROMPT_TEXT_BYTES {
        return Some((
            format!(
                "the prompt is {} bytes, over the {MAX_PROMPT_TEXT_BYTES} bytes one rule may add to a verdict — skipped.",
                text.len()
            ),
            "keep a prompt rule's text short; a hook that must add more should be a command hook"
                .to_owned(),
        ));
    }
    let n = text.matches(PROMPT_PLACEHOLDER).count();
    (n > MAX_PROMPT_PLACEHOLDERS).then(|| {
        (
            format!(
                "the prompt holds {PROMPT_PLACEHOLDER} {n} times; at most {MAX_PROMPT_PLACEHOLDERS} are allowed, as each one repeats the user's whole prompt — skipped."
            ),
            format!("use {PROMPT_PLACEHOLDER} at most {MAX_PROMPT_PLACEHOLDERS} times (once is usual)"),
        )
    })
}

/// Parses a handler; pushes its rule or the diagnostic that skipped it.
pub(crate) fn parse_handler(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
    group_matcher: Option<&Matcher>,
) {
    let Some(ty) = handler_type(ctx, event, obj, path) else {
        return;
    };
    if !event.allows(ty) {
        let fix = match ty {
            HandlerType::Prompt => Some(
                "prompt hooks run only on 'UserPromptSubmit'; use a command hook that prints the text"
                    .to_owned(),
            ),
            HandlerType::Http => Some(
                "http hooks run on every event but 'SessionStart' and 'Setup' (as in Claude Code); use a command hook here"
                    .to_owned(),
            ),
            _ => None,
        };
        ctx.skip(
            path,
            format!(
                "Hook type '{}' is not supported for event '{event}' — skipped. (Allowed for this event: {})",
                ty.as_str(),
                allowed_list(event)
            ),
            fix,
        );
        return;
    }
    // The wasm block refuses unknown keys itself, as errors.
    if ty != HandlerType::Wasm {
        let what = match ty {
            HandlerType::Http => "an http hook".to_owned(),
            other => format!("a {} hook", other.as_str()),
        };
        keys::report_unknown(ctx, obj, path, &keys::handler_keys(ty), &what);
    }
    let matcher = match group_matcher {
        Some(m) => {
            if obj.contains_key("matcher") {
                ctx.warn(
                    &path.key("matcher"),
                    "a handler's own matcher inside a matcher group is ignored; the group's matcher applies".to_owned(),
                    Some("move the handler into a group with that matcher".to_owned()),
                );
            }
            m.clone()
        }
        None => match compile_matcher(ctx, event, obj.get("matcher"), &path.key("matcher"), 1) {
            Some(m) => m,
            None => return,
        },
    };
    let Ok(timeout) = timeout::parse(ctx, event, obj, path) else {
        return;
    };
    let Ok(if_condition) = if_condition(ctx, event, obj, path) else {
        return;
    };
    let Ok(on_failure) = on_failure(ctx, obj, path) else {
        return;
    };
    let Ok(status_message) = opt_string(ctx, obj, path, "statusMessage") else {
        return;
    };
    let handler = match ty {
        HandlerType::Command => match command::parse_command(ctx, event, obj, path, timeout) {
            Some(c) => Handler::Command(c),
            None => return,
        },
        HandlerType::Prompt => match obj.get("prompt") {
            Some(Value::String(p)) => match prompt_problem(p) {
                None => Handler::Prompt { prompt: p.clone() },
                Some((message, fix)) => {
                    ctx.reject(&path.key("prompt"), message, Some(fix));
                    return;
                }
            },
            Some(other) => {
                ctx.skip(
                    &path.key("prompt"),
                    format!(
                        "'prompt' must be a string, found {} — skipped.",
                        describe(other)
                    ),
                    None,
                );
                return;
            }
            None => {
                ctx.skip(
                    path,
                    format!("Hook type 'prompt' under '{event}' has no 'prompt' — skipped."),
                    Some("add \"prompt\": \"text to attach as context\"".to_owned()),
                );
                return;
            }
        },
        HandlerType::Wasm => match wasm::parse_wasm(ctx, event, obj, path, timeout) {
            Some(w) => Handler::Wasm(w),
            None => return,
        },
        HandlerType::Http => match http::parse_http(ctx, event, obj, path, timeout) {
            Some(h) => Handler::Http(h),
            None => return,
        },
    };
    let (line, column) = ctx.location(path);
    let source = RuleSource {
        plugin: ctx.plugin_name.to_owned(),
        file: ctx.file.to_path_buf(),
        json_path: path.to_string(),
        line,
        column,
    };
    ctx.rules.push(Rule {
        // Renumbered when the plugin's rules join the rule set.
        index: 0,
        event,
        matcher,
        if_condition,
        handler,
        dialect: ctx.dialect,
        on_failure,
        status_message,
        source,
        plugin: ctx.plugin,
    });
}

fn handler_type(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
) -> Option<HandlerType> {
    match obj.get("type") {
        // The simple dialect's `{command, matcher}`.
        None if obj.contains_key("command") || obj.contains_key("args") => {
            Some(HandlerType::Command)
        }
        None if obj.contains_key("bash") || obj.contains_key("powershell") => {
            ctx.skip(
                path,
                format!("Hook entry under '{event}' has 'bash'/'powershell' but no 'command' (GitHub Copilot's shape) — skipped."),
                Some("write {\"type\": \"command\", \"command\": \"…\"}".to_owned()),
            );
            None
        }
        None => {
            ctx.skip(
                path,
                format!("Hook entry under '{event}' has no 'type' — skipped."),
                Some("add \"type\": \"command\" with a \"command\" (or \"prompt\" / \"wasm\"), or group handlers as {\"matcher\": \"…\", \"hooks\": [...]}".to_owned()),
            );
            None
        }
        Some(Value::String(s)) => match s.as_str() {
            "command" => Some(HandlerType::Command),
            "prompt" => Some(HandlerType::Prompt),
            "wasm" => Some(HandlerType::Wasm),
            "http" => Some(HandlerType::Http),
            s if KNOWN_UNSUPPORTED_HOOK_TYPES.contains(&s) => {
                ctx.skip(
                    path,
                    format!("Hook type '{s}' is not supported yet — skipped."),
                    Some(RUNS.to_owned()),
                );
                None
            }
            s => {
                ctx.skip(
                    path,
                    format!("Unknown hook type '{s}' under '{event}' — skipped."),
                    Some(RUNS.to_owned()),
                );
                None
            }
        },
        Some(other) => {
            ctx.skip(
                &path.key("type"),
                format!(
                    "'type' must be a string, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            None
        }
    }
}

fn opt_string(
    ctx: &mut Ctx<'_>,
    obj: &Map<String, Value>,
    path: &JsonPath,
    key: &str,
) -> Result<Option<String>, ()> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => {
            ctx.skip(
                &path.key(key),
                format!(
                    "'{key}' must be a string, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            Err(())
        }
    }
}

/// Parses Claude Code's `if`: `Tool` or `Tool(pattern)`.
pub(crate) fn parse_if(raw: &str) -> Option<IfCondition> {
    let s = raw.trim();
    let (tool, pattern) = match s.find('(') {
        Some(open) => {
            let inner = s.get(open + 1..)?.strip_suffix(')')?;
            let inner = inner.trim();
            (
                s.get(..open)?.trim(),
                (!inner.is_empty()).then(|| inner.to_owned()),
            )
        }
        None => (s, None),
    };
    let tool_ok = !tool.is_empty()
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    tool_ok.then(|| IfCondition {
        raw: raw.to_owned(),
        tool: tool.to_owned(),
        pattern,
    })
}

fn if_condition(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
) -> Result<Option<IfCondition>, ()> {
    let Some(raw) = opt_string(ctx, obj, path, "if")? else {
        return Ok(None);
    };
    let ipath = path.key("if");
    let Some(cond) = parse_if(&raw) else {
        ctx.skip(
            &ipath,
            format!(
                "'if' must look like Tool or Tool(pattern), found {} — skipped.",
                Value::String(raw)
            ),
            Some("write e.g. \"if\": \"Bash(git commit*)\"".to_owned()),
        );
        return Err(());
    };
    if !event.evaluates_if() {
        ctx.warn(
            &ipath,
            format!("'if' only applies to tool events; on '{event}' a hook with 'if' never runs (as in Claude Code)"),
            Some("remove \"if\", or move the hook to PreToolUse/PostToolUse".to_owned()),
        );
    }
    Ok(Some(cond))
}

/// The rule's failure mode: `on_failure` (hookbox's and the Agent SDK's spelling) or
/// `onFailure` (Claude Code's, ≥ 2.1.295), `"allow"` or `"block"`. Both spellings with
/// different values is an error: which one the author meant cannot be guessed.
fn on_failure(
    ctx: &mut Ctx<'_>,
    obj: &Map<String, Value>,
    path: &JsonPath,
) -> Result<Option<FailMode>, ()> {
    let mut found: Option<(&str, FailMode)> = None;
    for key in ["on_failure", "onFailure"] {
        let mode = match obj.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if s == "allow" => FailMode::Allow,
            Some(Value::String(s)) if s == "block" => FailMode::Block,
            Some(other) => {
                ctx.skip(
                    &path.key(key),
                    format!(
                        "'{key}' must be \"allow\" or \"block\", found {} — skipped.",
                        describe(other)
                    ),
                    None,
                );
                return Err(());
            }
        };
        if let Some((first, earlier)) = found
            && earlier != mode
        {
            ctx.reject(
                &path.key(key),
                format!(
                    "'{first}' and '{key}' disagree (\"{}\" and \"{}\"): they are two spellings of one setting — skipped.",
                    fail_mode_str(earlier),
                    fail_mode_str(mode)
                ),
                Some(format!("keep one of '{first}' and '{key}'")),
            );
            return Err(());
        }
        found = Some((key, mode));
    }
    Ok(found.map(|(_, m)| m))
}

fn fail_mode_str(m: FailMode) -> &'static str {
    match m {
        FailMode::Allow => "allow",
        FailMode::Block => "block",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_conditions() {
        let c = parse_if("Bash(git commit:*)").unwrap();
        assert_eq!(
            (c.tool.as_str(), c.pattern.as_deref()),
            ("Bash", Some("git commit:*"))
        );
        let c = parse_if("Edit").unwrap();
        assert_eq!((c.tool.as_str(), c.pattern), ("Edit", None));
        assert_eq!(parse_if("mcp__gh__x(a)").unwrap().tool, "mcp__gh__x");
        for bad in ["", "Bash(", "(x)", "Ba sh", "Bash(x"] {
            assert!(parse_if(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn allowlist_text() {
        assert_eq!(allowed_list(EventName::Stop), "['command', 'wasm']");
        assert_eq!(
            allowed_list(EventName::UserPromptSubmit),
            "['command', 'prompt', 'wasm']"
        );
    }
}
