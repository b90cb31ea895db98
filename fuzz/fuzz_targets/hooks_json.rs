//! Any bytes as a hook file, in every dialect and under each kind of file name (a hooks file, a
//! Claude Code settings file whose `hooks` object holds the events, a Codex file with its own
//! timeouts): the config parser must return a report (with located diagnostics), never panic,
//! never hang; whatever rules it returns must index into a rule set.
#![no_main]

use std::path::Path;

use hookbox_core::RuleSet;
use hookbox_core::config::parse_hooks_bytes;
use hookbox_core::dialect::Dialect;
use hookbox_core::event::Event;
use hookbox_core::matcher::ToolAliases;
use libfuzzer_sys::fuzz_target;

const FILES: &[&str] = &[
    "hooks.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
];

fuzz_target!(|data: &[u8]| {
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    for file in FILES {
        for dialect in Dialect::ALL {
            let report = parse_hooks_bytes(data, Path::new(file), dialect);
            for d in &report.diagnostics {
                assert!(
                    !d.file.as_os_str().is_empty(),
                    "a diagnostic without its file: {d:?}"
                );
                // A located diagnostic points inside the file.
                if let Some(line) = d.line {
                    assert!(
                        line >= 1 && line as usize <= lines,
                        "line {line} of {lines}: {d:?}"
                    );
                }
                if let Some(column) = d.column {
                    assert!(column >= 1, "{d:?}");
                }
            }
            if report.rules.is_empty() {
                continue;
            }
            for r in &report.rules {
                assert!(r.plugin < report.plugins.len(), "{r:?}");
            }
            let events: Vec<_> = report.rules.iter().map(|r| r.event).collect();
            let set = RuleSet::new(report.plugins, report.rules, ToolAliases::default());
            for name in events {
                let _ = set.matching(&Event::new(name, "s", "/"));
            }
        }
    }
});
