//! Tenants: one runtime serving many tenants' wasm hooks — isolation of files, records and
//! metrics; atomic validate-then-swap reloads under load; failing reloads that keep the old
//! rules; one long-lived owner per tenant (a disable racing a replacement is never lost, the
//! quota holds across a swap under load, metrics and the stream go on); nothing in a tenant's
//! folder loosening its policy; and a noisy neighbour that cannot change a quiet tenant's
//! verdicts. Real components, real stores, no mocks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use hookbox_core::Event;
use hookbox_host::{
    HookRuntime, RuntimeSettings, TenantError, TenantId, TenantPolicy, TenantSpec, Tenants,
};
use hookbox_test_artifacts as guests;
use hookbox_wasm::RuntimeConfig;
use serde_json::{Value, json};

/// A folder of tenant folders, a state root outside it, and the fleet.
struct Fleet {
    root: tempfile::TempDir,
    _state: tempfile::TempDir,
    tenants: Tenants,
}

fn fleet_with(settings: RuntimeSettings) -> Fleet {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let runtime = HookRuntime::new(settings).unwrap();
    let tenants = Tenants::new(runtime, state.path());
    Fleet {
        root,
        _state: state,
        tenants,
    }
}

fn fleet() -> Fleet {
    fleet_with(RuntimeSettings {
        wasm: RuntimeConfig::default().with_fuel(true),
        ..RuntimeSettings::default()
    })
}

fn id(s: &str) -> TenantId {
    TenantId::new(s).unwrap()
}

impl Fleet {
    fn folder(&self, tenant: &str) -> PathBuf {
        self.root.path().join(tenant)
    }

    /// Writes `<tenant>/plugins/<plugin>/hooks/hooks.json` (and components into `hooks/`).
    fn plugin(
        &self,
        tenant: &str,
        plugin: &str,
        hooks: &Value,
        components: &[(&str, &str)],
    ) -> PathBuf {
        let dir = self.folder(tenant).join("plugins").join(plugin);
        std::fs::create_dir_all(dir.join("hooks")).unwrap();
        for (name, src) in components {
            std::fs::copy(src, dir.join("hooks").join(name)).unwrap();
        }
        std::fs::write(
            dir.join("hooks/hooks.json"),
            serde_json::to_vec_pretty(hooks).unwrap(),
        )
        .unwrap();
        dir
    }

    fn spec(&self, tenant: &str, policy: TenantPolicy) -> TenantSpec {
        TenantSpec {
            id: id(tenant),
            folder: self.folder(tenant),
            policy,
            plugins: None,
            attached: (),
        }
    }

    fn add(&self, tenant: &str) {
        self.tenants
            .add(self.spec(tenant, TenantPolicy::default()))
            .unwrap_or_else(|e| panic!("{e}: {e:?}"));
    }
}

fn prompt_event(prompt: &str, session: &str) -> Event {
    Event::from_payload(
        None,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": prompt}),
        session,
        "/",
    )
    .unwrap()
}

/// A chaos rule on UserPromptSubmit: the prompt is the behaviour.
fn chaos_rule(extra: Value) -> Value {
    let mut r = json!({"type": "wasm", "component": "hooks/chaos.wasm"});
    if let (Value::Object(r), Value::Object(extra)) = (&mut r, extra) {
        r.extend(extra);
    }
    json!({"hooks": {"UserPromptSubmit": [r]}})
}

fn contexts(d: &hookbox_host::Dispatch) -> Vec<String> {
    d.verdict.additional_contexts().to_vec()
}

fn load_errors(e: TenantError) -> String {
    match e {
        TenantError::Load { diagnostics, .. } => diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("expected a load error, got {other}"),
    }
}

