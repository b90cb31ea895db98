//! Trust said where the agent's user sees it: under `warn`, a matched rule that is not approved
//! as it is (never approved, or changed since) ran; under `require`, a rule changed since
//! approval ran as approved from its snapshot (the edit has no effect until it is approved) —
//! either way the person whose agent ran it should know. `hookbox hook`'s stderr is shown by no agent on success, so the warning goes into the
//! answer's `systemMessage` (shown by the agents that display one; a note elsewhere) — once per
//! agent session and set of findings, not on every event: a marker file per (agent, session,
//! findings) in `<state>/trust-notices/`, bounded and swept like the Stop loop's records.

use std::path::Path;

use super::stop_store::{MAX_AGE, MAX_RECORDS, private_dir, record_name, sweep};
use hookbox_core::aggregate::Verdict;
use hookbox_host::TrustFinding;

/// The most findings named in one message; the rest are counted.
const MAX_NAMED: usize = 3;

/// The warning for the findings of rules that ran under `warn`, or ran their approved snapshot
/// under `require`, if any.
pub(super) fn message(findings: &[TrustFinding]) -> Option<String> {
    let ran: Vec<&TrustFinding> = findings
        .iter()
        .filter(|f| f.ran || f.snapshot_ran)
        .collect();
    let first = ran.first()?;
    let mut text = String::from("hookbox: trust: ");
    let named: Vec<String> = ran.iter().take(MAX_NAMED).map(|f| f.to_string()).collect();
    text.push_str(&named.join("; "));
    if ran.len() > MAX_NAMED {
        text.push_str(&format!("; and {} more", ran.len() - MAX_NAMED));
    }
    text.push_str(&format!(
        ". Review with `hookbox trust diff {0}`, approve with `hookbox trust add {0}` (said once per session)",
        first.subject
    ));
    Some(text)
}

/// Whether `message` is new in `agent`'s session `session`: records it and says `true` the first
/// time. A marker that cannot be written says `true` (the warning is repeated rather than lost).
pub(super) fn first_time(root: &Path, agent: &str, session: &str, message: &str) -> bool {
    let dir = root.join("trust-notices");
    if private_dir(&dir).is_err() {
        return true;
    }
    let fresh = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(record_name([agent, session, message])))
    {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::AlreadyExists,
    };
    if fresh {
        sweep(&dir, MAX_RECORDS, MAX_AGE);
    }
    fresh
}

/// Adds `message` to the verdict's system messages (the agent's `systemMessage`).
pub(super) fn add_to(verdict: &mut Verdict, message: String) {
    match verdict {
        Verdict::UserPromptSubmit(r) => r.system_messages.push(message),
        Verdict::PreToolUse(r) => r.system_messages.push(message),
        Verdict::PreCompact(r) => r.system_messages.push(message),
        Verdict::Event(r) => r.system_messages.push(message),
        Verdict::Stop(r) => {
            r.system_message = Some(match r.system_message.take() {
                Some(m) => format!("{m}\n{message}"),
                None => message,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_trust::{RuleLocation, RuleTrust};

    fn finding(ran: bool, snapshot_ran: bool) -> TrustFinding {
        TrustFinding {
            rule_index: 0,
            plugin: "guard".into(),
            subject: "/p/guard".into(),
            location: RuleLocation {
                file: "hooks/hooks.json".into(),
                json_path: "hooks.PreToolUse[0].hooks[0]".into(),
            },
            label: "guard.sh".into(),
            trust: RuleTrust::Changed {
                changes: Vec::new(),
                approved_on_failure: None,
            },
            unpinnable: None,
            approval_error: None,
            missing: false,
            ran,
            snapshot_ran,
        }
    }

    #[test]
    fn the_user_hears_of_a_change_that_ran_or_ran_its_approved_snapshot_but_not_of_a_refusal() {
        let warn = message(&[finding(true, false)]).unwrap();
        assert!(warn.contains("it ran anyway (trust = warn)"), "{warn}");
        let snapshot = message(&[finding(false, true)]).unwrap();
        assert!(
            snapshot.contains("the approved rule ran from its snapshot instead")
                && snapshot.contains("hookbox trust diff /p/guard"),
            "{snapshot}"
        );
        // A refusal answers in the verdict itself (the failure's reason).
        assert_eq!(message(&[finding(false, false)]), None);
    }

    #[test]
    fn a_notice_is_new_once_per_session() {
        let dir = tempfile::tempdir().unwrap();
        assert!(first_time(dir.path(), "claude", "s1", "m"));
        assert!(!first_time(dir.path(), "claude", "s1", "m"));
        assert!(first_time(dir.path(), "claude", "s2", "m"));
        assert!(first_time(dir.path(), "claude", "s1", "another finding"));
    }
}
