//! The `wasm` handler block (SPEC §4.3): hookbox's own, so it is strict — every problem in it is
//! an error (the rule is skipped and validation fails), and an unknown key is one of them rather
//! than a silently ignored typo (`fule` would otherwise mean "no fuel limit").
//! The component path must be relative and stay inside the plugin; mounts are `{host, guest,
//! access}` with an absolute guest path and `ro` by default.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::document::{Ctx, describe};
use super::keys::unknown_key_fix;
use super::manifest::{PathProblem, plugin_relative};
use super::span::JsonPath;
use crate::event::EventName;
use crate::limits::wasm_field_maximum;
use crate::rule::{Access, MountSpec, WasmSpec};

/// Every key a wasm handler may have.
pub const WASM_KEYS: &[&str] = &[
    "type",
    "component",
    "timeout",
    "fuel",
    "memory_mb",
    "table_elements",
    "instances",
    "output_bytes",
    "log_calls",
    "response_bytes",
    "write_bytes",
    "write_files",
    "mounts",
    "env",
    "config",
    "matcher",
    "on_failure",
    "onFailure",
    "statusMessage",
    "if",
];

const MOUNT_KEYS: &[&str] = &["host", "guest", "access", "symlinks"];

fn positive_u64(
    ctx: &mut Ctx<'_>,
    obj: &Map<String, Value>,
    path: &JsonPath,
    key: &str,
) -> Result<Option<u64>, ()> {
    let (max, what) = wasm_field_maximum(key).unwrap_or((u64::MAX, "units"));
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > max) => {
            // Refused, never clamped: the policy's own maximum is lower still.
            ctx.reject(
                &path.key(key),
                format!(
                    "'{key}' is {n}, over the maximum of {max} ({what}) a hooks file may ask for — skipped."
                ),
                Some(format!(
                    "ask for at most {max}; the host's policy may allow less"
                )),
            );
            Err(())
        }
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > 0) => Ok(n.as_u64()),
        Some(other) => {
            ctx.reject(
                &path.key(key),
                format!(
                    "'{key}' must be a positive whole number, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            Err(())
        }
    }
}

