//! `hookbox demo`: a scripted agent session through the bundled example plugins, native and
//! WebAssembly together — context injection, a blocked prompt, a denied and a rewritten tool
//! call, an audit, a Stop rescue and the re-entry cap, an observe-only PreCompact, a hostile
//! hook contained at its timeout — and, when this binary carries them, hooks written in
//! JavaScript and Python beside the Rust and shell ones. The scenario is
//! `examples/demo/scenario.json` (built in), or `--scenario FILE`. Plugins are copied to a scratch
//! folder, where wasm components named after a guest this binary carries (`shell_guard.wasm`,
//! `runaway.wasm`, `shell_guard_py.wasm`, …) are supplied. The plugins and guests are built into
//! the binary (`hookbox-bundled`), so the demo runs from any folder. An optional plugin whose
//! components are not there (a binary built without the JavaScript/Python tooling) is left out,
//! and the transcript says why.
//!
//! The transcript streams: each step is printed (text, or its piece of the one JSON document)
//! as soon as it completes, and its dispatches — hook outputs of up to a megabyte each — are
//! dropped then; the closing summary comes from the host's counters. A scenario of thousands of
//! events holds one step at a time.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use hookbox_core::aggregate::Verdict;
use hookbox_core::config::LoadOptions;
use hookbox_core::diagnostic::Severity;
use hookbox_core::render::UserTurn;
use hookbox_core::stop_loop::StopStep;
use hookbox_core::{Event, EventName};
use hookbox_host::{Dispatch, HookHost, dispatch_json};
use owo_colors::OwoColorize;
use serde::Deserialize;
use serde_json::{Value, json};

use super::EXIT_FAILURE;
use super::dispatch::verdict_line;
use super::term::untrusted;
use super::validate::write_diagnostic;
use crate::cli::DemoArgs;
use crate::host_setup::{HostSetup, SetupOptions, block_on};

/// The built-in scenario.
const SCENARIO: &str = include_str!("../../examples/demo/scenario.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    #[allow(dead_code, reason = "documentation for readers of the file")]
    description: String,
    session_id: String,
    /// Plugin folders, relative to the plugins folder.
    plugins: Vec<String>,
    /// Plugin folders loaded after `plugins` when every component their hooks name is there
    /// (in the folder or carried by this binary); left out otherwise, with the reason shown.
    #[serde(default)]
    optional_plugins: Vec<String>,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    title: String,
    /// One event…
    #[serde(default)]
    event: Option<String>,
    #[serde(default)]
    payload: Option<Value>,
    /// …or a turn's end: the Stop payloads the "model" produces, round after round, while the
    /// Stop hooks ask to continue (the last one repeats if they keep asking).
    #[serde(default)]
    turn: Option<Vec<Value>>,
}

