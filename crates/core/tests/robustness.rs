//! Robustness: hostile bytes never panic and never hang. A deterministic mutation fuzzer (no
//! extra crates, same seed every run) turns each real hook file of the corpus into thousands of
//! broken ones — flipped bytes, cuts, splices, deep nesting, huge numbers, invalid UTF-8 — and
//! feeds them to the config parser; hook outputs, payloads and matcher patterns get the same
//! treatment. Each call must return (a report, an error), every diagnostic must name its file,
//! and what is returned must keep the properties each entry point promises (exit 2 blocks,
//! fail-closed exits fail, payloads read back as sent, a match stays within its budget); each
//! test also counts that the mutations reached the branches it checks, so it cannot pass by
//! exercising nothing. `fuzz/` has coverage-guided targets over the same entry points.

use std::path::Path;

use hookbox_core::config::parse_hooks_bytes;
use hookbox_core::dialect::Dialect;
use hookbox_core::event::{Event, EventName, wire};
use hookbox_core::matcher::{
    BACKTRACK_LIMIT, JsRegex, MatchBudget, Matcher, QUICK_BACKTRACK_LIMIT,
};
use hookbox_core::rule::FailMode;

/// The `hook_output` fuzz target's properties (the same file it checks them with).
#[path = "../../../fuzz/props/hook_output.rs"]
mod hook_output_props;

/// xorshift64*: a tiny deterministic generator, so a failure reproduces exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SPLICES: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b":",
    b"null",
    b"true",
    b"1e999",
    b"-0",
    b"\\u0000",
    b"\"hooks\"",
    b"\"matcher\"",
    b"\"type\"",
    b"\"wasm\"",
    b"\"timeout\"",
    b"(a+)+$",
    b"\xff\xfe",
    b"\"${CLAUDE_PLUGIN_ROOT}/../../etc/passwd\"",
    b"\"component\"",
    b"\"mounts\"",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out.truncate(i);
            }
            2 => {
                let s = SPLICES[rng.below(SPLICES.len())];
                let i = rng.below(out.len() + 1);
                out.splice(i..i, s.iter().copied());
            }
            3 if out.len() > 2 => {
                let a = rng.below(out.len());
                let b = (a + rng.below(64)).min(out.len());
                out.drain(a..b);
            }
            4 => {
                let depth = 1 + rng.below(3000);
                let i = rng.below(out.len() + 1);
                let nest: Vec<u8> = std::iter::repeat_n(b'[', depth)
                    .chain(std::iter::repeat_n(b']', depth))
                    .collect();
                out.splice(i..i, nest);
            }
            _ => {
                if !out.is_empty() {
                    let a = rng.below(out.len());
                    let b = rng.below(out.len());
                    out.swap(a, b);
                }
            }
        }
    }
    out
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/hooks-real");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "json").then(|| {
                (
                    p.file_name()
                        .expect("a read_dir entry has a file name")
                        .to_string_lossy()
                        .into_owned(),
                    std::fs::read(&p).expect("corpus file is readable"),
                )
            })
        })
        .collect();
    files.sort();
    assert!(files.len() > 40);
    files
}

#[test]
fn mutated_hook_files_never_panic() {
    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    let mut parsed = 0;
    for (name, bytes) in corpus() {
        for i in 0..150 {
            let input = mutate(&mut rng, &bytes);
            let dialect = Dialect::ALL[i % 4];
            let report = parse_hooks_bytes(&input, Path::new(&name), dialect);
            for d in &report.diagnostics {
                assert!(
                    !d.file.as_os_str().is_empty(),
                    "{name}: a diagnostic without its file: {d:?}"
                );
            }
            parsed += 1;
        }
    }
    assert!(parsed > 6000);
}

