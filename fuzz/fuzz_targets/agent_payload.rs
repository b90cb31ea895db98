//! Any bytes as a coding agent's hook payload (`hookbox hook`'s and `hookbox exec`'s stdin): the
//! selector byte picks the agent (modulo the number of agents) and an event name for the command
//! line (the quotient: 0 none, else one of the agent's own names); the properties are in
//! `props/agent.rs`.
#![no_main]

use hookbox_core::agent::Agent;
use hookbox_core::event::EventName;
use libfuzzer_sys::fuzz_target;

#[path = "../props/agent.rs"]
mod agent_props;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let agent = Agent::ALL[usize::from(selector) % Agent::ALL.len()];
    let pick = usize::from(selector) / Agent::ALL.len();
    let names: Vec<&str> = match agent.events() {
        [] => EventName::ALL.iter().map(|e| e.as_str()).collect(),
        events => events.iter().map(|(n, _)| *n).collect(),
    };
    let event = pick.checked_sub(1).map(|i| names[i % names.len()]);
    agent_props::check(agent, event, bytes);
});
