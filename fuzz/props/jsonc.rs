//! The properties of `hookbox install`'s edits of an agent's JSON (with comments) configuration,
//! in one place: the `jsonc_install` fuzz target checks them on generated files, and
//! hookbox-agents' `tests/jsonc_install.rs` on hand-made hostile files — each including this file
//! by path. Depends on hookbox-core, hookbox-agents and serde_json.
//!
//! For any text an agent's file could hold, install either refuses it with a message, or:
//! - what it writes parses, as the JSON with comments the agent reads and (comments blanked) as
//!   plain JSON, and holds exactly the wanted entries of hookbox's;
//! - installing again changes nothing;
//! - uninstalling restores the original byte for byte — every byte outside hookbox's own entries
//!   is kept — when the original held no entry of hookbox's (and, for the agents that need it,
//!   its `"version": 1`, which install adds and leaves).

use hookbox_agents::install::jsonc;
use hookbox_agents::install::shape::{self, Entry};
use hookbox_agents::install::{Owned, command::is_ours};
use hookbox_core::agent::Agent;

/// The agents whose configuration is JSON.
pub(crate) const JSON_AGENTS: [Agent; 7] = [
    Agent::Claude,
    Agent::Codex,
    Agent::Gemini,
    Agent::Cursor,
    Agent::Copilot,
    Agent::Windsurf,
    Agent::Qwen,
];

/// The entries of a typical install for `agent`: one or two events.
pub(crate) fn wanted(agent: Agent, two: bool) -> Vec<Entry> {
    let events: &[&'static str] = match agent {
        Agent::Gemini => &["BeforeTool", "AfterAgent"],
        Agent::Cursor | Agent::Copilot => &["preToolUse", "stop"],
        Agent::Windsurf => &["pre_run_command", "post_cascade_response"],
        _ => &["PreToolUse", "Stop"],
    };
    events
        .iter()
        .take(if two { 2 } else { 1 })
        .map(|e| Entry {
            event: e,
            command: format!(
                "/usr/local/bin/hookbox hook --agent {} --event {e} --plugin '/p q'",
                agent.as_str()
            ),
            timeout_secs: 15,
            fail_closed: e.starts_with('p'),
            matcher: None,
        })
        .collect()
}

/// Checks the properties on `text` as `agent`'s file.
pub(crate) fn check(agent: Agent, text: &str, two: bool) {
    let wanted = wanted(agent, two);
    let before_ours = shape::existing(agent, text, "f")
        .map(|c| c.len())
        .unwrap_or(0);
    let Ok(first) = shape::apply(agent, text, &wanted, "f", &Owned::default()) else {
        return;
    };
    let out = &first.text;
    let root = jsonc::parse(out).unwrap_or_else(|e| panic!("install wrote bad JSONC: {e}\n{out}"));
    assert!(root.members().is_some(), "not an object:\n{out}");
    serde_json::from_str::<serde_json::Value>(&jsonc::strip_comments(out))
        .unwrap_or_else(|e| panic!("install wrote what plain JSON readers refuse: {e}\n{out}"));
    let mut got = shape::existing(agent, out, "f").expect("reads back");
    got.sort();
    let mut want: Vec<String> = wanted.iter().map(|e| e.command.clone()).collect();
    want.sort();
    assert_eq!(got, want, "hookbox's entries after install:\n{out}");
    assert!(got.iter().all(|c| is_ours(c)));
    let again = shape::apply(agent, out, &wanted, "f", &first.owned).expect("installs again");
    assert_eq!(&again.text, out, "a second install changed the file");
    let back = shape::apply(agent, out, &[], "f", &first.owned).expect("uninstalls");
    assert!(
        shape::existing(agent, &back.text, "f")
            .expect("reads back")
            .is_empty(),
        "uninstall left an entry:\n{}",
        back.text
    );
    let needs_version = matches!(agent, Agent::Cursor | Agent::Copilot)
        && root.member("version").is_some()
        && jsonc::parse(text)
            .ok()
            .is_some_and(|r| r.member("version").is_none());
    if before_ours == 0 && !needs_version && !text.trim().is_empty() && back.text != text {
        assert_eq!(
            collapse_empty(&back.text),
            collapse_empty(text),
            "uninstall did not restore the file\n--- original\n{text}\n--- installed\n{out}\n--- uninstalled\n{}",
            back.text
        );
    }
}

/// `s` with every `{` or `[` followed by a line break, blanks and its closing bracket made empty
/// (the one layout install cannot tell from `{}`).
fn collapse_empty(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if (c == b'{' || c == b'[') && b.get(i + 1) == Some(&b'\n') {
            let mut j = i + 2;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            let close = if c == b'{' { b'}' } else { b']' };
            if b.get(j) == Some(&close) {
                out.push(c as char);
                i = j;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap_or_default();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}
