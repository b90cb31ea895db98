//! One hooks document, from text to rules: JSON syntax, the file's top-level shape (`hooks`
//! wrapper or bare events object, settings files, `disableAllHooks`), foreign formats, then every
//! event and entry (Claude matcher groups, flat handlers, the simple dialect's `{command}`).
//! Every problem becomes a located diagnostic; a bad rule is skipped, never dropped silently.

use std::path::Path;

use serde_json::{Map, Value};

use super::duplicates;
use super::foreign::{self, ForeignFormat};
use super::handler;
use super::read::parse_json;
use super::regex_cap::{RegexLimits, RegexUse};
use super::span::{JsonPath, Locator};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dialect::Dialect;
use crate::event::{EventName, json_type};
use crate::matcher::{Matcher, MatcherError, RegexError};
use crate::rule::Rule;

/// How a file's top level is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocKind {
    /// A hooks file: `{"hooks": {...}}` or the bare events object.
    Hooks,
    /// A Claude Code settings file: only its `hooks` object holds events; `permissions`,
    /// `env`, `model`… are settings.
    Settings,
}

impl DocKind {
    /// By file name: `settings.json`, `settings.local.json` (and `*settings.json`) are settings.
    pub(crate) fn of(path: &Path) -> DocKind {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with("settings.json") || name.ends_with("settings.local.json") {
            DocKind::Settings
        } else {
            DocKind::Hooks
        }
    }
}

/// What became of one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Parsed; its rules (possibly none) are in the context.
    Loaded,
    /// `disableAllHooks: true`.
    Disabled,
    /// Another agent's format.
    Foreign(ForeignFormat),
    /// Nothing could be read from it (syntax error, not an object…).
    Failed,
}

