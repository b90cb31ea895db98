//! `hookbox bench`'s tenant figures (SPEC §9, issue 9), on one runtime with fuel metering, as a
//! platform would run it:
//! - a quiet tenant's dispatch p50 alone, and while a noisy tenant floods the same runtime — once
//!   with a flood of cheap hooks (the noisy tenant dispatching as fast as it can) and once with a
//!   flood of hostile ones (spinning, memory-bombing, sleeping guests) — and while two tenants keep
//!   16 spinning guests each (each tenant's CPU share, `wasm_cpu_share`, at work), and the ratios;
//! - resident memory per loaded tenant with 10 wasm rules, with many tenants loaded, beyond the
//!   shared compiled code;
//! - the time to reload a tenant whose 10 components are already compiled and whose files have
//!   not changed since they settled (the snapshot's digests cached).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use hookbox_core::{Event, EventName};
use hookbox_host::{HookRuntime, HostPolicy, TenantId, TenantPolicy, TenantSpec, Tenants};
use serde::Serialize;
use serde_json::{Value, json};

/// A quiet tenant's dispatch p50 alone and while a noisy tenant floods the same runtime.
#[derive(Debug, Serialize)]
pub(crate) struct Isolation {
    /// Quiet tenant's p50 with nothing else running, µs.
    pub(crate) quiet_alone_p50_us: f64,
    /// Its p50 while another tenant dispatches cheap hooks as fast as it can, µs.
    pub(crate) quiet_during_cheap_flood_p50_us: f64,
    /// Its p50 while another tenant floods spinning, memory-bombing and sleeping guests, µs.
    pub(crate) quiet_during_hostile_flood_p50_us: f64,
    /// `quiet_during_cheap_flood_p50_us ÷ quiet_alone_p50_us` (goal ≤ 1.5).
    pub(crate) ratio_cheap_flood: f64,
    /// `quiet_during_hostile_flood_p50_us ÷ quiet_alone_p50_us` (goal ≤ 1.5).
    pub(crate) ratio_hostile_flood: f64,
    /// Its p50 while two other tenants keep 16 spinning guests each, µs.
    pub(crate) quiet_during_two_spinning_tenants_p50_us: f64,
    /// `quiet_during_two_spinning_tenants_p50_us ÷ quiet_alone_p50_us` (goal ≤ 1.5).
    pub(crate) ratio_two_spinning_tenants: f64,
    /// Noisy dispatches completed during the cheap flood.
    pub(crate) noisy_dispatches: u64,
}

impl Isolation {
    /// The figures as one line of the bench table.
    pub(crate) fn line(&self) -> String {
        format!(
            "quiet tenant p50 alone {:.1} µs; during a noisy tenant's flood of cheap hooks {:.1} µs ({:.2}x, {} noisy dispatches); during a flood of spinning/memory-bombing/sleeping guests {:.1} µs ({:.2}x); while two tenants spin 16 guests each {:.1} µs ({:.2}x)",
            self.quiet_alone_p50_us,
            self.quiet_during_cheap_flood_p50_us,
            self.ratio_cheap_flood,
            self.noisy_dispatches,
            self.quiet_during_hostile_flood_p50_us,
            self.ratio_hostile_flood,
            self.quiet_during_two_spinning_tenants_p50_us,
            self.ratio_two_spinning_tenants,
        )
    }
}

/// What the tenant path costs over a plain host running the same hook on the same runtime:
/// measured in alternating rounds (host, tenant, host with replay, …) so that a machine that
/// slows down mid-run slows all three alike; each figure is the median of the rounds' p50s.
#[derive(Debug, Serialize)]
pub(crate) struct TenantOverHost {
    /// A plain `HookHost` without replay (as the host figures run it), p50 µs.
    pub(crate) host_p50_us: f64,
    /// A plain `HookHost` with replay on, as a host runs by default, p50 µs.
    pub(crate) host_with_replay_p50_us: f64,
    /// The quiet tenant (tenant defaults: replay on, quotas, fuel budget, metrics), p50 µs.
    pub(crate) tenant_p50_us: f64,
    /// `tenant_p50_us ÷ host_with_replay_p50_us` (goal ≤ 1.1).
    pub(crate) ratio_tenant_over_host: f64,
    /// `tenant_p50_us ÷ host_p50_us`.
    pub(crate) ratio_tenant_over_host_without_replay: f64,
    /// The same component at the floor on the same runtime (least wasmtime needs), p50 µs.
    pub(crate) floor_p50_us: f64,
    /// `tenant_p50_us ÷ floor_p50_us`.
    pub(crate) ratio_tenant_over_floor: f64,
    /// `host_p50_us ÷ floor_p50_us`.
    pub(crate) ratio_host_over_floor: f64,
}

