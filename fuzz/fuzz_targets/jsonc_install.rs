//! Any text as an agent's JSON (with comments) hook configuration, edited as `hookbox install`
//! edits it: the selector byte picks the agent and one or two entries; the properties (what
//! install writes parses and holds exactly its entries, a second install changes nothing,
//! uninstall restores every byte outside hookbox's entries) are in `props/jsonc.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../props/jsonc.rs"]
mod jsonc_props;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let agents = jsonc_props::JSON_AGENTS;
    let agent = agents[usize::from(selector) % agents.len()];
    jsonc_props::check(agent, text, selector & 0x80 != 0);
});
