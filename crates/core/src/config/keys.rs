//! The keys each object of a hooks file may hold — a matcher group, a `command`, `prompt`,
//! `http` or `wasm` handler — as the parser reads them and as the JSON Schema (`schema`)
//! publishes them. A key hookbox does not know is a typo until shown otherwise: `"timout"` or
//! `"onfailure"` read silently would leave a guard with no timeout, or failing open. So a key
//! within two edits of a key the object reads (a misspelling: "did you mean `timeout`?") is an
//! **error**, and `validate` fails; any other unknown key (`"profile"`, a field no agent reads)
//! is a warning naming the keys the object reads (an error under `hookbox validate --strict`).
//! Either way the rule loads as written, without the key. The `wasm` block is stricter still:
//! an unknown key there is an error that skips the rule (see `wasm`).
//!
//! Two kinds of keys are read past without a word: keys for people (`description`, `id`, …,
//! which real files carry on groups and handlers) and keys other agents define that hookbox
//! does not act on (`commandWindows`, `rewakeMessage`, …), each listed with why.

use serde_json::{Map, Value};

use super::document::Ctx;
use super::span::JsonPath;
use crate::event::HandlerType;
use crate::suggest::closest;

/// Keys of a matcher group (`{"matcher": …, "hooks": […]}`).
pub const GROUP_KEYS: &[&str] = &["matcher", "hooks"];

/// Keys every handler may have, whatever its type. `matcher` is a flat handler's own (the main
/// source's shape); inside a group it is warned about as ignored.
pub const HANDLER_KEYS: &[&str] = &[
    "type",
    "matcher",
    "if",
    "timeout",
    "statusMessage",
    "onFailure",
    "on_failure",
];

/// A `command` handler's own keys.
pub const COMMAND_KEYS: &[&str] = &["command", "args", "async", "asyncRewake", "shell"];

/// A `prompt` handler's own keys.
pub const PROMPT_KEYS: &[&str] = &["prompt"];

/// An `http` handler's own keys.
pub const HTTP_KEYS: &[&str] = &["url", "headers", "allowedEnvVars"];

/// Keys for people, never warned about on a group or a handler.
pub const NOTE_KEYS: &[&str] = &[
    "description",
    "id",
    "name",
    "title",
    "comment",
    "$comment",
    "_comment",
];

/// Keys other agents define on a handler that hookbox reads past, with why it does nothing
/// with them.
pub const OTHER_AGENTS_KEYS: &[(&str, &str)] = &[
    (
        "once",
        "Claude Code honours it only in skill frontmatter; a hooks file's hook runs every time",
    ),
    (
        "commandWindows",
        "Codex's command on Windows; hookbox runs `command`",
    ),
    (
        "rewakeMessage",
        "Claude Code's text for an asyncRewake hook's wake-up; hookbox hands the hook's stderr to wake subscribers",
    ),
    (
        "rewakeSummary",
        "Claude Code's summary for an asyncRewake wake-up",
    ),
    (
        "model",
        "the model of Claude Code's prompt and agent hooks; a hookbox prompt hook calls no model",
    ),
    (
        "continueOnBlock",
        "Claude Code's prompt-hook option; a hookbox prompt hook never blocks",
    ),
];

/// Every key a handler of type `ty` may have (not counting [`NOTE_KEYS`] and
/// [`OTHER_AGENTS_KEYS`]).
pub fn handler_keys(ty: HandlerType) -> Vec<&'static str> {
    let own: &[&str] = match ty {
        HandlerType::Command => COMMAND_KEYS,
        HandlerType::Prompt => PROMPT_KEYS,
        HandlerType::Http => HTTP_KEYS,
        HandlerType::Wasm => super::WASM_KEYS,
    };
    let mut keys: Vec<&'static str> = HANDLER_KEYS.to_vec();
    keys.extend(own.iter().filter(|k| !HANDLER_KEYS.contains(k)));
    keys
}

/// The fix of an unknown key: the closest allowed one, or the list.
pub(crate) fn unknown_key_fix(key: &str, allowed: &[&str]) -> String {
    match closest(key, allowed.iter().copied()) {
        Some(k) => format!("did you mean '{k}'?"),
        None => format!("allowed keys: {}", allowed.join(", ")),
    }
}

/// Whether `key` is read past on purpose (a note, or another agent's key).
fn tolerated(key: &str) -> bool {
    NOTE_KEYS.contains(&key) || OTHER_AGENTS_KEYS.iter().any(|(k, _)| *k == key)
}

/// Reports each key of `obj` that is not in `allowed` and not tolerated, located at the key: an
/// error when it is a misspelling of an allowed key, else a warning. `what` names the object
/// ("a command hook", "a matcher group").
pub(crate) fn report_unknown(
    ctx: &mut Ctx<'_>,
    obj: &Map<String, Value>,
    path: &JsonPath,
    allowed: &[&str],
    what: &str,
) {
    for key in obj.keys() {
        if allowed.contains(&key.as_str()) || tolerated(key) {
            continue;
        }
        let message = format!("unknown key '{key}' in {what} — ignored, so it changes nothing");
        match closest(key, allowed.iter().copied()) {
            // A setting meant and not applied: a guard without its timeout or failing open.
            Some(k) => ctx.error(
                &path.key(key),
                message,
                Some(format!("did you mean '{k}'?")),
            ),
            None => ctx.warn(
                &path.key(key),
                message,
                Some(format!(
                    "{what} reads {}; remove '{key}', or rename it to one of them",
                    allowed.join(", ")
                )),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_keys_get_a_suggestion() {
        let wasm = handler_keys(HandlerType::Wasm);
        assert_eq!(unknown_key_fix("fule", &wasm), "did you mean 'fuel'?");
        assert_eq!(
            unknown_key_fix("memroy_mb", &wasm),
            "did you mean 'memory_mb'?"
        );
        assert!(unknown_key_fix("zzzzzzzz", &wasm).starts_with("allowed keys: type, matcher"));
        let command = handler_keys(HandlerType::Command);
        assert_eq!(
            unknown_key_fix("timout", &command),
            "did you mean 'timeout'?"
        );
        assert_eq!(
            unknown_key_fix("onfailure", &command),
            "did you mean 'onFailure'?"
        );
    }

    #[test]
    fn every_type_has_the_common_keys_once() {
        for ty in [
            HandlerType::Command,
            HandlerType::Prompt,
            HandlerType::Http,
            HandlerType::Wasm,
        ] {
            let keys = handler_keys(ty);
            for k in HANDLER_KEYS {
                assert_eq!(keys.iter().filter(|x| *x == k).count(), 1, "{ty:?} {k}");
            }
        }
    }
}
