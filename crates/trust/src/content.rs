//! What a rule is, as the JSON its approval pins: the event, matcher and `if`, the dialect, the
//! fail mode, and the handler with every grant — a command's text and shell, a wasm rule's
//! component path, limits, mounts (with their access), environment and config, an http rule's
//! URL, headers and `allowedEnvVars`.
//!
//! Every field of the rule types is named here on purpose (no `..` in the patterns below): a
//! field added to a rule later does not compile until someone decides whether an approval
//! covers it. Optional fields that are unset are left out, so a record made before a new
//! optional field existed keeps its digest.

use serde_json::{Map, Value, json};

use hookbox_core::rule::{
    CommandLine, CommandSpec, Handler, HttpSpec, IfCondition, MountSpec, Rule, Shell, WasmSpec,
};

/// The canonical content of `rule` (everything but where it sits in its file).
pub fn rule_content(rule: &Rule) -> Value {
    let Rule {
        index: _,
        event,
        matcher,
        if_condition,
        handler,
        dialect,
        on_failure,
        status_message,
        source: _,
        plugin: _,
    } = rule;
    let mut m = Map::new();
    m.insert("event".into(), json!(event.as_str()));
    m.insert("matcher".into(), matcher.describe());
    if let Some(IfCondition {
        raw,
        tool: _,
        pattern: _,
    }) = if_condition
    {
        m.insert("if".into(), json!(raw));
    }
    m.insert("dialect".into(), json!(dialect.as_str()));
    if let Some(f) = on_failure {
        m.insert("on_failure".into(), json!(f));
    }
    if let Some(s) = status_message {
        m.insert("status_message".into(), json!(s));
    }
    m.insert("handler".into(), handler_content(handler));
    Value::Object(m)
}

fn handler_content(handler: &Handler) -> Value {
    match handler {
        Handler::Command(c) => command_content(c),
        Handler::Prompt { prompt } => json!({"type": "prompt", "prompt": prompt}),
        Handler::Wasm(w) => wasm_content(w),
        Handler::Http(h) => http_content(h),
    }
}

fn command_content(c: &CommandSpec) -> Value {
    let CommandSpec {
        command,
        timeout_secs,
        run_async,
        async_rewake,
    } = c;
    let mut m = Map::new();
    m.insert("type".into(), json!("command"));
    // The exec form records the default shell, as it always has: digests of approved exec-form
    // rules stay what they were.
    let shell = match command {
        CommandLine::Shell { text, shell } => {
            m.insert("command".into(), json!(text));
            *shell
        }
        CommandLine::Exec { argv } => {
            m.insert("args".into(), json!(argv));
            Shell::Sh
        }
    };
    m.insert("shell".into(), json!(shell.as_str()));
    m.insert("timeout".into(), json!(timeout_secs));
    if *run_async {
        m.insert("async".into(), json!(true));
    }
    if *async_rewake {
        m.insert("async_rewake".into(), json!(true));
    }
    Value::Object(m)
}

fn wasm_content(w: &WasmSpec) -> Value {
    let WasmSpec {
        component,
        timeout_secs,
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
    } = w;
    let mut limits = Map::new();
    let mut limit = |name: &str, v: Option<Value>| {
        if let Some(v) = v {
            limits.insert(name.into(), v);
        }
    };
    limit("timeout", timeout_secs.map(|t| json!(t)));
    limit("fuel", fuel.map(|v| json!(v)));
    limit("memory_mb", memory_mb.map(|v| json!(v)));
    limit("table_elements", table_elements.map(|v| json!(v)));
    limit("instances", instances.map(|v| json!(v)));
    limit("output_bytes", output_bytes.map(|v| json!(v)));
    limit("log_calls", log_calls.map(|v| json!(v)));
    limit("response_bytes", response_bytes.map(|v| json!(v)));
    limit("write_bytes", write_bytes.map(|v| json!(v)));
    limit("write_files", write_files.map(|v| json!(v)));
    // Keyed by the guest path, so a diff reads `mounts["/project"].access: ro → rw`; a guest
    // path named twice keeps both (`/x`, `/x#2`).
    let mut by_guest = Map::new();
    for MountSpec {
        host,
        guest,
        access,
        symlinks,
    } in mounts
    {
        let mut key = guest.clone();
        let mut n = 1;
        while by_guest.contains_key(&key) {
            n += 1;
            key = format!("{guest}#{n}");
        }
        let mut mount = json!({"host": host, "access": access});
        // Only when granted, so the content (and digest) of every mount without it is as before.
        if *symlinks {
            mount["symlinks"] = json!(true);
        }
        by_guest.insert(key, mount);
    }
    json!({
        "type": "wasm",
        "component": component,
        "limits": limits,
        "mounts": by_guest,
        "env": env,
        "config": config,
    })
}

