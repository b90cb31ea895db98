//! `hookbox bench --count KIND`: one path run `--wasm-runs` times and nothing else, so that an
//! outside counter (`perf stat -e instructions:u`, `perf record`) sees only that path. Run it
//! twice, with N and with 0 runs, and divide the difference by N: instructions per event, which
//! barely move on a loaded machine where wall times do. The bench's tables compare hookbox with
//! the floor by time; this compares them by work (docs/performance.md, "Counting instructions").
//!
//! Every kind runs the same no-op component on the bench's runtime configuration (fuel on, the
//! default pool): through a plain host (`typed`, `cli`), a host with replay on (`replay`), a
//! tenant with the tenant defaults (`tenant`), or at the floor (`typed-floor`, `cli-floor`).
//! `--count-in-flight N` keeps N in flight (the scaling question: does the work per event grow
//! with more of them at once?). `--count-evict-kib N` writes over N KiB after each run: under
//! cachegrind's cache simulation the misses per run are then what the path must fetch when it
//! starts cold, as an agent's events do (its code and data footprint).
//!
//! `serve` sends the `hookbox bench --serve` request to a `hookbox serve` in this process (the
//! bench tenant, replay on) over loopback with hyper's client, `serve-bare` the same request to
//! bare axum (an answer of the same size): their difference is what serving a typed event costs
//! beyond HTTP itself. `guest-floor` runs an example guest at the floor
//! (`--count-guest shell_guard`, or a component file: `--count-guest path/to/shell_guard.wasm`)
//! given an event and config it acts on, so each guest's own floor can be counted. `native` and
//! `bare` are the native `sh -c` hook through a plain host and the same command spawned bare
//! (count the parent's side only: valgrind without `--trace-children`).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use hookbox_core::{Event, EventName};
use hookbox_host::{
    HookHost, HookRuntime, HostPolicy, RuntimeSettings, TenantId, TenantPolicy, TenantSpec, Tenants,
};
use serde_json::json;

use super::floor::FloorRun;
use super::host_figures::{NATIVE_COMMAND, bare_spawn, bash_event, one_rule_host};
use super::measure::{host_with_policy, host_with_rule};
use crate::cli::CountKind;
use crate::guests;
use crate::host_setup::wasm_runtime_config;

/// Warm-up runs before the counted ones (the same in a run of N and a run of 0, so they cancel).
const WARM_UP: usize = 200;

/// One thing to run once per event.
enum Subject {
    Host(HookHost, Arc<Event>),
    Floor(FloorRun),
    Tenant(Arc<Tenants>, TenantId, Arc<Event>),
    /// One request over HTTP (`serve`, `serve-bare`).
    Http(Box<super::serve::CountClient>),
    /// The native hook's command spawned bare, fed this payload.
    Bare(Vec<u8>),
}

impl Subject {
    /// One event; a hook that did not run cleanly fails the count (a failing hook is cheaper
    /// than a working one, and would be counted as a win).
    async fn once(&self) -> anyhow::Result<()> {
        let d = match self {
            Subject::Host(host, event) => host.dispatch(event.clone()).await,
            Subject::Floor(floor) => return floor.once().await,
            Subject::Http(client) => return client.once().await,
            Subject::Bare(payload) => return bare_spawn(payload).await,
            Subject::Tenant(tenants, id, event) => tenants
                .dispatch(id, event.clone())
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?,
        };
        anyhow::ensure!(d.reports.len() == 1, "{} hooks ran, not 1", d.reports.len());
        if let Some(f) = &d.reports[0].effect.failure {
            anyhow::bail!("the hook failed: {f}");
        }
        Ok(())
    }
}

/// The no-op on `UserPromptSubmit`, as the tenant figures give it.
fn prompt_event() -> anyhow::Result<Event> {
    Event::from_payload(
        None,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
        "bench",
        "/",
    )
    .context("event")
}

