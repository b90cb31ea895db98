//! `hookbox bench --compare FILE`: every figure of a report beside the same figure of a saved
//! one (a `--json` report, e.g. `docs/bench-baseline.json`), as a ratio, naming each figure more
//! than [`WORSE`] × worse. Which way is worse is read from the figure's name: times, sizes and
//! cost ratios are better lower; rates, speed-ups and work done are better higher. Counts that
//! only describe the run (runs, cores, tenants loaded) are not compared.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use hookbox_core::files::Symlinks;
use serde_json::Value;

/// A figure this much worse than its baseline is named (and makes the exit code 1).
pub(crate) const WORSE: f64 = 1.3;

/// The most a saved report may weigh: a report is a few KiB.
const MAX_REPORT_BYTES: u64 = 4 << 20;

/// Reads a saved `--json` report.
pub(crate) fn read(path: &Path) -> anyhow::Result<Value> {
    // A file the user named: a symlink is followed.
    let text = hookbox_core::files::read_file(path, MAX_REPORT_BYTES, Symlinks::Follow)
        .with_context(|| format!("cannot read the bench report {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a `hookbox bench --json` report; fix: save one with `hookbox bench --json > FILE`",
            path.display()
        )
    })
}

/// `--compare BASELINE --from SAVED`: compares two saved reports without measuring.
pub(crate) fn files(baseline: &Path, saved: &Path) -> anyhow::Result<ExitCode> {
    let comparison = Comparison::of(&read(baseline)?, &read(saved)?);
    print!("{}", comparison.text(baseline));
    Ok(comparison.exit_code())
}

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Lower,
    Higher,
}

/// What a figure's name says about it: `None` for counts that describe the run.
fn direction(name: &str) -> Option<Better> {
    const DESCRIBES_THE_RUN: [&str; 9] = [
        "runs",
        "cpus",
        "cores",
        "concurrency",
        "concurrent_hooks",
        "tenants_loaded",
        "memory_gib",
        "seconds_per_measure",
        "pace_ms",
    ];
    if DESCRIBES_THE_RUN.contains(&name) {
        return None;
    }
    let higher = [
        "throughput",
        "per_s",
        "speedup",
        "dispatches",
        "ratio_native_over",
    ];
    if higher.iter().any(|h| name.contains(h)) {
        return Some(Better::Higher);
    }
    // A unit anywhere in the name: `p50_us`, `idle_ns_per_dispatch_empty_host`.
    let units = ["us", "ms", "ns", "kib", "mib"];
    if name.split('_').any(|part| units.contains(&part)) || name.starts_with("ratio_") {
        return Some(Better::Lower);
    }
    None
}

/// The key of an array element: its name-like field, else its position.
fn element_key(i: usize, v: &Value) -> String {
    for field in ["kind", "component", "name", "form", "guest", "concurrency"] {
        match v.get(field) {
            Some(Value::String(s)) => return s.clone(),
            Some(Value::Number(n)) => return format!("{field}={n}"),
            _ => {}
        }
    }
    i.to_string()
}

/// Every number of `v` with its path (`tenants.isolation.quiet_alone_p50_us`,
/// `latency[wasm typed (hook world)].p50_us`) and its last name.
fn figures(v: &Value, path: &str, out: &mut Vec<(String, String, f64)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match child {
                    Value::Number(n) => {
                        if let Some(x) = n.as_f64() {
                            out.push((p, k.clone(), x));
                        }
                    }
                    _ => figures(child, &p, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                figures(item, &format!("{path}[{}]", element_key(i, item)), out);
            }
        }
        _ => {}
    }
}

/// One figure in both reports.
#[derive(Debug)]
pub(crate) struct Row {
    path: String,
    base: f64,
    now: f64,
    /// How many times worse (> 1) or better (< 1) the figure is; `None`: not comparable.
    worse_by: Option<f64>,
}

/// The figures of two reports side by side.
#[derive(Debug)]
pub(crate) struct Comparison {
    rows: Vec<Row>,
    /// Figures of the baseline the new report does not have (a section left out, or renamed).
    missing: Vec<String>,
    /// The two machines, when they differ.
    machines: Option<(String, String)>,
}

