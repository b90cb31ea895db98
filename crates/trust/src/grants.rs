//! What a rule may do beyond its text, as the approval screen lists it: one line per grant of
//! the rule's pinned content ([`rule_content`](crate::rule_content)) — limits, mounts and their
//! access, environment, config, URL and headers, `allowedEnvVars`, fail mode, `if`.
//!
//! Rendered from the content itself, not from a list of keys the screen remembers: the keys
//! with a wording of their own come first, in a fixed order, and **every other key** of the
//! handler and of the rule follows as `key value` — so a grant added to the rule model later is
//! on the screen the day it is pinned, without anyone remembering to add it here. Only what the
//! screen shows elsewhere is left out (the event and matcher on the rule's head line, the
//! command, component or prompt as what the rule runs, the handler's type).

use serde_json::{Map, Value};

/// Characters of a value shown on a grant line (an env value, a header, a config object).
const VALUE_CHARS: usize = 60;

/// The grant lines of a rule's pinned `content`, in order (unescaped: the screen escapes).
pub fn grants(content: &Value) -> Vec<String> {
    let mut g = Vec::new();
    if let Some(h) = content.get("handler").and_then(Value::as_object) {
        handler_grants(h, &mut g);
    }
    let Some(rule) = content.as_object() else {
        return g;
    };
    const RULE_ORDER: &[&str] = &["on_failure", "if", "dialect", "status_message"];
    const RULE_ELSEWHERE: &[&str] = &["event", "matcher", "handler"];
    for key in RULE_ORDER {
        match (*key, rule.get(*key)) {
            (_, None) => {}
            ("dialect", Some(d)) if d.as_str() == Some("claude") => {}
            ("status_message", Some(v)) => g.push(format!("status message {}", text(v))),
            (k, Some(v)) => g.push(format!("{k} {}", text(v))),
        }
    }
    for (k, v) in rule {
        if !RULE_ORDER.contains(&k.as_str()) && !RULE_ELSEWHERE.contains(&k.as_str()) {
            g.push(format!("{k} {}", text(v)));
        }
    }
    g
}

/// The handler's grants: its known keys in their order and wording, then every other key.
fn handler_grants(h: &Map<String, Value>, g: &mut Vec<String>) {
    let kind = h.get("type").and_then(Value::as_str).unwrap_or("");
    let (order, elsewhere): (&[&str], &[&str]) = match kind {
        "command" => (
            &["timeout", "shell", "async", "async_rewake"],
            &["type", "command", "args"],
        ),
        "wasm" => (
            &["mounts", "limits", "env", "config"],
            &["type", "component"],
        ),
        "http" => (
            &["url", "headers", "allowed_env_vars", "timeout"],
            &["type"],
        ),
        "prompt" => (&[], &["type", "prompt"]),
        _ => (&[], &["type"]),
    };
    for key in order {
        if let Some(v) = h.get(*key) {
            known(kind, key, v, g);
        }
    }
    for (k, v) in h {
        if !order.contains(&k.as_str()) && !elsewhere.contains(&k.as_str()) {
            g.push(format!("{k} {}", text(v)));
        }
    }
    if kind == "command" {
        g.push("native: unsandboxed, with your rights".into());
    }
}

