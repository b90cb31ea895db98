//! Two tenants on one runtime, as a SaaS platform embeds hookbox: each tenant's folder holds its
//! plugins; both share one wasm engine, pool and compile cache, and neither sees the other.
//! The README shows this file; `cargo test --workspace` compiles it, and
//! `cargo run -p hookbox-host --example two_tenants` runs it.

use std::path::Path;
use std::sync::Arc;

use hookbox_core::Event;
use hookbox_host::{HookRuntime, RuntimeSettings, TenantId, TenantPolicy, TenantSpec, Tenants};
use hookbox_wasm::RuntimeConfig;

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
    std::fs::write(path, text)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tenants_dir = tempfile::tempdir()?;
    let state_dir = tempfile::tempdir()?; // outside every tenant's folder
    // Two tenants whose rules disagree.
    for (id, context) in [
        ("acme", "ACME: deploys need a change ticket."),
        ("globex", "Globex: staging only."),
    ] {
        let hooks = format!(
            r#"{{"hooks": {{"UserPromptSubmit": [{{"type": "prompt", "prompt": "{context}"}}]}}}}"#
        );
        write(
            &tenants_dir
                .path()
                .join(id)
                .join("plugins/rules/hooks/hooks.json"),
            &hooks,
        )?;
    }

    // One runtime per process: engine, pool, compile cache, fuel metering.
    let runtime = HookRuntime::new(RuntimeSettings {
        wasm: RuntimeConfig::default().with_fuel(true),
        ..RuntimeSettings::default()
    })?;
    let tenants = Arc::new(Tenants::new(runtime, state_dir.path()));
    for id in ["acme", "globex"] {
        let spec = TenantSpec {
            id: TenantId::new(id)?,
            folder: tenants_dir.path().join(id),
            // Closed by default: wasm only, no native or http hooks, quotas, fuel.
            policy: TenantPolicy::default(),
            plugins: None, // <folder>/plugins
            attached: (),  // nothing of the embedder's own
        };
        // `add` blocks (it reads the tenant's files and may compile its components): off the
        // async workers, on tokio's blocking pool.
        let t = tenants.clone();
        tokio::task::spawn_blocking(move || t.add(spec)).await??;
    }

    let prompt = |session: &str| {
        Event::from_payload(
            None,
            serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": "Can I deploy?"}),
            session,
            "/",
        )
    };
    for id in ["acme", "globex"] {
        let id = TenantId::new(id)?;
        let d = tenants.dispatch(&id, prompt("s-1")?).await?;
        println!("{id}: {:?}", d.verdict.additional_contexts());
    }
    for t in tenants.list() {
        println!("{} {:?} rules={:?}", t.id, t.state, t.rules);
    }
    Ok(())
}