/// Parsing state for one document: where it is, what it produced.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a Path,
    pub(crate) dialect: Dialect,
    pub(crate) plugin_name: &'a str,
    pub(crate) plugin: usize,
    loc: Locator<'a>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Handlers skipped.
    pub(crate) skipped: usize,
    /// Problems that make the config invalid (the ghast dialect then fails the plugin).
    pub(crate) invalid: usize,
    /// The regex work this document asked for so far, against its caps.
    regex: RegexUse,
    /// Whether this is a Codex file (read in the `claude` dialect; Codex's timeout caps apply).
    pub(crate) codex: bool,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        text: &'a str,
        file: &'a Path,
        dialect: Dialect,
        plugin_name: &'a str,
        plugin: usize,
    ) -> Self {
        Ctx {
            file,
            dialect,
            plugin_name,
            plugin,
            loc: Locator::new(text),
            rules: Vec::new(),
            diagnostics: Vec::new(),
            skipped: 0,
            invalid: 0,
            regex: RegexUse::default(),
            codex: super::timeout::is_codex_path(file),
        }
    }

    /// Marks this document as a Codex file (a `.codex-plugin` plugin's), whatever its path.
    pub(crate) fn with_codex(mut self, codex: bool) -> Self {
        self.codex = self.codex || codex;
        self
    }

    /// Caps this document's regex work at `limits` (default [`RegexLimits::default`]).
    pub(crate) fn with_regex_limits(mut self, limits: RegexLimits) -> Self {
        self.regex.limits = limits;
        self
    }

    pub(crate) fn location(&mut self, path: &JsonPath) -> (Option<u32>, Option<u32>) {
        match self.loc.locate(path) {
            Some((l, c)) => (Some(l), Some(c)),
            None => (None, None),
        }
    }

    fn push(&mut self, severity: Severity, path: &JsonPath, message: String, fix: Option<String>) {
        let (line, column) = self.location(path);
        self.diagnostics.push(Diagnostic {
            severity,
            file: self.file.to_path_buf(),
            json_path: (!path.is_root()).then(|| path.to_string()),
            line,
            column,
            message,
            fix,
        });
    }

    /// Warns about every key written twice in one object of `text` (this document's text),
    /// located at the repeat, naming both places: JSON keeps the last and drops the first.
    pub(crate) fn warn_duplicates(&mut self, text: &str) {
        for d in duplicates::find(text) {
            let (l1, c1) = self.loc.line_col(d.first);
            let (l2, c2) = self.loc.line_col(d.again);
            let key = Value::String(d.key.clone());
            self.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                file: self.file.to_path_buf(),
                json_path: Some(d.path.to_string()),
                line: Some(l2),
                column: Some(c2),
                message: format!(
                    "duplicate key {key} (at {l1}:{c1} and again at {l2}:{c2}): only the last one is read — the first is ignored"
                ),
                fix: Some(format!("keep one {key}, merging the two if both are meant")),
            });
        }
    }

    /// Something is wrong enough to fail validation, yet nothing is skipped (a misspelt key:
    /// the rule loads as written, without the setting it meant).
    pub(crate) fn error(&mut self, path: &JsonPath, message: String, fix: Option<String>) {
        self.push(Severity::Error, path, message, fix);
    }

    /// Something looks wrong, but nothing is skipped.
    pub(crate) fn warn(&mut self, path: &JsonPath, message: String, fix: Option<String>) {
        self.push(Severity::Warning, path, message, fix);
    }

    /// `n` handlers are skipped. In the ghast dialect this fails the plugin, so it is an error.
    pub(crate) fn skip_n(
        &mut self,
        path: &JsonPath,
        message: String,
        fix: Option<String>,
        n: usize,
    ) {
        self.skipped += n;
        self.invalid(path, message, fix);
    }

    /// One handler is skipped.
    pub(crate) fn skip(&mut self, path: &JsonPath, message: String, fix: Option<String>) {
        self.skip_n(path, message, fix, 1);
    }

    /// One handler is skipped, and that is an error whatever the dialect: hookbox's own `wasm`
    /// block grants sandbox capabilities, so a typo in it must fail validation, not pass.
    pub(crate) fn reject(&mut self, path: &JsonPath, message: String, fix: Option<String>) {
        self.reject_n(path, message, fix, 1);
    }

    /// `n` handlers are skipped, and that is an error whatever the dialect (a matcher that
    /// cannot be used: the guards it governs would never run).
    pub(crate) fn reject_n(
        &mut self,
        path: &JsonPath,
        message: String,
        fix: Option<String>,
        n: usize,
    ) {
        self.skipped += n;
        self.invalid += 1;
        self.push(Severity::Error, path, message, fix);
    }

    /// Invalid config that skips no handler by itself (an empty matcher group).
    pub(crate) fn invalid(&mut self, path: &JsonPath, message: String, fix: Option<String>) {
        self.invalid += 1;
        let severity = if self.dialect.invalid_rule_fails_plugin() {
            Severity::Error
        } else {
            Severity::Warning
        };
        self.push(severity, path, message, fix);
    }

    fn file_error(&mut self, line: u32, column: u32, message: String, fix: Option<String>) {
        self.invalid += 1;
        self.diagnostics.push(Diagnostic {
            fix,
            ..Diagnostic::error(self.file, message).located(line, column)
        });
    }
}

/// A value as quoted in messages: `a string "30"`, `a number 3`, `an array`.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let cut: String = s.chars().take(60).collect();
            let cut = if cut.len() < s.len() {
                format!("{cut}…")
            } else {
                cut
            };
            format!("a string {}", Value::String(cut))
        }
        Value::Number(n) => format!("a number {n}"),
        Value::Bool(b) => format!("a boolean {b}"),
        other => json_type(other).to_owned(),
    }
}

