//! Trust records and command resolution (`hookbox_trust`): any bytes as a stored approval
//! record (the store is an input too), as a shell command whose scripts are pinned, or as JSON
//! put in canonical form. The properties are in `fuzz/props/trust.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../props/trust.rs"]
mod props;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match selector % 3 {
        0 => props::check_record(text),
        1 => props::check_command(text),
        _ => {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
                props::check_canonical(&v);
            }
        }
    }
});
