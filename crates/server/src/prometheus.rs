//! `/metrics` in Prometheus' text format (0.0.4): each tenant's dispatches, hooks run by type,
//! failures by class, latency histogram, fuel and quota gauges (label `tenant`), the runtime's
//! shared gauges, and the HTTP layer's counters. A tenant reloaded from its folder gets a new
//! host, so its counters start again from zero (a counter reset, which `rate()` handles).

use std::fmt::Write as _;
use std::sync::Arc;

use hookbox_host::{MetricsSnapshot, TenantId};

use crate::app::App;

/// A served tenant's id, metrics, and whether it is enabled.
type TenantRow = (TenantId, MetricsSnapshot, bool);

/// A per-tenant series: name, help, and how to read it from a snapshot.
type Series = (&'static str, &'static str, fn(&MetricsSnapshot) -> u64);

/// One metric family being written.
struct Family<'a> {
    out: &'a mut String,
}

impl Family<'_> {
    fn head<'a>(out: &'a mut String, name: &str, kind: &str, help: &str) -> Family<'a> {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        Family { out }
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", escape(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }
}

/// Label values: backslash, double quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The whole `/metrics` text.
pub(crate) fn render(app: &Arc<App>) -> String {
    let tenants: Vec<TenantRow> = app
        .registry
        .serving_ids()
        .into_iter()
        .filter_map(|id| {
            let s = app.registry.serving(&id)?;
            Some((id, s.host.metrics(), s.host.is_enabled()))
        })
        .collect();
    let mut out = String::new();
    per_tenant(&mut out, &tenants);
    runtime(&mut out, app, &tenants);
    http(&mut out, app);
    out
}

fn per_tenant(out: &mut String, tenants: &[TenantRow]) {
    let counters: [Series; 5] = [
        ("hookbox_dispatches_total", "Dispatches served.", |m| {
            m.dispatches
        }),
        (
            "hookbox_dispatches_with_hooks_total",
            "Dispatches where at least one rule matched.",
            |m| m.dispatches_with_hooks,
        ),
        (
            "hookbox_hook_warnings_total",
            "Hooks that reported a warning.",
            |m| m.warnings,
        ),
        (
            "hookbox_refused_dispatches_total",
            "Dispatches refused whole by the tenant's rate limit.",
            |m| m.refused_dispatches,
        ),
        (
            "hookbox_fuel_consumed_total",
            "Wasm fuel (about one unit per instruction) consumed by the tenant's hooks.",
            |m| m.fuel_consumed,
        ),
    ];
    for (name, help, get) in counters {
        let mut f = Family::head(out, name, "counter", help);
        for (id, m, _) in tenants {
            f.sample(name, &[("tenant", id.as_str())], get(m));
        }
    }
    let name = "hookbox_hooks_run_total";
    let mut f = Family::head(out, name, "counter", "Hooks run, by handler type.");
    for (id, m, _) in tenants {
        for (t, n) in &m.hooks_run {
            f.sample(name, &[("tenant", id.as_str()), ("type", t)], n);
        }
    }
    let name = "hookbox_hook_failures_total";
    let mut f = Family::head(out, name, "counter", "Failed hooks, by failure class.");
    for (id, m, _) in tenants {
        for (c, n) in &m.failures {
            f.sample(name, &[("tenant", id.as_str()), ("class", c)], n);
        }
    }
    let name = "hookbox_dispatch_duration_seconds";
    let mut f = Family::head(out, name, "histogram", "Wall time of whole dispatches.");
    for (id, m, _) in tenants {
        let mut cumulative = 0u64;
        for (bound, n) in &m.latency_us {
            cumulative += n;
            let le = bound.map_or_else(|| "+Inf".to_owned(), |us| (us as f64 / 1e6).to_string());
            f.sample(
                &format!("{name}_bucket"),
                &[("tenant", id.as_str()), ("le", &le)],
                cumulative,
            );
        }
        f.sample(
            &format!("{name}_sum"),
            &[("tenant", id.as_str())],
            m.latency_sum_us as f64 / 1e6,
        );
        f.sample(
            &format!("{name}_count"),
            &[("tenant", id.as_str())],
            cumulative,
        );
    }
    let gauges: [Series; 2] = [
        (
            "hookbox_hooks_in_flight",
            "The tenant's hooks running now.",
            |m| m.hooks_in_flight,
        ),
        (
            "hookbox_pool_slots_in_use",
            "Wasm instance-pool slots the tenant holds now.",
            |m| m.pool_slots_in_use,
        ),
    ];
    for (name, help, get) in gauges {
        let mut f = Family::head(out, name, "gauge", help);
        for (id, m, _) in tenants {
            f.sample(name, &[("tenant", id.as_str())], get(m));
        }
    }
}