/// Parses `text` as a hooks document: syntax, foreign formats, shape, rules.
pub(crate) fn parse_text(
    ctx: &mut Ctx<'_>,
    text: &str,
    kind: DocKind,
    sniff_path: &Path,
) -> Outcome {
    let root = match parse_json(text) {
        Ok(v) => v,
        Err(e) => {
            let fix = if e.too_deep {
                Some(
                    "hook files are never nested this deep; serde_json stops at 128 levels"
                        .to_owned(),
                )
            } else {
                Some("fix the JSON syntax (trailing commas and comments are not JSON)".to_owned())
            };
            ctx.file_error(
                e.line,
                e.column,
                format!("invalid JSON: {}", e.message),
                fix,
            );
            return Outcome::Failed;
        }
    };
    let Value::Object(map) = &root else {
        ctx.file_error(
            1,
            1,
            format!(
                "a hooks file must be a JSON object, found {}",
                describe(&root)
            ),
            Some("write {\"hooks\": {\"PreToolUse\": [...]}}".to_owned()),
        );
        return Outcome::Failed;
    };
    if let Some(format) = foreign::sniff(map, sniff_path) {
        ctx.diagnostics.push(
            Diagnostic::warning(ctx.file, format.message())
                .located(1, 1)
                .fix(foreign::conversion_hint(map)),
        );
        return Outcome::Foreign(format);
    }
    ctx.warn_duplicates(text);
    parse_document(ctx, map, &JsonPath::root(), kind)
}

/// Top-level keys of a bare events object that are not events.
pub(crate) const NOT_EVENTS: &[&str] = &["description", "$schema", "disableAllHooks", "version"];

/// Top-level keys Claude Code defines beside `hooks` that hookbox does not run or honour, with
/// what each is (reference notes: mods ≥ 2.1.287, admin settings): each gets a warning, so a
/// user can tell it was not honoured. (`disableAllHooks` is honoured.)
pub(crate) const NOT_RUN_KEYS: &[(&str, &str, &str)] = &[
    (
        "modules",
        "Claude Code's mods: JavaScript/TypeScript modules that Claude Code runs inside its own process; hookbox does not run them",
        "the file's \"hooks\" still load; to run a mod's logic with hookbox, write it as a command, http or wasm hook",
    ),
    (
        "allowedHttpHookUrls",
        "Claude Code's admin allow-list of http hook URLs; hookbox does not honour it: the host's http policy decides where http hooks may go",
        "set the destinations in the host policy (HostPolicy) instead",
    ),
    (
        "httpHookAllowedEnvVars",
        "Claude Code's admin list of variables http hook headers may read; hookbox does not honour it: each rule's allowedEnvVars, within the host policy, decides",
        "list the variables in each http hook's \"allowedEnvVars\"",
    ),
    (
        "allowManagedHooksOnly",
        "Claude Code's admin switch that runs only managed hooks; hookbox does not honour it: it runs the files it is given",
        "load only the hook files you mean to run",
    ),
];

/// Walks a parsed document (a file's root, or a manifest's inline `hooks` object at `base`).
pub(crate) fn parse_document(
    ctx: &mut Ctx<'_>,
    root: &Map<String, Value>,
    base: &JsonPath,
    kind: DocKind,
) -> Outcome {
    match root.get("disableAllHooks") {
        Some(Value::Bool(true)) => {
            let path = base.key("disableAllHooks");
            ctx.warn(
                &path,
                "disableAllHooks is true: no hook in this file is loaded".to_owned(),
                Some("remove \"disableAllHooks\" to load its hooks".to_owned()),
            );
            return Outcome::Disabled;
        }
        Some(Value::Bool(false)) | None => {}
        Some(other) => {
            let path = base.key("disableAllHooks");
            ctx.warn(
                &path,
                format!(
                    "'disableAllHooks' must be a boolean, found {}; ignored",
                    describe(other)
                ),
                None,
            );
        }
    }
    for (key, what, fix) in NOT_RUN_KEYS {
        if root.contains_key(*key) {
            ctx.warn(
                &base.key(key),
                format!("'{key}' is {what} — ignored"),
                Some((*fix).to_owned()),
            );
        }
    }
    let (events, events_path, wrapped) = match root.get("hooks") {
        Some(Value::Object(m)) => (m, base.key("hooks"), true),
        Some(other) => {
            let path = base.key("hooks");
            let (line, column) = ctx.location(&path);
            ctx.invalid += 1;
            ctx.diagnostics.push(Diagnostic {
                json_path: Some(path.to_string()),
                line,
                column,
                fix: Some("write \"hooks\": {\"PreToolUse\": [...], \"Stop\": [...]}".to_owned()),
                ..Diagnostic::error(
                    ctx.file,
                    format!(
                        "'hooks' must be an object mapping event names to rules, found {}",
                        describe(other)
                    ),
                )
            });
            return Outcome::Failed;
        }
        None if kind == DocKind::Settings => {
            ctx.warn(
                base,
                "this settings file has no 'hooks' object: nothing to load".to_owned(),
                None,
            );
            return Outcome::Loaded;
        }
        None => (root, base.clone(), false),
    };
    if wrapped {
        for (name, value) in root {
            if name.parse::<EventName>().is_ok() {
                let path = base.key(name);
                ctx.skip_n(
                    &path,
                    format!("'{name}' at the top level is ignored: this file has a 'hooks' object, and only its content is read — skipped."),
                    Some(format!("move '{name}' inside \"hooks\"")),
                    count_handlers(value),
                );
            }
        }
    }
    for (name, value) in events {
        let not_run = NOT_RUN_KEYS.iter().any(|(k, _, _)| k == name);
        if !wrapped && (NOT_EVENTS.contains(&name.as_str()) || not_run) {
            continue;
        }
        parse_event(ctx, name, value, &events_path.key(name));
    }
    Outcome::Loaded
}

