//! Replay: an append-only JSONL file per session (`<dir>/<session>.jsonl`), one record per
//! dispatch that ran hooks. Each record is redacted by the secret scanner, hook output is cut to
//! a 500-character preview unless full capture is on, and each record is written with a single
//! `write` of one line on an `O_APPEND` file — so a crash can at worst leave a torn last line,
//! which the reader skips without losing any earlier record.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use hookbox_core::HookFired;
use hookbox_core::event::wire::cut_chars;
use hookbox_core::report::HookReport;
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
    /// The event name.
    pub event: &'a str,
    /// The outcome.
    pub outcome: &'a str,
    /// Rules dispatched.
    pub matched_rule_count: usize,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// The HookFired record.
    pub hook_fired: Option<&'a HookFired>,
}

impl ReplayRecord {
    /// Builds the record of one dispatch, redacted and (unless `full`) previewed.
    pub fn new(head: &RecordHead<'_>, reports: &[HookReport], full: bool) -> ReplayRecord {
        let hooks = reports
            .iter()
            .map(|r| {
                // Redact before cutting: a cut can only shorten a redacted text, never reveal a
                // secret that the scanner would have matched whole.
                let (output_preview, output_truncated) = match r.output.as_deref() {
                    None | Some("") => (None, false),
                    Some(out) => {
                        let clean = redact(out);
                        if full || clean.chars().count() <= OUTPUT_PREVIEW_CHARS {
                            (Some(clean.into_owned()), false)
                        } else {
                            (Some(cut_chars(&clean, OUTPUT_PREVIEW_CHARS)), true)
                        }
                    }
                };
                ReplayHook {
                    rule_index: r.hook.rule_index,
                    plugin: r.hook.plugin.clone(),
                    hook_name: redact(&r.hook.hook_name).into_owned(),
                    handler_type: r.hook.handler_type.as_str().to_owned(),
                    duration_ms: r.duration_ms,
                    exit_code: r.exit_code,
                    attachments: r
                        .attachments()
                        .iter()
                        .map(|a| {
                            serde_json::to_value(a.attachment_type)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default()
                        })
                        .collect(),
                    failure: r
                        .effect
                        .failure
                        .as_ref()
                        .map(|f| f.class.as_str().to_owned()),
                    output_preview,
                    output_truncated,
                }
            })
            .collect();
        let mut hook_fired = head.hook_fired.and_then(|f| serde_json::to_value(f).ok());
        if let Some(v) = &mut hook_fired {
            redact_json(v);
        }
        ReplayRecord {
            ts_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            session_id: head.session_id.to_owned(),
            event: head.event.to_owned(),
            outcome: head.outcome.to_owned(),
            matched_rule_count: head.matched_rule_count,
            duration_ms: head.duration_ms,
            hooks,
            hook_fired,
        }
    }
}

/// Writes replay records; one open file per session.
#[derive(Debug)]
pub struct ReplayWriter {
    dir: PathBuf,
    files: Mutex<HashMap<String, File>>,
}

/// Why a replay record could not be written (the dispatch itself is never failed by this).
#[derive(Debug, thiserror::Error)]
#[error("cannot write replay file {path}: {source}")]
pub struct ReplayError {
    /// The file.
    pub path: String,
    /// The I/O error.
    pub source: std::io::Error,
}

/// A session id made safe as a file name: `../x` cannot leave the replay folder.
pub fn session_file_name(session: &str) -> String {
    let mut name: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if name.is_empty() {
        name.push_str("session");
    }
    format!("{name}.jsonl")
}

impl ReplayWriter {
    /// A writer into `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> ReplayWriter {
        ReplayWriter {
            dir: dir.into(),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `session`.
    pub fn path_for(&self, session: &str) -> PathBuf {
        self.dir.join(session_file_name(session))
    }

    /// Appends one record as one line, in one write.
    pub fn append(&self, record: &ReplayRecord) -> Result<(), ReplayError> {
        let path = self.path_for(&record.session_id);
        let err = |source| ReplayError {
            path: path.display().to_string(),
            source,
        };
        let mut line = serde_json::to_vec(record).map_err(|e| err(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if !files.contains_key(&record.session_id) {
            std::fs::create_dir_all(&self.dir).map_err(err)?;
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(err)?;
            files.insert(record.session_id.clone(), f);
        }
        if let Some(f) = files.get_mut(&record.session_id) {
            f.write_all(&line).map_err(err)?;
        }
        Ok(())
    }
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
mod tests {
    use super::*;
    use hookbox_core::event::{EventName, HandlerType};
    use hookbox_core::output::Effect;
    use hookbox_core::report::HookRef;

    fn head(session_id: &str) -> RecordHead<'_> {
        RecordHead {
            session_id,
            event: "PostToolUse",
            outcome: "allow",
            matched_rule_count: 1,
            duration_ms: 2.0,
            hook_fired: None,
        }
    }

    fn report(output: &str) -> HookReport {
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
        }
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

    #[test]
    fn torn_last_line_is_skipped_and_earlier_records_survive() {
        let dir = tempfile::tempdir().unwrap();
        let w = ReplayWriter::new(dir.path());
        for _ in 0..3 {
            w.append(&ReplayRecord::new(&head("s1"), &[report("ok")], false))
                .unwrap();
        }
        let path = w.path_for("s1");
        // A crash mid-write: half a record, no newline.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"ts_ms":1,"session_id":"s1","ev"#).unwrap();
        let read = read_replay(&path).unwrap();
        assert_eq!(read.records.len(), 3);
        assert_eq!(read.skipped_lines, vec![4]);
    }

    #[test]
    fn session_ids_cannot_escape_the_folder() {
        assert_eq!(
            session_file_name("../../etc/passwd"),
            "______etc_passwd.jsonl"
        );
        assert_eq!(session_file_name(""), "session.jsonl");
    }
}
