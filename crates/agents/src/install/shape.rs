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
//!
//! hookbox's entries are found handler by handler: in a nested file, a group whose handlers are
//! all hookbox's is hookbox's; a hookbox handler in a group a user added their own handler to
//! is edited or removed alone, and the group stays. Lists and the `hooks` object are removed only
//! when hookbox created them ([`Owned`]), and the file only when hookbox created it too.

use hookbox_core::agent::Agent;
use serde_json::{Value, json};

use super::command::is_ours;
use super::jsonc::{self, Node};
use super::{InstallError, Owned};

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
    /// The matcher of the entry's group (nested files only): the tools the plugins' rules can
    /// match, or none (every occurrence of the event).
    pub matcher: Option<String>,
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
    matches!(
        agent,
        Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Qwen
    )
}

/// The handler of a nested entry (inside its group's `hooks`).
fn handler(agent: Agent, e: &Entry) -> Value {
    match agent {
        // Gemini CLI's timeouts are milliseconds; `name` shows in its /hooks list.
        Agent::Gemini => {
            json!({"type": "command", "name": "hookbox", "command": e.command, "timeout": e.timeout_secs * 1000})
        }
        // Qwen Code reads Claude Code's shape; its timeouts are seconds (values of 1000 and more
        // are read as milliseconds, which hookbox's at most 600 never are).
        _ => json!({"type": "command", "command": e.command, "timeout": e.timeout_secs}),
    }
}

/// The entry as the agent's file holds it.
pub fn item(agent: Agent, e: &Entry) -> Value {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen | Agent::Gemini => {
            let mut group = serde_json::Map::new();
            if let Some(m) = &e.matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert("hooks".into(), json!([handler(agent, e)]));
            Value::Object(group)
        }
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

/// A group's matcher as an entry's: absent, `""` and `"*"` all mean every occurrence.
fn group_matcher(group: &Value) -> Option<String> {
    group
        .get("matcher")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty() && *m != "*")
        .map(str::to_owned)
}

/// The command of a handler (or flat item) when it is one of hookbox's.
fn command_of(h: &Value) -> Option<String> {
    h.get("command")
        .or_else(|| h.get("bash"))
        .and_then(Value::as_str)
        .filter(|c| is_ours(c))
        .map(str::to_owned)
}

/// One of hookbox's handlers in an event's list: the item, and in a nested file the handler
/// within the item's group (`None`: the item itself is the entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spot {
    item: usize,
    handler: Option<usize>,
}

/// hookbox's handlers in `list` (an event's array), in order, with whether each one's group
/// holds only hookbox's handlers.
fn spots(agent: Agent, text: &str, list: &Node) -> Vec<(Spot, bool)> {
    let mut out = Vec::new();
    for (i, node) in list.items().unwrap_or(&[]).iter().enumerate() {
        if !nested(agent) {
            if command_of(&jsonc::value_of(text, node)).is_some() {
                out.push((
                    Spot {
                        item: i,
                        handler: None,
                    },
                    true,
                ));
            }
            continue;
        }
        let Some(handlers) = node
            .member("hooks")
            .and_then(|m| m.value.items())
            .map(<[Node]>::to_vec)
        else {
            continue;
        };
        let mine: Vec<usize> = handlers
            .iter()
            .enumerate()
            .filter(|(_, h)| command_of(&jsonc::value_of(text, h)).is_some())
            .map(|(j, _)| j)
            .collect();
        let alone = mine.len() == handlers.len();
        for j in mine {
            out.push((
                Spot {
                    item: i,
                    handler: Some(j),
                },
                alone,
            ));
        }
    }
    out
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

/// The events whose lists the agent reads: a key written twice is read once, as its last.
fn lists(hooks: &Node) -> Vec<(String, Node)> {
    let mut out: Vec<(String, Node)> = Vec::new();
    for m in hooks.members().unwrap_or(&[]) {
        if out.iter().any(|(k, _)| *k == m.key) {
            continue;
        }
        if let Some(last) = hooks.member(&m.key) {
            out.push((m.key.clone(), last.value.clone()));
        }
    }
    out
}

/// The commands of hookbox's entries in `text`.
pub fn existing(agent: Agent, text: &str, file: &str) -> Result<Vec<String>, InstallError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let (_, hooks) = root_and_hooks(text, file)?;
    let mut out = Vec::new();
    for (_, list) in hooks.as_ref().map(lists).unwrap_or_default() {
        for (spot, _) in spots(agent, text, &list) {
            let node = &list.items().unwrap_or(&[])[spot.item];
            let v = jsonc::value_of(text, node);
            let h = match spot.handler {
                Some(j) => v["hooks"][j].clone(),
                None => v,
            };
            out.extend(command_of(&h));
        }
    }
    Ok(out)
}

