//! Compaction audit (recipe 4): on `PreCompact`, logs which session compacts, how and why, and
//! appends the same record as a JSON line to `<dir>/compaction.jsonl` when the rule mounts a
//! writable folder at `dir` (default `/audit`).
//!
//! `PreCompact` is observe-only, so the hook never tries to stop anything: it always answers
//! "no opinion". A mounted audit folder it cannot write is reported as an error, because an
//! audit that silently loses lines is worse than a visible failure.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hookbox_guest::{Event, Hook, Response, host};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// Guest path of the audit folder; the line is written only if it is mounted.
    dir: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            dir: "/audit".to_owned(),
        }
    }
}

#[derive(Default)]
struct CompactionAudit;

impl Hook for CompactionAudit {
    fn on_pre_compact(&self, event: &Event) -> Result<Response, String> {
        let Config { dir } = host::config()?;
        let record = record(event, SystemTime::now());
        host::info(&format!(
            "compaction session={} type={} trigger={}",
            event.session_id, record["compaction_type"], record["trigger"]
        ));
        let dir = Path::new(&dir);
        if dir.is_dir() {
            let path = dir.join("compaction.jsonl");
            // One `write_all` of a whole line in append mode, so concurrent sessions' lines
            // do not interleave.
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| file.write_all(format!("{record}\n").as_bytes()))
                .map_err(|e| format!("cannot append to {}: {e}", path.display()))?;
        }
        Ok(Response::none())
    }
}

/// The audit record: when, which session, which kind of compaction, what triggered it.
fn record(event: &Event, now: SystemTime) -> serde_json::Value {
    let seconds = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    json!({
        "time": utc(seconds),
        "session_id": event.session_id,
        "compaction_type": event.compaction_type().unwrap_or_else(|| "unknown".to_owned()),
        "trigger": event.trigger.as_deref().unwrap_or("unknown"),
    })
}

/// `YYYY-MM-DDTHH:MM:SSZ` from Unix seconds (Howard Hinnant's civil-from-days), to keep a date
/// library out of a 100 KB component.
fn utc(seconds: u64) -> String {
    let days = seconds / 86_400;
    let rem = seconds % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

hookbox_guest::export_hook!(CompactionAudit);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn record_names_session_type_and_trigger() {
        let event = Event {
            name: "PreCompact".into(),
            session_id: "s1".into(),
            trigger: Some("auto".into()),
            payload: r#"{"compaction_type":"microcompact"}"#.into(),
            ..Event::default()
        };
        let now = UNIX_EPOCH + Duration::from_secs(86_400);
        assert_eq!(
            record(&event, now),
            json!({
                "time": "1970-01-02T00:00:00Z",
                "session_id": "s1",
                "compaction_type": "microcompact",
                "trigger": "auto",
            })
        );
    }
}
