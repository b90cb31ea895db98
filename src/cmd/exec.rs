//! `hookbox exec X.wasm …`: a drop-in Claude Code command hook. Claude Code runs
//! `hookbox exec guard.wasm` as an ordinary command hook: the payload arrives on stdin, the
//! component runs sandboxed (no network, no files but the mounts given, no environment but
//! `--env`, bounded time and memory), and the answer leaves as Claude Code expects it — JSON on
//! stdout and exit 0, or, for a `wasi:cli` component, its own stdout, stderr and exit code.
//!
//! A failed hook exits 1 (Claude Code: non-blocking error, the action proceeds) unless
//! `--on-failure block`, which exits 2 with the reason on stderr (Claude Code: blocking error).

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use hookbox_core::event::wire;
use hookbox_core::output::to_claude_json;
use hookbox_core::rule::{Access, MountSpec, WasmSpec};
use hookbox_core::{Dialect, Event};
use hookbox_wasm::{
    ComponentKind, Invocation, LogLevel, MountDir, PoolingMode, ResolvedMount, RunReport,
    WasmOutput, WasmPolicy, WasmRuntime, resolve,
};

use crate::cli::{ExecArgs, FailureArg, LogLevelArg};
use crate::host_setup::{block_on, wasm_runtime_config};

/// Claude Code's payloads are small; a bigger stdin is refused rather than buffered.
const MAX_PAYLOAD_BYTES: u64 = 16 << 20;

