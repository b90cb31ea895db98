//! Running cases: each in a scratch project of its own (a fresh private folder with the case's
//! files, written beneath it without following links), through a `HookHost` built exactly as
//! `dispatch` and `hook` build theirs (`HostSetup`: project settings, trust mode and approval
//! store, limits, sandbox), the plugin loaded into it, the event dispatched, the verdict read —
//! and rendered for each listed agent. Cases run concurrently, `jobs` at a time; cases that set
//! `env` share a runtime per environment (native hooks start from a runtime's environment).

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use hookbox_agents::{self as agent, Failures, ParseOptions};
use hookbox_core::aggregate::StopState;
use hookbox_core::config::{LoadOptions, LoadReport};
use hookbox_core::rule::Rule;
use hookbox_core::{Event, EventName};
use hookbox_host::{HookRuntime, TrustMode};
use rustix::fs::{Mode, OFlags};
use tokio::sync::Semaphore;

use super::agents::{self as agent_check, Kind};
use super::case::{Case, project_path};
use super::expect::{Mismatch, Observed, check};
use crate::cmd::validate::write_diagnostic;
use crate::host_setup::{HostSetup, runtime_settings};

/// The session id of every case whose payload names none.
pub(crate) const TEST_SESSION: &str = "case-session";

/// A plugin and its cases.
pub(crate) struct Suite {
    /// The plugin folder, absolute.
    pub(crate) plugin: PathBuf,
    /// As the user named it.
    pub(crate) shown: String,
    /// Its cases, sorted by name.
    pub(crate) cases: Vec<Case>,
}

/// How one case ended.
#[derive(Debug, Clone)]
pub(crate) struct CaseResult {
    /// What the dispatch showed (empty when it could not run).
    pub(crate) observed: Observed,
    /// Expectations that did not hold.
    pub(crate) mismatches: Vec<Mismatch>,
    /// Why the case could not run at all (a payload that does not fit the event, a plugin that
    /// does not load in the case's project).
    pub(crate) error: Option<String>,
    /// Rules that ran, as `file json_path`.
    pub(crate) fired: Vec<String>,
    /// Trust findings: rules that are not approved as they are.
    pub(crate) untrusted: Vec<String>,
    /// Wall time of the whole case (setup, load, dispatch).
    pub(crate) wall_ms: f64,
}

impl CaseResult {
    pub(crate) fn passed(&self) -> bool {
        self.error.is_none() && self.mismatches.is_empty()
    }
}

/// A suite's run.
pub(crate) struct SuiteResult {
    /// The plugin's rules (from its first load), for coverage.
    pub(crate) rules: Vec<Rule>,
    /// Why the plugin does not load (then no case ran).
    pub(crate) load_error: Option<String>,
    /// One per case, in the suite's order.
    pub(crate) cases: Vec<CaseResult>,
}

/// The key of a rule in coverage and in `fired`: its file, relative to the plugin, and its JSON
/// path (`hooks/hooks.json hooks.PreToolUse[0].hooks[0]`).
pub(crate) fn rule_key(rule: &Rule, plugin: &Path) -> String {
    let file = rule
        .source
        .file
        .strip_prefix(plugin)
        .unwrap_or(&rule.source.file);
    format!("{} {}", file.display(), rule.source.json_path)
}

