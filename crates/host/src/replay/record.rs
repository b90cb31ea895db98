//! The replay record format: one JSON line per dispatch that ran hooks ([`ReplayRecord`], with
//! its hooks redacted and previewed, built on the writer thread from a [`RawRecord`]), the file
//! a session's records go to, and reading a file back (a torn last line is skipped, never
//! fatal).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use hookbox_core::HookFired;
use hookbox_core::event::HandlerType;
use hookbox_core::event::wire::cut_chars;
use hookbox_core::output::FailureClass;
use hookbox_core::report::{AttachmentKinds, HookReport};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::secrets::{redact, redact_json};

/// Characters of hook output kept in a record unless full capture is on (the main source's
/// `PLUGIN_HOOK_OUTPUT_MAX_CHARS`).
pub const OUTPUT_PREVIEW_CHARS: usize = 500;

/// One hook in a replay record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayHook {
    /// Rule position in load order.
    pub rule_index: usize,
    /// Plugin name.
    pub plugin: String,
    /// Command, prompt or component label.
    pub hook_name: String,
    /// `command`, `prompt`, `wasm`.
    pub handler_type: String,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// Exit code, for command-style hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Attachment types it yielded.
    pub attachments: Vec<String>,
    /// Failure class, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Its output: a preview, or whole with full capture; always redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_preview: Option<String>,
    /// True when `output_preview` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_truncated: bool,
    /// Wasm fuel it consumed, when the host meters fuel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_consumed: Option<u64>,
}

/// One dispatch in replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRecord {
    /// Milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The session.
    pub session_id: String,
    /// The event name.
    pub event: String,
    /// `allow`, `block`, `continue`, …
    pub outcome: String,
    /// Rules dispatched.
    pub matched_rule_count: usize,
    /// Wall time of the dispatch in milliseconds.
    pub duration_ms: f64,
    /// Each hook, in rule order.
    pub hooks: Vec<ReplayHook>,
    /// The HookFired record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_fired: Option<Value>,
}

/// What a replay record says about the dispatch as a whole.
#[derive(Debug, Clone, Copy)]
pub struct RecordHead<'a> {
    /// The session.
    pub session_id: &'a str,
    /// The event name (`EventName::as_str`).
    pub event: &'static str,
    /// The outcome (`Outcome::as_str`).
    pub outcome: &'static str,
    /// Rules dispatched.
    pub matched_rule_count: usize,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// The HookFired record.
    pub hook_fired: Option<&'a HookFired>,
}

/// A dispatch's record as the dispatch path hands it to the writer thread: what the record will
/// say, copied but not yet redacted, previewed or serialised. That work — a regex scan of every
/// string, the JSON — is the writer's ([`RawRecord::into_record`]), off the dispatch's path.
#[derive(Debug)]
pub(crate) struct RawRecord {
    ts_ms: u64,
    session_id: String,
    event: &'static str,
    outcome: &'static str,
    matched_rule_count: usize,
    duration_ms: f64,
    hooks: Vec<RawHook>,
    hook_fired: Option<HookFired>,
    full: bool,
}

/// What a record says of one hook, copied from its report: its names and output, and of its
/// answer only the kinds of attachment and the failure class — never the answer's texts, which
/// the record does not write and which a typed hook can make a megabyte long
/// (`response_bytes`) with no output to show for it: held while the record waits in the
/// writer's queue, they escaped the queue's byte bound, which weighs the output.
#[derive(Debug)]
struct RawHook {
    rule_index: usize,
    /// Shared with the rule's reports: no copy per record.
    plugin: Arc<str>,
    hook_name: Arc<str>,
    handler_type: HandlerType,
    duration_ms: f64,
    exit_code: Option<i32>,
    attachments: AttachmentKinds,
    failure: Option<FailureClass>,
    output: Option<String>,
    fuel_consumed: Option<u64>,
}

impl RawHook {
    fn of(r: &HookReport) -> RawHook {
        RawHook {
            rule_index: r.hook.rule_index,
            plugin: r.hook.plugin.clone(),
            hook_name: r.hook.hook_name.clone(),
            handler_type: r.hook.handler_type,
            duration_ms: r.duration_ms,
            exit_code: r.exit_code,
            attachments: AttachmentKinds::of(&r.effect),
            failure: r.effect.failure.as_ref().map(|f| f.class),
            output: r.output.clone(),
            fuel_consumed: r.fuel_consumed,
        }
    }
}