/// Runs `hookbox demo`.
pub(crate) fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let (text, origin) = match &args.scenario {
        Some(p) => (
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read scenario {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            SCENARIO.to_owned(),
            "examples/demo/scenario.json (built in)".to_owned(),
        ),
    };
    let scenario: Scenario =
        serde_json::from_str(&text).with_context(|| format!("scenario {origin} is not valid"))?;
    let scratch = crate::scratch::private_dir("hookbox-demo")?;
    let result = run_in(
        args,
        &scenario,
        &origin,
        args.plugins_dir.as_deref(),
        &scratch,
    );
    if !args.keep {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    result
}

fn run_in(
    args: &DemoArgs,
    scenario: &Scenario,
    origin: &str,
    plugins_dir: Option<&Path>,
    scratch: &Path,
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let project = scratch.join("project");
    std::fs::create_dir_all(&project)
        .with_context(|| format!("cannot create {}", project.display()))?;
    let mut paths = Vec::new();
    let mut left_out = Vec::new();
    let required = scenario.plugins.iter().map(|name| (name, false));
    let optional = scenario.optional_plugins.iter().map(|name| (name, true));
    for (name, is_optional) in required.chain(optional) {
        let dst = scratch.join("plugins").join(name);
        match plugins_dir {
            Some(dir) => {
                let src = dir.join(name);
                if !src.is_dir() {
                    bail!(
                        "scenario plugin `{name}` is not a folder under {}",
                        dir.display()
                    );
                }
                copy_dir(&src, &dst)?;
            }
            None => write_bundled_plugin(name, &dst)?,
        }
        let hooks = hooks_json(&dst)?;
        supply_components(&dst, hooks.as_deref())?;
        if is_optional {
            let missing = missing_components(&dst, hooks.as_deref())?;
            if !missing.is_empty() {
                std::fs::remove_dir_all(&dst)
                    .with_context(|| format!("cannot remove {}", dst.display()))?;
                left_out.push((name.clone(), why_left_out(&missing)));
                continue;
            }
        }
        paths.push(dst);
    }
    // The demo's state (plugin data, replay, approvals) lives in its scratch folder, beside the
    // project. The bundled plugins come with this binary: they are approved in the demo's own
    // store (below); plugins from --plugins-dir are not.
    let trust_store = scratch.join("state").join("trust");
    if plugins_dir.is_none() {
        hookbox_host::ApprovalStore::create(&trust_store)?;
    }
    let opts = SetupOptions {
        trust: args.trust.map(Into::into),
        trust_store: Some(trust_store.clone()),
        ..SetupOptions::default()
    };
    let setup = HostSetup::with_state(&project, &scratch.join("state"), &opts)?;
    precompile(&setup, &paths)?;
    let mut report = setup.load(&paths, &LoadOptions::default())?;
    if plugins_dir.is_none()
        && let Some(store) = setup.host.trust_store()
    {
        for s in setup.host.trust_report() {
            store.put(&s.to_approval(super::trust_show::now()))?;
        }
        report = setup.load(&paths, &LoadOptions::default())?;
    }
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    // Every step is checked before the first one runs, so a bad scenario prints no half
    // transcript.
    for step in &scenario.steps {
        events_of(scenario, step, &project)?;
    }
    let mut stdout = anstream::stdout().lock();
    let mut out = String::new();
    if args.json {
        // The transcript is one JSON document, written as it goes: the head, each step as it
        // completes, then the metrics. Pieces are pretty-printed at their depth, so the whole
        // reads as `serde_json::to_string_pretty` of it would.
        let left: Vec<Value> = left_out
            .iter()
            .map(|(plugin, why)| json!({"plugin": plugin, "why": why}))
            .collect();
        let _ = write!(
            out,
            "{{\n  \"scenario\": {},\n  \"left_out\": {},\n  \"diagnostics\": {},\n  \"steps\": [",
            pretty(&json!(origin), 1)?,
            pretty(&json!(left), 1)?,
            pretty(&json!(report.diagnostics), 1)?,
        );
    } else {
        let wasm = report
            .rules
            .iter()
            .filter(|r| r.handler.handler_type().as_str() == "wasm")
            .count();
        let _ = writeln!(
            out,
            "{} {}",
            "hookbox demo".bold(),
            format!("— {origin}").dimmed()
        );
        let _ = writeln!(
            out,
            "loaded {} rules ({} wasm) from {} plugins in {load_ms:.0} ms",
            report.rules.len(),
            wasm,
            report.plugins.len()
        );
        for (name, why) in &left_out {
            let _ = writeln!(out, "{} {name}: {why}", "left out".yellow());
        }
        for d in &report.diagnostics {
            write_diagnostic(&mut out, d);
        }
    }
    emit(&mut stdout, &mut out)?;
    let host = setup.host.clone();
    // Each step is printed as soon as it completes and then dropped: a long scenario whose
    // hooks print megabytes holds one step's dispatches at a time, not the whole session's.
    // What the summary needs is the host's counters.
    // Rules that are not approved (plugins from --plugins-dir), once each, on stderr.
    let mut said = std::collections::HashSet::new();
    block_on(async {
        for (i, step) in scenario.steps.iter().enumerate() {
            let dispatches = run_step(&host, scenario, step, &project).await?;
            for f in dispatches.iter().flat_map(|(d, _)| &d.trust) {
                if said.insert((f.subject.clone(), f.location.clone())) {
                    eprintln!("hookbox: trust: {}", untrusted(&f.to_string()));
                }
            }
            if args.json {
                let step_json = json!({"title": step.title, "dispatches": dispatches.iter().map(|(d, _)| dispatch_json(d)).collect::<Vec<_>>()});
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(out, "{sep}\n    {}", pretty(&step_json, 2)?);
            } else {
                render_step(&mut out, i + 1, step, &dispatches);
            }
            drop(dispatches);
            emit(&mut stdout, &mut out)?;
        }
        host.runtime().drain(host.policy().dispatch_deadline).await;
        anyhow::Ok(())
    })??;
    let metrics = host.metrics();
    let replay = host
        .replay_dir()
        .map(|d| d.join(crate::cmd::demo::replay_name(&scenario.session_id)));
    if args.json {
        let close = if scenario.steps.is_empty() {
            "]"
        } else {
            "\n  ]"
        };
        let _ = write!(
            out,
            "{close},\n  \"metrics\": {}\n}}\n",
            pretty(&json!(metrics), 1)?
        );
    } else {
        let _ = writeln!(
            out,
            "\n{} {} dispatches, {} hooks run ({} command, {} prompt, {} wasm), {} failed and contained, {:.0} ms in all",
            "done:".bold(),
            metrics.dispatches,
            metrics.hooks_run.values().sum::<u64>(),
            metrics.hooks_run.get("command").copied().unwrap_or(0),
            metrics.hooks_run.get("prompt").copied().unwrap_or(0),
            metrics.hooks_run.get("wasm").copied().unwrap_or(0),
            metrics.failures.values().sum::<u64>(),
            started.elapsed().as_secs_f64() * 1000.0
        );
        if let Some(r) = replay.filter(|_| args.keep) {
            let _ = writeln!(out, "replay: {}", r.display());
        }
    }
    emit(&mut stdout, &mut out)?;
    Ok(
        if report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
        {
            ExitCode::from(EXIT_FAILURE)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// Compiles the components the plugins name into the host's runtime (and the disk cache)
/// before loading them, with a progress bar on a terminal: a first run compiles every one (the
/// Python guest's 18.5 MB take tens of seconds), and sitting silent that long reads as a hang.
/// Later runs take them from the cache in milliseconds. A component that fails here is
/// reported by the load that follows, located at its rule.
fn precompile(setup: &HostSetup, paths: &[std::path::PathBuf]) -> anyhow::Result<()> {
    let report = hookbox_core::config::load_paths(paths, &LoadOptions::default());
    let jobs = super::compile::components(&report);
    if jobs.is_empty() {
        return Ok(());
    }
    let bar = if std::io::stderr().is_terminal() {
        eprintln!(
            "compiling {} wasm components (only the first run; later runs take them from the cache)…",
            jobs.len()
        );
        super::compile::progress_bar(jobs.len())?
    } else {
        indicatif::ProgressBar::hidden()
    };
    super::compile::compile_all(setup.host.runtime().wasm(), jobs, &bar);
    Ok(())
}

/// Writes what `out` holds to stdout (flushed, so a reader sees each step when it ends) and
/// empties it.
fn emit(stdout: &mut impl std::io::Write, out: &mut String) -> anyhow::Result<()> {
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to stdout")?;
    out.clear();
    Ok(())
}

/// `v` pretty-printed as a value `depth` levels deep in a pretty-printed document (two spaces
/// a level), without the indentation of its first line.
fn pretty(v: &Value, depth: usize) -> anyhow::Result<String> {
    let text = serde_json::to_string_pretty(v).context("cannot encode the transcript")?;
    Ok(text.replace('\n', &format!("\n{}", "  ".repeat(depth))))
}

/// The replay file name of a session (as the host writes it).
pub(crate) fn replay_name(session: &str) -> String {
    hookbox_host::replay::session_file_name(session)
}

/// Checks that `step` is one event with a payload that fits it, or a non-empty turn of Stop
/// payloads that fit Stop — the checks [`run_step`] makes, without running anything.
fn events_of(scenario: &Scenario, step: &Step, project: &Path) -> anyhow::Result<()> {
    let cwd = project.display().to_string();
    let make = |name: EventName, payload: &Value| {
        Event::from_payload(Some(name), payload.clone(), &scenario.session_id, &cwd)
            .map(drop)
            .with_context(|| format!("step `{}`: payload does not fit {name}", step.title))
    };
    match (&step.event, &step.turn) {
        (Some(name), None) => {
            let name: EventName = name
                .parse()
                .map_err(|_| anyhow::anyhow!("step `{}`: unknown event `{name}`", step.title))?;
            make(name, step.payload.as_ref().unwrap_or(&json!({})))
        }
        (None, Some(rounds)) if !rounds.is_empty() => rounds
            .iter()
            .try_for_each(|payload| make(EventName::Stop, payload)),
        _ => bail!(
            "step `{}` needs either `event` (with an optional `payload`) or a non-empty `turn`",
            step.title
        ),
    }
}

/// One step: one dispatch, or a turn's Stop rounds. Each dispatch comes with the follow-up the
/// agent sends next, if any.
async fn run_step(
    host: &HookHost,
    scenario: &Scenario,
    step: &Step,
    project: &Path,
) -> anyhow::Result<Vec<(Dispatch, Option<String>)>> {
    let cwd = project.display().to_string();
    let make = |name: EventName, payload: &Value| {
        Event::from_payload(Some(name), payload.clone(), &scenario.session_id, &cwd)
            .with_context(|| format!("step `{}`: payload does not fit {name}", step.title))
    };
    match (&step.event, &step.turn) {
        (Some(name), None) => {
            let name: EventName = name
                .parse()
                .map_err(|_| anyhow::anyhow!("step `{}`: unknown event `{name}`", step.title))?;
            let payload = step.payload.clone().unwrap_or_else(|| json!({}));
            Ok(vec![(host.dispatch(make(name, &payload)?).await, None)])
        }
        (None, Some(rounds)) if !rounds.is_empty() => {
            let mut turn = host.stop_loop();
            let mut out = Vec::new();
            for round in 0.. {
                let payload = &rounds[round.min(rounds.len() - 1)];
                let (d, next) = host
                    .dispatch_stop(make(EventName::Stop, payload)?, &mut turn)
                    .await;
                match next {
                    StopStep::Continue(msg) => out.push((d, Some(msg))),
                    StopStep::Finish => {
                        out.push((d, None));
                        break;
                    }
                }
            }
            Ok(out)
        }
        _ => bail!(
            "step `{}` needs either `event` (with an optional `payload`) or a non-empty `turn`",
            step.title
        ),
    }
}

fn render_step(out: &mut String, n: usize, step: &Step, dispatches: &[(Dispatch, Option<String>)]) {
    let _ = writeln!(out, "\n{} {}", format!("{n:>2}.").bold(), step.title.bold());
    for (round, (d, follow_up)) in dispatches.iter().enumerate() {
        let what = match d.event.name {
            EventName::PreToolUse | EventName::PostToolUse => {
                let input = d
                    .event
                    .tool_input()
                    .map(|i| {
                        i.get("command")
                            .or(i.get("url"))
                            .cloned()
                            .unwrap_or(i.clone())
                    })
                    .unwrap_or_default();
                format!(
                    "{} {} {}",
                    d.event.name,
                    d.event.tool_name().unwrap_or(""),
                    input
                )
            }
            EventName::UserPromptSubmit => {
                format!("{} {:?}", d.event.name, d.event.prompt().unwrap_or(""))
            }
            EventName::Stop => {
                let msg = d
                    .event
                    .stop_data()
                    .and_then(|s| s.last_assistant_message.clone())
                    .unwrap_or_default();
                let active = d.event.stop_data().is_some_and(|s| s.stop_hook_active);
                format!(
                    "Stop (round {}, stop_hook_active={active}) last answer {msg:?}",
                    round + 1
                )
            }
            name => name.to_string(),
        };
        let _ = writeln!(out, "    {} {}", "▸".cyan(), what.dimmed());
        for r in &d.reports {
            let mark = if r.effect.failure.is_some() {
                "✗".red().to_string()
            } else {
                "✓".green().to_string()
            };
            let detail = match (&r.effect.failure, r.attachments().first()) {
                (Some(f), _) => format!("{} ({})", f.class.as_str().red(), untrusted(&f.message)),
                (None, Some(a)) => a
                    .content
                    .as_deref()
                    .map(|c| short(&untrusted(c), 90))
                    .unwrap_or_default(),
                (None, None) => String::new(),
            };
            let _ = writeln!(
                out,
                "      {mark} {:<20} {:<8} {:>8} {}",
                untrusted(&r.hook.plugin),
                r.hook.handler_type.as_str(),
                format!("{:.1} ms", r.duration_ms),
                detail.dimmed()
            );
        }
        if d.reports.is_empty() {
            let _ = writeln!(
                out,
                "      {}",
                "(no rule matched: nothing ran, no HookFired)".dimmed()
            );
        }
        let _ = writeln!(out, "      verdict: {}", verdict_line(&d.verdict));
        match d.user_turn() {
            Some(UserTurn::Blocked(t) | UserTurn::Stopped(t)) => {
                let _ = writeln!(out, "      agent returns: {}", untrusted(&t).red());
            }
            Some(UserTurn::Proceed(t)) if !d.verdict.additional_contexts().is_empty() => {
                let _ = writeln!(out, "      model receives:");
                for line in untrusted(&t).lines() {
                    let _ = writeln!(out, "        {}", line.dimmed());
                }
            }
            _ => {}
        }
        if let (Verdict::PreToolUse(r), Some(input)) = (&d.verdict, d.event.tool_input())
            && let Some(u) = &r.updated_input
        {
            let _ = writeln!(
                out,
                "      tool input: {input} → {}",
                u.to_string().yellow()
            );
        }
        if let Some(f) = follow_up {
            let _ = writeln!(
                out,
                "      agent sends as the next user message: {}",
                short(&untrusted(f), 100).yellow()
            );
        }
        for w in &d.warnings {
            let _ = writeln!(
                out,
                "      {} {}",
                "warning:".yellow(),
                short(&untrusted(w), 120)
            );
        }
    }
}

fn short(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ⏎ ");
    if one_line.chars().count() > max {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    } else {
        one_line
    }
}

/// Copies a plugin folder (files and folders; symlinks are not followed).
fn copy_dir(src: &Path, dst: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dst).with_context(|| format!("cannot create {}", dst.display()))?;
    for entry in std::fs::read_dir(src).with_context(|| format!("cannot read {}", src.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let to = dst.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &to)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Writes the example plugin `name` this binary carries into `dst`.
fn write_bundled_plugin(name: &str, dst: &Path) -> anyhow::Result<()> {
    let mut found = false;
    for (path, bytes) in hookbox_bundled::plugin_files(name) {
        let to = dst.join(path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&to, bytes).with_context(|| format!("cannot write {}", to.display()))?;
        found = true;
    }
    if !found {
        let known: std::collections::BTreeSet<&str> = hookbox_bundled::PLUGIN_FILES
            .iter()
            .filter_map(|f| f.path.split('/').next())
            .collect();
        bail!(
            "scenario plugin `{name}` is not one of the example plugins this binary carries ({}); \
             pass --plugins-dir to use plugins from a folder",
            known.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}

/// The text of the plugin's `hooks/hooks.json`, if it has one: read once for
/// [`supply_components`] and [`missing_components`], at most the loader's own file limit.
fn hooks_json(plugin: &Path) -> anyhow::Result<Option<String>> {
    use std::io::Read as _;
    let path = plugin.join("hooks").join("hooks.json");
    let Ok(file) = std::fs::File::open(&path) else {
        return Ok(None);
    };
    let mut text = String::new();
    file.take(hookbox_core::config::DEFAULT_MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if text.len() as u64 > hookbox_core::config::DEFAULT_MAX_FILE_BYTES {
        bail!(
            "{} is over {} bytes, the most a hook file may hold",
            path.display(),
            hookbox_core::config::DEFAULT_MAX_FILE_BYTES
        );
    }
    Ok(Some(text))
}

/// Writes every `*.wasm` a plugin's hook file (`hooks`, its text) names but the plugin does not
/// contain, when this binary carries a guest of that name (`shell_guard.wasm` ←
/// guest-examples/shell-guard).
fn supply_components(plugin: &Path, hooks: Option<&str>) -> anyhow::Result<()> {
    let Some(text) = hooks else {
        return Ok(());
    };
    for guest in hookbox_bundled::GUESTS {
        let file = format!("{}.wasm", guest.name);
        if text.contains(&format!("hooks/{file}")) && !plugin.join("hooks").join(&file).exists() {
            let to = plugin.join("hooks").join(&file);
            std::fs::write(&to, guest.bytes)
                .with_context(|| format!("cannot write {}", to.display()))?;
        }
    }
    Ok(())
}

/// The components the plugin's hook file (`hooks`, its text) names (`"component":
/// "hooks/x.wasm"`, at any depth) that are not files in the plugin folder.
fn missing_components(plugin: &Path, hooks: Option<&str>) -> anyhow::Result<Vec<String>> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (key, value) in map {
                    match value {
                        Value::String(s) if key == "component" => out.push(s.clone()),
                        _ => walk(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let Some(text) = hooks else {
        return Ok(Vec::new());
    };
    let doc: Value = serde_json::from_str(text).with_context(|| {
        format!(
            "{} is not valid JSON",
            plugin.join("hooks/hooks.json").display()
        )
    })?;
    let mut named = Vec::new();
    walk(&doc, &mut named);
    Ok(named
        .into_iter()
        .filter(|c| !plugin.join(c).is_file())
        .collect())
}

/// Why an optional plugin whose components are `missing` was left out.
fn why_left_out(missing: &[String]) -> String {
    let polyglot = missing
        .iter()
        .any(|c| c.ends_with("_js.wasm") || c.ends_with("_py.wasm"));
    match crate::guests::polyglot_missing() {
        Some(why) if polyglot => why,
        _ => format!(
            "its hooks name components that are not there: {}",
            missing.join(", ")
        ),
    }
}
