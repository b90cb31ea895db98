//! The `command` handler's own fields: shell form (`command`, run by `shell`: `sh` by default,
//! `bash`, or PowerShell) or exec form (`command` + `args`, no shell), `async`, `asyncRewake`.
//! The timeout, already checked, falls back to the dialect's default for the event here.

use serde_json::{Map, Value};

use super::document::{Ctx, describe};
use super::span::JsonPath;
use super::timeout;
use crate::event::EventName;
use crate::rule::{CommandLine, CommandSpec, Shell};

/// The values `shell` may take, as the error lists them.
const SHELLS: &str = "\"sh\", \"bash\", \"powershell\", \"pwsh\"";

/// A handler's optional boolean `key`; `Err` (the rule is skipped) when it is not a boolean.
fn opt_bool(
    ctx: &mut Ctx<'_>,
    obj: &Map<String, Value>,
    path: &JsonPath,
    key: &str,
) -> Result<bool, ()> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => {
            ctx.skip(
                &path.key(key),
                format!(
                    "'{key}' must be a boolean, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            Err(())
        }
    }
}

/// Claude Code's `shell`: `None` (the rule is skipped, with an error) when unknown.
fn shell(ctx: &mut Ctx<'_>, obj: &Map<String, Value>, path: &JsonPath) -> Option<Shell> {
    let problem = match obj.get("shell") {
        None | Some(Value::Null) => return Some(Shell::Sh),
        Some(Value::String(s)) => match s.as_str() {
            "sh" => return Some(Shell::Sh),
            "bash" => return Some(Shell::Bash),
            "powershell" | "pwsh" => return Some(Shell::Powershell),
            _ => format!("unknown shell {}", Value::String(s.clone())),
        },
        Some(other) => format!("'shell' must be a string, found {}", describe(other)),
    };
    ctx.reject(
        &path.key("shell"),
        format!("{problem} — skipped. (Allowed: {SHELLS})"),
        Some("remove \"shell\" to run the command with sh -c".to_owned()),
    );
    None
}

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
    let mut command = match (program, args) {
        (None, None) => {
            ctx.skip(
                path,
                format!("Hook type 'command' under '{event}' has no 'command' — skipped."),
                Some("add \"command\": \"…\" (run with sh -c), or \"command\" plus \"args\": [...] (run without a shell)".to_owned()),
            );
            return None;
        }
        // Its shell is read below.
        (Some(text), None) => CommandLine::Shell {
            text,
            shell: Shell::Sh,
        },
        // Exec form: Claude Code spawns `command` with `args`, no shell. The spec carries the
        // whole argv, so a runner never has to guess which form it got.
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
            CommandLine::Exec { argv }
        }
    };
    let Ok(run_async) = opt_bool(ctx, obj, path, "async") else {
        return None;
    };
    // `asyncRewake`: in the background, and an exit 2 wakes the agent — so it is async too.
    let Ok(async_rewake) = opt_bool(ctx, obj, path, "asyncRewake") else {
        return None;
    };
    let parsed_shell = shell(ctx, obj, path)?;
    match &mut command {
        CommandLine::Shell { shell, .. } => *shell = parsed_shell,
        CommandLine::Exec { .. } if obj.get("shell").is_some_and(|v| !v.is_null()) => ctx.warn(
            &path.key("shell"),
            "'shell' is ignored in exec form: 'args' runs the program without a shell".to_owned(),
            Some(
                "remove \"shell\", or write the whole command in \"command\" without \"args\""
                    .to_owned(),
            ),
        ),
        CommandLine::Exec { .. } => {}
    }
    Some(CommandSpec {
        command,
        timeout_secs: timeout.unwrap_or_else(|| timeout::default_secs(ctx, event)),
        run_async: run_async || async_rewake,
        async_rewake,
    })
}