impl TenantOverHost {
    /// The figures as one line of the bench table.
    pub(crate) fn line(&self) -> String {
        format!(
            "same hook, same runtime, p50: plain host {:.1} µs, plain host with replay {:.1} µs, quiet tenant {:.1} µs, floor {:.1} µs: tenant ÷ host with replay {:.2}x, ÷ host without {:.2}x; tenant ÷ floor {:.2}x, host ÷ floor {:.2}x",
            self.host_p50_us,
            self.host_with_replay_p50_us,
            self.tenant_p50_us,
            self.floor_p50_us,
            self.ratio_tenant_over_host,
            self.ratio_tenant_over_host_without_replay,
            self.ratio_tenant_over_floor,
            self.ratio_host_over_floor,
        )
    }
}

/// The tenant figures.
#[derive(Debug, Serialize)]
pub(crate) struct TenantNumbers {
    /// The tenant path against a plain host's.
    pub(crate) over_host: TenantOverHost,
    /// The quiet tenant against the noisy one.
    pub(crate) isolation: Isolation,
    /// Tenants loaded for the memory figure.
    pub(crate) tenants_loaded: usize,
    /// Resident memory per loaded tenant (10 wasm rules each), KiB (goal ≤ 256).
    pub(crate) memory_per_tenant_kib: f64,
    /// Median time to reload a tenant of 10 wasm rules whose components (8 distinct Rust
    /// guests) are compiled already and whose files are unchanged, ms (goal ≤ 5).
    pub(crate) reload_10_cached_ms: f64,
}

fn id(s: &str) -> anyhow::Result<TenantId> {
    TenantId::new(s).context("tenant id")
}

/// Writes a tenant folder with one plugin holding `hooks` and `components`.
fn tenant_folder(
    root: &Path,
    tenant: &str,
    hooks: &Value,
    components: &[(&str, &[u8])],
) -> anyhow::Result<PathBuf> {
    let folder = root.join(tenant);
    let plugin = folder.join("plugins").join("p");
    std::fs::create_dir_all(plugin.join("hooks")).context("mkdir")?;
    for (name, bytes) in components {
        std::fs::write(plugin.join("hooks").join(name), bytes)
            .with_context(|| format!("write {name}"))?;
    }
    std::fs::write(plugin.join("hooks/hooks.json"), hooks.to_string()).context("hooks.json")?;
    Ok(folder)
}

fn add(tenants: &Tenants, root: &Path, tenant: &str, policy: TenantPolicy) -> anyhow::Result<()> {
    tenants
        .add(TenantSpec {
            id: id(tenant)?,
            folder: root.join(tenant),
            policy,
            plugins: None,
            attached: (),
        })
        .map_err(|e| anyhow::anyhow!("{e}: {e:?}"))?;
    Ok(())
}

fn event(json: Value) -> anyhow::Result<Event> {
    Event::from_payload(None, json, "bench", "/").context("event")
}

/// The quiet tenant's dispatch p50 (µs) over `runs` dispatches, or as many as fit in the
/// sampling budget: under a flood that slows it by orders of magnitude the section still ends.
async fn p50(tenants: &Tenants, tenant: &TenantId, e: &Event, runs: usize) -> anyhow::Result<f64> {
    let e = &super::measure::shared(e);
    let one = || {
        let e = e.clone();
        async move {
            tenants.dispatch(tenant, e).await?;
            Ok(())
        }
    };
    let samples = super::measure::sample_within(runs, one).await?;
    Ok(samples[samples.len() / 2])
}

