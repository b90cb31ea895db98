//! How `hookbox trust` prints a subject: its hook files, then each rule with what it runs
//! (files with sizes and digests), what it runs unpinned, its grants, and where it stands. Also
//! dates for people. Everything a plugin wrote is passed through [`untrusted`] first.

use std::fmt::Write as _;

use hookbox_host::trust::SubjectReport;
use hookbox_trust::{
    ApprovalDiff, Change, FileState, RuleRecord, RuleStatus, RuleTrust, UNPINNABLE_FIX, grants,
};
use owo_colors::OwoColorize;
use serde_json::Value;

// Everything a plugin wrote is shown with its control and format characters (bidi, zero-width)
// escaped, never removed or passed through: a reviewer approves what they read.
use hookbox_trust::escape_shown as untrusted;

/// `2026-12-03 10:22:01 UTC` for seconds since the epoch.
pub(crate) fn date(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Seconds since the epoch, now (approvals are dated in seconds).
pub(crate) fn now() -> u64 {
    hookbox_core::clock::now_ms() / 1000
}

fn file_state(s: &FileState) -> String {
    match s {
        FileState::Pinned { sha256, size } => format!("{size} bytes  sha256 {}", sha256.short()),
        FileState::Unreadable { reason } => {
            format!("{} ({})", "cannot be read".red(), untrusted(reason))
        }
    }
}

/// The matcher as written: `*`, `Bash|Edit`, a pattern, `tool_name=Bash`.
fn matcher(v: &Value) -> String {
    match v["kind"].as_str() {
        Some("names") => v["names"]
            .as_array()
            .map(|n| {
                n.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .unwrap_or_default(),
        Some("regex") => format!("/{}/", v["pattern"].as_str().unwrap_or("")),
        Some("object") => v["fields"]
            .as_object()
            .map(|f| {
                f.iter()
                    .map(|(k, p)| {
                        let pat = p.get("glob").or_else(|| p.get("regex"));
                        format!("{k}={}", pat.and_then(Value::as_str).unwrap_or(""))
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
        _ => "*".into(),
    }
}

/// Characters of a rule's label (its command) on its head line; a longer one follows whole.
const LABEL_HEAD_CHARS: usize = 100;

/// Characters per line of a whole command shown below its rule.
const WRAP_CHARS: usize = 96;

fn cut(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

fn state_label(t: &RuleTrust, unpinnable: Option<&str>) -> String {
    match (t, unpinnable) {
        (RuleTrust::Approved, None) => "approved".green().to_string(),
        (RuleTrust::Approved, Some(_)) => "approved, cannot be pinned".yellow().to_string(),
        (RuleTrust::Unapproved, _) => "not approved".yellow().to_string(),
        (RuleTrust::New, _) => "new since approval".yellow().bold().to_string(),
        (RuleTrust::Changed { .. }, _) => "changed since approval".red().bold().to_string(),
        (RuleTrust::Missing { .. }, _) => "missing since approval".red().bold().to_string(),
    }
}

/// One rule: its head line, then what it runs, unpinned, grants (and, with `changes`, what
/// changed).
pub(crate) fn write_rule(
    s: &mut String,
    index: usize,
    r: &RuleRecord,
    state: Option<String>,
    changes: &[Change],
) {
    let kind = r.content["handler"]["type"].as_str().unwrap_or("?");
    let _ = writeln!(
        s,
        "  [{index}] {} {} · {kind} {}{}",
        r.event().bold(),
        untrusted(&matcher(&r.content["matcher"])),
        untrusted(&cut(&r.label, LABEL_HEAD_CHARS)),
        state.map(|st| format!("  ({st})")).unwrap_or_default()
    );
    // The head line cuts a long command; it is shown whole below, wrapped and escaped, never
    // cut: the tail of a command (`…; curl … | sh`) is what the person approving must see.
    if r.label.chars().count() > LABEL_HEAD_CHARS {
        let full: Vec<char> = untrusted(&r.label).chars().collect();
        for (i, chunk) in full.chunks(WRAP_CHARS).enumerate() {
            let chunk: String = chunk.iter().collect();
            let key = if i == 0 { "full" } else { "    " };
            let _ = writeln!(s, "      {}  {chunk}", key.dimmed());
        }
    }
    let _ = writeln!(
        s,
        "      {}  {}",
        "at".dimmed(),
        untrusted(&r.location.to_string())
    );
    for f in &r.files {
        let _ = writeln!(
            s,
            "      {}  {} {}  {}",
            "runs".cyan(),
            f.role.as_str(),
            untrusted(&f.shown()),
            file_state(&f.state)
        );
    }
    for u in &r.unpinned {
        // A program found on PATH, pinned by its resolved path and digest.
        if let Some(p) = r.programs.iter().find(|p| {
            u.why == hookbox_trust::UnpinnedWhy::OnPath
                && p.name == u.what
                && matches!(p.state, hookbox_trust::FileState::Pinned { .. })
        }) {
            let _ = writeln!(
                s,
                "      {}  program {} → {}  {}  (found on PATH)",
                "runs".cyan(),
                untrusted(&p.name),
                untrusted(p.path.as_deref().unwrap_or("")),
                file_state(&p.state)
            );
            continue;
        }
        if u.unpinnable || u.why.is_unpinnable() {
            // Refused under `trust = require`: named before anyone approves it, with the fix.
            let _ = writeln!(
                s,
                "      {}  {} — {}; refused under trust = require: {}",
                "unpinnable:".red().bold(),
                untrusted(&u.what),
                u.why.describe(),
                UNPINNABLE_FIX
            );
        } else {
            let _ = writeln!(
                s,
                "      {}  {} — {}",
                "unpinned".yellow(),
                untrusted(&u.what),
                u.why.describe()
            );
        }
    }
    let g = grants(&r.content);
    if !g.is_empty() {
        let _ = writeln!(
            s,
            "      {}  {}",
            "grants".cyan(),
            untrusted(&g.join(" · "))
        );
    }
    for c in changes {
        let _ = writeln!(
            s,
            "      {}  {}",
            "changed".red(),
            untrusted(&c.to_string())
        );
    }
}

/// A subject with all its rules and their states.
pub(crate) fn write_subject(s: &mut String, sub: &SubjectReport) {
    let kind = if sub.bare { "file" } else { "plugin" };
    let _ = writeln!(
        s,
        "{} {} — {}",
        kind,
        untrusted(&sub.plugin).bold(),
        untrusted(&sub.subject)
    );
    let approval = match (&sub.approval, &sub.approval_error) {
        (_, Some(e)) => format!("{} {}", "approval unusable:".red(), untrusted(e)),
        (None, None) => "not approved yet".yellow().to_string(),
        (Some(a), None) if sub.is_approved() => {
            format!(
                "{} {}",
                "approved as it is, on".green(),
                date(a.approved_at)
            )
        }
        (Some(a), None) => format!(
            "{} {}, {}",
            "approved on",
            date(a.approved_at),
            "changed since".red().bold()
        ),
    };
    let _ = writeln!(s, "  {approval}");
    for f in &sub.hook_files {
        let _ = writeln!(
            s,
            "  hook file {}  {}",
            untrusted(&f.path),
            file_state(&f.state)
        );
    }
    if sub.rules.is_empty() {
        let _ = writeln!(s, "  (no rules)");
    }
    for r in &sub.rules {
        let changes = match &r.trust {
            RuleTrust::Changed { changes, .. } => changes.as_slice(),
            _ => &[],
        };
        let state = state_label(&r.trust, r.unpinnable.as_deref());
        write_rule(s, r.rule_index, &r.record, Some(state), changes);
        // An unpinnable construct is already on its own `unpinnable:` line; a file that
        // could not be read is said here.
        if let Some(why) = r
            .unpinnable
            .as_ref()
            .filter(|w| !w.starts_with("unpinnable: "))
        {
            let _ = writeln!(s, "      {}  {}", "not pinnable".yellow(), untrusted(why));
        }
    }
}

/// A subject's diff: hook files, then every rule that is not unchanged.
pub(crate) fn write_diff(s: &mut String, sub: &SubjectReport, d: &ApprovalDiff) {
    let approved_at = sub
        .approval
        .as_ref()
        .map(|a| date(a.approved_at))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "{} {} — approved {approved_at}",
        untrusted(&sub.plugin).bold(),
        untrusted(&sub.subject)
    );
    for c in &d.hook_files {
        let _ = writeln!(s, "  {}", untrusted(&c.to_string()));
    }
    let mut quiet = true;
    for r in &d.rules {
        let head = |status: String| {
            format!(
                "  {status} {} {} · {}",
                r.event.bold(),
                untrusted(&r.location.to_string()),
                untrusted(&cut(&r.label, 80))
            )
        };
        match &r.status {
            RuleStatus::Unchanged => continue,
            RuleStatus::Added => {
                let _ = writeln!(s, "{}", head("+ added  ".green().to_string()));
            }
            RuleStatus::Removed => {
                let _ = writeln!(s, "{}", head("- removed".red().to_string()));
            }
            RuleStatus::Changed { changes } => {
                let _ = writeln!(s, "{}", head("~ changed".yellow().to_string()));
                for c in changes {
                    let _ = writeln!(s, "      {}", untrusted(&c.to_string()));
                }
            }
        }
        quiet = false;
    }
    if quiet {
        let _ = writeln!(s, "  every rule is approved as it is");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc() {
        assert_eq!(date(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(date(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(date(951_782_400), "2000-02-29 00:00:00 UTC");
    }
}
