//! `hookbox exec X.wasm …`: a drop-in command hook for any coding agent. The agent runs
//! `hookbox exec guard.wasm` as an ordinary command hook: the payload arrives on stdin (read by
//! the agent's adapter, `--agent` or detected), the component runs sandboxed (no network, no
//! files but the mounts given, no environment but `--env`, bounded time and memory), and the
//! answer leaves in the agent's protocol (`hookbox_agents`). Under Claude Code a `wasi:cli`
//! component's own stdout, stderr and exit code pass through; under another agent they are read
//! as a Claude Code hook's and answered in that agent's protocol.
//!
//! A failed hook is the agent's non-blocking error (Claude Code: exit 1) unless
//! `--on-failure block`, which is the agent's deny (Claude Code: exit 2 with the reason).
//! `--sha256 DIGEST` pins the component: its bytes are read once, hashed, and compiled only if
//! they match.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use hookbox_agents::{self as agent, Agent, AgentError, Failures, ParseOptions, limits};
use hookbox_core::Dialect;
use hookbox_core::aggregate::aggregate;
use hookbox_core::event::wire;
use hookbox_core::files::{Symlinks, open_path};
use hookbox_core::matcher::Matcher;
use hookbox_core::output::{FailureClass, HookFailure, RunOutput, effect_of};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::{Access, FailMode, Handler, MountSpec, Rule, RuleSource, WasmSpec};
use hookbox_wasm::{
    ComponentKind, Invocation, LogLevel, MountDir, PoolingMode, ResolvedMount, RunReport,
    WasmOutput, WasmPolicy, WasmRuntime, resolve,
};
use sha2::{Digest as _, Sha256};

use crate::cli::{ExecArgs, LogLevelArg};
use crate::host_setup::{block_on, wasm_runtime_config};

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
    let pinned = args.sha256.as_deref().map(parse_digest).transpose()?;
    let mut stdin = Vec::new();
    let max = u64::try_from(limits::MAX_PAYLOAD_BYTES).unwrap_or(u64::MAX);
    std::io::stdin()
        .take(max + 1)
        .read_to_end(&mut stdin)
        .context("cannot read the hook payload from stdin")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let opts = ParseOptions {
        event: args.event.clone(),
        default_session: "exec".into(),
        default_cwd: cwd.display().to_string(),
        ..ParseOptions::default()
    };
    let incoming =
        agent::parse_any(args.agent.map(Agent::from), &stdin, &opts).map_err(|(_, e)| match e {
            AgentError::TooLarge { .. }
            | AgentError::NotJson { .. }
            | AgentError::TooDeep { .. }
            | AgentError::NotAnObject { .. } => {
                anyhow::Error::new(e).context("stdin is not a JSON hook payload")
            }
            other => anyhow::Error::new(other).context("the payload is not a hook event"),
        })?;
    let (event, native) = (incoming.event, incoming.native);
    let mode = FailMode::from(args.on_failure);

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
    let rule = exec_rule(args, &event, &spec, mode);
    // The answer for a hook that failed before or while running, in the agent's protocol.
    let fail = |failure: HookFailure, stderr: &mut dyn std::io::Write| {
        answer(&rule, &event, &native, &RunOutput::Failed(failure), stderr)
    };
    let loaded = match pinned {
        None => wasm.load_file_within(&args.component, &limits),
        Some(want) => match read_pinned(&args.component, rt_config_max(&wasm), &want) {
            Ok(bytes) => {
                wasm.load_bytes_within(&bytes, &args.component.display().to_string(), &limits)
            }
            Err(failure) => return fail(failure, &mut std::io::stderr()),
        },
    };
    let component = match loaded {
        Ok(c) => c,
        Err(e) => return fail(e.failure(), &mut std::io::stderr()),
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
        tool_input_json: None,
        limits: &limits,
        mounts: &resolved,
        env: &env,
        config_json: Arc::from(spec.config.to_string()),
        label: Arc::from(args.component.display().to_string()),
    };
    let result = block_on(wasm.run(&component, inv))?;
    let mut stderr = std::io::stderr().lock();
    match result {
        Ok(run) => {
            write_logs(&mut stderr, &run.report, args.log_level, false);
            match run.output {
                WasmOutput::Typed(r) => answer(
                    &rule,
                    &event,
                    &native,
                    &RunOutput::Response(Box::new(r)),
                    &mut stderr,
                ),
                // Claude Code reads a wasi:cli component's own answer, exactly as it printed it.
                WasmOutput::Command(raw) if native.agent == Agent::Claude => {
                    let mut stdout = std::io::stdout().lock();
                    stdout
                        .write_all(raw.stdout.as_bytes())
                        .context("cannot write to stdout")?;
                    stderr
                        .write_all(raw.stderr.as_bytes())
                        .context("cannot write to stderr")?;
                    let code = raw.exit_code.unwrap_or(1).clamp(0, 255) as u8;
                    Ok(ExitCode::from(code))
                }
                // Another agent: the answer is read as a Claude Code hook's (--dialect's) and
                // said again in that agent's protocol.
                WasmOutput::Command(raw) => answer(
                    &rule,
                    &event,
                    &native,
                    &RunOutput::Command(raw),
                    &mut stderr,
                ),
            }
        }
        Err(f) => {
            write_logs(&mut stderr, &f.report, args.log_level, true);
            answer(
                &rule,
                &event,
                &native,
                &RunOutput::Failed(f.failure),
                &mut stderr,
            )
        }
    }
}