/// Says on stderr which step of the section starts: the floods can take minutes on a loaded
/// machine, and a step that does not end should be visible as that step.
fn step(what: &str) {
    eprintln!("bench: tenants: {what}…");
}

/// Rounds of [`over_host`].
const OVER_HOST_ROUNDS: usize = 5;

/// The quiet tenant's p50 against plain hosts with the same hook on the same runtime.
async fn over_host(
    tenants: &Tenants,
    runtime: &HookRuntime,
    scratch: &Path,
    runs: usize,
) -> anyhow::Result<TenantOverHost> {
    let noop = json!({"type": "wasm", "component": "hooks/noop.wasm"});
    let component = Some(("noop.wasm", guests::wasm("noop")?));
    let host = host_with_rule(
        scratch,
        "over-host",
        EventName::UserPromptSubmit,
        noop.clone(),
        runtime,
        component,
    )?;
    // The same, with the defaults a host runs with: replay on, into a state folder.
    let mut policy = HostPolicy::for_project(scratch.join("over-host-replay"));
    policy.state_dir = Some(scratch.join("over-host-state"));
    let replaying = host_with_policy(
        scratch,
        "over-host-replay",
        EventName::UserPromptSubmit,
        noop,
        runtime,
        component,
        policy,
    )?;
    let e = event(json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}))?;
    let quiet = id("quiet")?;
    let at_floor = FloorRun::new(runtime, guests::wasm("noop")?, &e, "null")?;
    step("the quiet tenant beside plain hosts and the floor");
    let (mut h, mut r, mut t, mut f) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..OVER_HOST_ROUNDS {
        let plain = latencies(&host, &e, runs).await;
        h.push(plain[plain.len() / 2]);
        let with_replay = latencies(&replaying, &e, runs).await;
        r.push(with_replay[with_replay.len() / 2]);
        t.push(p50(tenants, &quiet, &e, runs).await?);
        let bare = super::measure::sample_within(runs, || at_floor.once()).await?;
        f.push(bare[bare.len() / 2]);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (host_p50_us, host_with_replay_p50_us, tenant_p50_us, floor_p50_us) = (
        median(&mut h),
        median(&mut r),
        median(&mut t),
        median(&mut f),
    );
    Ok(TenantOverHost {
        host_p50_us,
        host_with_replay_p50_us,
        tenant_p50_us,
        ratio_tenant_over_host: tenant_p50_us / host_with_replay_p50_us,
        ratio_tenant_over_host_without_replay: tenant_p50_us / host_p50_us,
        floor_p50_us,
        ratio_tenant_over_floor: tenant_p50_us / floor_p50_us,
        ratio_host_over_floor: host_p50_us / floor_p50_us,
    })
}

/// Runs dispatches of `noisy` in `tasks` loops for each tenant of `flooders` while measuring the
/// quiet tenant.
async fn during_flood(
    tenants: &Arc<Tenants>,
    flooders: &[&str],
    noisy: &Event,
    tasks: usize,
    quiet: &Event,
    runs: usize,
) -> anyhow::Result<(f64, u64)> {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let noisy = super::measure::shared(noisy);
    let mut set = tokio::task::JoinSet::new();
    for flooder in flooders {
        for _ in 0..tasks {
            let (t, e, stop, done) = (tenants.clone(), noisy.clone(), stop.clone(), done.clone());
            let flooder = id(flooder)?;
            set.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    t.dispatch(&flooder, e.clone()).await.ok()?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Some(())
            });
        }
    }
    // Let the flood build up before measuring.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let p = p50(tenants, &id("quiet")?, quiet, runs).await;
    stop.store(true, Ordering::Relaxed);
    // Dropped, not drained: a hostile dispatch runs to its timeout, and with the tenant's CPU
    // share of one turn its queued dispatches would take turns for minutes. Dropping a dispatch
    // cancels its guest and gives its turn, slot and quota back.
    set.abort_all();
    while set.join_next().await.is_some() {}
    Ok((p?, done.load(Ordering::Relaxed)))
}