/// `text` without hookbox's handler at `spot` of `list`: the whole item when its group holds
/// only hookbox's handlers (`alone`), else the handler alone.
fn remove_spot(text: &str, list: &Node, spot: Spot, alone: bool) -> String {
    let node = &list.items().unwrap_or(&[])[spot.item];
    match (spot.handler, alone) {
        (Some(j), false) => match node.member("hooks") {
            Some(h) => jsonc::remove_item(text, &h.value, j),
            None => text.to_owned(),
        },
        _ => jsonc::remove_item(text, list, spot.item),
    }
}

/// The next edit that removes one of hookbox's handlers no longer wanted: every one of them
/// except the first in the list of an event still wanted. Returns the new text and the event.
fn remove_one(
    agent: Agent,
    text: &str,
    wanted: &[Entry],
    file: &str,
) -> Result<Option<(String, String)>, InstallError> {
    let (_, hooks) = root_and_hooks(text, file)?;
    let Some(hooks) = hooks else { return Ok(None) };
    for (event, list) in lists(&hooks) {
        let keep_first = wanted.iter().any(|e| e.event == event);
        let found = spots(agent, text, &list);
        let skip = usize::from(keep_first);
        if let Some((spot, alone)) = found.get(skip) {
            return Ok(Some((remove_spot(text, &list, *spot, *alone), event)));
        }
    }
    Ok(None)
}

/// What [`apply`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The file's new text.
    pub text: String,
    /// Nothing is left in a file hookbox created: it can be deleted.
    pub empty: bool,
    /// What hookbox has now created in the file (to remember for the next uninstall).
    pub owned: Owned,
}

