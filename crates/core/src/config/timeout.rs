//! A hook's timeout: the rule's own `timeout` (seconds; a value that looks like milliseconds is
//! warned about), else the default of its dialect and event, and the most it may ask for —
//! ghast's 30 s, Claude Code's 60 s on `SessionEnd`, Codex's 3 s on `SessionEnd` and
//! `Interrupt`. A timeout over a cap is clamped, with a warning; one over
//! [`MAX_TIMEOUT_SECS`] (a day), which no host could honour, is refused with an error.
//!
//! Codex files are read in the `claude` dialect; a file is Codex's when it comes from a
//! `.codex-plugin` plugin or lies under a `.codex` folder ([`is_codex_path`]), and only the caps
//! differ.

use std::path::{Component, Path};

use serde_json::{Map, Value};

use super::document::{Ctx, describe};
use super::span::JsonPath;
use crate::dialect::{CLAUDE_SESSION_END_MAX_SECS, CODEX_SHORT_EVENT_MAX_SECS, Dialect};
use crate::event::EventName;
use crate::limits::MAX_TIMEOUT_SECS;

/// Whether a file at `path` is a Codex file (under a `.codex` or `.codex-plugin` folder).
pub(crate) fn is_codex_path(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(n) if n == ".codex" || n == ".codex-plugin"))
}

/// The most a hook on `event` may run, and whose rule that is.
pub(crate) fn max_secs(
    dialect: Dialect,
    event: EventName,
    codex: bool,
) -> Option<(f64, &'static str)> {
    match (dialect, event) {
        (Dialect::Ghast, _) => Some((30.0, "ghast maximum")),
        (Dialect::Claude, EventName::SessionEnd | EventName::Interrupt) if codex => {
            Some((CODEX_SHORT_EVENT_MAX_SECS, "Codex maximum for this event"))
        }
        (Dialect::Claude, EventName::Interrupt) => {
            Some((CODEX_SHORT_EVENT_MAX_SECS, "Codex maximum for this event"))
        }
        (Dialect::Claude, EventName::SessionEnd) => Some((
            CLAUDE_SESSION_END_MAX_SECS,
            "Claude Code maximum for SessionEnd",
        )),
        _ => None,
    }
}

/// `12 s`, `50 min`, `8 h 20 min`.
fn human_secs(secs: f64) -> String {
    // Timeouts are far below 2^53 s; rounding to whole seconds is what a reader wants.
    let total = secs.round().clamp(0.0, 9.0e15) as u64;
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, 0, _) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// The rule's own timeout in seconds, checked and capped: `Err` when the rule is skipped,
/// `Ok(None)` when it gives none (the caller applies the handler's default).
pub(crate) fn parse(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
) -> Result<Option<f64>, ()> {
    let tpath = path.key("timeout");
    let n = match obj.get("timeout") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n,
        Some(other) => {
            ctx.skip(
                &tpath,
                format!(
                    "'timeout' must be a number of seconds, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return Err(());
        }
    };
    let t = n.as_f64().unwrap_or(f64::NAN);
    if !(t.is_finite() && t > 0.0) {
        ctx.skip(
            &tpath,
            format!("'timeout' must be a positive number of seconds, found {n} — skipped."),
            None,
        );
        return Err(());
    }
    if t > MAX_TIMEOUT_SECS {
        // Refused, never clamped: a value this far off is a mistake, and near 10¹⁹ s it once
        // overflowed the host's deadline arithmetic.
        let ms = if t >= 1000.0 && t / 1000.0 <= MAX_TIMEOUT_SECS {
            format!(
                "; if you meant {} milliseconds, write \"timeout\": {}",
                n,
                t / 1000.0
            )
        } else {
            String::new()
        };
        ctx.reject(
            &tpath,
            format!(
                "timeout {n} s is over the maximum of {MAX_TIMEOUT_SECS} s ({}) any hook may ask for — skipped.",
                human_secs(MAX_TIMEOUT_SECS)
            ),
            Some(format!(
                "give at most {MAX_TIMEOUT_SECS} seconds{ms}"
            )),
        );
        return Err(());
    }
    let mut t = t;
    if t >= 1000.0 {
        ctx.warn(
            &tpath,
            format!("timeout {n} looks like milliseconds: hookbox reads seconds, so this hook may run for {}", human_secs(t)),
            Some(format!("if you meant {} s, write \"timeout\": {}", t / 1000.0, t / 1000.0)),
        );
    }
    if let Some((max, whose)) = max_secs(ctx.dialect, event, ctx.codex)
        && t > max
    {
        let what = if whose == "ghast maximum" {
            format!("the {} maximum", ctx.dialect)
        } else {
            format!("the {whose}")
        };
        ctx.warn(
            &tpath,
            format!("timeout {n} s is over {what} of {max} s — clamped to {max}"),
            None,
        );
        t = max;
    }
    Ok(Some(t))
}

/// The timeout of a `command` or `http` rule that gives none.
pub(crate) fn default_secs(ctx: &Ctx<'_>, event: EventName) -> f64 {
    let t = ctx.dialect.default_timeout_secs_for(event);
    match max_secs(ctx.dialect, event, ctx.codex) {
        Some((max, _)) => t.min(max),
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations() {
        assert_eq!(human_secs(3000.0), "50 min");
        assert_eq!(human_secs(30000.0), "8 h 20 min");
        assert_eq!(human_secs(1000.0), "16 min 40 s");
        assert_eq!(human_secs(7200.0), "2 h");
    }

    #[test]
    fn codex_paths() {
        assert!(is_codex_path(Path::new("repo/.codex/hooks.json")));
        assert!(is_codex_path(Path::new("p/.codex-plugin/plugin.json")));
        assert!(!is_codex_path(Path::new("p/.claude/settings.json")));
        assert!(!is_codex_path(Path::new("codex/hooks.json")));
    }

    #[test]
    fn caps() {
        use EventName::*;
        assert_eq!(
            max_secs(Dialect::Claude, SessionEnd, false).unwrap().0,
            60.0
        );
        assert_eq!(max_secs(Dialect::Claude, SessionEnd, true).unwrap().0, 3.0);
        assert_eq!(max_secs(Dialect::Claude, Interrupt, false).unwrap().0, 3.0);
        assert_eq!(max_secs(Dialect::Claude, PreToolUse, true), None);
        assert_eq!(max_secs(Dialect::Agentao, SessionEnd, false), None);
        assert_eq!(max_secs(Dialect::Ghast, Stop, false).unwrap().0, 30.0);
    }
}