/// How many handlers a value under an event holds (for the skipped count).
fn count_handlers(v: &Value) -> usize {
    let entry = |e: &Value| match e.get("hooks") {
        Some(Value::Array(h)) => h.len(),
        Some(_) => 1,
        None => 1,
    };
    match v {
        Value::Array(items) => items.iter().map(entry).sum(),
        other => entry(other),
    }
}

fn parse_event(ctx: &mut Ctx<'_>, name: &str, value: &Value, path: &JsonPath) {
    let Ok(event) = name.parse::<EventName>() else {
        let fix = match foreign::suggest_event(name) {
            Some((_, why)) => why,
            None => "hookbox reads Claude Code's event names (PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, …)".to_owned(),
        };
        ctx.skip_n(
            path,
            format!("Unsupported hook event '{name}' — skipped."),
            Some(fix),
            count_handlers(value),
        );
        return;
    };
    match value {
        Value::Array(items) => {
            if items.is_empty() && ctx.dialect.invalid_rule_fails_plugin() {
                ctx.invalid(path, format!("no rules under '{event}'; the ghast dialect needs at least one"), None);
            }
            for (i, entry) in items.iter().enumerate() {
                parse_entry(ctx, event, entry, &path.index(i));
            }
        }
        // A single rule written without its list.
        Value::Object(_) => parse_entry(ctx, event, value, path),
        other => ctx.skip(
            path,
            format!("rules under '{event}' must be a list, found {} — skipped.", describe(other)),
            Some(format!("write \"{event}\": [{{\"hooks\": [{{\"type\": \"command\", \"command\": \"…\"}}]}}]")),
        ),
    }
}