fn http_content(h: &HttpSpec) -> Value {
    let HttpSpec {
        url,
        headers,
        allowed_env_vars,
        timeout_secs,
    } = h;
    json!({
        "type": "http",
        "url": url,
        "headers": headers,
        "allowed_env_vars": allowed_env_vars,
        "timeout": timeout_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::dialect::Dialect;
    use hookbox_core::event::EventName;
    use hookbox_core::matcher::Matcher;
    use hookbox_core::rule::{Access, FailMode, RuleSource};
    use std::collections::BTreeMap;

    fn rule(handler: Handler) -> Rule {
        Rule::new(
            3,
            EventName::PreToolUse,
            Matcher::Names(vec!["Bash".into()]),
            handler,
            Dialect::Claude,
            0,
            RuleSource::new("p", "hooks/hooks.json"),
        )
    }

    pub(crate) fn wasm_spec() -> WasmSpec {
        WasmSpec {
            component: "hooks/guard.wasm".into(),
            timeout_secs: Some(2.0),
            fuel: None,
            memory_mb: Some(32),
            table_elements: None,
            instances: None,
            output_bytes: None,
            log_calls: None,
            response_bytes: None,
            write_bytes: None,
            write_files: None,
            mounts: vec![MountSpec {
                host: "${CLAUDE_PROJECT_DIR}".into(),
                guest: "/project".into(),
                access: Access::Ro,
                symlinks: false,
            }],
            env: BTreeMap::from([("MODE".into(), "strict".into())]),
            config: json!({"deny": ["rm -rf /"]}),
        }
    }

    #[test]
    fn content_names_every_grant_and_leaves_out_unset_limits() {
        let c = rule_content(&rule(Handler::Wasm(wasm_spec())));
        assert_eq!(
            c,
            json!({
                "event": "PreToolUse",
                "matcher": {"kind": "names", "names": ["Bash"]},
                "dialect": "claude",
                "handler": {
                    "type": "wasm",
                    "component": "hooks/guard.wasm",
                    "limits": {"timeout": 2.0, "memory_mb": 32},
                    "mounts": {"/project": {"host": "${CLAUDE_PROJECT_DIR}", "access": "ro"}},
                    "env": {"MODE": "strict"},
                    "config": {"deny": ["rm -rf /"]},
                }
            })
        );
    }

    #[test]
    fn position_and_provenance_are_not_content_but_behaviour_is() {
        let a = rule(Handler::Command(CommandSpec::shell("./a.sh", 5.0)));
        let mut moved = a.clone();
        moved.index = 9;
        moved.source.json_path = "hooks.PreToolUse[4].hooks[0]".into();
        moved.plugin = 2;
        assert_eq!(rule_content(&a), rule_content(&moved));
        let mut closed = a.clone();
        closed.on_failure = Some(FailMode::Block);
        let mut slower = a.clone();
        slower.handler = Handler::Command(CommandSpec::shell("./a.sh", 6.0));
        let mut other_event = a.clone();
        other_event.event = EventName::Stop;
        let mut other_dialect = a.clone();
        other_dialect.dialect = Dialect::Simple;
        for changed in [closed, slower, other_event, other_dialect] {
            assert_ne!(rule_content(&a), rule_content(&changed));
        }
    }

    #[test]
    fn mounts_named_twice_are_both_kept() {
        let mut spec = wasm_spec();
        spec.mounts.push(MountSpec {
            host: "${CLAUDE_PLUGIN_DATA}".into(),
            guest: "/project".into(),
            access: Access::Rw,
            symlinks: false,
        });
        let c = rule_content(&rule(Handler::Wasm(spec)));
        let mounts = c["handler"]["mounts"].as_object().unwrap();
        assert_eq!(mounts.len(), 2);
        assert_eq!(mounts["/project#2"]["access"], "rw");
    }

    #[test]
    fn allowing_symlinks_in_a_mount_is_a_grant_that_changes_the_content() {
        let mut spec = wasm_spec();
        let before = rule_content(&rule(Handler::Wasm(spec.clone())));
        assert!(
            before["handler"]["mounts"]["/project"]
                .get("symlinks")
                .is_none()
        );
        spec.mounts[0].symlinks = true;
        let after = rule_content(&rule(Handler::Wasm(spec)));
        assert_eq!(after["handler"]["mounts"]["/project"]["symlinks"], true);
        assert_ne!(before, after);
    }
}