/// Runs every suite; `scratch` is a private folder the cases' projects go in.
pub(crate) async fn run_all(
    suites: &[Suite],
    scratch: &Path,
    jobs: usize,
    trust: Option<TrustMode>,
) -> anyhow::Result<Vec<SuiteResult>> {
    let base = HookRuntime::new(runtime_settings()).context("cannot start hookbox")?;
    let mut out = Vec::new();
    for (s, suite) in suites.iter().enumerate() {
        let dir = scratch.join(format!("suite-{s}"));
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // One load first, alone: it reports load errors once and compiles the plugin's
        // components into the cache, so the cases that follow in parallel do not compile them
        // each.
        let first = {
            let (plugin, dir, base) = (suite.plugin.clone(), dir.clone(), base.clone());
            tokio::task::spawn_blocking(move || load_in(&base, &plugin, &dir.join("load"), trust))
                .await
                .context("the first load of the plugin panicked")??
        };
        let rules = first.report.rules.clone();
        if first.report.has_errors() {
            out.push(SuiteResult {
                rules,
                load_error: Some(diagnostics_text(&first.report)),
                cases: Vec::new(),
            });
            continue;
        }
        // Cases that set the same environment share a runtime.
        let mut groups: BTreeMap<&BTreeMap<String, String>, Vec<usize>> = BTreeMap::new();
        for (i, c) in suite.cases.iter().enumerate() {
            groups.entry(&c.spec.env).or_default().push(i);
        }
        let mut results: Vec<Option<CaseResult>> = vec![None; suite.cases.len()];
        for (env, members) in groups {
            let runtime = if env.is_empty() {
                base.clone()
            } else {
                let mut settings = runtime_settings();
                settings.extra_env = env.iter().map(|(k, v)| (k.into(), v.into())).collect();
                HookRuntime::new(settings).context("cannot start hookbox")?
            };
            let gate = Arc::new(Semaphore::new(jobs.max(1)));
            let mut set = tokio::task::JoinSet::new();
            for i in members {
                let (case, runtime, gate) = (suite.cases[i].clone(), runtime.clone(), gate.clone());
                let (plugin, case_dir) = (suite.plugin.clone(), dir.join(format!("case-{i}")));
                set.spawn(async move {
                    let _permit = gate.acquire_owned().await;
                    (
                        i,
                        run_case(&runtime, &plugin, &case, &case_dir, trust).await,
                    )
                });
            }
            while let Some(done) = set.join_next().await {
                let (i, r) = done.context("a case's task panicked")?;
                results[i] = Some(r);
            }
            // `async` hooks finish within their own timeouts before the runtime goes.
            if runtime.background_hooks() > 0 {
                runtime.drain(std::time::Duration::from_secs(60)).await;
            }
        }
        out.push(SuiteResult {
            rules,
            load_error: None,
            cases: results.into_iter().flatten().collect(),
        });
    }
    Ok(out)
}

struct Loaded {
    setup: HostSetup,
    report: LoadReport,
}

