//! `hookbox dispatch --event NAME …`: load plugins, build one event from a payload file (or
//! stdin, or a few flags), run it through a `HookHost` and print the verdict, the rendered
//! marker or tags, each hook's attachments and the HookFired record — or all of it as JSON.
//! Every rule that failed is named under the verdict, with whether it blocked (fail-closed) or
//! let the action through; `--explain` says, rule by rule, why each did or did not fire — and
//! so does the text output whenever no rule matched.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context, bail};
use hookbox_core::aggregate::{StopState, Verdict};
use hookbox_core::config::LoadOptions;
use hookbox_core::render::UserTurn;
use hookbox_core::{Event, EventName, Outcome};
use hookbox_host::{Dispatch, dispatch_json};
use owo_colors::OwoColorize;
use serde_json::{Map, Value, json};

use super::term::untrusted;
use super::validate::write_diagnostic;
use super::{EXIT_FAILURE, EXIT_VERDICT_BLOCKS};
use crate::cli::DispatchArgs;
use crate::host_setup::{HostSetup, SetupOptions, block_on};

/// Runs `hookbox dispatch`.
pub(crate) fn run(args: &DispatchArgs) -> anyhow::Result<ExitCode> {
    let event_name: EventName = args
        .event
        .parse()
        .map_err(|_| anyhow::anyhow!("unknown event `{}`; use a Claude Code event name such as PreToolUse, UserPromptSubmit, Stop", args.event))?;
    if args.plugin.is_empty() {
        bail!("no hooks to run: give at least one --plugin DIR (a plugin folder or a hooks file)");
    }
    let project = match &args.project_dir {
        Some(p) => p.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let payload = read_payload(args)?;
    // `--save-case` records the payload as given, before the event fills in its defaults.
    let given_payload = args.save_case.as_ref().map(|_| payload.clone());
    let cwd = args.cwd.clone().unwrap_or_else(|| project.clone());
    let event = Event::from_payload(
        Some(event_name),
        payload,
        &args.session_id,
        &cwd.display().to_string(),
    )
    .context("the payload does not fit the event")?;
    let setup = HostSetup::new(
        &project,
        &SetupOptions {
            no_replay: args.no_replay,
            stop_reentry_cap: args.stop_reentry_cap,
            trust: args.trust.map(Into::into),
            trust_store: None,
            lenient_settings: false,
            pin_unapproved_programs: false,
        },
    )?;
    let opts = LoadOptions::default().with_dialect(args.dialect.map(Into::into));
    let report = setup.load(&args.plugin, &opts)?;
    let load_errors = report.has_errors();
    if !report.diagnostics.is_empty() && !args.json {
        let mut s = String::new();
        for d in &report.diagnostics {
            write_diagnostic(&mut s, d);
        }
        eprint!("{}", anstream::adapter::strip_str(&s));
    }
    let stop = StopState {
        reentries: args.reentries,
        cap: setup.host.stop_reentry_cap(),
    };
    let host = setup.host.clone();
    // One async runtime for the dispatch, the answer and the background hooks: `async` hooks
    // run to completion after the answer is printed (each bounded by its own timeout), as in
    // Claude Code, instead of dying with the process.
    block_on(async move {
        let mut wakes = host.subscribe_wakes();
        let dispatch = host.dispatch_with_stop_state(event, stop).await;
        // Under `warn` and `require`, say which matched rules are not approved as they are.
        for f in &dispatch.trust {
            eprintln!("hookbox: trust: {}", untrusted(&f.to_string()));
        }
        if let Some(f) = dispatch.trust.first() {
            eprintln!(
                "hookbox: trust: review with `hookbox trust diff {0}`, approve with `hookbox trust add {0}`",
                untrusted(&f.subject)
            );
        }
        if let (Some(file), Some(payload)) = (&args.save_case, &given_payload) {
            super::test::record::save_dispatch(file, payload, &dispatch)?;
            eprintln!(
                "hookbox: saved this event and its answer as a case: {} — edit its `expect`, then run `hookbox test`",
                file.display()
            );
        }
        // When no rule matched, say why without being asked: "0 rules matched" alone leaves a
        // user guessing between a typo in the matcher, the wrong event and a rule never loaded.
        let explain = args.explain || (!args.json && dispatch.matched_rule_count == 0);
        let explained = explain.then(|| explanation(&host.rules(), &dispatch, skipped(&report)));
        let code = answer(
            args,
            host.trust_mode(),
            host.replay_dir().as_deref(),
            &dispatch,
            &report.diagnostics,
            load_errors,
            explained.as_ref(),
        )?;
        if host.runtime().background_hooks() > 0 {
            host.runtime().drain(host.policy().dispatch_deadline).await;
        } else {
            host.runtime().flush_replay();
        }
        // `asyncRewake` hooks that exited 2 ask to wake the agent: say so (Claude Code would
        // hand the message to the model).
        while let Ok(w) = wakes.try_recv() {
            eprintln!(
                "hookbox: {} ({}) asks to wake the agent: {}",
                untrusted(&w.plugin),
                untrusted(&w.hook),
                untrusted(&w.message)
            );
        }
        Ok(code)
    })?
}

/// Prints the dispatch and says which exit code it means.
fn answer(
    args: &DispatchArgs,
    trust_mode: hookbox_host::TrustMode,
    replay_dir: Option<&std::path::Path>,
    dispatch: &Dispatch,
    diagnostics: &[hookbox_core::diagnostic::Diagnostic],
    load_errors: bool,
    explained: Option<&Explained>,
) -> anyhow::Result<ExitCode> {
    let text = if args.json {
        let mut v = dispatch_json(dispatch);
        if let Some(dir) = host_replay_file(dispatch, replay_dir) {
            v["replay_file"] = json!(dir);
        }
        v["diagnostics"] =
            serde_json::to_value(diagnostics).context("cannot encode diagnostics")?;
        v["trust"] = json!({
            "mode": trust_mode,
            "rules": dispatch.trust,
        });
        // Under `require`, how approved hooks ran: in a private mount namespace or not (why).
        if trust_mode == hookbox_host::TrustMode::Require {
            let isolation =
                hookbox_host::trust::Isolation::of(crate::host_setup::cli_trust_namespace()?);
            v["trust"]["isolation"] = json!(isolation.name());
            if let Some(reason) = isolation.reason() {
                v["trust"]["isolation_reason"] = json!(reason);
            }
        }
        if let Some(e) = explained {
            v["explain"] = e.json.clone();
        }
        let mut s = serde_json::to_string_pretty(&v).context("cannot encode the dispatch")?;
        s.push('\n');
        s
    } else {
        human(dispatch, explained.map(|e| e.text.as_str()))
    };
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")?;
    let blocked = dispatch.verdict.outcome() == Outcome::Block;
    Ok(if load_errors {
        ExitCode::from(EXIT_FAILURE)
    } else if blocked && args.fail_on_block {
        ExitCode::from(EXIT_VERDICT_BLOCKS)
    } else {
        ExitCode::SUCCESS
    })
}

/// The replay file the dispatch's record went to, if one was written.
fn host_replay_file(d: &Dispatch, dir: Option<&std::path::Path>) -> Option<String> {
    let dir = dir.filter(|_| d.matched_rule_count > 0)?;
    let file = dir.join(hookbox_host::replay::session_file_name(&d.event.session_id));
    Some(file.display().to_string())
}

/// The payload: `--payload FILE|-` (JSON object), then `--prompt`, `--tool`, `--tool-input`
/// layered on top.
fn read_payload(args: &DispatchArgs) -> anyhow::Result<Value> {
    let mut payload = match args.payload.as_deref() {
        None => Value::Object(Map::new()),
        Some(p) => {
            let text = if p == std::path::Path::new("-") {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .context("cannot read the payload from stdin")?;
                s
            } else {
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read payload {}", p.display()))?
            };
            serde_json::from_str(&text)
                .with_context(|| format!("payload {} is not valid JSON", p.display()))?
        }
    };
    let Value::Object(map) = &mut payload else {
        bail!(
            "the payload must be a JSON object (Claude Code's hook input), found {}",
            hookbox_core::event::json_type(&payload)
        );
    };
    if let Some(p) = &args.prompt {
        map.insert("prompt".into(), json!(p));
    }
    if let Some(t) = &args.tool {
        map.insert("tool_name".into(), json!(t));
    }
    if let Some(i) = &args.tool_input {
        let v: Value = serde_json::from_str(i)
            .with_context(|| format!("--tool-input is not valid JSON: {i}"))?;
        map.insert("tool_input".into(), v);
    }
    Ok(payload)
}

fn outcome_coloured(o: Outcome) -> String {
    match o {
        Outcome::Allow => o.as_str().green().bold().to_string(),
        Outcome::Block | Outcome::ReentryCapped => o.as_str().red().bold().to_string(),
        Outcome::Continue | Outcome::ContinueAtMaxIter => o.as_str().yellow().bold().to_string(),
    }
}

/// One line summing up the verdict.
pub(crate) fn verdict_line(v: &Verdict) -> String {
    let mut s = outcome_coloured(v.outcome());
    match v {
        Verdict::PreToolUse(r) => {
            if let Some(d) = r.decision {
                let _ = write!(s, " — {}", d.as_str());
                if let Some(reason) = &r.reason {
                    let _ = write!(s, ": {}", untrusted(reason));
                }
            }
            if let Some(u) = &r.updated_input {
                let _ = write!(s, " — input rewritten to {u}");
            }
        }
        Verdict::UserPromptSubmit(r) => {
            if let Some(b) = &r.blocking_error {
                let _ = write!(s, " — {}", untrusted(b));
            } else if let Some(reason) = &r.stop_reason {
                let _ = write!(s, " — stopped: {}", untrusted(reason));
            }
        }
        Verdict::Stop(r) => {
            match (&r.follow_up_message, r.outcome) {
                (Some(f), Outcome::ReentryCapped) => {
                    let _ = write!(
                        s,
                        " — the turn ends anyway: the re-entry cap is reached (a hook asked: {})",
                        untrusted(f)
                    );
                }
                (Some(f), _) => {
                    let _ = write!(s, " — follow-up: {}", untrusted(f));
                }
                (None, _) => {}
            }
            if let Some(b) = &r.blocking_error {
                let _ = write!(s, " — blocking error: {}", untrusted(b));
            }
        }
        Verdict::PreCompact(r) => {
            if let Some(b) = &r.ignored_block {
                let _ = write!(
                    s,
                    " — observe-only; ignored request to block: {}",
                    untrusted(b)
                );
            }
        }
        Verdict::Event(r) => {
            if let Some(b) = &r.blocking_error {
                let _ = write!(s, " — {}", untrusted(b));
            }
        }
    }
    let n = v.additional_contexts().len();
    // A blocked prompt's contexts are never delivered: counting them would mislead.
    let delivered = !matches!(v, Verdict::UserPromptSubmit(_)) || v.outcome() == Outcome::Allow;
    if n > 0 && delivered {
        let _ = write!(s, " — {n} context{}", if n == 1 { "" } else { "s" });
    }
    s
}

fn human(d: &Dispatch, explained: Option<&str>) -> String {
    let mut s = String::new();
    let failed = d
        .reports
        .iter()
        .filter(|r| r.effect.failure.is_some())
        .count();
    let _ = writeln!(
        s,
        "{} · session {} · {} rule{} matched · {:.1} ms{}",
        d.event.name.as_str().bold(),
        d.event.session_id,
        d.matched_rule_count,
        if d.matched_rule_count == 1 { "" } else { "s" },
        d.duration.as_secs_f64() * 1000.0,
        if failed > 0 {
            format!(" · {failed} failed").red().to_string()
        } else {
            String::new()
        }
    );
    if let Some(e) = explained {
        s.push_str(e);
    }
    for r in &d.reports {
        let exit = r
            .exit_code
            .map(|c| format!(" · exit {c}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  [{}] {} · {} · {}{exit} · {:.1} ms",
            r.hook.rule_index,
            untrusted(&r.hook.plugin),
            r.hook.handler_type.as_str(),
            untrusted(&r.hook.hook_name).dimmed(),
            r.duration_ms
        );
        for a in r.attachments() {
            let kind = serde_json::to_value(a.attachment_type)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            match a.content.as_deref().filter(|c| !c.is_empty()) {
                Some(c) => {
                    let _ = writeln!(
                        s,
                        "      {}: {}",
                        kind.cyan(),
                        first_lines(&untrusted(c), 3)
                    );
                }
                None => {
                    let _ = writeln!(s, "      {}", kind.cyan());
                }
            }
        }
    }
    let _ = writeln!(s, "verdict: {}", verdict_line(&d.verdict));
    // A rule that failed decided by its fail mode: say which way, so a guard that could not run
    // is never mistaken for one that allowed.
    for r in &d.reports {
        let Some(f) = &r.effect.failure else { continue };
        let closed = blocks(&r.effect);
        let how = if closed {
            "failed closed: it blocks".red().to_string()
        } else {
            "failed open: it did not guard this action"
                .yellow()
                .to_string()
        };
        let _ = writeln!(
            s,
            "  [{}] {} {how} — {}: {}",
            r.hook.rule_index,
            untrusted(&r.hook.plugin),
            f.class,
            untrusted(&f.message)
        );
    }
    // A hook's `systemMessage` is for the user, whatever else the hook decided.
    for m in d.verdict.system_messages() {
        let _ = writeln!(s, "system message: {}", untrusted(m));
    }
    for r in &d.rechecked {
        if let Some(p) = r.effect.permission {
            let _ = writeln!(
                s,
                "  re-checked on the rewritten input: [{}] {} · {}",
                r.hook.rule_index,
                untrusted(&r.hook.plugin),
                p.as_str()
            );
        }
    }
    match d.user_turn() {
        Some(UserTurn::Blocked(t) | UserTurn::Stopped(t)) => {
            let _ = writeln!(s, "agent returns: {}", untrusted(&t).red());
        }
        Some(UserTurn::Proceed(t)) if !d.verdict.additional_contexts().is_empty() => {
            let _ = writeln!(s, "model receives:\n{}", indent(&untrusted(&t)));
        }
        _ => {}
    }
    for w in &d.warnings {
        let _ = writeln!(s, "{}: {}", "warning".yellow(), untrusted(w));
    }
    match d.hook_fired() {
        Some(f) => {
            let _ = writeln!(
                s,
                "HookFired: {}",
                serde_json::to_string(f).unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(s, "HookFired: none (no rule matched)");
        }
    }
    s
}

/// Whether a hook's effect blocks the action (deny, block or stop).
fn blocks(e: &hookbox_core::output::Effect) -> bool {
    e.block.is_some()
        || e.stop.is_some()
        || e.permission == Some(hookbox_core::output::PermissionDecision::Deny)
}

/// `--explain`, as text (one line per rule of the event) and as JSON.
pub(crate) struct Explained {
    text: String,
    json: Value,
}

/// Handlers the load skipped (each with a diagnostic above): they never reach a dispatch.
fn skipped(report: &hookbox_core::config::LoadReport) -> usize {
    report.files.iter().map(|f| f.skipped).sum()
}

/// Why each loaded rule of the event did or did not fire, and what became of those that did.
fn explanation(set: &hookbox_core::RuleSet, d: &Dispatch, skipped: usize) -> Explained {
    use hookbox_core::explain::{Part, events_with_rules, explain};
    let all = explain(set, &d.event);
    let event = d.event.name;
    let mut text = String::new();
    let mut rows = Vec::new();
    let ours: Vec<_> = all.iter().filter(|x| x.part != Part::Event).collect();
    let elsewhere: Vec<String> = events_with_rules(set)
        .into_iter()
        .filter(|(e, _)| *e != event)
        .map(|(e, n)| format!("{e} {n}"))
        .collect();
    let _ = writeln!(
        text,
        "{} {} rule{} of {event} loaded{}{}",
        "explain:".bold(),
        ours.len(),
        if ours.len() == 1 { "" } else { "s" },
        if elsewhere.is_empty() {
            String::new()
        } else {
            format!("; other events: {}", elsewhere.join(", "))
        },
        if skipped > 0 {
            format!("; {skipped} skipped at load (see the diagnostics)")
        } else {
            String::new()
        }
    );
    for x in ours {
        let rule = &set.rules()[x.rule_index];
        let plugin = set
            .plugins()
            .get(rule.plugin)
            .map_or("", |p| p.name.as_str());
        let after = x.matched.then(|| ran(d, x.rule_index)).flatten();
        let verdict = if x.matched {
            "fired".green().to_string()
        } else {
            format!("did not fire ({})", part_name(x.part))
                .yellow()
                .to_string()
        };
        let _ = writeln!(
            text,
            "  [{}] {} · {} {} — {verdict}: {}{}",
            x.rule_index,
            untrusted(plugin),
            rule.handler.handler_type().as_str(),
            untrusted(&rule.handler.label()).dimmed(),
            untrusted(&x.why),
            after
                .as_deref()
                .map(|a| format!("; {}", untrusted(a)))
                .unwrap_or_default()
        );
        rows.push(json!({
            "rule_index": x.rule_index,
            "plugin": plugin,
            "label": rule.handler.label(),
            "matched": x.matched,
            "part": x.part,
            "why": x.why,
            "then": after,
        }));
    }
    Explained {
        text,
        json: json!({"event": event, "rules": rows, "other_events": elsewhere, "skipped_at_load": skipped}),
    }
}

fn part_name(p: hookbox_core::explain::Part) -> &'static str {
    match p {
        hookbox_core::explain::Part::Event => "event",
        hookbox_core::explain::Part::Matcher => "matcher",
        hookbox_core::explain::Part::If => "if",
    }
}

/// What became of a rule that fired: trust, a failure, or a run deduplicated away.
fn ran(d: &Dispatch, index: usize) -> Option<String> {
    let mut notes = Vec::new();
    if let Some(t) = d.trust.iter().find(|t| t.rule_index == index) {
        let how = if t.ran {
            "ran although"
        } else if t.snapshot_ran {
            "ran from its approved snapshot:"
        } else {
            "did not run:"
        };
        notes.push(format!("{how} not approved as it is ({})", t.trust));
    }
    match d.reports.iter().find(|r| r.hook.rule_index == index) {
        Some(r) => {
            if let Some(f) = &r.effect.failure {
                let way = if blocks(&r.effect) {
                    "failed closed"
                } else {
                    "failed open"
                };
                notes.push(format!("{way} — {}: {}", f.class, f.message));
            }
        }
        None => notes.push(
            "not run: an identical command of the same plugin ran once for this event".to_owned(),
        ),
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().take(n + 1).collect();
    if lines.len() > n {
        format!("{} …", lines[..n].join(" ⏎ "))
    } else {
        lines.join(" ⏎ ")
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