/// An example guest with an event and a rule config it acts on (not one it returns early from):
/// what a realistic event of that guest costs at the floor.
fn guest_event(guest: &str, scratch: &Path) -> anyhow::Result<(Event, &'static str)> {
    let event = |payload: serde_json::Value| {
        Event::from_payload(None, payload, "bench", "/").context("event")
    };
    Ok(match guest {
        "context_injection" => (
            prompt_event()?,
            r#"{"context": "Project ATLAS. Prefer the design docs under docs/atlas/."}"#,
        ),
        "empty_answer_rescue" => (
            event(json!({"hook_event_name": "Stop", "stop_hook_active": false,
                "last_assistant_message": " ", "turn_end_reason": "final_response"}))?,
            r#"{"follow_up": "Please answer the question."}"#,
        ),
        "compaction_audit" => (
            event(json!({"hook_event_name": "PreCompact", "trigger": "auto",
                "custom_instructions": ""}))?,
            "null",
        ),
        "shell_guard" => (bash_event(scratch), "{}"),
        _ => (bash_event(scratch), "null"),
    })
}

fn build(
    kind: CountKind,
    guest: &str,
    runtime: &HookRuntime,
    scratch: &Path,
) -> anyhow::Result<Subject> {
    let noop = || Some(("noop.wasm", guests::wasm("noop").ok()?));
    let bash = bash_event(scratch);
    Ok(match kind {
        CountKind::Typed => Subject::Host(
            one_rule_host(
                scratch,
                "typed",
                json!({"type": "wasm", "component": "hooks/noop.wasm", "matcher": "Bash"}),
                runtime,
                Some(("noop.wasm", guests::wasm("noop")?)),
            )?,
            Arc::new(bash.clone()),
        ),
        CountKind::Cli => Subject::Host(
            one_rule_host(
                scratch,
                "cli",
                json!({"type": "wasm", "component": "hooks/noop_cli.wasm", "matcher": "Bash"}),
                runtime,
                Some(("noop_cli.wasm", guests::wasm("noop_cli")?)),
            )?,
            Arc::new(bash.clone()),
        ),
        CountKind::TypedFloor => Subject::Floor(FloorRun::new(
            runtime,
            guests::wasm("noop")?,
            &bash,
            "null",
        )?),
        CountKind::CliFloor => Subject::Floor(FloorRun::new(
            runtime,
            guests::wasm("noop_cli")?,
            &bash,
            "null",
        )?),
        CountKind::GuestFloor => {
            // A path names a component file (a guest rebuilt another way, to compare); its
            // name without `.wasm` picks the event.
            let (name, bytes) = match guest.strip_suffix(".wasm") {
                Some(stem) => (
                    Path::new(stem)
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().replace('-', "_")),
                    std::fs::read(guest).with_context(|| format!("cannot read {guest}"))?,
                ),
                None => (guest.to_owned(), guests::wasm(guest)?.to_vec()),
            };
            let (event, config) = guest_event(&name, scratch)?;
            Subject::Floor(FloorRun::new(runtime, &bytes, &event, config)?)
        }
        CountKind::Native => Subject::Host(
            one_rule_host(
                scratch,
                "native",
                json!({"type": "command", "command": NATIVE_COMMAND, "matcher": "Bash"}),
                runtime,
                None,
            )?,
            Arc::new(bash.clone()),
        ),
        CountKind::Bare => Subject::Bare(
            hookbox_core::event::wire::payload(&bash, hookbox_core::Dialect::Claude)
                .to_string()
                .into_bytes(),
        ),
        CountKind::Prompt => Subject::Host(
            host_with_rule(
                scratch,
                "prompt",
                EventName::UserPromptSubmit,
                json!({"type": "wasm", "component": "hooks/noop.wasm"}),
                runtime,
                noop(),
            )?,
            Arc::new(prompt_event()?),
        ),
        CountKind::Replay => {
            let mut policy = HostPolicy::for_project(scratch.join("replay"));
            policy.state_dir = Some(scratch.join("replay-state"));
            Subject::Host(
                host_with_policy(
                    scratch,
                    "replay",
                    EventName::UserPromptSubmit,
                    json!({"type": "wasm", "component": "hooks/noop.wasm"}),
                    runtime,
                    noop(),
                    policy,
                )?,
                Arc::new(prompt_event()?),
            )
        }
        CountKind::Tenant => {
            let root = scratch.join("tenants");
            let plugin = root.join("quiet/plugins/p");
            std::fs::create_dir_all(plugin.join("hooks")).context("mkdir")?;
            std::fs::write(plugin.join("hooks/noop.wasm"), guests::wasm("noop")?)
                .context("write noop")?;
            let hooks = json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/noop.wasm"}]}});
            std::fs::write(plugin.join("hooks/hooks.json"), hooks.to_string())
                .context("hooks.json")?;
            let tenants = Arc::new(Tenants::new(runtime.clone(), scratch.join("tenant-state")));
            let id = TenantId::new("quiet").context("tenant id")?;
            tenants
                .add(TenantSpec {
                    id: id.clone(),
                    folder: root.join("quiet"),
                    policy: TenantPolicy::default(),
                    plugins: None,
                    attached: (),
                })
                .map_err(|e| anyhow::anyhow!("{e}: {e:?}"))?;
            Subject::Tenant(tenants, id, Arc::new(prompt_event()?))
        }
        CountKind::Serve => Subject::Http(Box::new(super::serve::CountClient::new(scratch, false))),
        CountKind::ServeBare => {
            Subject::Http(Box::new(super::serve::CountClient::new(scratch, true)))
        }
    })
}

