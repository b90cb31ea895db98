//! `hookbox bench`: the JavaScript and Python example guests beside the native `node` and
//! `python3` hooks with the same logic (`examples/native-hooks/`), in one run. The JavaScript
//! guest is measured in its three builds — componentize-js (StarlingMonkey), componentize-qjs
//! (QuickJS from npm) and the QuickJS toolchain (`guest-examples/js-quickjs`), the same source —
//! each beside the one node row:
//!
//! - per event in a long-lived host (p50/p99 of a full dispatch), where a guest is instantiated
//!   from the pool and a native hook is a fresh process each time;
//! - one whole process, as Claude Code runs a command hook: `hookbox exec guest.wasm` (compiled
//!   component taken from the cache) next to `node script.mjs` / `python3 script.py` (median of
//!   spawn-to-exit).
//!
//! The guests are the ones this binary carries; when it was built without their tooling, or
//! `node`/`python3` is not on `PATH`, the rows that need them are left out and the report says why.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use hookbox_core::{Event, EventName};
use hookbox_host::{HookRuntime, RuntimeSettings};
use serde::Serialize;
use serde_json::{Value, json};

use super::floor::{FloorFigures, FloorRun, figures as floor_figures, side_by_side};
use super::measure::{host_with_rule, latencies, percentile};
use crate::guests;
use crate::host_setup::wasm_runtime_config;

/// The native hooks, carried by the binary so the bench runs from any folder.
const NODE_HOOK: &str = include_str!("../../examples/native-hooks/context_injection.mjs");
const PYTHON_HOOK: &str = include_str!("../../examples/native-hooks/shell_guard.py");
/// The Python guest's own rules, which the native Python hook imports: the same decision code.
const PYTHON_RULES: &str = include_str!("../../guest-examples/python/shell-guard/rules.py");
/// What the context hooks inject.
const CONTEXT: &str = "Project ATLAS. Prefer the design documents under docs/atlas/.";

/// One way of running one hook's logic.
#[derive(Debug, Serialize)]
pub(crate) struct PolyglotRow {
    pub(crate) form: &'static str,
    pub(crate) in_host_runs: usize,
    pub(crate) in_host_p50_us: f64,
    pub(crate) in_host_p99_us: f64,
    /// A guest's p50/p99 in a host whose pool resets memory with `PAGEMAP_SCAN` (off by default:
    /// issue 8 #23), when the kernel offers it: how much of a big guest's time is memory reset.
    pub(crate) in_host_pagemap_p50_us: Option<f64>,
    pub(crate) in_host_pagemap_p99_us: Option<f64>,
    /// A guest's floor: the same component run by the least wasmtime needs, in alternating
    /// rounds with the host's dispatches (the interpreter's own cost is below it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) floor: Option<FloorFigures>,
    pub(crate) process_runs: usize,
    /// Median wall time of one whole process (spawn, run, exit), in milliseconds.
    pub(crate) process_median_ms: f64,
}

/// A guest against the native hook it replaces.
#[derive(Debug, Serialize)]
pub(crate) struct PolyglotPair {
    pub(crate) guest: &'static str,
    pub(crate) native: &'static str,
    /// Native p50 over guest p50, both in a long-lived host.
    pub(crate) in_host_speedup: f64,
    /// Native process median over `hookbox exec` process median.
    pub(crate) process_speedup: f64,
}

/// The polyglot part of the report.
#[derive(Debug, Default, Serialize)]
pub(crate) struct PolyglotNumbers {
    pub(crate) rows: Vec<PolyglotRow>,
    pub(crate) pairs: Vec<PolyglotPair>,
    /// Why rows are missing (empty when all five forms ran).
    pub(crate) missing: Vec<String>,
}

/// What each side of a pair needs.
struct Form {
    name: &'static str,
    event: EventName,
    rule: Value,
    component: Option<(&'static str, &'static [u8])>,
    /// The whole-process command: program and arguments (the payload goes to stdin).
    process: Vec<String>,
    payload: Value,
}

