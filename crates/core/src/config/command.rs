//! The `command` handler's own fields: shell form (`command`, run with `sh -c`) or exec form
//! (`command` + `args`, no shell), `async`, `shell`. The timeout, already checked, falls back to
//! the dialect's default here.

use serde_json::{Map, Value};

use super::document::{Ctx, describe};
use super::span::JsonPath;
use crate::event::EventName;
use crate::rule::CommandSpec;

pub(crate) fn parse_command(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
    timeout: Option<f64>,
) -> Option<CommandSpec> {
    let program = match obj.get("command") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => {
            ctx.skip(
                &path.key("command"),
                "'command' is empty — skipped.".to_owned(),
                None,
            );
            return None;
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            ctx.skip(
                &path.key("command"),
                format!(
                    "'command' must be a string, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    };
    let args = match obj.get("args") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let mut args = Vec::with_capacity(items.len());
            for (i, a) in items.iter().enumerate() {
                let Value::String(a) = a else {
                    ctx.skip(
                        &path.key("args").index(i),
                        format!(
                            "'args' must be a list of strings, found {} — skipped.",
                            describe(a)
                        ),
                        None,
                    );
                    return None;
                };
                args.push(a.clone());
            }
            Some(args)
        }
        Some(other) => {
            ctx.skip(
                &path.key("args"),
                format!(
                    "'args' must be a list of strings, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    };
    let (command, args) = match (program, args) {
        (None, None) => {
            ctx.skip(
                path,
                format!("Hook type 'command' under '{event}' has no 'command' — skipped."),
                Some("add \"command\": \"…\" (run with sh -c), or \"command\" plus \"args\": [...] (run without a shell)".to_owned()),
            );
            return None;
        }
        (Some(c), None) => (Some(c), None),
        // Exec form: Claude Code spawns `command` with `args`, no shell. The spec carries the
        // whole argv in `args`, so a runner never has to guess which form it got.
        (program, Some(rest)) => {
            let argv: Vec<String> = program.into_iter().chain(rest).collect();
            if argv.is_empty() {
                ctx.skip(
                    &path.key("args"),
                    "'args' is empty and there is no 'command' — skipped.".to_owned(),
                    None,
                );
                return None;
            }
            (None, Some(argv))
        }
    };
    let run_async = match obj.get("async") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            ctx.skip(
                &path.key("async"),
                format!(
                    "'async' must be a boolean, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    };
    match obj.get("shell") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "bash" || s == "sh" => {}
        Some(Value::String(s)) => ctx.warn(
            &path.key("shell"),
            format!(
                "shell {} is not supported: hookbox runs command hooks with sh -c",
                Value::String(s.clone())
            ),
            Some("write the command for a POSIX shell, or remove \"shell\"".to_owned()),
        ),
        Some(other) => {
            ctx.skip(
                &path.key("shell"),
                format!(
                    "'shell' must be a string, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    }
    Some(CommandSpec {
        command,
        args,
        timeout_secs: timeout.unwrap_or_else(|| ctx.dialect.default_timeout_secs()),
        run_async,
        async_rewake: false,
        shell: crate::rule::Shell::Sh,
    })
}