/// Parses a wasm handler's own fields; `timeout` was already checked by the caller.
pub(crate) fn parse_wasm(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
    timeout: Option<f64>,
) -> Option<WasmSpec> {
    let unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !WASM_KEYS.contains(&k.as_str()))
        .collect();
    if let Some(first) = unknown.first() {
        let names: Vec<String> = unknown.iter().map(|k| format!("'{k}'")).collect();
        let plural = if unknown.len() == 1 { "key" } else { "keys" };
        ctx.reject(
            &path.key(first),
            format!(
                "unknown {plural} {} in a wasm hook — skipped.",
                names.join(", ")
            ),
            Some(unknown_key_fix(first, WASM_KEYS)),
        );
        return None;
    }
    let component = match obj.get("component") {
        Some(Value::String(s)) => match plugin_relative(s) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(problem) => {
                let msg = match problem {
                    PathProblem::Empty => "'component' is empty — skipped.".to_owned(),
                    PathProblem::Leaves => {
                        format!(
                            "path leaves the plugin folder: 'component' is {} — skipped.",
                            Value::String(s.clone())
                        )
                    }
                };
                ctx.reject(
                    &path.key("component"),
                    msg,
                    Some("give the component's path relative to the plugin root, e.g. \"hooks/guard.wasm\"".to_owned()),
                );
                return None;
            }
        },
        Some(other) => {
            ctx.reject(
                &path.key("component"),
                format!(
                    "'component' must be a string, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
        None => {
            ctx.reject(
                path,
                format!("Hook type 'wasm' under '{event}' has no 'component' — skipped."),
                Some(
                    "add \"component\": \"hooks/guard.wasm\" (relative to the plugin root)"
                        .to_owned(),
                ),
            );
            return None;
        }
    };
    let fuel = positive_u64(ctx, obj, path, "fuel").ok()?;
    let memory_mb = positive_u64(ctx, obj, path, "memory_mb").ok()?;
    let table_elements = positive_u64(ctx, obj, path, "table_elements").ok()?;
    let instances = positive_u64(ctx, obj, path, "instances").ok()?;
    let output_bytes = positive_u64(ctx, obj, path, "output_bytes").ok()?;
    let log_calls = positive_u64(ctx, obj, path, "log_calls").ok()?;
    let response_bytes = positive_u64(ctx, obj, path, "response_bytes").ok()?;
    let write_bytes = positive_u64(ctx, obj, path, "write_bytes").ok()?;
    let write_files = positive_u64(ctx, obj, path, "write_files").ok()?;
    let mounts = mounts(ctx, obj, path)?;
    let env = env(ctx, obj, path)?;
    let config = obj.get("config").cloned().unwrap_or(Value::Null);
    Some(WasmSpec {
        component,
        timeout_secs: timeout,
        fuel,
        memory_mb,
        table_elements,
        instances,
        output_bytes,
        log_calls,
        response_bytes,
        write_bytes,
        write_files,
        mounts,
        env,
        config,
    })
}

fn mounts(ctx: &mut Ctx<'_>, obj: &Map<String, Value>, path: &JsonPath) -> Option<Vec<MountSpec>> {
    let mpath = path.key("mounts");
    let items = match obj.get("mounts") {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            ctx.reject(
                &mpath,
                format!(
                    "'mounts' must be a list, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, m) in items.iter().enumerate() {
        let ip = mpath.index(i);
        let Value::Object(m) = m else {
            ctx.reject(
                &ip,
                format!(
                    "a mount must be an object {{host, guest, access}}, found {} — skipped.",
                    describe(m)
                ),
                None,
            );
            return None;
        };
        if let Some(k) = m.keys().find(|k| !MOUNT_KEYS.contains(&k.as_str())) {
            ctx.reject(
                &ip.key(k),
                format!("unknown key '{k}' in a mount — skipped."),
                Some(unknown_key_fix(k, MOUNT_KEYS)),
            );
            return None;
        }
        let host = match m.get("host") {
            Some(Value::String(h)) if !h.is_empty() => h.clone(),
            Some(other) => {
                ctx.reject(
                    &ip.key("host"),
                    format!(
                        "'host' must be a non-empty path, found {} — skipped.",
                        describe(other)
                    ),
                    None,
                );
                return None;
            }
            None => {
                ctx.reject(
                    &ip,
                    "a mount needs 'host' — skipped.".to_owned(),
                    Some("add \"host\": \"${CLAUDE_PROJECT_DIR}\"".to_owned()),
                );
                return None;
            }
        };
        let guest = match m.get("guest") {
            Some(Value::String(g)) if g.starts_with('/') && !g.split('/').any(|c| c == "..") => {
                g.clone()
            }
            Some(other) => {
                ctx.reject(
                    &ip.key("guest"),
                    format!(
                        "'guest' must be an absolute path without '..', found {} — skipped.",
                        describe(other)
                    ),
                    Some("write e.g. \"guest\": \"/project\"".to_owned()),
                );
                return None;
            }
            None => {
                ctx.reject(
                    &ip,
                    "a mount needs 'guest' — skipped.".to_owned(),
                    Some("add \"guest\": \"/project\"".to_owned()),
                );
                return None;
            }
        };
        let access = match m.get("access") {
            None | Some(Value::Null) => Access::Ro,
            Some(Value::String(a)) if a == "ro" => Access::Ro,
            Some(Value::String(a)) if a == "rw" => Access::Rw,
            Some(other) => {
                ctx.reject(
                    &ip.key("access"),
                    format!(
                        "'access' must be \"ro\" or \"rw\", found {} — skipped.",
                        describe(other)
                    ),
                    None,
                );
                return None;
            }
        };
        let symlinks = match m.get("symlinks") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) if access == Access::Rw => true,
            Some(Value::Bool(true)) => {
                ctx.reject(
                    &ip.key("symlinks"),
                    "'symlinks': true only applies to an \"rw\" mount (a guest cannot create anything in an \"ro\" one) — skipped.".to_owned(),
                    Some("add \"access\": \"rw\", or remove 'symlinks'".to_owned()),
                );
                return None;
            }
            Some(other) => {
                ctx.reject(
                    &ip.key("symlinks"),
                    format!(
                        "'symlinks' must be true or false, found {} — skipped.",
                        describe(other)
                    ),
                    None,
                );
                return None;
            }
        };
        out.push(MountSpec {
            host,
            guest,
            access,
            symlinks,
        });
    }
    Some(out)
}

fn env(
    ctx: &mut Ctx<'_>,
    obj: &Map<String, Value>,
    path: &JsonPath,
) -> Option<BTreeMap<String, String>> {
    let epath = path.key("env");
    let map = match obj.get("env") {
        None | Some(Value::Null) => return Some(BTreeMap::new()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            ctx.reject(
                &epath,
                format!(
                    "'env' must be an object of strings, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    };
    let mut out = BTreeMap::new();
    for (k, v) in map {
        let Value::String(v) = v else {
            ctx.reject(
                &epath.key(k),
                format!(
                    "env '{k}' must be a string, found {} — skipped.",
                    describe(v)
                ),
                None,
            );
            return None;
        };
        out.insert(k.clone(), v.clone());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_keys_get_a_suggestion() {
        assert_eq!(unknown_key_fix("fule", WASM_KEYS), "did you mean 'fuel'?");
        assert_eq!(
            unknown_key_fix("memroy_mb", WASM_KEYS),
            "did you mean 'memory_mb'?"
        );
        assert!(
            unknown_key_fix("zzzzzzzz", WASM_KEYS).starts_with("allowed keys: type, component")
        );
    }
}