impl RawRecord {
    /// Copies what the record of one dispatch will say of it and of `reports`, timestamped now.
    pub(crate) fn new<'r>(
        head: &RecordHead<'_>,
        reports: impl IntoIterator<Item = &'r HookReport>,
        full: bool,
    ) -> RawRecord {
        RawRecord {
            ts_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            session_id: head.session_id.to_owned(),
            event: head.event,
            outcome: head.outcome,
            matched_rule_count: head.matched_rule_count,
            duration_ms: head.duration_ms,
            hooks: reports.into_iter().map(RawHook::of).collect(),
            hook_fired: head.hook_fired.cloned(),
            full,
        }
    }

    /// The record with `fired` as its HookFired record, whatever its head said.
    pub(crate) fn with_fired(mut self, fired: Option<HookFired>) -> RawRecord {
        self.hook_fired = fired;
        self
    }

    /// The session it belongs to.
    pub(crate) fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Roughly the bytes it holds beyond its fixed size: what the writer's queue bounds (hook
    /// output above all, which can be large). Every text it holds is counted (tested).
    pub(crate) fn weight(&self) -> usize {
        let hooks: usize = self
            .hooks
            .iter()
            .map(|h| {
                h.output.as_ref().map_or(0, String::len) + h.hook_name.len() + h.plugin.len() + 256
            })
            .sum();
        let fired = self.hook_fired.as_ref().map_or(0, |f| {
            // Its texts are previews, but a handful of them: count them rather than guess.
            f.fields
                .iter()
                .map(|(k, v)| k.len() + text_bytes(v))
                .sum::<usize>()
                + 256
        });
        hooks + self.session_id.len() + fired
    }

    /// Each hook of the record, redacted and (unless full capture is on) previewed, borrowing
    /// what needs no redaction: a text is copied only where a secret was replaced or a preview
    /// cut.
    fn line_hooks(&self) -> Vec<LineHook<'_>> {
        self.hooks
            .iter()
            .map(|h| {
                let (output_preview, output_truncated) = preview(h.output.as_deref(), self.full);
                LineHook {
                    rule_index: h.rule_index,
                    plugin: &h.plugin,
                    hook_name: redact(&h.hook_name),
                    handler_type: h.handler_type.as_str(),
                    duration_ms: h.duration_ms,
                    exit_code: h.exit_code,
                    attachments: h.attachments.types().map(|t| t.as_str()).collect(),
                    failure: h.failure.map(FailureClass::as_str),
                    output_preview,
                    output_truncated,
                    fuel_consumed: h.fuel_consumed,
                }
            })
            .collect()
    }

    /// The record, redacted and (unless full capture is on) previewed.
    pub(crate) fn into_record(self) -> ReplayRecord {
        let hooks = self
            .line_hooks()
            .into_iter()
            .map(LineHook::into_owned)
            .collect();
        let mut hook_fired = self
            .hook_fired
            .as_ref()
            .and_then(|f| serde_json::to_value(f).ok());
        if let Some(v) = &mut hook_fired {
            redact_json(v);
        }
        ReplayRecord {
            ts_ms: self.ts_ms,
            session_id: self.session_id,
            event: self.event.to_owned(),
            outcome: self.outcome.to_owned(),
            matched_rule_count: self.matched_rule_count,
            duration_ms: self.duration_ms,
            hooks,
            hook_fired,
        }
    }

    /// The record as the writer thread serialises it, borrowing from this one: what
    /// [`RawRecord::into_record`] makes, with the HookFired record redacted in place instead of
    /// turned into a JSON tree first (that tree, its redaction walk and its serialisation were
    /// a third of the writer's work per record), and no name or text copied that redaction
    /// left as it was. Its line is byte for byte the [`ReplayRecord`]'s (tested).
    pub(crate) fn line_record(&mut self) -> LineRecord<'_> {
        if let Some(f) = &mut self.hook_fired {
            // The event name and outcome are fixed names with no secret in them (tested); the
            // event's own fields are redacted as the tree's would be, keys included.
            let mut fields = Value::Object(std::mem::take(&mut f.fields));
            redact_json(&mut fields);
            if let Value::Object(map) = fields {
                f.fields = map;
            }
        }
        LineRecord {
            ts_ms: self.ts_ms,
            session_id: &self.session_id,
            event: self.event,
            outcome: self.outcome,
            matched_rule_count: self.matched_rule_count,
            duration_ms: self.duration_ms,
            hooks: self.line_hooks(),
            hook_fired: self.hook_fired.as_ref(),
        }
    }
}

