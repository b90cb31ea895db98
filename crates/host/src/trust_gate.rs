//! Trust at dispatch: a rule that is not approved as it is does not run under `require` (it
//! fails with `untrusted`, its fail mode applies — the *approved* fail mode when the rule was
//! loosened, so a tampered guard still fails closed) — unless it differs from its approval only
//! in files its approval's snapshot holds: then the approved rule runs, from the snapshot, and
//! the dispatch names the change; under `warn` it runs and the dispatch says so. Under `require` an approved command runs from its approval's snapshot of the plugin
//! folder, and the files it names outside the plugin from sealed copies of the bytes hashed (as
//! does a tenant's, recorded under `off`, so a held load keeps running the bytes approved);
//! under `warn` it runs from the live folder exactly as the agent itself would run it — the
//! default mode never changes how a plugin runs (a copy at `/proc/self/fd/N` is no place for a
//! script that finds its neighbours through `$0` or `__dirname`, and `node` cannot start one
//! at all).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use hookbox_command::CommandRequest;
use hookbox_core::event::Event;
use hookbox_core::output::{Effect, FailureClass, HookFailure};
use hookbox_core::report::HookReport;
use hookbox_core::rule::{CommandLine, CommandSpec, FailMode};
use hookbox_trust::{Base, EntryKind, RuleTrust, Site, SnapshotEntry, TrustMode};

use crate::hook_report::{Ran, settled};
use crate::inner::{Inner, Loaded};
use crate::trust::{Isolation, RuleCheck, TrustFinding, fd_path, plugin_views, sealed_copy};

/// Why trust keeps `check` from running under `require`, if it does. `approval_error`: why its
/// subject's approval (or the whole store) could not be used — the reason nothing is approved.
fn refusal(check: &RuleCheck, approval_error: Option<&str>) -> Option<String> {
    match (&check.trust, &check.unpinnable) {
        (RuleTrust::Approved, None) => None,
        (RuleTrust::Approved, Some(why)) => Some(format!(
            "it cannot be pinned ({why}), and under trust = require hookbox runs only what it can account for"
        )),
        (RuleTrust::Unapproved, _) if let Some(e) = approval_error => {
            Some(format!("not approved: {e}"))
        }
        (trust, None) => Some(trust.to_string()),
        (trust, Some(why)) => Some(format!("{trust}; and it cannot be pinned ({why})")),
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
    if check.snapshot_approves {
        // The approved rule, over its snapshot's files: it runs (`pin_request`).
        return None;
    }
    let rule = &loaded.set.rules()[pos];
    let subject = loaded.trust.subjects.get(rule.plugin)?;
    let why = refusal(check, subject.error.as_deref())?;
    let subject = &subject.name;
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
        let subject = t.subjects.get(rule.plugin);
        out.push(TrustFinding {
            rule_index: pos,
            plugin: loaded.plugin_name(rule).unwrap_or_default().to_owned(),
            subject: subject.map(|s| s.name.clone()).unwrap_or_default(),
            location: check.record.location.clone(),
            label: check.record.label.clone(),
            trust: check.trust.clone(),
            unpinnable: check.unpinnable.clone(),
            approval_error: subject.and_then(|s| s.error.clone()),
            missing: false,
            ran: t.mode != TrustMode::Require,
            snapshot_ran: t.mode == TrustMode::Require && check.snapshot_approves,
        });
    }
    out
}