/// Measures every form whose guest and interpreter are available.
pub(crate) async fn measure(
    scratch: &Path,
    runtime: &HookRuntime,
    cache: &Path,
    scale: usize,
) -> anyhow::Result<PolyglotNumbers> {
    let mut pagemap = wasm_runtime_config().with_cache_dir(cache);
    pagemap.pool.pagemap_scan = true;
    let pagemap = HookRuntime::new(RuntimeSettings {
        wasm: pagemap,
        ..RuntimeSettings::default()
    })
    .context("cannot start the pagemap_scan runtime")?;
    let pagemap = pagemap.wasm().pagemap_scan_active().then_some(pagemap);
    let dir = scratch.join("polyglot");
    std::fs::create_dir_all(&dir).context("cannot create the polyglot scratch folder")?;
    for (file, text) in [
        ("context_injection.mjs", NODE_HOOK),
        ("shell_guard.py", PYTHON_HOOK),
        ("rules.py", PYTHON_RULES),
    ] {
        std::fs::write(dir.join(file), text).with_context(|| format!("cannot write {file}"))?;
    }
    let exe = std::env::current_exe().context("cannot find this hookbox binary")?;
    let mut numbers = PolyglotNumbers::default();
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "bench", "cwd": "/",
                        "prompt": "How do I deploy the billing service to staging?"});
    let bash = json!({"hook_event_name": "PreToolUse", "session_id": "bench", "cwd": "/",
                      "tool_name": "Bash", "tool_input": {"command": "git status && cargo test --workspace"}});
    let config = json!({"context": CONTEXT}).to_string();

    let mut forms: Vec<(Form, Form)> = Vec::new();
    // The same JavaScript source built by both toolchains, each beside the native node hook.
    for (guest, file, name) in [
        (
            "context_injection_js",
            "context_injection_js.wasm",
            "JavaScript guest (context injection)",
        ),
        (
            "context_injection_qjs",
            "context_injection_qjs.wasm",
            "JavaScript guest, QuickJS (context injection)",
        ),
        (
            "context_injection_cqjs",
            "context_injection_cqjs.wasm",
            "JavaScript guest, componentize-qjs (context injection)",
        ),
    ] {
        match (guests::wasm(guest), on_path("node")) {
            (Ok(js), Some(node)) => {
                let wasm = write_guest(&dir, file, js)?;
                forms.push((
                    Form {
                        name,
                        event: EventName::UserPromptSubmit,
                        rule: json!({"type": "wasm", "component": format!("hooks/{file}"), "config": {"context": CONTEXT}}),
                        component: Some((file, js)),
                        process: exec_args(&exe, &wasm, Some(&config)),
                        payload: prompt.clone(),
                    },
                    Form {
                        name: "native node hook (context injection)",
                        event: EventName::UserPromptSubmit,
                        rule: json!({"type": "command", "command": format!("{} {} '{CONTEXT}'", node.display(), dir.join("context_injection.mjs").display())}),
                        component: None,
                        process: vec![
                            node.display().to_string(),
                            dir.join("context_injection.mjs").display().to_string(),
                            CONTEXT.to_owned(),
                        ],
                        payload: prompt.clone(),
                    },
                ));
            }
            (Err(e), _) => numbers.missing.push(format!("{name}: {e}")),
            (_, None) => numbers
                .missing
                .push("native node hook: `node` is not on PATH".to_owned()),
        }
    }
    match (guests::wasm("shell_guard_py"), on_path("python3")) {
        (Ok(py), Some(python)) => {
            let wasm = write_guest(&dir, "shell_guard_py.wasm", py)?;
            forms.push((
                Form {
                    name: "Python guest (shell guard)",
                    event: EventName::PreToolUse,
                    rule: json!({"type": "wasm", "component": "hooks/shell_guard_py.wasm", "matcher": "Bash"}),
                    component: Some(("shell_guard_py.wasm", py)),
                    process: exec_args(&exe, &wasm, None),
                    payload: bash.clone(),
                },
                Form {
                    name: "native python3 hook (shell guard)",
                    event: EventName::PreToolUse,
                    rule: json!({"type": "command", "command": format!("{} {}", python.display(), dir.join("shell_guard.py").display()), "matcher": "Bash"}),
                    component: None,
                    process: vec![
                        python.display().to_string(),
                        dir.join("shell_guard.py").display().to_string(),
                    ],
                    payload: bash.clone(),
                },
            ));
        }
        (Err(e), _) => numbers.missing.push(format!("Python guest: {e}")),
        (_, None) => numbers
            .missing
            .push("native python3 hook: `python3` is not on PATH".to_owned()),
    }

    let exec_cache = dir.join("exec-cache");
    for (guest, native) in forms {
        let guest_runs = (2000 / scale).max(20);
        let mut g = measure_form(
            &dir,
            runtime,
            &guest,
            &exec_cache,
            guest_runs,
            (20 / scale).max(5),
        )
        .await?;
        if let Some(pm) = &pagemap {
            let (p50, p99, _) =
                in_host(&dir.join("pagemap"), pm, &guest, guest_runs, false).await?;
            g.in_host_pagemap_p50_us = Some(p50);
            g.in_host_pagemap_p99_us = Some(p99);
        }
        numbers.rows.push(g);
        let g = numbers.rows.len() - 1;
        // A native hook paired with two guests (node, with both JavaScript builds) runs once.
        let n = match numbers.rows.iter().position(|r| r.form == native.name) {
            Some(n) => n,
            None => {
                let row = measure_form(
                    &dir,
                    runtime,
                    &native,
                    &exec_cache,
                    (100 / scale).max(10),
                    (20 / scale).max(5),
                )
                .await?;
                numbers.rows.push(row);
                numbers.rows.len() - 1
            }
        };
        let (g, n) = (&numbers.rows[g], &numbers.rows[n]);
        numbers.pairs.push(PolyglotPair {
            guest: guest.name,
            native: native.name,
            in_host_speedup: n.in_host_p50_us / g.in_host_p50_us,
            process_speedup: n.process_median_ms / g.process_median_ms,
        });
    }
    Ok(numbers)
}

