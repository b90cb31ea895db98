//! A hook that misbehaves on purpose, to show what the sandbox does with it: `hookbox demo`'s
//! contained step and `hookbox bench`'s noisy tenant and memory measurement run it. Its
//! behaviour comes from `config.behaviour` (or, when absent, the tool command / the prompt):
//!
//! - `spin` — an endless loop: stopped at the rule's `timeout` (class `timeout`) or fuel;
//! - `alloc:N` — touches N bytes of memory: past `memory_mb` it fails with `memory_limit`;
//! - `sleep:MS` — sleeps MS milliseconds inside the guest (a slow hook, holding its slot);
//! - anything else — answers with no opinion.

use std::hint::black_box;
use std::time::Duration;

use hookbox_guest::{Event, Hook, Response, host};

#[derive(Default)]
struct Runaway;

impl Hook for Runaway {
    fn handle(&self, event: &Event) -> Result<Response, String> {
        let configured = host::config_json()?["behaviour"].as_str().map(str::to_owned);
        let behaviour = configured
            .or_else(|| event.command())
            .or_else(|| event.prompt.clone())
            .unwrap_or_default();
        let (verb, arg) = behaviour.split_once(':').unwrap_or((&behaviour, ""));
        let number = || {
            arg.parse::<usize>()
                .map_err(|e| format!("runaway: `{behaviour}` needs a number: {e}"))
        };
        match verb {
            "spin" => spin(),
            "alloc" => {
                // A non-zero fill writes every byte, so the pages are really used.
                let block = black_box(vec![0xA5_u8; number()?]);
                Ok(Response::context(format!("allocated {}", block.len())))
            }
            "sleep" => {
                std::thread::sleep(Duration::from_millis(number()? as u64));
                Ok(Response::default())
            }
            _ => Ok(Response::default()),
        }
    }
}

fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

hookbox_guest::export_hook!(Runaway);
