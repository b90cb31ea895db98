//! Each agent's JSON hook configuration: what hookbox's entry looks like there, how to tell
//! hookbox's entries from the user's, and how to bring a file to the wanted set of entries
//! while leaving every other byte alone.
//!
//! Shapes: Claude Code, Codex and Gemini CLI nest handlers in matcher groups
//! (`hooks.<Event>[{hooks: [{type, command, timeout}]}]`; Gemini's `timeout` in milliseconds, and
//! Codex refuses any root key but `hooks` and `description`, so none is added); Cursor and
//! GitHub Copilot (whose file VS Code reads too) are flat with `"version": 1`
//! (`{command, timeout, failClosed}`, `{type, bash, timeoutSec}`); Windsurf is flat without a
//! timeout.

use hookbox_core::agent::Agent;
use serde_json::{Value, json};

use super::InstallError;
use super::command::is_ours;
use super::jsonc::{self, Node};

/// One wanted entry: the agent's event, the command, its timeout and whether a failure of
/// hookbox itself must block (Cursor's `failClosed`).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The agent's event name.
    pub event: &'static str,
    /// The command line (`command::HookCommand::render`).
    pub command: String,
    /// The timeout, in seconds (converted to the agent's unit where it differs).
    pub timeout_secs: u64,
    /// A failure of hookbox itself must block.
    pub fail_closed: bool,
}

/// A new file's text.
fn template(agent: Agent) -> &'static str {
    match agent {
        Agent::Cursor | Agent::Copilot | Agent::VsCode => "{\n  \"version\": 1\n}\n",
        _ => "{}\n",
    }
}

/// Whether the agent nests handlers in matcher groups.
fn nested(agent: Agent) -> bool {
    matches!(agent, Agent::Claude | Agent::Codex | Agent::Gemini)
}

/// The entry as the agent's file holds it.
pub fn item(agent: Agent, e: &Entry) -> Value {
    match agent {
        Agent::Claude | Agent::Codex => json!({"hooks": [
            {"type": "command", "command": e.command, "timeout": e.timeout_secs}
        ]}),
        // Gemini CLI's timeouts are milliseconds; `name` shows in its /hooks list.
        Agent::Gemini => json!({"hooks": [
            {"type": "command", "name": "hookbox", "command": e.command, "timeout": e.timeout_secs * 1000}
        ]}),
        Agent::Cursor => {
            let mut v = json!({"command": e.command, "timeout": e.timeout_secs});
            if e.fail_closed {
                v["failClosed"] = json!(true);
            }
            v
        }
        Agent::Copilot | Agent::VsCode => {
            json!({"type": "command", "bash": e.command, "timeoutSec": e.timeout_secs})
        }
        // No timeout field in Windsurf: hookbox's own deadline bounds the hook.
        Agent::Windsurf | Agent::Kimi => json!({"command": e.command}),
    }
}

/// The command of `item` when it is one of hookbox's entries.
fn ours(agent: Agent, item: &Value) -> Option<String> {
    let command_of = |h: &Value| {
        h.get("command")
            .or_else(|| h.get("bash"))
            .and_then(Value::as_str)
            .filter(|c| is_ours(c))
            .map(str::to_owned)
    };
    if nested(agent) {
        // A group is ours only when every handler in it is (a user's handler added to it is
        // never removed with it).
        let handlers = item.get("hooks")?.as_array()?;
        let commands: Vec<String> = handlers.iter().filter_map(command_of).collect();
        (!handlers.is_empty() && commands.len() == handlers.len()).then(|| commands[0].clone())
    } else {
        command_of(item)
    }
}

fn shape_error(message: String) -> InstallError {
    InstallError::Shape { message }
}

/// `text` read as the agent's JSON (with comments).
fn parse(text: &str, file: &str) -> Result<Node, InstallError> {
    jsonc::parse(text).map_err(|source| InstallError::Syntax {
        file: file.to_owned(),
        source,
    })
}