#[test]
fn hostile_outputs_never_panic() {
    let mut rng = Rng(0x5eed_cafe_f00d_0002);
    let seeds: &[&[u8]] = &[
        br#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x","updatedInput":{"command":"ls"},"additionalContext":["a","b"]}}"#,
        br#"{"continue":false,"stopReason":"s","decision":"block","reason":"r","blockingError":{"x":1},"preventContinuation":true,"systemMessage":"m","suppressOutput":true}"#,
        b"plain text\nwith lines",
        b"",
    ];
    let events = [
        EventName::PreToolUse,
        EventName::UserPromptSubmit,
        EventName::Stop,
        EventName::PreCompact,
        EventName::PermissionRequest,
        EventName::PostToolUse,
        EventName::ConfigChange,
        EventName::PreModelSwitch,
    ];
    let (mut json_ok, mut json_err, mut closed_failures) = (0, 0, 0);
    for i in 0..4000 {
        let seed = seeds[i % seeds.len()];
        let stdout = String::from_utf8_lossy(&mutate(&mut rng, seed)).into_owned();
        let stderr = String::from_utf8_lossy(&mutate(&mut rng, b"reason on stderr")).into_owned();
        let code = [0, 1, 2, 3, 126, 127, -1][rng.below(7)];
        let name = events[rng.below(events.len())];
        let checked = hook_output_props::check(name, code, FailMode::Block, &stdout, &stderr);
        closed_failures += checked.closed_failures;
        let answer = checked.answer;
        match answer {
            Some(true) => json_ok += 1,
            Some(false) => json_err += 1,
            None => {}
        }
    }
    // The mutations reach every branch: answers that parse, answers of the wrong shape, and
    // fail-closed exits.
    assert!(json_ok > 200, "{json_ok} well-formed answers");
    assert!(json_err > 10, "{json_err} answers of the wrong shape");
    assert!(
        closed_failures > 1000,
        "{closed_failures} fail-closed exits"
    );
}

#[test]
fn hostile_payloads_never_panic() {
    let mut rng = Rng(0x5eed_cafe_f00d_0003);
    let seed = br#"{"hook_event_name":"Stop","session_id":"s","cwd":"/","stop_hook_active":true,"last_assistant_message":"x","turn_end_reason":"max_iterations","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..4000 {
        let bytes = mutate(&mut rng, seed);
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let name = EventName::ALL[rng.below(EventName::ALL.len())];
        match Event::from_payload(Some(name), v.clone(), "d", "/") {
            Ok(ev) => {
                ok += 1;
                assert_eq!(ev.name, name);
                // What hooks are sent reads back as the same event.
                let sent = serde_json::Value::Object(wire::flat(&ev));
                let envelope_like = sent.get("event").is_some() && sent.get("data").is_some();
                if !envelope_like {
                    let back = Event::from_payload(Some(name), sent, "d", "/").unwrap();
                    assert_eq!(back, ev);
                }
            }
            Err(e) => {
                refused += 1;
                assert!(!e.to_string().is_empty());
            }
        }
        if let Ok(ev) = Event::from_payload(None, v, "d", "/") {
            assert!(EventName::ALL.contains(&ev.name));
        }
    }
    assert!(
        ok > 100 && refused > 300,
        "{ok} accepted, {refused} refused"
    );
}

#[test]
fn hostile_matchers_compile_or_fail_and_always_answer() {
    let mut rng = Rng(0x5eed_cafe_f00d_0004);
    let seeds: &[&[u8]] = &[
        b"^(Edit|Write)$",
        b"mcp__.*__(a+)+$",
        b"(?<n>x)\\k<n>(?=y)",
        b"[\\w-]+|Bash",
        b"\\u{1F600}[^]",
    ];
    let subject = "a".repeat(64) + "!";
    let (mut compiled, mut backtracking) = (0, 0);
    for i in 0..4000 {
        let pattern =
            String::from_utf8_lossy(&mutate(&mut rng, seeds[i % seeds.len()])).into_owned();
        let regex = JsRegex::new(&pattern);
        let matcher = Matcher::from_str_for(&pattern, EventName::PreToolUse);
        if let Ok(re) = &regex {
            compiled += 1;
            // One match costs at most one quick and one full attempt, and only if it backtracks.
            let mut budget = MatchBudget::default();
            let _ = re.is_match_within(&subject, &mut budget);
            let most = if re.is_backtracking() {
                backtracking += 1;
                (QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64
            } else {
                0
            };
            assert!(
                budget.spent() <= most,
                "{pattern}: {} steps",
                budget.spent()
            );
            // A pattern the regex engine takes is a matcher too (exact lists need no regex).
            assert!(matcher.is_ok(), "{pattern}: {matcher:?}");
        } else if let Err(e) = &matcher {
            assert!(e.to_string().contains("regex"), "{pattern}: {e}");
        }
    }
    assert!(
        compiled > 1000 && backtracking > 100,
        "{compiled} compiled, {backtracking} backtracking"
    );
}