/// The one rule `exec` runs, for the effect tables: the component under `--on-failure`.
fn exec_rule(
    args: &ExecArgs,
    event: &hookbox_core::Event,
    spec: &WasmSpec,
    mode: FailMode,
) -> Rule {
    let mut rule = Rule::new(
        0,
        event.name,
        Matcher::All,
        Handler::Wasm(spec.clone()),
        args.dialect.into(),
        0,
        RuleSource::new("exec", &args.component),
    );
    rule.on_failure = Some(mode);
    rule
}

/// The answer to the agent for what the component returned: its effect, aggregated as a
/// dispatch of one rule would be, rendered by the agent's adapter.
fn answer(
    rule: &Rule,
    event: &hookbox_core::Event,
    native: &agent::Native,
    out: &RunOutput,
    stderr: &mut dyn std::io::Write,
) -> anyhow::Result<ExitCode> {
    let effect = effect_of(rule, event, out, FailMode::Allow);
    let report = HookReport {
        hook: HookRef {
            rule_index: 0,
            plugin: "exec".into(),
            hook_name: rule.handler.label().into(),
            handler_type: rule.handler.handler_type(),
            hook_event: event.name,
        },
        effect,
        duration_ms: 0.0,
        exit_code: None,
        output: None,
        fuel_consumed: None,
    };
    let reports = [report];
    let verdict = aggregate(event, &reports, native.stop_state(u32::MAX));
    let failures = Failures::from_reports(&reports);
    let a = agent::render(native, event, &verdict, &failures);
    if !a.stdout.is_empty() {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", a.stdout).context("cannot write to stdout")?;
    }
    // A failure is said on stderr in every agent's answer, the reason first.
    let mut extra: Vec<String> = failures
        .open
        .iter()
        .chain(&failures.closed)
        .filter(|f| !a.stderr.contains(f.as_str()))
        .map(|f| format!("hookbox exec: {f}"))
        .collect();
    extra.extend(
        reports[0]
            .effect
            .warnings
            .iter()
            .filter(|w| !w.starts_with("hook failed"))
            .map(|w| format!("hookbox exec: {w}")),
    );
    let _ = stderr.write_all(a.stderr_text(&extra).as_bytes());
    Ok(ExitCode::from(a.exit_code))
}

/// `--sha256`: 64 hex digits, any case.
fn parse_digest(s: &str) -> anyhow::Result<[u8; 32]> {
    let s = s.trim();
    if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!(
            "--sha256 `{s}` must be 64 hexadecimal digits (e.g. the output of `sha256sum guard.wasm`)"
        );
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
            .with_context(|| format!("--sha256 `{s}` is not hexadecimal"))?;
    }
    Ok(out)
}

/// The largest component the runtime reads.
fn rt_config_max(wasm: &WasmRuntime) -> u64 {
    wasm.config().max_component_bytes
}

/// Reads the component once and checks its sha256 against `want` before anything compiles it:
/// the bytes returned are the ones hashed, so swapping the file after the check changes nothing.
fn read_pinned(path: &std::path::Path, max: u64, want: &[u8; 32]) -> Result<Vec<u8>, HookFailure> {
    let origin = path.display().to_string();
    let file = open_path(path, Symlinks::Follow)
        .map_err(|e| HookFailure::new(FailureClass::InstantiateError, e.to_string()))?;
    let bytes = hookbox_wasm::read_component(file, &origin, max).map_err(|e| e.failure())?;
    let got: [u8; 32] = Sha256::digest(&bytes).into();
    if &got != want {
        return Err(HookFailure::new(
            FailureClass::IncompatibleComponent,
            format!(
                "{origin} has sha256 {}, not the pinned {}; refused before compiling (the file changed since it was pinned)",
                hex(&got),
                hex(want)
            ),
        ));
    }
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