/// The bytes of the texts in `v` (strings and keys, at any depth); a number, flag or null
/// counts 8.
fn text_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(text_bytes).sum(),
        Value::Object(m) => m.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}

/// A hook's output as a record keeps it: redacted first (a cut can only shorten a redacted text,
/// never reveal a secret the scanner would have matched whole), then cut to
/// [`OUTPUT_PREVIEW_CHARS`] unless `full`; and whether it was cut.
fn preview(out: Option<&str>, full: bool) -> (Option<Cow<'_, str>>, bool) {
    match out {
        None | Some("") => (None, false),
        Some(out) => {
            let clean = redact(out);
            if full || clean.chars().count() <= OUTPUT_PREVIEW_CHARS {
                (Some(clean), false)
            } else {
                (
                    Some(Cow::Owned(cut_chars(&clean, OUTPUT_PREVIEW_CHARS))),
                    true,
                )
            }
        }
    }
}

/// A [`ReplayRecord`] as the writer serialises it: the same fields in the same order with the
/// same rules, borrowed from the [`RawRecord`] it is made of. Written, never read back (reading
/// gives a [`ReplayRecord`]).
#[derive(Debug, Serialize)]
pub(crate) struct LineRecord<'a> {
    ts_ms: u64,
    session_id: &'a str,
    event: &'static str,
    outcome: &'static str,
    matched_rule_count: usize,
    duration_ms: f64,
    hooks: Vec<LineHook<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hook_fired: Option<&'a HookFired>,
}

/// A [`ReplayHook`] as the writer serialises it: the same fields in the same order with the same
/// rules, borrowing its names and texts where redaction left them as they were.
#[derive(Debug, Serialize)]
struct LineHook<'a> {
    rule_index: usize,
    plugin: &'a str,
    hook_name: Cow<'a, str>,
    handler_type: &'static str,
    duration_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    attachments: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_preview: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    output_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    fuel_consumed: Option<u64>,
}

impl LineHook<'_> {
    fn into_owned(self) -> ReplayHook {
        ReplayHook {
            rule_index: self.rule_index,
            plugin: self.plugin.to_owned(),
            hook_name: self.hook_name.into_owned(),
            handler_type: self.handler_type.to_owned(),
            duration_ms: self.duration_ms,
            exit_code: self.exit_code,
            attachments: self.attachments.into_iter().map(str::to_owned).collect(),
            failure: self.failure.map(str::to_owned),
            output_preview: self.output_preview.map(Cow::into_owned),
            output_truncated: self.output_truncated,
            fuel_consumed: self.fuel_consumed,
        }
    }
}

impl ReplayRecord {
    /// Builds the record of one dispatch, redacted and (unless `full`) previewed.
    pub fn new(head: &RecordHead<'_>, reports: &[HookReport], full: bool) -> ReplayRecord {
        RawRecord::new(head, reports, full).into_record()
    }
}

/// A session id made safe as a file name: `../x` cannot leave the replay folder.
pub fn session_file_name(session: &str) -> String {
    // One allocation, of the right size: this runs for every record the writer writes.
    let mut name = String::with_capacity(session.len().min(128) + ".jsonl".len());
    name.extend(
        session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .take(128),
    );
    if name.is_empty() {
        name.push_str("session");
    }
    name.push_str(".jsonl");
    name
}
/// What reading a replay file found.
#[derive(Debug, Default)]
pub struct ReplayRead {
    /// Every intact record, in order.
    pub records: Vec<ReplayRecord>,
    /// Lines that could not be parsed (a torn last line after a crash), by 1-based number.
    pub skipped_lines: Vec<usize>,
}