/// One known handler key in its own wording.
fn known(kind: &str, key: &str, v: &Value, g: &mut Vec<String>) {
    match key {
        "timeout" => g.push(format!("timeout {v} s")),
        "shell" if v.as_str() == Some("sh") => {}
        "shell" => g.push(format!("shell {}", text(v))),
        "async" => g.push("async".into()),
        "async_rewake" => g.push("asyncRewake".into()),
        "mounts" => {
            for (guest, m) in v.as_object().into_iter().flatten() {
                let host = m.get("host").and_then(Value::as_str).unwrap_or("");
                let mut how = vec![
                    m.get("access")
                        .and_then(Value::as_str)
                        .unwrap_or("ro")
                        .to_owned(),
                ];
                for (k, x) in m.as_object().into_iter().flatten() {
                    match (k.as_str(), x) {
                        ("host" | "access", _) => {}
                        ("symlinks", Value::Bool(true)) => how.push("symlinks followed".into()),
                        (k, x) => how.push(format!("{k} {}", text(x))),
                    }
                }
                g.push(format!("mount {host} → {guest} ({})", how.join(", ")));
            }
        }
        "limits" => {
            for (k, x) in v.as_object().into_iter().flatten() {
                g.push(format!("{k} {x}"));
            }
        }
        "env" => {
            for (k, x) in v.as_object().into_iter().flatten() {
                g.push(format!("env {k}={}", text(x)));
            }
        }
        "config" if v.as_object().is_some_and(Map::is_empty) => {}
        "config" => g.push(format!("config {}", cut(&v.to_string()))),
        "url" if kind == "http" => g.push(format!("POST {}", text(v))),
        "headers" => {
            for (k, x) in v.as_object().into_iter().flatten() {
                g.push(format!("header {k}: {}", text(x)));
            }
        }
        "allowed_env_vars" => {
            let names: Vec<&str> = v
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !names.is_empty() {
                g.push(format!("allowedEnvVars {}", names.join(", ")));
            }
        }
        k => g.push(format!("{k} {}", text(v))),
    }
}

/// A value as shown: a string as itself, anything else as JSON; cut at [`VALUE_CHARS`].
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => cut(s),
        other => cut(&other.to_string()),
    }
}

fn cut(s: &str) -> String {
    let mut out: String = s.chars().take(VALUE_CHARS).collect();
    if s.chars().count() > VALUE_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn grants_name_mounts_limits_env_urls_and_fail_mode() {
        let wasm = json!({"on_failure": "block", "handler": {"type": "wasm", "component": "g.wasm", "mounts": {"/project": {"host": "${CLAUDE_PROJECT_DIR}", "access": "rw"}}, "limits": {"memory_mb": 32}, "env": {"MODE": "strict"}, "config": {}}});
        assert_eq!(
            grants(&wasm),
            [
                "mount ${CLAUDE_PROJECT_DIR} → /project (rw)",
                "memory_mb 32",
                "env MODE=strict",
                "on_failure block"
            ]
        );
        let http = json!({"handler": {"type": "http", "url": "https://x.example/h", "headers": {"Authorization": "Bearer $TOKEN"}, "allowed_env_vars": ["TOKEN"], "timeout": 5.0}});
        assert_eq!(
            grants(&http),
            [
                "POST https://x.example/h",
                "header Authorization: Bearer $TOKEN",
                "allowedEnvVars TOKEN",
                "timeout 5.0 s"
            ]
        );
    }

    /// A mount that follows symlinks is a wider grant than one that does not, and was not on the
    /// screen when grants were read by key.
    #[test]
    fn a_mount_that_follows_symlinks_says_so() {
        let wasm = json!({"handler": {"type": "wasm", "mounts": {"/p": {"host": "/h", "access": "ro", "symlinks": true}}}});
        assert_eq!(grants(&wasm), ["mount /h → /p (ro, symlinks followed)"]);
    }

    /// The rule content as the model pins it, for every kind of handler: every key of it is
    /// either on a grant line or one the screen shows elsewhere — so a grant added to the model
    /// appears without a change here.
    #[test]
    fn every_key_of_the_pinned_content_is_on_the_screen() {
        let content = json!({
            "event": "PreToolUse", "matcher": "Bash", "dialect": "codex",
            "status_message": "checking", "on_failure": "block",
            "a_new_rule_grant": {"x": 1},
            "handler": {"type": "command", "command": "g.sh", "shell": "bash", "timeout": 5,
                        "a_new_handler_grant": "wide"}
        });
        let g = grants(&content);
        for want in [
            "timeout 5 s",
            "shell bash",
            "a_new_handler_grant wide",
            "native: unsandboxed, with your rights",
            "on_failure block",
            "dialect codex",
            "status message checking",
            "a_new_rule_grant {\"x\":1}",
        ] {
            assert!(g.iter().any(|l| l == want), "{want} missing from {g:?}");
        }
        assert!(
            !g.iter().any(|l| l.contains("g.sh") || l.contains("Bash")),
            "{g:?}"
        );
    }
}