/// Adds the quiet tenant (one cheap wasm hook) and the noisy one (the same hook, and hostile
/// ones on Notification) to `tenants`, their folders under `root`.
fn add_quiet_and_noisy(tenants: &Tenants, root: &Path) -> anyhow::Result<()> {
    let noop =
        json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/noop.wasm"}]}});
    tenant_folder(
        root,
        "quiet",
        &noop,
        &[("noop.wasm", guests::wasm("noop")?)],
    )?;
    add(tenants, root, "quiet", TenantPolicy::default())?;
    // The noisy tenant: a cheap hook on UserPromptSubmit, hostile ones on Notification (where
    // the runaway guest takes its behaviour from config).
    let hostile: Vec<Value> = ["spin", "alloc:200000000", "sleep:5000"]
        .iter()
        .map(|b| json!({"type": "wasm", "component": "hooks/runaway.wasm", "config": {"behaviour": b}}))
        .collect();
    let noisy_hooks = json!({"hooks": {
        "UserPromptSubmit": [{"type": "wasm", "component": "hooks/noop.wasm"}],
        "Notification": hostile,
    }});
    tenant_folder(
        root,
        "noisy",
        &noisy_hooks,
        &[
            ("noop.wasm", guests::wasm("noop")?),
            ("runaway.wasm", guests::wasm("runaway")?),
        ],
    )?;
    add(tenants, root, "noisy", TenantPolicy::default())?;
    // Two tenants whose every Notification hook spins until its timeout or fuel runs out.
    let spin = json!({"hooks": {"Notification": [
        {"type": "wasm", "component": "hooks/runaway.wasm", "config": {"behaviour": "spin"}}
    ]}});
    for spinner in SPINNERS {
        tenant_folder(
            root,
            spinner,
            &spin,
            &[("runaway.wasm", guests::wasm("runaway")?)],
        )?;
        add(tenants, root, spinner, TenantPolicy::default())?;
    }
    Ok(())
}

/// The two tenants that keep [`SPINNING_GUESTS`] spinning guests each.
const SPINNERS: [&str; 2] = ["spinner-a", "spinner-b"];
/// Spinning guests per spinning tenant (its default `max_hooks_in_flight`).
const SPINNING_GUESTS: usize = 16;

/// The quiet tenant's p50 alone and during the noisy tenant's two floods (both added already).
async fn isolation(tenants: &Arc<Tenants>, scale: usize) -> anyhow::Result<Isolation> {
    let quiet_event = event(json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}))?;
    let runs = (4000 / scale).max(50);
    p50(tenants, &id("quiet")?, &quiet_event, runs / 4).await?;
    step("the quiet tenant alone");
    let alone = p50(tenants, &id("quiet")?, &quiet_event, runs).await?;
    step("the quiet tenant during a flood of cheap hooks");
    let (cheap, noisy_dispatches) =
        during_flood(tenants, &["noisy"], &quiet_event, 8, &quiet_event, runs).await?;
    let hostile_event = event(json!({"hook_event_name": "Notification", "message": "m"}))?;
    step("the quiet tenant during a flood of hostile hooks");
    let (hostile, _) = during_flood(
        tenants,
        &["noisy"],
        &hostile_event,
        32,
        &quiet_event,
        (runs / 4).max(20),
    )
    .await?;
    step("the quiet tenant while two tenants spin");
    let (spinning, _) = during_flood(
        tenants,
        &SPINNERS,
        &hostile_event,
        SPINNING_GUESTS,
        &quiet_event,
        (runs / 4).max(20),
    )
    .await?;
    Ok(Isolation {
        quiet_alone_p50_us: alone,
        quiet_during_cheap_flood_p50_us: cheap,
        quiet_during_hostile_flood_p50_us: hostile,
        ratio_cheap_flood: cheap / alone,
        ratio_hostile_flood: hostile / alone,
        quiet_during_two_spinning_tenants_p50_us: spinning,
        ratio_two_spinning_tenants: spinning / alone,
        noisy_dispatches,
    })
}