/// The file's root and its `hooks` object, checked.
fn root_and_hooks(text: &str, file: &str) -> Result<(Node, Option<Node>), InstallError> {
    let root = parse(text, file)?;
    if root.members().is_none() {
        return Err(shape_error(format!("{file} must hold a JSON object")));
    }
    let hooks = root.member("hooks").map(|m| m.value.clone());
    if let Some(h) = &hooks {
        let Some(members) = h.members() else {
            return Err(shape_error(format!(
                "`hooks` in {file} is not an object; fix the file (hookbox adds its entries there)"
            )));
        };
        for m in members {
            if m.value.items().is_none() {
                return Err(shape_error(format!(
                    "`hooks.{}` in {file} is not a list; fix the file (hookbox adds its entries there)",
                    m.key
                )));
            }
        }
    }
    Ok((root, hooks))
}

/// The commands of hookbox's entries in `text`.
pub fn existing(agent: Agent, text: &str, file: &str) -> Result<Vec<String>, InstallError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let (_, hooks) = root_and_hooks(text, file)?;
    let mut out = Vec::new();
    for m in hooks.as_ref().and_then(Node::members).unwrap_or(&[]) {
        for item in m.value.items().unwrap_or(&[]) {
            out.extend(ours(agent, &jsonc::value_of(text, item)));
        }
    }
    Ok(out)
}

/// The next edit that removes one of hookbox's items no longer wanted: every one of them except
/// the first in the list of an event still wanted. Returns the new text and the event.
fn remove_one(
    agent: Agent,
    text: &str,
    wanted: &[Entry],
    file: &str,
) -> Result<Option<(String, String)>, InstallError> {
    let (_, hooks) = root_and_hooks(text, file)?;
    let Some(hooks) = hooks else { return Ok(None) };
    for m in hooks.members().unwrap_or(&[]) {
        let keep_first = wanted.iter().any(|e| e.event == m.key);
        let mut seen = false;
        for (i, item) in m.value.items().unwrap_or(&[]).iter().enumerate() {
            if ours(agent, &jsonc::value_of(text, item)).is_some() {
                if keep_first && !seen {
                    seen = true;
                    continue;
                }
                return Ok(Some((jsonc::remove_item(text, &m.value, i), m.key.clone())));
            }
        }
    }
    Ok(None)
}