async fn measure_form(
    dir: &Path,
    runtime: &HookRuntime,
    form: &Form,
    exec_cache: &Path,
    host_runs: usize,
    process_runs: usize,
) -> anyhow::Result<PolyglotRow> {
    eprintln!("bench: {}…", form.name);
    let (p50, p99, floor) = in_host(dir, runtime, form, host_runs, true).await?;
    let payload = form.payload.to_string();
    // One unmeasured run fills `hookbox exec`'s compile cache (and the OS page cache).
    run_process(&form.process, &payload, exec_cache)?;
    let mut times = Vec::with_capacity(process_runs);
    for _ in 0..process_runs {
        times.push(run_process(&form.process, &payload, exec_cache)?);
    }
    times.sort_by(f64::total_cmp);
    Ok(PolyglotRow {
        form: form.name,
        in_host_runs: host_runs,
        in_host_p50_us: p50,
        in_host_p99_us: p99,
        in_host_pagemap_p50_us: None,
        in_host_pagemap_p99_us: None,
        floor,
        process_runs: times.len(),
        process_median_ms: percentile(&times, 0.50),
    })
}

/// p50 and p99 of `runs` dispatches of `form`'s rule in a host on `runtime`, and, for a guest
/// when `with_floor`, its floor measured in alternating rounds with them.
async fn in_host(
    dir: &Path,
    runtime: &HookRuntime,
    form: &Form,
    runs: usize,
    with_floor: bool,
) -> anyhow::Result<(f64, f64, Option<FloorFigures>)> {
    std::fs::create_dir_all(dir).context("cannot create a bench folder")?;
    let slug: String = form
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let host = host_with_rule(
        dir,
        &slug,
        form.event,
        form.rule.clone(),
        runtime,
        form.component,
    )?;
    let event = Event::from_payload(Some(form.event), form.payload.clone(), "bench", "/")
        .context("the bench payload is not an event")?;
    // The answer must be what the logic gives, or the numbers measure a failure.
    let check = host.dispatch(event.clone()).await;
    if let Some(f) = check.reports.iter().find_map(|r| r.effect.failure.as_ref()) {
        bail!("{}: the hook failed: {f}", form.name);
    }
    match form.component {
        Some((_, bytes)) if with_floor => {
            let config = form
                .rule
                .get("config")
                .map_or_else(|| "null".to_owned(), Value::to_string);
            let at_floor = FloorRun::new(runtime, bytes, &event, &config)?;
            let (samples, bare) = side_by_side(&host, &event, &at_floor, runs).await?;
            let p50 = percentile(&samples, 0.50);
            Ok((
                p50,
                percentile(&samples, 0.99),
                Some(floor_figures(&bare, p50, None)),
            ))
        }
        _ => {
            let samples = latencies(&host, &event, runs).await;
            Ok((percentile(&samples, 0.50), percentile(&samples, 0.99), None))
        }
    }
}

/// Milliseconds from spawn to exit of `argv` with `payload` on stdin; it must exit 0 with JSON or
/// nothing on stdout.
fn run_process(argv: &[String], payload: &str, exec_cache: &Path) -> anyhow::Result<f64> {
    let t = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .env("HOOKBOX_CACHE_DIR", exec_cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", argv[0]))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(payload.as_bytes())
            .context("cannot write the payload")?;
    }
    let out = child
        .wait_with_output()
        .context("cannot wait for the hook")?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    // Nothing to say (an allowed command) is an empty stdout; anything else must be JSON.
    let answered = out.stdout.iter().all(u8::is_ascii_whitespace)
        || serde_json::from_slice::<Value>(&out.stdout).is_ok();
    if !out.status.success() || !answered {
        bail!(
            "{} did not answer ({}): {}{}",
            argv.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(ms)
}

fn exec_args(exe: &Path, wasm: &Path, config: Option<&str>) -> Vec<String> {
    let mut v = vec![
        exe.display().to_string(),
        "exec".to_owned(),
        wasm.display().to_string(),
    ];
    if let Some(c) = config {
        v.extend(["--config".to_owned(), c.to_owned()]);
    }
    v
}

fn write_guest(dir: &Path, file: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let path = dir.join(file);
    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `program`'s path on `PATH`, if any.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}