/// Reads a replay file, skipping lines that do not parse (a torn write) instead of failing.
pub fn read_replay(path: &Path) -> std::io::Result<ReplayRead> {
    let mut out = ReplayRead::default();
    let reader = BufReader::new(File::open(path)?);
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ReplayRecord>(&line) {
            Ok(r) => out.records.push(r),
            Err(_) => out.skipped_lines.push(i + 1),
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hookbox_core::event::{EventName, HandlerType};
    use hookbox_core::output::Effect;
    use hookbox_core::report::HookRef;

    pub(crate) fn head(session_id: &str) -> RecordHead<'_> {
        RecordHead {
            session_id,
            event: "PostToolUse",
            outcome: "allow",
            matched_rule_count: 1,
            duration_ms: 2.0,
            hook_fired: None,
        }
    }

    pub(crate) fn report(output: &str) -> HookReport {
        HookReport {
            hook: HookRef {
                rule_index: 0,
                plugin: "p".into(),
                hook_name: "echo".into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::PostToolUse,
            },
            effect: Effect::default(),
            duration_ms: 1.5,
            exit_code: Some(0),
            output: Some(output.into()),
            fuel_consumed: None,
        }
    }

    /// The bytes of text a raw record holds on the heap while it waits in the writer's queue.
    fn held_bytes(raw: &RawRecord) -> usize {
        // Every text a raw hook holds (its other fields are numbers, flags and kinds).
        let reports: usize = raw
            .hooks
            .iter()
            .map(|h| h.plugin.len() + h.hook_name.len() + h.output.as_ref().map_or(0, String::len))
            .sum();
        fn texts(v: &Value) -> usize {
            match v {
                Value::String(s) => s.len(),
                Value::Array(a) => a.iter().map(texts).sum(),
                Value::Object(m) => m.iter().map(|(k, v)| k.len() + texts(v)).sum(),
                _ => 0,
            }
        }
        let fired = raw
            .hook_fired
            .as_ref()
            .map_or(0, |f| texts(&Value::Object(f.fields.clone())));
        raw.session_id.len() + reports + fired
    }

    /// The writer's queue is bounded by the weight of what waits in it (`replay_queue_bytes`):
    /// a record must weigh at least what it holds. A typed hook's answer can carry a megabyte of
    /// text (`response_bytes`) that its empty output does not show; the record never writes it,
    /// so it must not hold it either — else a tenant flooding such answers fills the queue's
    /// 4,096 places with a megabyte each, past any byte bound.
    #[test]
    fn a_record_weighs_at_least_the_text_it_holds_and_holds_no_answer_text() {
        let big = "c".repeat(1 << 20);
        let mut r = report("");
        r.output = None;
        r.effect = Effect {
            contexts: vec![big.clone()],
            updated_input: Some(serde_json::json!({"command": big.clone()})),
            system_message: Some(big.clone()),
            warnings: vec![big.clone()],
            block: Some(big.clone()),
            permission_reason: Some(big),
            ..Effect::default()
        };
        // A HookFired record whose previews are as long as they get, in four-byte characters.
        let preview = "𝄞".repeat(hookbox_core::fired::TEXT_PREVIEW_CHARS);
        let fired = HookFired {
            hook_name: EventName::PreToolUse,
            outcome: hookbox_core::aggregate::Outcome::Block,
            matched_rule_count: 2,
            fields: serde_json::Map::from_iter(
                ["blocking_error", "reason", "tool", "stop_reason"]
                    .map(|k| (k.to_owned(), Value::String(preview.clone()))),
            ),
        };
        let head = RecordHead {
            hook_fired: Some(&fired),
            ..head("s")
        };
        let raw = RawRecord::new(&head, [&r, &r], false);
        assert!(
            held_bytes(&raw) <= raw.weight(),
            "holds {} bytes, weighs {}",
            held_bytes(&raw),
            raw.weight()
        );
        assert!(
            held_bytes(&raw) < 16 << 10,
            "holds {} bytes: no answer text",
            held_bytes(&raw)
        );
    }

    #[test]
    fn previews_are_cut_and_redacted_full_capture_only_redacted() {
        let secret = "AKIAIOSFODNN7EXAMPLE";
        let out = format!("{secret} {}", "x".repeat(2000));
        let r = ReplayRecord::new(&head("s"), &[report(&out)], false);
        let p = r.hooks[0].output_preview.as_ref().unwrap();
        assert!(!p.contains(secret) && p.contains("[REDACTED:aws_access_key_id]"));
        assert_eq!(p.chars().count(), OUTPUT_PREVIEW_CHARS);
        assert!(r.hooks[0].output_truncated);
        let r = ReplayRecord::new(&head("s"), &[report(&out)], true);
        let p = r.hooks[0].output_preview.as_ref().unwrap();
        assert!(!p.contains(secret) && p.len() > 2000 && !r.hooks[0].output_truncated);
    }

    /// The writer's line (`line_record`, the HookFired record redacted in place) is the
    /// `ReplayRecord`'s line (`into_record`, the record turned into a JSON tree and redacted
    /// there) byte for byte — in a file and on the stream, with and without a HookFired record,
    /// with secrets in its texts, in a hook's output and name, cut and whole.
    #[test]
    fn the_writers_line_is_the_replay_records_line_byte_for_byte() {
        use hookbox_core::aggregate::Outcome;
        use serde_json::json;

        use crate::replay::sink::ReplayDir;
        use crate::replay::stream::ReplayOutput;

        let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
        let fired = |text: &str| HookFired {
            hook_name: EventName::Stop,
            outcome: Outcome::Block,
            matched_rule_count: 2,
            fields: serde_json::Map::from_iter([
                ("stop_reason".to_owned(), json!(text)),
                ("added_context_count".to_owned(), json!(1)),
                ("at_max_iter".to_owned(), json!(false)),
                ("decision".to_owned(), json!(null)),
            ]),
        };
        let mut named = report(&format!("token {secret} and {}", "y".repeat(900)));
        named.hook.hook_name = format!("echo {secret}").into();
        // Every kind of attachment, a failure class, fuel, no exit code, no output.
        let mut decided = report("");
        decided.effect = Effect {
            contexts: vec![format!("context {secret}"), "second".into()],
            permission: Some(hookbox_core::output::PermissionDecision::Deny),
            stop: Some("halt".into()),
            failure: Some(hookbox_core::output::HookFailure {
                class: hookbox_core::output::FailureClass::Timeout,
                message: "slow".into(),
            }),
            ..Effect::default()
        };
        decided.hook.handler_type = HandlerType::Wasm;
        decided.exit_code = None;
        decided.fuel_consumed = Some(12_345);
        let listed = ReplayRecord::new(&head("s"), std::slice::from_ref(&decided), false);
        assert_eq!(
            listed.hooks[0].attachments,
            [
                "hook_additional_context",
                "hook_additional_context",
                "hook_blocking_error",
                "hook_stopped_continuation"
            ]
        );
        assert_eq!(
            (
                listed.hooks[0].failure.as_deref(),
                listed.hooks[0].handler_type.as_str()
            ),
            (Some("timeout"), "wasm")
        );
        let cases: Vec<(Option<HookFired>, Vec<HookReport>, bool)> = vec![
            (None, vec![report("ok")], false),
            (
                Some(fired("plain reason")),
                vec![report("ok"), report("")],
                false,
            ),
            (
                Some(fired(&format!("leaked {secret} here"))),
                vec![named.clone()],
                false,
            ),
            (Some(fired("ünïcödé \"quoted\"\n")), vec![named], true),
            (None, vec![decided, report("ok")], false),
        ];
        let folder = tempfile::tempdir().unwrap();
        let dirs = [
            ReplayDir::create(&folder.path().join("replay"), ReplayOutput::Files).unwrap(),
            ReplayDir::create(&folder.path().join("tenant/replay"), ReplayOutput::Stdout).unwrap(),
        ];
        for (fired, reports, full) in cases {
            let head = RecordHead {
                hook_fired: fired.as_ref(),
                ..head("sess")
            };
            let raw = || {
                let mut r = RawRecord::new(&head, &reports, full);
                r.ts_ms = 1_700_000_000_123;
                r
            };
            for dir in &dirs {
                let want = dir.line(&raw().into_record()).unwrap();
                let got = dir.line(&raw().line_record()).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                );
                assert!(!String::from_utf8_lossy(&got).contains(secret));
            }
        }
        // The event name and outcome are written unredacted: none holds a secret's trigger.
        for name in EventName::ALL {
            assert!(
                matches!(redact(name.as_str()), std::borrow::Cow::Borrowed(_)),
                "{name:?}"
            );
        }
    }
}
