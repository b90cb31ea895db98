//! Cases from real runs: today's answer as an expectation, to be edited into the one you mean.
//!
//! - `hookbox dispatch --save-case FILE`: the event and its answer as a new case;
//! - `hookbox test --record`: each case's `expect` rewritten with today's answer (its `agents`
//!   and `max_ms` kept: they are intentions, not answers);
//! - `hookbox test --from-replay FILE`: each dispatch of a replay file as a case — replay keeps
//!   the event's name, tool and answer but not the payload, so those cases say what to fill in.
//!
//! Everything written is redacted first (provider keys, tokens: `hookbox_host::secrets`), as
//! replay is: a case is a file people commit. Files are created beneath the plugin's `tests/`
//! without following a link; `--save-case` and `--from-replay` never replace an existing file.

use std::os::fd::OwnedFd;
use std::path::Path;

use anyhow::{Context, bail};
use hookbox_core::Outcome;
use hookbox_core::output::PermissionDecision;
use hookbox_host::Dispatch;
use hookbox_host::replay::read_replay;
use hookbox_host::secrets::redact_json;
use rustix::fs::{Mode, OFlags};
use serde_json::{Map, Value};

use super::case::{Case, CaseFile, Decision, Expect, MAX_CASES};
use super::expect::Observed;

/// The expectation today's answer meets, keeping `agents` and `max_ms` from `keep`.
pub(crate) fn expect_from(o: &Observed, keep: &Expect, takes_decision: bool) -> Expect {
    Expect {
        outcome: o.outcome,
        decision: takes_decision.then_some(match o.decision {
            None => Decision::None,
            Some(PermissionDecision::Allow) => Decision::Allow,
            Some(PermissionDecision::Ask) => Decision::Ask,
            Some(PermissionDecision::Defer) => Decision::Defer,
            Some(PermissionDecision::Deny) => Decision::Deny,
        }),
        reason: o.reasons.first().cloned(),
        context: o.contexts.first().cloned(),
        system_message: o.system_messages.first().cloned(),
        updated_input: o.updated_input.clone(),
        failure: Some(
            o.failures
                .first()
                .map_or("none", |f| f.1.as_str())
                .to_owned(),
        ),
        max_ms: keep.max_ms,
        agents: keep.agents.clone(),
    }
}

/// `case` as pretty JSON, redacted.
fn case_text(case: &CaseFile) -> anyhow::Result<String> {
    let mut v = serde_json::to_value(case).context("cannot encode the case")?;
    redact_json(&mut v);
    let mut s = serde_json::to_string_pretty(&v).context("cannot encode the case")?;
    s.push('\n');
    Ok(s)
}

/// `hookbox dispatch --save-case FILE`: `payload` (as given, before defaults) and the dispatch's
/// answer as a new case at `file`.
pub(crate) fn save_dispatch(file: &Path, payload: &Value, d: &Dispatch) -> anyhow::Result<()> {
    let o = Observed::of(&d.verdict, &d.reports, d.duration.as_secs_f64() * 1000.0);
    let mut payload: Map<String, Value> = payload.as_object().cloned().unwrap_or_default();
    // The defaults a dispatch filled in are the test's to fill again.
    payload.remove("hook_event_name");
    let case = CaseFile {
        description: Some(
            "recorded by hookbox dispatch: today's answer — edit `expect` into the one you mean"
                .to_owned(),
        ),
        event: Some(d.event.name.as_str().to_owned()),
        payload,
        expect: expect_from(
            &o,
            &Expect::default(),
            d.event.name.takes_permission_decision(),
        ),
        ..CaseFile::default()
    };
    let text = case_text(&case)?;
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file
        .file_name()
        .with_context(|| format!("--save-case {}: not a file name", file.display()))?;
    let root = open_dir(dir)?;
    let names = [name.to_string_lossy().into_owned()];
    crate::scratch::create_beneath(&root, &names, text.as_bytes(), 0o644)
        .with_context(|| format!("--save-case {}", file.display()))?;
    Ok(())
}