/// A host for a case's `project` (created, with `state` beside it) with `plugin` loaded.
fn load_in(
    runtime: &HookRuntime,
    plugin: &Path,
    case_dir: &Path,
    trust: Option<TrustMode>,
) -> anyhow::Result<Loaded> {
    let project = case_dir.join("project");
    let state = case_dir.join("state");
    for d in [case_dir, &project, &state] {
        std::fs::create_dir(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let setup = HostSetup::for_case(runtime, &project, &state, trust)?;
    let report = setup.load(&[plugin.to_owned()], &LoadOptions::default())?;
    Ok(Loaded { setup, report })
}

fn diagnostics_text(report: &LoadReport) -> String {
    let mut s = String::new();
    for d in &report.diagnostics {
        write_diagnostic(&mut s, d);
    }
    anstream::adapter::strip_str(&s)
        .to_string()
        .trim_end()
        .to_owned()
}

async fn run_case(
    runtime: &HookRuntime,
    plugin: &Path,
    case: &Case,
    dir: &Path,
    trust: Option<TrustMode>,
) -> CaseResult {
    let started = Instant::now();
    let mut r = CaseResult {
        observed: Observed::default(),
        mismatches: Vec::new(),
        error: None,
        fired: Vec::new(),
        untrusted: Vec::new(),
        wall_ms: 0.0,
    };
    if let Err(e) = dispatch_case(runtime, plugin, case, dir, trust, &mut r).await {
        r.error = Some(format!("{e:#}"));
    }
    r.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    r
}

async fn dispatch_case(
    runtime: &HookRuntime,
    plugin: &Path,
    case: &Case,
    dir: &Path,
    trust: Option<TrustMode>,
    r: &mut CaseResult,
) -> anyhow::Result<()> {
    let loaded = {
        let (runtime, plugin, dir, case) = (
            runtime.clone(),
            plugin.to_owned(),
            dir.to_owned(),
            case.clone(),
        );
        tokio::task::spawn_blocking(move || -> anyhow::Result<Loaded> {
            let loaded = load_in(&runtime, &plugin, &dir, trust)?;
            write_project(&dir.join("project"), &case)?;
            Ok(loaded)
        })
        .await
        .context("loading the plugin panicked")??
    };
    if loaded.report.has_errors() {
        anyhow::bail!(
            "the plugin does not load in this case's project:\n{}",
            diagnostics_text(&loaded.report)
        );
    }
    let host = loaded.setup.host.clone();
    let project = dir.join("project");
    let cwd = project.display().to_string();
    let (event, given) = match case.spec.agent {
        Some(a) => {
            let bytes = serde_json::to_vec(&case.spec.payload)?;
            let opts = ParseOptions {
                event: case.spec.event.clone(),
                default_session: TEST_SESSION.into(),
                default_cwd: cwd.clone(),
                ..ParseOptions::default()
            };
            let incoming = agent::parse(a, &bytes, &opts)
                .map_err(|e| anyhow::anyhow!("the {} payload: {e}", a.display_name()))?;
            (incoming.event, Some(incoming.native))
        }
        None => {
            let name: EventName = case
                .spec
                .event
                .as_deref()
                .unwrap_or_default()
                .parse()
                .map_err(|_| anyhow::anyhow!("unknown event"))?;
            let payload = serde_json::Value::Object(case.spec.payload.clone());
            let event = Event::from_payload(Some(name), payload, TEST_SESSION, &cwd)
                .context("the payload does not fit the event")?;
            (event, None)
        }
    };
    let stop = match &given {
        Some(n) => n.stop_state(host.stop_reentry_cap()),
        None => StopState {
            reentries: case.spec.reentries,
            cap: host.stop_reentry_cap(),
        },
    };
    let d = host.dispatch_with_stop_state(event, stop).await;
    let kind = Kind::of(d.event.name);
    let mut o = Observed::of(&d.verdict, &d.reports, d.duration.as_secs_f64() * 1000.0);
    o.matched = d.matched_rule_count;
    let failures = Failures::from_reports(&d.reports);
    for &agent in &case.agents {
        let reading = agent_check::native_for(agent, &d.event, given.as_ref()).and_then(|native| {
            let answer = agent_check::answer(&native, &d.event, &d.verdict, &failures);
            agent_check::read(agent, kind, &answer)
        });
        o.agents.push((agent, reading));
    }
    r.mismatches = check(case, &o, kind);
    let rules = &loaded.report.rules;
    r.fired = d
        .reports
        .iter()
        .chain(d.rechecked.iter())
        .filter_map(|rep| rules.get(rep.hook.rule_index).map(|r| rule_key(r, plugin)))
        .collect();
    r.untrusted = d.trust.iter().map(ToString::to_string).collect();
    r.observed = o;
    Ok(())
}

/// Writes the case's project files beneath `project`: each folder opened without following a
/// link, each file created exclusively — a path cannot leave the project (checked when the case
/// was read, and again here by construction).
fn write_project(project: &Path, case: &Case) -> anyhow::Result<()> {
    let Some(p) = &case.spec.project else {
        return Ok(());
    };
    let root: OwnedFd = rustix::fs::open(
        project,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open {}", project.display()))?;
    for (path, text) in &p.files {
        let names = project_path(path)?;
        crate::scratch::create_beneath(&root, &names, text.as_bytes(), 0o644)
            .with_context(|| format!("project.files: cannot write `{path}`"))?;
    }
    Ok(())
}
