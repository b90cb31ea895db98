//! Trust at dispatch: a rule that is not approved as it is does not run under `require` (it
//! fails with `untrusted`, its fail mode applies — the *approved* fail mode when the rule was
//! loosened, so a tampered guard still fails closed); under `warn` it runs and the dispatch
//! says so. Under `require` a command runs the sealed copies of the files it was approved with
//! (as does a tenant's, recorded under `off`, so a held load keeps running the bytes approved);
//! under `warn` it runs from the live folder exactly as the agent itself would run it — the
//! default mode never changes how a plugin runs (a copy at `/proc/self/fd/N` is no place for a
//! script that finds its neighbours through `$0` or `__dirname`, and `node` cannot start one
//! at all).

use std::sync::Arc;
use std::time::Instant;

use hookbox_command::CommandRequest;
use hookbox_core::event::Event;
use hookbox_core::output::{Effect, FailureClass, HookFailure};
use hookbox_core::report::HookReport;
use hookbox_core::rule::{CommandLine, CommandSpec, FailMode};
use hookbox_trust::{RuleTrust, Site, TrustMode};

use crate::hook_report::{Ran, settled};
use crate::inner::{Inner, Loaded};
use crate::trust::{Pin, RuleCheck, TrustFinding, fd_path, sealed_copy};

/// Why trust keeps `check` from running under `require`, if it does.
fn refusal(check: &RuleCheck) -> Option<String> {
    match (&check.trust, &check.unpinnable) {
        (RuleTrust::Approved, None) => None,
        (RuleTrust::Approved, Some(why)) => Some(format!(
            "a file it runs cannot be pinned ({why}), and under trust = require hookbox runs only bytes it hashed"
        )),
        (trust, _) => Some(trust.to_string()),
    }
}

/// Under `require`, the report of a rule that trust keeps from running.
pub(crate) fn trust_refusal(
    inner: &Inner,
    loaded: &Loaded,
    pos: usize,
    event: &Event,
) -> Option<HookReport> {
    if loaded.trust.mode != TrustMode::Require {
        return None;
    }
    let check = loaded.trust.rule(pos)?;
    let why = refusal(check)?;
    let rule = &loaded.set.rules()[pos];
    let subject = &loaded.trust.subjects.get(rule.plugin)?.name;
    let msg = format!(
        "refused (trust = require): {why} — review it with `hookbox trust diff {subject}`, approve it with `hookbox trust add {subject}`"
    );
    let approved_closed = matches!(
        check.trust,
        RuleTrust::Changed {
            approved_on_failure: Some(FailMode::Block),
            ..
        }
    );
    let mode = if approved_closed {
        FailMode::Block
    } else {
        rule.on_failure.unwrap_or(inner.policy.fail_mode)
    };
    let effect = Effect::from_failure(
        HookFailure::new(FailureClass::Untrusted, msg),
        mode,
        event.name,
    );
    Some(settled(inner, loaded, rule, event, effect, Instant::now()))
}

/// What trust says about the rules that matched: those not approved as they are (run
/// under `warn`, refused under `require`).
pub(crate) fn trust_findings(loaded: &Loaded, matched: &[usize]) -> Vec<TrustFinding> {
    let t = &loaded.trust;
    if !t.mode.is_on() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &pos in matched {
        let Some(check) = t.rule(pos) else { continue };
        if check.trust.is_approved() && check.unpinnable.is_none() {
            continue;
        }
        let rule = &loaded.set.rules()[pos];
        out.push(TrustFinding {
            rule_index: pos,
            plugin: loaded.plugin_name(rule).unwrap_or_default().to_owned(),
            subject: t
                .subjects
                .get(rule.plugin)
                .map(|s| s.name.clone())
                .unwrap_or_default(),
            location: check.record.location.clone(),
            label: check.record.label.clone(),
            trust: check.trust.clone(),
            unpinnable: check.unpinnable.clone(),
            ran: t.mode != TrustMode::Require,
        });
    }
    out
}

/// The request that runs the sealed copies of the files `pos` was approved with (and a note
/// when, recorded under `off`, one of them cannot be), or the refusal under `require`. Under
/// `warn`, `req` as it is: the live folder, as the agent would run it.
pub(crate) fn pin_request(
    loaded: &Loaded,
    pos: usize,
    mut req: CommandRequest,
) -> Result<(CommandRequest, Option<String>), Ran> {
    if loaded.trust.mode == TrustMode::Warn {
        return Ok((req, None));
    }
    let Some(check) = loaded.trust.rule(pos) else {
        return Ok((req, None));
    };
    let mut note = check
        .unpinnable
        .as_ref()
        .map(|why| format!("trust: ran without pinning {why}"));
    let mut copies = Vec::with_capacity(check.pins.len());
    for pin in &check.pins {
        match sealed_copy(&pin.file) {
            Ok(fd) => copies.push((pin, fd)),
            Err(e) if loaded.trust.mode == TrustMode::Require => {
                return Err(Ran::failed(
                    FailureClass::Untrusted,
                    format!(
                        "refused (trust = require): cannot run a sealed copy of {}: {e}; hookbox does not run a file that could change after it was checked",
                        pin.shown
                    ),
                ));
            }
            Err(e) => {
                note = Some(format!(
                    "trust: ran {} from its path, unpinned: cannot make a sealed copy ({e})",
                    pin.shown
                ));
                return Ok((req, note));
            }
        }
    }
    if copies.is_empty() {
        return Ok((req, note));
    }
    req.spec = rewrite(&req.spec, &copies);
    req.pass_fds = copies.into_iter().map(|(_, fd)| Arc::new(fd)).collect();
    Ok((req, note))
}

/// `spec` with each pinned file's name replaced by the path of its sealed copy.
fn rewrite(spec: &CommandSpec, copies: &[(&Pin, std::os::fd::OwnedFd)]) -> CommandSpec {
    let mut spec = spec.clone();
    match &mut spec.command {
        CommandLine::Shell { text, .. } => {
            let mut sites: Vec<(usize, usize, String)> = copies
                .iter()
                .filter_map(|(pin, fd)| match pin.site {
                    Site::Text { start, end } => Some((start, end, fd_path(fd))),
                    _ => None,
                })
                .collect();
            // From the end, so earlier ranges stay where they were.
            sites.sort_by_key(|s| std::cmp::Reverse(s.0));
            for (start, end, path) in sites {
                if text.is_char_boundary(start) && text.is_char_boundary(end) && end <= text.len() {
                    text.replace_range(start..end, &path);
                }
            }
        }
        CommandLine::Exec { argv } => {
            for (pin, fd) in copies {
                if let Site::Arg(i) = pin.site
                    && let Some(a) = argv.get_mut(i)
                {
                    *a = fd_path(fd);
                }
            }
        }
    }
    spec
}