/// `hookbox test --record`: rewrites each case file of `cases` under `plugin` with `expects`.
pub(crate) fn rewrite(plugin: &Path, cases: &[(&Case, Expect)]) -> anyhow::Result<usize> {
    let tests = open_dir(&plugin.join("tests"))?;
    let mut n = 0;
    for (case, expect) in cases {
        if case.file.extension().is_some_and(|e| e == "toml") {
            bail!(
                "{}: --record writes JSON; convert the case to tests/{}.json first",
                plugin.join(&case.file).display(),
                case.name
            );
        }
        let mut spec = case.spec.clone();
        if spec.expect == *expect {
            continue;
        }
        spec.expect = expect.clone();
        let text = case_text(&spec)?;
        let name = case
            .file
            .file_name()
            .context("a case without a file name")?;
        let fd = rustix::fs::openat(
            &tests,
            name,
            OFlags::WRONLY | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("cannot write {}", plugin.join(&case.file).display()))?;
        std::io::Write::write_all(&mut std::fs::File::from(fd), text.as_bytes())?;
        n += 1;
    }
    Ok(n)
}

/// `hookbox test --from-replay FILE`: a case per dispatch of the replay file, in `plugin`'s
/// `tests/` (created if missing). Returns the files written.
pub(crate) fn from_replay(file: &Path, plugin: &Path) -> anyhow::Result<Vec<String>> {
    let read = read_replay(file).with_context(|| format!("cannot read {}", file.display()))?;
    if read.records.len() > MAX_CASES {
        bail!(
            "{} holds {} dispatches, more than {MAX_CASES} (MAX_CASES): cut the file to the ones worth a case",
            file.display(),
            read.records.len()
        );
    }
    let tests = plugin.join("tests");
    if std::fs::symlink_metadata(&tests).is_err() {
        std::fs::create_dir(&tests)
            .with_context(|| format!("cannot create {}", tests.display()))?;
    }
    let root = open_dir(&tests)?;
    let mut written = Vec::new();
    for (i, r) in read.records.iter().enumerate() {
        let fired = r.hook_fired.as_ref().and_then(Value::as_object);
        let field = |k: &str| {
            fired
                .and_then(|f| f.get(k))
                .filter(|v| !v.is_null())
                .cloned()
        };
        let mut payload = Map::new();
        if let Some(tool) = field("tool") {
            payload.insert("tool_name".into(), tool);
        }
        let outcome: Option<Outcome> =
            serde_json::from_value(Value::String(r.outcome.clone())).ok();
        let decision = field("decision").and_then(|d| serde_json::from_value::<Decision>(d).ok());
        let failure = r.hooks.iter().find_map(|h| h.failure.clone());
        let case = CaseFile {
            description: Some(format!(
                "from replay {} (dispatch {} of session {}): replay keeps no payload — fill in `payload` (tool_input, prompt, …) before relying on this case",
                file.display(),
                i + 1,
                r.session_id
            )),
            event: Some(r.event.clone()),
            payload,
            expect: Expect {
                outcome,
                decision,
                reason: field("blocking_error")
                    .or_else(|| field("reason"))
                    .and_then(|v| v.as_str().map(str::to_owned)),
                failure: Some(failure.unwrap_or_else(|| "none".to_owned())),
                ..Expect::default()
            },
            ..CaseFile::default()
        };
        let name = format!("replay-{:03}-{}.json", i + 1, r.event.to_ascii_lowercase());
        let text = case_text(&case)?;
        match crate::scratch::create_beneath(
            &root,
            std::slice::from_ref(&name),
            text.as_bytes(),
            0o644,
        ) {
            Ok(()) => written.push(format!("tests/{name}")),
            Err(e) => eprintln!("hookbox: skipped tests/{name}: {e:#}"),
        }
    }
    Ok(written)
}

/// `dir` opened as a folder without following a link.
fn open_dir(dir: &Path) -> anyhow::Result<OwnedFd> {
    rustix::fs::open(
        dir,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| {
        format!(
            "cannot open the folder {} (a link is not followed)",
            dir.display()
        )
    })
}