/// The tenant figures; `scale` divides the sample counts (`--quick`).
pub(crate) async fn measure(
    runtime: HookRuntime,
    scratch: &Path,
    scale: usize,
) -> anyhow::Result<TenantNumbers> {
    let root = scratch.join("tenants");
    let state = scratch.join("tenant-state");
    let tenants = Arc::new(Tenants::new(runtime.clone(), &state));
    add_quiet_and_noisy(&tenants, &root)?;

    // Memory first, before the floods leave freed memory the allocator would reuse: many tenants
    // of 10 wasm rules each, all on one compiled component.
    let ten: Vec<Value> = (0..10)
        .map(|i| json!({"type": "wasm", "component": "hooks/noop.wasm", "matcher": format!("tool{i}")}))
        .collect();
    let ten = json!({"hooks": {"PreToolUse": ten}});
    let count = (1000 / scale).max(20);
    let template = tenant_folder(&root, "t0", &ten, &[("noop.wasm", guests::wasm("noop")?)])?;
    add(&tenants, &root, "t0", TenantPolicy::default())?;
    step("memory per loaded tenant");
    let before = super::measure::rss_mib();
    for i in 1..count {
        let name = format!("t{i}");
        let folder = root.join(&name);
        std::fs::create_dir_all(folder.join("plugins/p/hooks")).context("mkdir")?;
        for f in ["hooks/hooks.json", "hooks/noop.wasm"] {
            std::fs::copy(
                template.join("plugins/p").join(f),
                folder.join("plugins/p").join(f),
            )
            .context("copy")?;
        }
        add(&tenants, &root, &name, TenantPolicy::default())?;
    }
    let after = super::measure::rss_mib();
    let memory_per_tenant_kib = (after - before) * 1024.0 / (count - 1) as f64;

    let over_host = over_host(&tenants, &runtime, scratch, (2000 / scale).max(50)).await?;
    let isolation = isolation(&tenants, scale).await?;

    // Reload: a tenant with 10 distinct components, all compiled already.
    let components = [
        ("a.wasm", guests::wasm("noop")?),
        ("b.wasm", guests::wasm("noop_cli")?),
        ("c.wasm", guests::wasm("shell_guard")?),
        ("d.wasm", guests::wasm("context_injection")?),
        ("e.wasm", guests::wasm("empty_answer_rescue")?),
        ("f.wasm", guests::wasm("compaction_audit")?),
        ("g.wasm", guests::wasm("cli_guard")?),
        ("h.wasm", guests::wasm("runaway")?),
        ("i.wasm", guests::wasm("noop")?),
        ("j.wasm", guests::wasm("shell_guard")?),
    ];
    let rules: Vec<Value> = components
        .iter()
        .map(|(f, _)| json!({"type": "wasm", "component": format!("hooks/{f}"), "config": {"context": "x"}}))
        .collect();
    tenant_folder(
        &root,
        "reloaded",
        &json!({"hooks": {"PreCompact": rules}}),
        &components,
    )?;
    add(&tenants, &root, "reloaded", TenantPolicy::default())?;
    let reloaded = id("reloaded")?;
    // A tenant's files unchanged since they settled, as a reload finds them once a deploy is
    // over: the snapshot's digest cache keeps only versions written over a second ago
    // (hookbox_host's trust::file_version), so files written just now would be read and hashed
    // at every reload.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    step("reloads");
    let mut reloads = Vec::new();
    for _ in 0..(20 / scale).max(5) {
        let (t, r) = (tenants.clone(), reloaded.clone());
        let started = Instant::now();
        tokio::task::spawn_blocking(move || t.reload(&r, None))
            .await
            .context("reload task")?
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        reloads.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    reloads.sort_by(f64::total_cmp);
    Ok(TenantNumbers {
        over_host,
        isolation,
        tenants_loaded: count,
        memory_per_tenant_kib,
        reload_10_cached_ms: reloads[reloads.len() / 2],
    })
}
use super::floor::FloorRun;
use super::measure::{host_with_policy, host_with_rule, latencies};
use crate::guests;