/// Under `require`, the request that runs what `pos` was approved with: from its approval's
/// snapshot — where the kernel allows it, in a private mount namespace in which each live
/// folder the snapshot holds (the plugin folder, a settings file's `.claude/hooks/`) shows its
/// tree read-only at its own path (and the approval store is read-only over itself), the
/// command and `CLAUDE_PLUGIN_ROOT` left as they are, so every spelling of a path reaches the
/// approved bytes; otherwise `CLAUDE_PLUGIN_ROOT` and every file it names beneath a root point
/// into the tree (a command naming the live plugin folder's path was made unpinnable at load)
/// — the files it names outside the snapshot as sealed copies of the bytes hashed, or the
/// refusal when that cannot be done. Recorded under `off` (a tenant): from the snapshot
/// its load took, when it took one, the same way; other files as sealed copies, and a note
/// when one cannot be made. Under `warn`, `req` as it is: the live folder, as the agent
/// would run it.
pub(crate) fn pin_request(
    inner: &Inner,
    loaded: &Loaded,
    pos: usize,
    mut req: CommandRequest,
) -> Result<(CommandRequest, Option<String>), Ran> {
    let mode = loaded.trust.mode;
    if mode == TrustMode::Warn {
        return Ok((req, None));
    }
    let Some(check) = loaded.trust.rule(pos) else {
        return Ok((req, None));
    };
    let refuse = |why: String| {
        Ran::failed(
            FailureClass::Untrusted,
            format!("refused (trust = require): {why}"),
        )
    };
    let mut live_plugin = None;
    // Recorded under `off` is a tenant: its loads run from their snapshots the same way.
    let snapshot = if mode == TrustMode::Require || mode == TrustMode::Off {
        let plugin = loaded.set.rules().get(pos).map(|r| r.plugin);
        match plugin
            .and_then(|i| loaded.trust.subjects.get(i))
            .and_then(|s| s.snapshot.as_ref().map(|r| (s, r)))
        {
            Some((subject, Ok(snap))) => {
                // A plugin folder's subject is its canonical path: where its view goes.
                live_plugin = (!subject.bare).then(|| PathBuf::from(&subject.name));
                Some(snap)
            }
            Some((subject, Err(e))) => {
                return Err(refuse(format!(
                    "the snapshot its approval runs from cannot be used ({e}); approve it again with `hookbox trust add {}`",
                    subject.name
                )));
            }
            None => None,
        }
    } else {
        None
    };
    // Under `require` with views, each root of the snapshot shows at its live path: nothing
    // beneath one is rewritten (a tenant's load keeps the tree paths).
    let trust = &inner.trust;
    let views = mode == TrustMode::Require
        && snapshot.is_some()
        && Isolation::of(trust.policy.namespace).has_views();
    let project = views.then(|| crate::trust::canonical(&inner.policy.project_dir));
    let live_base = |base: Base| match base {
        Base::Plugin => live_plugin.clone(),
        Base::Project => project.clone(),
        Base::Home | Base::Root => None,
    };
    let mut note = check
        .unpinnable
        .as_ref()
        .map(|why| format!("trust: ran without pinning {why}"));
    let mut sites = Vec::with_capacity(check.pins.len());
    let mut fds = Vec::new();
    for pin in &check.pins {
        // A file beneath a root of the snapshot (the plugin folder; a settings file's project
        // hook folders) runs from the tree.
        if let Some(snap) = snapshot
            && snap.manifest.root_of(pin.base, &pin.path).is_some()
        {
            match snap.manifest.find(pin.base, &pin.path) {
                Some((
                    _,
                    SnapshotEntry {
                        kind: EntryKind::File { sha256, .. },
                        ..
                    },
                )) if *sha256 == pin.file.sha256 || check.snapshot_approves => {}
                _ => {
                    return Err(refuse(format!(
                        "its approval's snapshot does not hold {} as approved; approve it again",
                        pin.shown
                    )));
                }
            }
            if !(views && live_base(pin.base).is_some()) {
                let path = snap.base_dir(pin.base).join(&pin.path);
                sites.push((pin.site.clone(), path.display().to_string()));
            }
            continue;
        }
        match sealed_copy(&pin.file) {
            Ok(fd) => {
                sites.push((pin.site.clone(), fd_path(&fd)));
                fds.push(Arc::new(fd));
            }
            Err(e) if mode == TrustMode::Require => {
                return Err(refuse(format!(
                    "cannot run a sealed copy of {}: {e}; hookbox does not run a file that could change after it was checked",
                    pin.shown
                )));
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
    if let Some(snap) = snapshot
        && views
    {
        let binds = snap.binds(live_base);
        req = req.with_views(
            plugin_views(&binds, trust.policy.store.as_deref()),
            trust.policy.namespace.view_policy(),
        );
    } else if let Some(snap) = snapshot
        && snap.manifest.roots.iter().any(|r| r.base == Base::Plugin)
    {
        // `CLAUDE_PROJECT_DIR` stays the project (the user's data); the plugin root is the tree.
        req.context.plugin_root = Some(snap.base_dir(Base::Plugin));
    }
    if !sites.is_empty() {
        req.spec = rewrite(&req.spec, &sites);
    }
    req.pass_fds = fds;
    Ok((req, note))
}

/// `spec` with the name at each site replaced by its path (in a shell text, quoted).
fn rewrite(spec: &CommandSpec, sites: &[(Site, String)]) -> CommandSpec {
    let mut spec = spec.clone();
    match &mut spec.command {
        CommandLine::Shell { text, .. } => {
            let mut spans: Vec<(usize, usize, String)> = sites
                .iter()
                .filter_map(|(site, path)| match *site {
                    Site::Text { start, end } => Some((start, end, shell_quoted(path))),
                    Site::Arg(_) | Site::None => None,
                })
                .collect();
            // From the end, so earlier ranges stay where they were.
            spans.sort_by_key(|s| std::cmp::Reverse(s.0));
            for (start, end, path) in spans {
                if text.is_char_boundary(start) && text.is_char_boundary(end) && end <= text.len() {
                    text.replace_range(start..end, &path);
                }
            }
        }
        CommandLine::Exec { argv } => {
            for (site, path) in sites {
                if let Site::Arg(i) = *site
                    && let Some(a) = argv.get_mut(i)
                {
                    a.clone_from(path);
                }
            }
        }
    }
    spec
}

/// `path` as one shell word: as it is when it has nothing a shell reads, else single-quoted.
fn shell_quoted(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%,".contains(&b));
    if plain {
        path.to_owned()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_one_shell_word() {
        assert_eq!(
            shell_quoted("/s/trees/ab/plugin/g.sh"),
            "/s/trees/ab/plugin/g.sh"
        );
        assert_eq!(shell_quoted("/a b/it's"), "'/a b/it'\\''s'");
    }
}