#[test]
fn a_tenant_cannot_mount_or_load_another_tenants_folder() {
    let f = fleet();
    f.plugin(
        "a",
        "p",
        &chaos_rule(json!({})),
        &[("chaos.wasm", guests::CHAOS)],
    );
    std::fs::write(f.folder("a").join("secret.txt"), "a's secret").unwrap();
    f.add("a");
    // B mounts A's folder by absolute path: refused at load.
    let a_folder = f.folder("a").display().to_string();
    f.plugin(
        "b",
        "p",
        &chaos_rule(json!({"mounts": [{"host": a_folder, "guest": "/a"}]})),
        &[("chaos.wasm", guests::CHAOS)],
    );
    let e = load_errors(
        f.tenants
            .add(f.spec("b", TenantPolicy::default()))
            .unwrap_err(),
    );
    assert!(e.contains("outside the folders"), "{e}");
    // B's plugin folder is a symlink to A's plugin: refused, it is not really inside B.
    std::fs::remove_dir_all(f.folder("b").join("plugins/p")).unwrap();
    std::os::unix::fs::symlink(
        f.folder("a").join("plugins/p"),
        f.folder("b").join("plugins/p"),
    )
    .unwrap();
    let e = load_errors(
        f.tenants
            .add(f.spec("b", TenantPolicy::default()))
            .unwrap_err(),
    );
    assert!(e.contains("outside tenant `b`'s folder"), "{e}");
    // Loading from a path outside its folder: refused.
    std::fs::remove_file(f.folder("b").join("plugins/p")).unwrap();
    f.plugin(
        "b",
        "p",
        &chaos_rule(json!({})),
        &[("chaos.wasm", guests::CHAOS)],
    );
    f.add("b");
    let e = f
        .tenants
        .reload(&id("b"), Some(vec![f.folder("a").join("plugins")]))
        .unwrap_err();
    assert!(load_errors(e).contains("only load hooks from inside its folder"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_sees_nothing_of_another_tenants_files_records_or_metrics() {
    let f = fleet();
    let own = json!({"mounts": [{"host": "${CLAUDE_PROJECT_DIR}", "guest": "/mine"}]});
    for t in ["a", "b"] {
        f.plugin(
            t,
            "p",
            &chaos_rule(own.clone()),
            &[("chaos.wasm", guests::CHAOS)],
        );
        std::fs::write(f.folder(t).join("secret.txt"), format!("{t}'s secret")).unwrap();
        f.add(t);
    }
    let mut b_fired = f.tenants.host(&id("b")).unwrap().subscribe();
    // A's guest reads its own secret; B's guest cannot name A's folder at all.
    let a = f
        .tenants
        .dispatch(&id("a"), prompt_event("fs-read:/mine/secret.txt", "sess-a"))
        .await
        .unwrap();
    assert_eq!(contexts(&a), ["ok:a's secret"]);
    // Fuel is metered for tenants: each hook's report says what it used, for billing.
    let fuel = a.reports[0].fuel_consumed.expect("fuel is reported");
    assert!(fuel > 0);
    let a_path = f.folder("a").join("secret.txt").display().to_string();
    for probe in [
        format!("fs-read:{a_path}"),
        "fs-read:/mine/../a/secret.txt".into(),
        "fs-list:/".into(),
    ] {
        let b = f
            .tenants
            .dispatch(&id("b"), prompt_event(&probe, "sess-b"))
            .await
            .unwrap();
        let got = contexts(&b).join("");
        assert!(!got.contains("a's secret"), "{probe}: {got}");
        if probe == "fs-list:/" {
            assert!(
                got == "ok:mine" || got.starts_with("err:"),
                "B sees only its own mount: {got}"
            );
        } else {
            assert!(got.starts_with("err:"), "{probe}: {got}");
        }
    }
    // B's HookFired stream has B's three dispatches and nothing of A's.
    let mut seen = 0;
    while let Ok(fired) = b_fired.try_recv() {
        assert_eq!(fired.hook_name.as_str(), "UserPromptSubmit");
        seen += 1;
    }
    assert_eq!(seen, 3);
    // Metrics are per tenant.
    assert_eq!(f.tenants.metrics(&id("a")).unwrap().dispatches, 1);
    assert_eq!(f.tenants.metrics(&id("a")).unwrap().fuel_consumed, fuel);
    assert_eq!(f.tenants.metrics(&id("b")).unwrap().dispatches, 3);
    // Replay files are per tenant, outside every tenant's folder.
    f.tenants.runtime().flush_replay();
    let b_replay = f
        .tenants
        .host(&id("b"))
        .unwrap()
        .replay_dir()
        .unwrap()
        .to_owned();
    let files: Vec<String> = std::fs::read_dir(&b_replay)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["sess-b.jsonl"]);
    assert!(!b_replay.starts_with(f.root.path()));
}

/// Two rule sets with different verdicts: two prompt rules each, so a mix would show.
fn two_sets(f: &Fleet) -> (PathBuf, PathBuf) {
    let set = |name: &str| {
        json!({"hooks": {"UserPromptSubmit": [
            {"type": "prompt", "prompt": format!("{name}1")},
            {"type": "prompt", "prompt": format!("{name}2")}
        ]}})
    };
    let x = f.plugin("t", "x", &set("X"), &[]);
    let y = f.plugin("t", "y", &set("Y"), &[]);
    (x, y)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_are_atomic_under_load() {
    let f = fleet();
    let (x, y) = two_sets(&f);
    let spec = TenantSpec {
        plugins: Some(vec![x.clone()]),
        ..f.spec("t", TenantPolicy::default())
    };
    f.tenants.add(spec).unwrap();
    let fleet = Arc::new(f);
    let stop = Arc::new(AtomicBool::new(false));
    let dispatched = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for w in 0..8 {
        let (fleet, stop, dispatched) = (fleet.clone(), stop.clone(), dispatched.clone());
        workers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let d = fleet
                    .tenants
                    .dispatch(&id("t"), prompt_event("hi", &format!("w{w}")))
                    .await
                    .expect("the tenant exists throughout");
                let got = contexts(&d);
                assert!(
                    got == ["X1", "X2"] || got == ["Y1", "Y2"],
                    "a mixed rule set: {got:?}"
                );
                assert!(d.reports.iter().all(|r| r.effect.failure.is_none()));
                dispatched.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        }));
    }
    for i in 0..100 {
        let next = if i % 2 == 0 { &y } else { &x };
        let fleet2 = fleet.clone();
        let next = next.clone();
        tokio::task::spawn_blocking(move || fleet2.tenants.reload(&id("t"), Some(vec![next])))
            .await
            .unwrap()
            .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }
    assert!(dispatched.load(Ordering::Relaxed) >= 8, "the workers ran");
    // 100 reloads alternate X→Y→…: the last one installed X.
    let d = fleet
        .tenants
        .dispatch(&id("t"), prompt_event("hi", "end"))
        .await
        .unwrap();
    assert_eq!(contexts(&d), ["X1", "X2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_reload_leaves_the_old_rules_serving() {
    let f = fleet();
    let good = json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "old"}]}});
    let plugin = f.plugin("t", "p", &good, &[]);
    let policy = TenantPolicy {
        max_component_bytes: 1024,
        ..TenantPolicy::default()
    };
    f.tenants.add(f.spec("t", policy)).unwrap();
    let hooks = plugin.join("hooks/hooks.json");
    let native =
        json!({"hooks": {"UserPromptSubmit": [{"type": "command", "command": "echo new"}]}});
    let big =
        json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/chaos.wasm"}]}});
    std::fs::copy(guests::CHAOS, plugin.join("hooks/chaos.wasm")).unwrap();
    for (bad, why) in [
        ("{\"hooks\": {".to_owned(), "JSON"),
        (native.to_string(), "allow_native_commands"),
        (big.to_string(), "max_component_bytes"),
    ] {
        std::fs::write(&hooks, &bad).unwrap();
        let e = load_errors(f.tenants.reload(&id("t"), None).unwrap_err());
        assert!(e.contains(why) || why == "JSON", "{why}: {e}");
        let d = f
            .tenants
            .dispatch(&id("t"), prompt_event("hi", "s"))
            .await
            .unwrap();
        assert_eq!(contexts(&d), ["old"], "after a failed reload ({why})");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_the_stream_go_on_across_a_replacement_and_a_reload() {
    // `put` (a new policy: `PUT /v1/tenants/{id}`, SIGHUP) and `reload` swap the policy and the
    // rules only: the tenant's one stream and its counters carry on, nothing copied or reset.
    let f = fleet();
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "ctx"}]}});
    f.plugin("t", "p", &hooks, &[]);
    f.add("t");
    let mut fired = f.tenants.host(&id("t")).unwrap().subscribe();
    let t = id("t");
    let go = |n: &str| f.tenants.dispatch(&t, prompt_event("hi", n));
    assert!(go("1").await.unwrap().hook_fired().is_some());
    let stricter = TenantPolicy {
        max_rules: 5,
        ..TenantPolicy::default()
    };
    f.tenants.put(f.spec("t", stricter)).unwrap();
    assert!(go("2").await.unwrap().hook_fired().is_some());
    f.tenants.reload(&id("t"), None).unwrap();
    assert!(go("3").await.unwrap().hook_fired().is_some());
    for n in 1..=3 {
        let got = fired
            .try_recv()
            .unwrap_or_else(|e| panic!("record {n}: {e}"));
        assert_eq!(got.hook_name.as_str(), "UserPromptSubmit");
    }
    let m = f.tenants.metrics(&id("t")).unwrap();
    assert_eq!((m.dispatches, m.hooks_run["prompt"]), (3, 3), "{m:?}");
    assert_eq!(f.tenants.host(&id("t")).unwrap().policy().max_rules, 5);
}