/// `text` (a file of `agent`'s, or empty for a new one) with exactly `wanted` as hookbox's
/// entries. Containers left empty by a removal are removed; the flag says the file holds
/// nothing any more (a file hookbox can delete).
pub fn apply(
    agent: Agent,
    text: &str,
    wanted: &[Entry],
    file: &str,
) -> Result<(String, bool), InstallError> {
    let mut text = if text.trim().is_empty() {
        template(agent).to_owned()
    } else {
        text.to_owned()
    };
    let unit = {
        let root = parse(&text, file)?;
        jsonc::indent_unit(&text, &root)
    };
    let mut emptied: Vec<String> = Vec::new();
    while let Some((next, event)) = remove_one(agent, &text, wanted, file)? {
        text = next;
        emptied.push(event);
    }
    for e in wanted {
        let value = item(agent, e);
        let (root, hooks) = root_and_hooks(&text, file)?;
        let Some(hooks) = hooks else {
            let mut hooks = serde_json::Map::new();
            hooks.insert(e.event.to_owned(), json!([value]));
            text = jsonc::insert_member(&text, &root, "hooks", &Value::Object(hooks), &unit);
            continue;
        };
        let Some(list) = hooks.member(e.event).map(|m| m.value.clone()) else {
            text = jsonc::insert_member(&text, &hooks, e.event, &json!([value]), &unit);
            continue;
        };
        let mine = list
            .items()
            .unwrap_or(&[])
            .iter()
            .find(|n| ours(agent, &jsonc::value_of(&text, n)).is_some())
            .cloned();
        match mine {
            Some(node) if jsonc::value_of(&text, &node) == value => {}
            Some(node) => text = jsonc::replace(&text, &node, &value, &unit),
            None => text = jsonc::append_item(&text, &list, &value, &unit),
        }
    }
    // Cursor and Copilot read a file only with `"version": 1`.
    if matches!(agent, Agent::Cursor | Agent::Copilot | Agent::VsCode) && !wanted.is_empty() {
        let (root, _) = root_and_hooks(&text, file)?;
        if root.member("version").is_none() {
            text = jsonc::insert_member(&text, &root, "version", &json!(1), &unit);
        }
    }
    // Lists hookbox emptied go, then `hooks` if that emptied it.
    for event in emptied {
        let (_, hooks) = root_and_hooks(&text, file)?;
        let Some(hooks) = hooks else { continue };
        let members = hooks.members().unwrap_or(&[]);
        if let Some(i) = members
            .iter()
            .position(|m| m.key == event && m.value.items().is_some_and(<[Node]>::is_empty))
        {
            text = jsonc::remove_member(&text, &hooks, i);
            let (root, hooks) = root_and_hooks(&text, file)?;
            if hooks
                .as_ref()
                .and_then(Node::members)
                .is_some_and(<[jsonc::Member]>::is_empty)
            {
                let at = root
                    .members()
                    .unwrap_or(&[])
                    .iter()
                    .position(|m| m.key == "hooks");
                if let Some(at) = at {
                    text = jsonc::remove_member(&text, &root, at);
                }
            }
        }
    }
    let root = jsonc::parse(&text).map_err(|e| {
        shape_error(format!(
            "{file}: hookbox made invalid JSON (a bug; nothing was written): {e}"
        ))
    })?;
    let value = jsonc::value_of(&text, &root);
    let empty =
        (value == json!({}) || value == json!({"version": 1})) && !jsonc::has_comments(&text);
    Ok((text, empty))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(event: &'static str, plugin: &str) -> Entry {
        Entry {
            event,
            command: format!("/bin/hookbox hook --agent cursor --event {event} --plugin {plugin}"),
            timeout_secs: 15,
            fail_closed: true,
        }
    }

    #[test]
    fn install_is_idempotent_and_uninstall_restores_the_file() {
        let original = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"preToolUse\": [\n      {\"command\": \"./mine.sh\"}\n    ]\n  }\n}\n";
        let wanted = [entry("preToolUse", "/p"), entry("stop", "/p")];
        let (once, _) = apply(Agent::Cursor, original, &wanted, "f").unwrap();
        let (twice, _) = apply(Agent::Cursor, &once, &wanted, "f").unwrap();
        assert_eq!(once, twice);
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["hooks"]["preToolUse"][0]["command"], "./mine.sh");
        assert_eq!(v["hooks"]["preToolUse"][1]["failClosed"], true);
        assert_eq!(v["hooks"]["stop"][0]["timeout"], 15);
        assert_eq!(existing(Agent::Cursor, &once, "f").unwrap().len(), 2);
        let (back, empty) = apply(Agent::Cursor, &once, &[], "f").unwrap();
        assert_eq!(back, original);
        assert!(!empty);
    }

    #[test]
    fn a_new_file_is_created_and_emptied() {
        let (text, _) = apply(Agent::Copilot, "", &[entry("preToolUse", "/p")], "f").unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["hooks"]["preToolUse"][0]["timeoutSec"], 15);
        let (_, empty) = apply(Agent::Copilot, &text, &[], "f").unwrap();
        assert!(empty);
    }

    #[test]
    fn a_changed_plugin_set_replaces_the_entry_in_place() {
        let (one, _) = apply(Agent::Claude, "{}", &[entry("PreToolUse", "/a")], "f").unwrap();
        let (two, _) = apply(Agent::Claude, &one, &[entry("PreToolUse", "/b")], "f").unwrap();
        let v: Value = serde_json::from_str(&two).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .ends_with("/b")
        );
    }

    #[test]
    fn a_users_handler_in_our_group_is_never_removed() {
        let ours = "/bin/hookbox hook --agent claude --event PreToolUse --plugin /p";
        let text = json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": ours},
            {"type": "command", "command": "./mine.sh"}
        ]}]}})
        .to_string();
        let (out, _) = apply(Agent::Claude, &text, &[], "f").unwrap();
        assert!(out.contains("./mine.sh"));
    }

    #[test]
    fn files_of_the_wrong_shape_are_refused_with_their_path() {
        for (text, want) in [
            ("[]", "must hold a JSON object"),
            ("{\"hooks\": []}", "`hooks` in f is not an object"),
            (
                "{\"hooks\": {\"preToolUse\": {}}}",
                "`hooks.preToolUse` in f is not a list",
            ),
        ] {
            let e = apply(Agent::Cursor, text, &[entry("preToolUse", "/p")], "f").unwrap_err();
            assert!(format!("{e:#}").contains(want), "{text}: {e:#}");
        }
    }
}