/// Runs `hookbox exec`.
pub(crate) fn run(args: &ExecArgs) -> anyhow::Result<ExitCode> {
    if !args.component.is_file() {
        bail!("cannot run {}: no such file", args.component.display());
    }
    let mounts = args
        .mount
        .iter()
        .map(|m| parse_mount(m))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let env = args
        .env
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .with_context(|| format!("--env `{kv}` must be NAME=VALUE"))
        })
        .collect::<anyhow::Result<BTreeMap<_, _>>>()?;
    let config: serde_json::Value = match &args.config {
        Some(c) => {
            serde_json::from_str(c).with_context(|| format!("--config is not valid JSON: {c}"))?
        }
        None => serde_json::Value::Null,
    };
    let mut stdin = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut stdin)
        .context("cannot read the hook payload from stdin")?;
    if stdin.len() as u64 > MAX_PAYLOAD_BYTES {
        bail!("the payload on stdin is over {MAX_PAYLOAD_BYTES} bytes");
    }
    let payload: serde_json::Value =
        serde_json::from_slice(&stdin).context("stdin is not a JSON hook payload")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let event = Event::from_payload(None, payload, "exec", &cwd.display().to_string())
        .context("the payload is not a hook event")?;

    let spec = WasmSpec {
        component: args.component.display().to_string(),
        timeout_secs: args.timeout,
        fuel: args.fuel,
        memory_mb: args.memory_mb,
        table_elements: args.table_elements,
        instances: args.instances,
        output_bytes: args.output_bytes,
        log_calls: args.log_calls,
        response_bytes: args.response_bytes,
        write_bytes: args.write_bytes,
        write_files: args.write_files,
        mounts: mounts.iter().map(|(m, _)| m.clone()).collect(),
        env,
        config,
    };
    // The person writing the command line is the operator: what they grant is the policy, up to
    // the engine's own hard caps (the default maxima), with the write quotas opened as wide.
    let mut policy = WasmPolicy {
        allow_fuel: args.fuel.is_some(),
        allow_rw_mounts: true,
        ..WasmPolicy::default()
    };
    policy.maxima.write_bytes = u64::MAX;
    policy.maxima.write_files = u64::MAX;
    let limits = resolve(&spec, &policy).context("the limits given are refused")?;
    let mut rt_config = wasm_runtime_config().with_fuel(args.fuel.is_some());
    // One event per process: reserving an instance pool would cost more than it saves.
    rt_config.pooling = PoolingMode::Disabled;
    if let Some(max) = args.max_component_bytes {
        rt_config.max_component_bytes = max;
    }
    let wasm = WasmRuntime::new(rt_config).context("cannot start the wasm runtime")?;
    let component = match wasm.load_file_within(&args.component, &limits) {
        Ok(c) => c,
        Err(e) => return Ok(failed(args.on_failure, &format!("{e}"))),
    };
    let resolved: Vec<ResolvedMount> = mounts
        .into_iter()
        .map(|(m, host)| {
            Ok(ResolvedMount {
                host: MountDir::open(&host)
                    .with_context(|| format!("--mount {}", host.display()))?,
                guest: m.guest,
                access: m.access,
                symlinks: m.symlinks,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let env: Vec<(String, String)> = spec.env.clone().into_iter().collect();
    // A typed hook's WIT event carries the flat payload; a wasi:cli one reads --dialect's.
    let shape = match component.kind() {
        ComponentKind::TypedHook => Dialect::Claude,
        ComponentKind::WasiCommand => args.dialect.into(),
    };
    let payload = serde_json::to_string(&wire::payload(&event, shape))
        .context("cannot encode the payload")?;
    let inv = Invocation {
        event: &event,
        payload_json: &payload,
        limits: &limits,
        mounts: &resolved,
        env: &env,
        config_json: Arc::from(spec.config.to_string()),
        label: Arc::from(args.component.display().to_string()),
    };
    let result = block_on(wasm.run(&component, inv))?;
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    match result {
        Ok(run) => {
            write_logs(&mut stderr, &run.report, args.log_level, false);
            match run.output {
                WasmOutput::Typed(r) => {
                    let json = to_claude_json(event.name, &r);
                    writeln!(stdout, "{json}").context("cannot write to stdout")?;
                    Ok(ExitCode::SUCCESS)
                }
                WasmOutput::Command(raw) => {
                    stdout
                        .write_all(raw.stdout.as_bytes())
                        .context("cannot write to stdout")?;
                    stderr
                        .write_all(raw.stderr.as_bytes())
                        .context("cannot write to stderr")?;
                    let code = raw.exit_code.unwrap_or(1).clamp(0, 255) as u8;
                    Ok(ExitCode::from(code))
                }
            }
        }
        Err(f) => {
            write_logs(&mut stderr, &f.report, args.log_level, true);
            drop(stderr);
            Ok(failed(args.on_failure, &f.failure.to_string()))
        }
    }
}

/// `HOST:GUEST[:ro|rw]`; HOST must exist and is made absolute.
fn parse_mount(s: &str) -> anyhow::Result<(MountSpec, PathBuf)> {
    let mut parts = s.splitn(3, ':');
    let (Some(host), Some(guest)) = (parts.next(), parts.next()) else {
        bail!("--mount `{s}` must be HOST:GUEST[:ro|rw], e.g. .:/project:ro");
    };
    let access = match parts.next() {
        None | Some("ro") => Access::Ro,
        Some("rw") => Access::Rw,
        Some(other) => bail!("--mount `{s}`: access `{other}` must be ro or rw"),
    };
    let abs = std::fs::canonicalize(host)
        .with_context(|| format!("--mount `{s}`: host folder {host} does not exist"))?;
    if !abs.is_dir() {
        bail!("--mount `{s}`: {} is not a folder", abs.display());
    }
    Ok((
        MountSpec {
            host: abs.display().to_string(),
            guest: guest.to_owned(),
            access,
            symlinks: false,
        },
        abs,
    ))
}

/// The guest's `log` lines at `level` and above, and its captured stderr when it failed or at
/// `debug` and below. (A `wasi:cli` component's stderr is its answer and is written apart.)
fn write_logs(err: &mut impl std::io::Write, r: &RunReport, level: LogLevelArg, failed: bool) {
    // Claude Code shows a hook's stderr to the user on some exit codes: only what was asked for.
    for log in r.logs.iter().filter(|l| shown(l.level, level)) {
        let _ = writeln!(err, "[{:?}] {}", log.level, log.message);
    }
    if !r.stderr.text.is_empty() && (failed || level <= LogLevelArg::Debug) {
        let _ = err.write_all(r.stderr.text.as_bytes());
    }
}

/// Whether a guest log line at `line` passes `--log-level threshold`.
fn shown(line: LogLevel, threshold: LogLevelArg) -> bool {
    let line = match line {
        LogLevel::Trace => LogLevelArg::Trace,
        LogLevel::Debug => LogLevelArg::Debug,
        LogLevel::Info => LogLevelArg::Info,
        LogLevel::Warn => LogLevelArg::Warn,
        LogLevel::Error => LogLevelArg::Error,
    };
    threshold != LogLevelArg::Off && line >= threshold
}

/// A failed hook: exit 1 (non-blocking) or, fail-closed, exit 2 with the reason on stderr.
fn failed(mode: FailureArg, why: &str) -> ExitCode {
    eprintln!("hookbox exec: hook failed: {why}");
    match mode {
        FailureArg::Allow => ExitCode::from(1),
        FailureArg::Block => ExitCode::from(2),
    }
}