#[test]
fn a_disable_racing_a_replacement_is_never_lost() {
    let f = Arc::new(fleet());
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "ctx"}]}});
    f.plugin("t", "p", &hooks, &[]);
    f.add("t");
    for round in 0..100 {
        f.tenants.enable(&id("t")).unwrap();
        let start = Arc::new(std::sync::Barrier::new(2));
        let (f2, s2) = (f.clone(), start.clone());
        let put = std::thread::spawn(move || {
            s2.wait();
            f2.tenants
                .put(f2.spec("t", TenantPolicy::default()))
                .unwrap();
        });
        start.wait();
        f.tenants.disable(&id("t")).unwrap();
        put.join().unwrap();
        assert_eq!(
            f.tenants.info(&id("t")).unwrap().state,
            hookbox_host::TenantState::Disabled,
            "round {round}: the disable was lost to the replacement"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_quota_holds_across_a_swap_under_load() {
    // Two hooks in flight fill the tenant's quota of 2; a replacement must not hand out a fresh
    // quota beside the one its running hooks still hold (that ran twice the quota).
    let f = fleet();
    f.plugin(
        "t",
        "p",
        &chaos_rule(json!({})),
        &[("chaos.wasm", guests::CHAOS)],
    );
    let two = TenantPolicy {
        max_hooks_in_flight: 2,
        default_timeout_secs: Duration::from_secs(30),
        max_timeout_secs: Duration::from_secs(30),
        dispatch_deadline_secs: Duration::from_secs(30),
        ..TenantPolicy::default()
    };
    f.tenants.add(f.spec("t", two.clone())).unwrap();
    let fleet = Arc::new(f);
    let mut sleepers = tokio::task::JoinSet::new();
    for i in 0..2 {
        let fleet = fleet.clone();
        sleepers.spawn(async move {
            fleet
                .tenants
                .dispatch(&id("t"), prompt_event("sleep:8000", &format!("s{i}")))
                .await
                .unwrap()
        });
    }
    let host = fleet.tenants.host(&id("t")).unwrap();
    while host.metrics().hooks_in_flight < 2 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let f2 = fleet.clone();
    tokio::task::spawn_blocking(move || f2.tenants.put(f2.spec("t", two)))
        .await
        .unwrap()
        .unwrap();
    // The sleepers still hold their units; four more dispatches under load are all refused.
    assert_eq!(fleet.tenants.runtime().metrics().hooks_in_flight, 2);
    let mut more = tokio::task::JoinSet::new();
    for i in 0..4 {
        let fleet = fleet.clone();
        more.spawn(async move {
            fleet
                .tenants
                .dispatch(&id("t"), prompt_event("ok", &format!("m{i}")))
                .await
                .unwrap()
        });
    }
    while let Some(d) = more.join_next().await {
        let d = d.unwrap();
        let class = d.reports[0]
            .effect
            .failure
            .as_ref()
            .map(|f| f.class.as_str());
        assert_eq!(class, Some("overloaded"), "{:?}", d.reports[0]);
    }
    assert!(host.metrics().hooks_in_flight <= 2);
    while let Some(d) = sleepers.join_next().await {
        assert_eq!(contexts(&d.unwrap()), ["slept"]);
    }
    // Once they finished, the quota is whole again.
    let d = fleet
        .tenants
        .dispatch(&id("t"), prompt_event("ok", "after"))
        .await
        .unwrap();
    assert!(d.reports[0].effect.failure.is_none(), "{:?}", d.reports[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_own_settings_file_changes_nothing() {
    // Issue 16 defect 4: the tenant's folder was read as a project, and its settings raised the
    // operator's Stop re-entry cap (1 -> 100) and turned on full replay capture.
    let f = fleet();
    let loud =
        json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/chaos.wasm"}]}});
    f.plugin("t", "p", &loud, &[("chaos.wasm", guests::CHAOS)]);
    std::fs::create_dir_all(f.folder("t").join(".hookbox")).unwrap();
    std::fs::write(
        f.folder("t").join(".hookbox/settings.json"),
        r#"{"stop": {"reentry_cap": 100}, "replay": {"capture_flags": {"capture_plugin_hook_output_full": true}}}"#,
    )
    .unwrap();
    let policy = TenantPolicy {
        stop_reentry_cap: 1,
        ..TenantPolicy::default()
    };
    f.tenants.add(f.spec("t", policy)).unwrap();
    let host = f.tenants.host(&id("t")).unwrap();
    assert_eq!(host.stop_reentry_cap(), 1, "the operator's cap stands");
    assert!(!host.policy().capture_full_output);
    // A hook printing 5,000 characters is kept as a preview in replay.
    let d = f
        .tenants
        .dispatch(&id("t"), prompt_event("stdout:5000", "s"))
        .await
        .unwrap();
    assert!(d.reports[0].output.as_deref().unwrap_or("").len() >= 5000);
    f.tenants.runtime().flush_replay();
    let file = host.replay_dir().unwrap().join("s.jsonl");
    let replay = hookbox_host::replay::read_replay(&file).unwrap();
    assert!(
        replay.records[0].hooks[0].output_truncated,
        "a preview, not the whole output"
    );
}

#[test]
fn a_read_write_mount_never_holds_what_the_tenant_is_loaded_from() {
    // Issue 16 defect 5: with allow_rw_mounts a guest mounted its tenant folder `rw`, rewrote
    // tenant.toml (allow_native_commands = true) and hooks.json, and the next reload ran a
    // native command. Refused at load, naming the file it would expose.
    let f = fleet();
    std::fs::write(f.folder("t").join("tenant.toml"), "token_sha256 = \"00\"").ok();
    let rw = TenantPolicy {
        allow_rw_mounts: true,
        ..TenantPolicy::default()
    };
    for (host, exposed) in [
        ("${CLAUDE_PROJECT_DIR}", "tenant.toml"),
        ("${CLAUDE_PROJECT_DIR}/plugins", "plugins"),
        ("${CLAUDE_PLUGIN_ROOT}", "plugins/p"),
        ("${CLAUDE_PLUGIN_ROOT}/hooks", "hooks.json"),
    ] {
        f.plugin(
            "t",
            "p",
            &chaos_rule(json!({"mounts": [{"host": host, "guest": "/w", "access": "rw"}]})),
            &[("chaos.wasm", guests::CHAOS)],
        );
        std::fs::write(f.folder("t").join("tenant.toml"), "token_sha256 = \"00\"").unwrap();
        let e = load_errors(f.tenants.add(f.spec("t", rw.clone())).unwrap_err());
        assert!(
            e.contains("read-write mount") && e.contains(exposed),
            "{host}: {e}"
        );
    }
    // A folder of its own that holds none of them stays writable.
    std::fs::create_dir_all(f.folder("t").join("work")).unwrap();
    f.plugin(
        "t",
        "p",
        &chaos_rule(json!({"mounts": [{"host": "${CLAUDE_PROJECT_DIR}/work", "guest": "/w", "access": "rw"}]})),
        &[("chaos.wasm", guests::CHAOS)],
    );
    f.tenants
        .add(f.spec("t", rw))
        .unwrap_or_else(|e| panic!("{}", load_errors(e)));
}

#[test]
fn a_load_over_its_compile_budget_fails_and_keeps_the_previous_rules() {
    let f = fleet();
    let old = json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "old"}]}});
    f.plugin("t", "p", &old, &[]);
    f.add("t");
    f.plugin(
        "t",
        "p",
        &chaos_rule(json!({})),
        &[("chaos.wasm", guests::CHAOS)],
    );
    let tight = TenantPolicy {
        compile_budget_secs: Duration::from_nanos(1),
        ..TenantPolicy::default()
    };
    let e = load_errors(f.tenants.put(f.spec("t", tight)).unwrap_err());
    assert!(e.contains("compile_budget"), "{e}");
    assert_eq!(f.tenants.info(&id("t")).unwrap().rules["prompt"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_tenants_run_nothing_and_removed_ones_are_gone() {
    let f = fleet();
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"type": "prompt", "prompt": "ctx"}]}});
    f.plugin("t", "p", &hooks, &[]);
    f.add("t");
    let mut fired = f.tenants.host(&id("t")).unwrap().subscribe();
    f.tenants.disable(&id("t")).unwrap();
    let d = f
        .tenants
        .dispatch(&id("t"), prompt_event("hi", "s"))
        .await
        .unwrap();
    assert_eq!((d.matched_rule_count, d.hook_fired().is_none()), (0, true));
    assert!(fired.try_recv().is_err(), "no HookFired while disabled");
    assert_eq!(
        f.tenants.list()[0].state,
        hookbox_host::TenantState::Disabled
    );
    f.tenants.enable(&id("t")).unwrap();
    let d = f
        .tenants
        .dispatch(&id("t"), prompt_event("hi", "s"))
        .await
        .unwrap();
    assert_eq!(contexts(&d), ["ctx"]);
    let removed = f
        .tenants
        .remove(&id("t"), Duration::from_secs(1), true)
        .await
        .unwrap();
    assert!(removed.state_deleted);
    assert!(matches!(
        f.tenants.dispatch(&id("t"), prompt_event("hi", "s")).await,
        Err(TenantError::NotFound(_))
    ));
    assert!(
        f.folder("t").join("plugins").is_dir(),
        "the tenant's own folder stays"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_noisy_neighbour_cannot_change_a_quiet_tenants_verdicts() {
    // A small pool makes the fight real: 16 slots, 4 of them kept for tenants holding none.
    let mut wasm = RuntimeConfig::default().with_fuel(true);
    wasm.pool.slots = 16;
    let f = fleet_with(RuntimeSettings {
        wasm,
        max_hooks_in_flight: 16,
        reserved_hooks: 4,
        reserved_slots: 4,
        ..RuntimeSettings::default()
    });
    let greedy = TenantPolicy {
        // The noisy tenant may hold the whole pool as far as its own quota goes.
        max_hooks_in_flight: 1000,
        max_pool_slots: 1000,
        max_matched_rules: 1000,
        ..TenantPolicy::default()
    };
    let behaviours = ["spin", "alloc:200000000", "sleep:5000", "recurse"];
    // On Notification (no prompt, no command), the chaos guest takes its behaviour from config.
    let noisy = json!({"hooks": {"Notification": behaviours.iter().map(|b| json!({
        "type": "wasm", "component": "hooks/chaos.wasm", "config": {"behaviour": b}
    })).collect::<Vec<_>>()}});
    f.plugin("noisy", "p", &noisy, &[("chaos.wasm", guests::CHAOS)]);
    f.tenants.add(f.spec("noisy", greedy)).unwrap();
    f.plugin(
        "quiet",
        "p",
        &json!({"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/ctx.wasm",
            "config": {"context": "quiet tenant's context"}}]}}),
        &[("ctx.wasm", guests::CONTEXT_INJECTION)],
    );
    f.add("quiet");
    let alone = f
        .tenants
        .dispatch(&id("quiet"), prompt_event("deploy?", "q"))
        .await
        .unwrap();
    let expected = contexts(&alone);
    assert_eq!(expected, ["quiet tenant's context"]);
    let fleet = Arc::new(f);
    // Hundreds of noisy dispatches in flight at once (each four hostile guests).
    let mut flood = tokio::task::JoinSet::new();
    for i in 0..200 {
        let fleet = fleet.clone();
        flood.spawn(async move {
            let e = Event::from_payload(
                None,
                json!({"hook_event_name": "Notification", "message": "m"}),
                &format!("n{i}"),
                "/",
            )
            .unwrap();
            fleet.tenants.dispatch(&id("noisy"), e).await.unwrap()
        });
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut quiet_runs = 0;
    while !flood.is_empty() && quiet_runs < 200 {
        let d = fleet
            .tenants
            .dispatch(&id("quiet"), prompt_event("deploy?", "q"))
            .await
            .unwrap();
        for r in &d.reports {
            assert!(
                r.effect.failure.is_none(),
                "quiet tenant's hook failed: {:?}",
                r.effect.failure
            );
        }
        assert_eq!(contexts(&d), expected);
        quiet_runs += 1;
        while flood.try_join_next().is_some() {}
    }
    let mut noisy_classes = std::collections::BTreeSet::new();
    while let Some(d) = flood.join_next().await {
        for r in d.unwrap().reports {
            if let Some(f) = r.effect.failure {
                noisy_classes.insert(f.class.as_str());
            }
        }
    }
    assert!(quiet_runs > 0);
    // The flood was contained with its own classes (and mostly refused at the door).
    assert!(noisy_classes.contains("overloaded"), "{noisy_classes:?}");
    let quiet = fleet.tenants.metrics(&id("quiet")).unwrap();
    assert_eq!(quiet.failures.values().sum::<u64>(), 0, "{quiet:?}");
}