fn parse_entry(ctx: &mut Ctx<'_>, event: EventName, entry: &Value, path: &JsonPath) {
    let Value::Object(obj) = entry else {
        ctx.skip(
            path,
            format!(
                "Hook entry under '{event}' must be an object, found {} — skipped.",
                describe(entry)
            ),
            None,
        );
        return;
    };
    let Some(hooks) = obj.get("hooks") else {
        handler::parse_handler(ctx, event, obj, path, None);
        return;
    };
    super::keys::report_unknown(ctx, obj, path, super::keys::GROUP_KEYS, "a matcher group");
    let hooks_path = path.key("hooks");
    let handlers: Vec<(&Value, JsonPath)> = match hooks {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(j, h)| (h, hooks_path.index(j)))
            .collect(),
        Value::Object(_) => vec![(hooks, hooks_path.clone())],
        other => {
            ctx.skip(
                &hooks_path,
                format!(
                    "'hooks' of a matcher group must be a list of handlers, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return;
        }
    };
    if handlers.is_empty() {
        ctx.invalid(
            &hooks_path,
            format!("Empty matcher group under '{event}' (\"hooks\": []) — nothing to run."),
            Some("add a handler such as {\"type\": \"command\", \"command\": \"…\"}, or remove the group".to_owned()),
        );
        return;
    }
    let Some(matcher) = compile_matcher(
        ctx,
        event,
        obj.get("matcher"),
        &path.key("matcher"),
        handlers.len(),
    ) else {
        return;
    };
    for (h, hp) in handlers {
        match h {
            Value::Object(hobj) => handler::parse_handler(ctx, event, hobj, &hp, Some(&matcher)),
            other => ctx.skip(
                &hp,
                format!(
                    "Hook handler under '{event}' must be an object, found {} — skipped.",
                    describe(other)
                ),
                None,
            ),
        }
    }
}

/// Compiles a matcher, or reports why not — an error: the `n` handlers it governs are skipped,
/// and a guard among them would never run (SPEC §1.2: a regex that does not compile is an error
/// at load). A tool matcher that compiles but can match no tool any agent calls is a warning.
pub(crate) fn compile_matcher(
    ctx: &mut Ctx<'_>,
    event: EventName,
    raw: Option<&Value>,
    path: &JsonPath,
    n: usize,
) -> Option<Matcher> {
    let what = if n == 1 {
        String::new()
    } else {
        format!(" ({n} hooks)")
    };
    let cap_fix = "use exact names (Edit|Write) where you can, or split the rules across files";
    if let Err(why) = ctx.regex.admit(&Matcher::regex_sources(raw, event)) {
        ctx.reject_n(
            path,
            format!("Matcher under '{event}' not compiled: {why} — skipped{what}."),
            Some(cap_fix.to_owned()),
            n,
        );
        return None;
    }
    let m = match Matcher::from_json(raw, event) {
        Ok(m) => m,
        Err(e) => {
            let fix = match &e {
                MatcherError::Regex(RegexError::TooBig { .. }) => {
                    "write a smaller pattern: name the tools (Edit|Write), or use .* instead of long counted repetitions"
                }
                MatcherError::Regex(_) => {
                    "write a JavaScript regular expression, or plain names separated by | (Edit|Write)"
                }
                MatcherError::UnknownKey { .. } | MatcherError::NotAString { .. } => {
                    "write an object matcher as {\"tool_name\": \"Bash\"} with glob or ^…$ regex values"
                }
                MatcherError::WrongType { .. } => {
                    "write the matcher as a string (\"Bash|Edit\") or an object ({\"tool_name\": \"Bash\"})"
                }
            };
            // `Bash(git push:*)`, `Bash(` — a permission rule where a matcher goes.
            let fix = match raw.and_then(Value::as_str) {
                Some(s) if matches!(e, MatcherError::Regex(_)) => {
                    match crate::matcher::reach::permission_rule_tool(&format!("{s})"))
                        .filter(|_| s.contains('('))
                    {
                        Some(tool) => crate::matcher::reach::permission_rule_fix(s, tool),
                        None => fix.to_owned(),
                    }
                }
                _ => fix.to_owned(),
            };
            ctx.reject_n(
                path,
                format!("Invalid matcher under '{event}': {e} — skipped{what}."),
                Some(fix),
                n,
            );
            return None;
        }
    };
    if let Err(why) = ctx.regex.admit_backtracking(m.backtracking_count()) {
        ctx.reject_n(
            path,
            format!("Matcher under '{event}' not loaded: {why} — skipped{what}."),
            Some(cap_fix.to_owned()),
            n,
        );
        return None;
    }
    if !m.is_all() && event.matcher_field().is_none() {
        let shown = raw.map(Value::to_string).unwrap_or_default();
        ctx.warn(
            path,
            format!("matcher {shown} is ignored: '{event}' has no matcher, so every '{event}' runs this hook"),
            Some("remove \"matcher\"".to_owned()),
        );
        return Some(Matcher::All);
    }
    if event.matcher_field() == Some("tool_name")
        && let Some(u) = crate::matcher::unreachable_tool_matcher(&m)
    {
        ctx.warn(path, u.message, Some(u.fix));
    }
    Some(m)
}