/// `text` (a file of `agent`'s, or empty for a new one) with exactly `wanted` as hookbox's
/// entries. Lists and the `hooks` object hookbox created and emptied are removed; what the user
/// had stays (`owned` says which is which).
pub fn apply(
    agent: Agent,
    text: &str,
    wanted: &[Entry],
    file: &str,
    owned: &Owned,
) -> Result<Applied, InstallError> {
    let mut owned = owned.clone();
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
            owned.hooks = true;
            owned.lists.push(e.event.to_owned());
            continue;
        };
        let Some(list) = hooks.member(e.event).map(|m| m.value.clone()) else {
            text = jsonc::insert_member(&text, &hooks, e.event, &json!([value]), &unit);
            if !owned.lists.iter().any(|l| l == e.event) {
                owned.lists.push(e.event.to_owned());
            }
            continue;
        };
        let Some((spot, alone)) = spots(agent, &text, &list).first().copied() else {
            text = jsonc::append_item(&text, &list, &value, &unit);
            continue;
        };
        let node = list.items().unwrap_or(&[])[spot.item].clone();
        match (spot.handler, alone) {
            (Some(_), false) if group_matcher(&jsonc::value_of(&text, &node)) != e.matcher => {
                // A user's handler shares a group whose matcher is not the entry's: the group's
                // matcher is the user's, and hookbox's handler must start for its own tools, so
                // it moves to a group of its own.
                text = remove_spot(&text, &list, spot, false);
                let (_, hooks) = root_and_hooks(&text, file)?;
                if let Some(list) = hooks.and_then(|h| h.member(e.event).map(|m| m.value.clone())) {
                    text = jsonc::append_item(&text, &list, &value, &unit);
                }
            }
            (Some(j), false) => {
                // A user's handler shares the group: only hookbox's handler is changed.
                let wanted_handler = handler(agent, e);
                if let Some(h) = node
                    .member("hooks")
                    .and_then(|m| m.value.items())
                    .and_then(|hs| hs.get(j))
                    .cloned()
                    && jsonc::value_of(&text, &h) != wanted_handler
                {
                    text = jsonc::replace(&text, &h, &wanted_handler, &unit);
                }
            }
            _ => {
                if jsonc::value_of(&text, &node) != value {
                    text = jsonc::replace(&text, &node, &value, &unit);
                }
            }
        }
    }
    // Cursor and Copilot read a file only with `"version": 1`.
    if matches!(agent, Agent::Cursor | Agent::Copilot | Agent::VsCode) && !wanted.is_empty() {
        let (root, _) = root_and_hooks(&text, file)?;
        if root.member("version").is_none() {
            text = jsonc::insert_member(&text, &root, "version", &json!(1), &unit);
        }
    }
    // Lists hookbox created and emptied go, then `hooks` if hookbox created it and emptied it.
    for event in emptied {
        if !owned.lists.contains(&event) {
            continue;
        }
        let (_, hooks) = root_and_hooks(&text, file)?;
        let Some(hooks) = hooks else { continue };
        let members = hooks.members().unwrap_or(&[]);
        let Some(i) = members
            .iter()
            .position(|m| m.key == event && m.value.items().is_some_and(<[Node]>::is_empty))
        else {
            continue;
        };
        text = jsonc::remove_member(&text, &hooks, i);
        owned.lists.retain(|l| *l != event);
        let (root, hooks) = root_and_hooks(&text, file)?;
        if owned.hooks
            && hooks
                .as_ref()
                .and_then(Node::members)
                .is_some_and(<[jsonc::Member]>::is_empty)
        {
            let at = root
                .members()
                .unwrap_or(&[])
                .iter()
                .rposition(|m| m.key == "hooks");
            if let Some(at) = at {
                text = jsonc::remove_member(&text, &root, at);
                owned.hooks = false;
            }
        }
    }
    let root = jsonc::parse(&text).map_err(|e| {
        shape_error(format!(
            "{file}: hookbox made invalid JSON (a bug; nothing was written): {e}"
        ))
    })?;
    let value = jsonc::value_of(&text, &root);
    let empty = owned.file
        && (value == json!({}) || value == json!({"version": 1}))
        && !jsonc::has_comments(&text);
    Ok(Applied { text, empty, owned })
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
            matcher: None,
        }
    }

    /// Install `wanted` into `text` (a file that existed, or none), then uninstall, as the
    /// binary does: the record of what install created carried between the two.
    fn round_trip(agent: Agent, text: &str, wanted: &[Entry]) -> (String, Applied) {
        let first = apply(agent, text, wanted, "f", &Owned::default()).unwrap();
        let back = apply(agent, &first.text, &[], "f", &first.owned).unwrap();
        (first.text, back)
    }

    #[test]
    fn install_is_idempotent_and_uninstall_restores_the_file() {
        let original = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"preToolUse\": [\n      {\"command\": \"./mine.sh\"}\n    ]\n  }\n}\n";
        let wanted = [entry("preToolUse", "/p"), entry("stop", "/p")];
        let once = apply(Agent::Cursor, original, &wanted, "f", &Owned::default()).unwrap();
        let twice = apply(Agent::Cursor, &once.text, &wanted, "f", &once.owned).unwrap();
        assert_eq!(once.text, twice.text);
        assert_eq!(once.owned, twice.owned);
        assert_eq!(once.owned.lists, vec!["stop".to_owned()]);
        let v: Value = serde_json::from_str(&once.text).unwrap();
        assert_eq!(v["hooks"]["preToolUse"][0]["command"], "./mine.sh");
        assert_eq!(v["hooks"]["preToolUse"][1]["failClosed"], true);
        assert_eq!(v["hooks"]["stop"][0]["timeout"], 15);
        assert_eq!(existing(Agent::Cursor, &once.text, "f").unwrap().len(), 2);
        let (_, back) = round_trip(Agent::Cursor, original, &wanted);
        assert_eq!(back.text, original);
        assert!(!back.empty);
        assert_eq!(back.owned, Owned::default());
    }

    #[test]
    fn a_new_file_is_created_and_emptied() {
        // The binary says the file was not there before.
        let new = Owned {
            file: true,
            ..Owned::default()
        };
        let a = apply(Agent::Copilot, "", &[entry("preToolUse", "/p")], "f", &new).unwrap();
        let v: Value = serde_json::from_str(&a.text).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["hooks"]["preToolUse"][0]["timeoutSec"], 15);
        assert!(a.owned.file && a.owned.hooks);
        let back = apply(Agent::Copilot, &a.text, &[], "f", &a.owned).unwrap();
        assert!(back.empty);
    }

    /// A file the user had, `{}`, is left as it was, not deleted.
    #[test]
    fn a_file_the_user_had_is_never_deleted() {
        let (_, back) = round_trip(Agent::Claude, "{}\n", &[entry("PreToolUse", "/p")]);
        assert!(!back.empty, "the user's file stays");
        assert_eq!(back.text, "{}\n");
    }

    /// Gemini's settings are JSON with comments: a user's `"hooks": {}` and the comment before it
    /// survive install and uninstall byte for byte.
    #[test]
    fn a_users_empty_hooks_object_and_its_comment_stay() {
        let original = "{\n  \"theme\": \"dark\",\n  // my hooks go here\n  \"hooks\": {}\n}\n";
        let (installed, back) = round_trip(Agent::Gemini, original, &[entry("BeforeTool", "/p")]);
        assert!(installed.contains("// my hooks go here"));
        assert_eq!(back.text, original);
    }

    /// Agents keep the last of two `"hooks"` keys: hookbox writes there.
    #[test]
    fn the_last_of_two_hooks_keys_is_the_one_written() {
        let text = "{\"hooks\": {\"PreToolUse\": []}, \"hooks\": {\"Stop\": []}}";
        let a = apply(
            Agent::Claude,
            text,
            &[entry("PreToolUse", "/p")],
            "f",
            &Owned::default(),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&a.text).unwrap();
        // serde_json keeps the last key, as the agents do.
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 15,
            "{}",
            a.text
        );
        assert_eq!(existing(Agent::Claude, &a.text, "f").unwrap().len(), 1);
    }

    #[test]
    fn a_changed_plugin_set_replaces_the_entry_in_place() {
        let one = apply(
            Agent::Claude,
            "{}",
            &[entry("PreToolUse", "/a")],
            "f",
            &Owned::default(),
        )
        .unwrap();
        let two = apply(
            Agent::Claude,
            &one.text,
            &[entry("PreToolUse", "/b")],
            "f",
            &one.owned,
        )
        .unwrap();
        let v: Value = serde_json::from_str(&two.text).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .ends_with("/b")
        );
    }

    /// A user who added their own handler to hookbox's group: install changes only hookbox's
    /// handler (no second group), uninstall removes only it, and the user's stays.
    #[test]
    fn a_users_handler_in_our_group_is_kept_and_ours_is_found() {
        let ours = "/bin/hookbox hook --agent claude --event PreToolUse --plugin /p";
        let text = json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": ours, "timeout": 15},
            {"type": "command", "command": "./mine.sh"}
        ]}]}})
        .to_string();
        assert_eq!(existing(Agent::Claude, &text, "f").unwrap(), vec![ours]);
        let again = apply(
            Agent::Claude,
            &text,
            &[entry("PreToolUse", "/q")],
            "f",
            &Owned::default(),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&again.text).unwrap();
        let groups = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "no second group: {}", again.text);
        assert!(
            groups[0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .ends_with("/q")
        );
        assert_eq!(groups[0]["hooks"][1]["command"], "./mine.sh");
        let out = apply(Agent::Claude, &text, &[], "f", &Owned::default()).unwrap();
        let v: Value = serde_json::from_str(&out.text).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"],
            json!([{"hooks": [{"type": "command", "command": "./mine.sh"}]}])
        );
    }

    /// hookbox's handler in a user's group whose matcher is not the entry's moves to a group of
    /// its own: the user's matcher must not decide which calls reach hookbox's guard, and the
    /// user's handler keeps its group and matcher.
    #[test]
    fn our_handler_leaves_a_users_group_whose_matcher_is_not_the_entrys() {
        let ours = "/bin/hookbox hook --agent claude --event PreToolUse --plugin /p";
        let text = json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
            {"type": "command", "command": ours, "timeout": 15},
            {"type": "command", "command": "./mine.sh"}
        ]}]}})
        .to_string();
        let mut e = entry("PreToolUse", "/p");
        e.matcher = Some("Bash|run_shell_command".into());
        let again = apply(Agent::Claude, &text, &[e.clone()], "f", &Owned::default()).unwrap();
        let v: Value = serde_json::from_str(&again.text).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"],
            json!([
                {"matcher": "Read", "hooks": [{"type": "command", "command": "./mine.sh"}]},
                {"matcher": "Bash|run_shell_command", "hooks": [
                    {"type": "command", "command": e.command, "timeout": 15}
                ]}
            ])
        );
        // Installing the same again changes nothing.
        let third = apply(Agent::Claude, &again.text, &[e], "f", &Owned::default()).unwrap();
        assert_eq!(third.text, again.text);
    }

    /// Another tool's entry whose second word is `hook` is not hookbox's.
    #[test]
    fn another_tools_entries_are_never_removed() {
        let text = json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "othertool hook --agent claude --plugin x"}
        ]}]}})
        .to_string();
        assert!(existing(Agent::Claude, &text, "f").unwrap().is_empty());
        let out = apply(Agent::Claude, &text, &[], "f", &Owned::default()).unwrap();
        assert_eq!(out.text, text);
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
            let e = apply(
                Agent::Cursor,
                text,
                &[entry("preToolUse", "/p")],
                "f",
                &Owned::default(),
            )
            .unwrap_err();
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }
}