#[test]
fn tenant_state_lives_outside_every_tenant_folder() {
    let f = fleet();
    f.plugin("t", "p", &json!({"hooks": {}}), &[]);
    f.add("t");
    let host = f.tenants.host(&id("t")).unwrap();
    let replay = host.replay_dir().unwrap();
    assert!(!replay.starts_with(f.root.path()), "{}", replay.display());
    assert!(Path::new(&replay).is_dir());
}

/// `pagemap_scan` resets only pages the kernel reports dirty and present (wasmtime 48.0.8), so a
/// page swapped out or being migrated could carry one guest's data into the next instance of its
/// slot — another tenant's, where tenants share the pool. A tenant never loads on such a runtime.
#[test]
fn a_runtime_with_pagemap_scan_serves_no_tenant() {
    let mut wasm = RuntimeConfig::default();
    wasm.pool.pagemap_scan = true;
    let fleet = fleet_with(RuntimeSettings {
        wasm,
        ..RuntimeSettings::default()
    });
    fleet.plugin(
        "acme",
        "p",
        &json!({"hooks": {"UserPromptSubmit": [{"type": "command", "command": "true"}]}}),
        &[],
    );
    let err = fleet
        .tenants
        .add(fleet.spec("acme", TenantPolicy::default()))
        .unwrap_err();
    assert!(
        matches!(&err, TenantError::PagemapScanShared { id } if id.as_str() == "acme"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("fix: build the tenants' runtime with `pool.pagemap_scan` off"),
        "{err}"
    );
    assert!(fleet.tenants.is_empty());
}