fn runtime(out: &mut String, app: &Arc<App>, tenants: &[TenantRow]) {
    let rt = app.tenants.runtime().metrics();
    let name = "hookbox_tenants";
    let mut f = Family::head(out, name, "gauge", "Tenants, by state.");
    let enabled = tenants.iter().filter(|(_, _, on)| *on).count();
    f.sample(name, &[("state", "enabled")], enabled);
    f.sample(name, &[("state", "disabled")], tenants.len() - enabled);
    f.sample(name, &[("state", "failed")], app.registry.counts().1);
    let gauges: [(&str, &str, u64); 3] = [
        (
            "hookbox_runtime_hooks_in_flight",
            "Hooks running now, all tenants.",
            rt.hooks_in_flight,
        ),
        (
            "hookbox_runtime_pool_slots_in_use",
            "Wasm instance-pool slots held now, all tenants.",
            rt.pool_slots_in_use,
        ),
        (
            "hookbox_background_hooks",
            "Background (async) hooks running now.",
            rt.background_hooks,
        ),
    ];
    for (name, help, v) in gauges {
        Family::head(out, name, "gauge", help).sample(name, &[], v);
    }
    let counters: [(&str, &str, u64); 3] = [
        (
            "hookbox_replay_dropped_total",
            "Replay records dropped: the writer's queue was full, or one record alone was larger than a tenant's replay quota.",
            rt.replay_dropped,
        ),
        (
            "hookbox_replay_files_removed_total",
            "Replay files removed (least recently written first) to keep a tenant's replay folder within its quota.",
            rt.replay_files_removed,
        ),
        (
            "hookbox_replay_errors_total",
            "Replay records that could not be written.",
            rt.replay_errors,
        ),
    ];
    for (name, help, v) in counters {
        Family::head(out, name, "counter", help).sample(name, &[], v);
    }
}

fn http(out: &mut String, app: &Arc<App>) {
    let name = "hookbox_http_requests_total";
    let mut f = Family::head(
        out,
        name,
        "counter",
        "HTTP requests answered, by route and status.",
    );
    for (route, code, n) in app.http.requests() {
        f.sample(name, &[("route", route), ("code", &code.to_string())], n);
    }
    let limit = app.config.limits.max_requests_in_flight;
    let in_flight = limit.saturating_sub(app.in_flight.available_permits());
    let gauges: [(&str, &str, u64); 3] = [
        (
            "hookbox_http_requests_in_flight",
            "Dispatch and admin requests being handled now.",
            in_flight as u64,
        ),
        (
            "hookbox_http_connections_open",
            "HTTP connections open now.",
            app.http.open(),
        ),
        (
            "hookbox_sse_streams_open",
            "HookFired event streams open now.",
            app.streams.open() as u64,
        ),
    ];
    for (name, help, v) in gauges {
        Family::head(out, name, "gauge", help).sample(name, &[], v);
    }
    let name = "hookbox_http_connections_refused_total";
    let mut refused = Family::head(
        out,
        name,
        "counter",
        "Connections closed at accept, by the limit that refused them.",
    );
    refused.sample(name, &[("limit", "max_connections")], app.http.refused());
    refused.sample(
        name,
        &[("limit", "max_connections_per_peer")],
        app.http.refused_per_peer(),
    );
    let name = "hookbox_http_connections_idle_closed_total";
    Family::head(
        out,
        name,
        "counter",
        "Connections closed after limits.idle_timeout_secs without a request.",
    )
    .sample(name, &[], app.http.idle_closed());
}