impl Comparison {
    pub(crate) fn of(base: &Value, now: &Value) -> Comparison {
        let (mut b, mut n) = (Vec::new(), Vec::new());
        figures(base, "", &mut b);
        figures(now, "", &mut n);
        let mut rows = Vec::new();
        let mut missing = Vec::new();
        for (path, name, base_value) in b {
            let Some((_, _, now_value)) = n.iter().find(|(p, _, _)| *p == path) else {
                missing.push(path);
                continue;
            };
            let worse_by = direction(&name).and_then(|d| {
                let ratio = match d {
                    Better::Lower => now_value / base_value,
                    Better::Higher => base_value / now_value,
                };
                ratio.is_finite().then_some(ratio)
            });
            rows.push(Row {
                path,
                base: base_value,
                now: *now_value,
                worse_by,
            });
        }
        let machine = |v: &Value| v.get("machine").map(Value::to_string);
        let machines = match (machine(base), machine(now)) {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            (None, Some(b)) => Some(("(not recorded)".to_owned(), b)),
            _ => None,
        };
        Comparison {
            rows,
            missing,
            machines,
        }
    }

    /// The figures more than [`WORSE`] × worse.
    pub(crate) fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.worse_by.is_some_and(|w| w > WORSE))
    }

    pub(crate) fn exit_code(&self) -> ExitCode {
        if self.regressions().next().is_some() {
            ExitCode::from(crate::cmd::EXIT_FAILURE)
        } else {
            ExitCode::SUCCESS
        }
    }

    pub(crate) fn text(&self, baseline: &Path) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "\ncompared with {}:", baseline.display());
        if let Some((a, b)) = &self.machines {
            let _ = writeln!(
                s,
                "  note: taken on another machine — baseline {a}, now {b}"
            );
        }
        let _ = writeln!(
            s,
            "  {:<70} {:>12} {:>12} {:>8}",
            "figure", "baseline", "now", "now/base"
        );
        for r in &self.rows {
            let flag = match r.worse_by {
                Some(w) if w > WORSE => format!("  WORSE {w:.2}x"),
                Some(w) if w < 1.0 / WORSE => format!("  better {:.2}x", 1.0 / w),
                Some(_) => String::new(),
                None => "  (not compared)".to_owned(),
            };
            let _ = writeln!(
                s,
                "  {:<70} {:>12.2} {:>12.2} {:>8.2}{flag}",
                r.path,
                r.base,
                r.now,
                r.now / r.base
            );
        }
        for m in &self.missing {
            let _ = writeln!(s, "  {m}: not in this report");
        }
        let worse: Vec<&str> = self.regressions().map(|r| r.path.as_str()).collect();
        if worse.is_empty() {
            let _ = writeln!(s, "no figure more than {WORSE}x worse than the baseline");
        } else {
            let _ = writeln!(
                s,
                "{} figure(s) more than {WORSE}x worse than the baseline: {}",
                worse.len(),
                worse.join(", ")
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_slower_latency_and_a_lower_rate_are_worse_and_counts_are_not_compared() {
        let base = json!({"runs": 100, "latency": [{"kind": "typed", "p50_us": 10.0, "throughput_n": 1000.0}]});
        let now = json!({"runs": 10, "latency": [{"kind": "typed", "p50_us": 14.0, "throughput_n": 700.0}]});
        let c = Comparison::of(&base, &now);
        let worse: Vec<&str> = c.regressions().map(|r| r.path.as_str()).collect();
        assert_eq!(
            worse,
            ["latency[typed].p50_us", "latency[typed].throughput_n"]
        );
        let runs = c.rows.iter().find(|r| r.path == "runs").unwrap();
        assert!(runs.worse_by.is_none());
        assert_eq!(c.exit_code(), ExitCode::from(crate::cmd::EXIT_FAILURE));
    }

    #[test]
    fn faster_figures_and_small_moves_pass() {
        let base = json!({"tenants": {"quiet_alone_p50_us": 30.0, "ratio_cheap_flood": 1.2}, "x_per_s": 100.0});
        let now = json!({"tenants": {"quiet_alone_p50_us": 10.0, "ratio_cheap_flood": 1.5}, "x_per_s": 120.0});
        let c = Comparison::of(&base, &now);
        assert_eq!(c.regressions().count(), 0, "{c:?}");
        assert!(c.text(Path::new("b.json")).contains("better 3.00x"));
    }

    #[test]
    fn a_unit_inside_the_name_says_lower_is_better() {
        assert_eq!(
            direction("idle_ns_per_dispatch_empty_host"),
            Some(Better::Lower)
        );
        assert_eq!(direction("reload_10_cached_ms"), Some(Better::Lower));
        assert_eq!(direction("throughput_n"), Some(Better::Higher));
        assert_eq!(direction("runs"), None);
    }

    #[test]
    fn a_section_the_new_report_lacks_is_named() {
        let c = Comparison::of(&json!({"engine": {"p50_us": 1.0}}), &json!({}));
        assert_eq!(c.missing, ["engine.p50_us"]);
        assert!(
            c.text(Path::new("b.json"))
                .contains("engine.p50_us: not in this report")
        );
    }
}