/// Writes one byte of every 64-byte line of `buf`, so that what the last run left in a cache
/// smaller than `buf` is gone (`round` makes each pass's bytes differ, so no pass is skipped).
fn evict(buf: &mut [u8], round: usize) {
    for line in buf.chunks_mut(64) {
        line[0] = line[0].wrapping_add(round as u8 | 1);
    }
    std::hint::black_box(buf);
}

/// Runs `kind` `runs` times with `in_flight` at once, after a warm-up, each task writing over
/// `evict_kib` KiB after each of its runs ([`evict`]); prints what it did on stderr.
pub(crate) fn run(
    kind: CountKind,
    guest: &str,
    runs: usize,
    in_flight: usize,
    evict_kib: u32,
    scratch: &Path,
) -> anyhow::Result<()> {
    let rt = crate::host_setup::runtime()?;
    let runtime = HookRuntime::new(RuntimeSettings {
        // The user's compile cache: a run of 0 and a run of N load the same artefact.
        wasm: wasm_runtime_config(),
        ..RuntimeSettings::default()
    })
    .context("cannot start the runtime")?;
    let path = Arc::new(build(kind, guest, &runtime, scratch)?);
    let in_flight = in_flight.max(1);
    let started = rt.block_on(async {
        for _ in 0..WARM_UP {
            path.once().await?;
        }
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..in_flight {
            let path = path.clone();
            // The runs split evenly; the first tasks take the remainder.
            let share = runs / in_flight + usize::from(i < runs % in_flight);
            tasks.spawn(async move {
                let mut taken = vec![0u8; (evict_kib as usize) << 10];
                for round in 0..share {
                    path.once().await?;
                    evict(&mut taken, round);
                }
                anyhow::Ok(())
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined.context("a counting task")??;
        }
        anyhow::Ok(started)
    })?;
    let elapsed = started.elapsed();
    eprintln!(
        "bench --count {kind:?}: {runs} runs, {in_flight} in flight, {:.3} s ({:.2} µs per run)",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / runs.max(1) as f64
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::evict;

    #[test]
    fn eviction_writes_every_line_once_and_each_pass_anew() {
        let mut buf = vec![0u8; 64 * 5 + 10];
        evict(&mut buf, 0);
        let firsts: Vec<u8> = buf.chunks(64).map(|l| l[0]).collect();
        assert!(firsts.iter().all(|&b| b != 0), "{firsts:?}");
        // Only the first byte of each line: one write per line is enough to take it.
        assert!(buf.chunks(64).all(|l| l[1..].iter().all(|&b| b == 0)));
        // A second pass writes again (a pass that wrote the same value could be skipped).
        evict(&mut buf, 1);
        assert!(buf.chunks(64).zip(&firsts).all(|(l, &was)| l[0] != was));
    }
}
