//! The case format of `hookbox test` and reading a plugin's cases: `tests/*.json` or
//! `tests/*.toml` (the same fields in either), one case per file, described by the JSON Schema
//! `docs/test-case.schema.json` (`hookbox test --print-schema`).
//!
//! A plugin folder is someone else's: every case file is read beneath the plugin without
//! following a symlink (a `tests` link, or a case linked to a file elsewhere, is refused), bounded
//! in size ([`MAX_CASE_BYTES`]) and in number ([`MAX_CASES`]); a case's project files may only
//! name paths inside its scratch project ([`project_path`]).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use hookbox_core::agent::Agent;
use hookbox_core::output::FailureClass;
use hookbox_core::{EventName, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema of a case (draft 2020-12), also in the docs.
pub(crate) const SCHEMA: &str = include_str!("../../../docs/test-case.schema.json");

/// Largest case file read.
pub(crate) const MAX_CASE_BYTES: u64 = 1 << 20;
/// Most case files one plugin's `tests/` may hold (a folder of more is refused, not sampled).
pub(crate) const MAX_CASES: usize = 4096;
/// Most project files one case may write into its scratch project.
pub(crate) const MAX_PROJECT_FILES: usize = 256;
/// Longest project file path, in bytes.
pub(crate) const MAX_PROJECT_PATH_BYTES: usize = 1024;
/// Most environment variables one case may set.
pub(crate) const MAX_ENV_VARS: usize = 256;

/// A case file as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaseFile {
    /// The schema's address, for editors; not read.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub(crate) schema: Option<String>,
    /// What the case shows, printed beside its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// The event: hookbox's (Claude Code's) name, or with `agent` the agent's own name (needed
    /// only where its payload does not say, as Copilot's camelCase payloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) event: Option<String>,
    /// The payload is this agent's own stdin payload (parsed by its adapter, as `hookbox hook`
    /// does); without it, the payload is hookbox's flat Claude Code payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<Agent>,
    /// The payload (a JSON object); `session_id` and `cwd` default to a test session and the
    /// scratch project.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub(crate) payload: Map<String, Value>,
    /// Files of the scratch project the case runs in (`CLAUDE_PROJECT_DIR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) project: Option<Project>,
    /// Variables native hooks see, on top of hookbox's own environment (the credential
    /// deny-list still applies).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) env: BTreeMap<String, String>,
    /// Stop: how many times this turn already re-entered (hookbox payloads; an agent's payload
    /// says it itself).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) reentries: u32,
    /// What must hold.
    pub(crate) expect: Expect,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The scratch project of a case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Project {
    /// Path (relative, inside the project) → content.
    #[serde(default)]
    pub(crate) files: BTreeMap<String, String>,
}

/// A decision a case may expect: a permission decision, or `none` (no hook decided).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Decision {
    /// Run the call without asking.
    Allow,
    /// Ask the user.
    Ask,
    /// Leave it to a later decision (Claude Code `-p`).
    Defer,
    /// Refuse the call.
    Deny,
    /// No permission decision at all.
    None,
}

/// What must hold after the dispatch; every field is optional, and only what is given is checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    /// The verdict's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) outcome: Option<Outcome>,
    /// The permission decision (`PreToolUse`, `PermissionRequest`, `PreModelSwitch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) decision: Option<Decision>,
    /// A text the reason contains: a deny's or a block's reason, a stop reason, a Stop hook's
    /// follow-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// A text one of the added contexts contains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context: Option<String>,
    /// A text one of the system messages contains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) system_message: Option<String>,
    /// The rewritten tool input, exactly; `null`: no rewrite.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) updated_input: Option<Value>,
    /// A failure class one of the hooks failed with (`timeout`, `trap`, …), or `none`: no hook
    /// failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
    /// The dispatch takes at most this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_ms: Option<f64>,
    /// Check `outcome`, `decision`, `reason`, `context` and `updated_input` also on the answer
    /// each of these agents would receive: `"all"` or a list of names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agents: Option<Value>,
}

/// `updated_input: null` is present (it expects no rewrite), unlike an absent key.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A case ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// The file name without its extension.
    pub(crate) name: String,
    /// The file, relative to the plugin (`tests/x.json`).
    pub(crate) file: PathBuf,
    /// As written.
    pub(crate) spec: CaseFile,
    /// `expect.failure`, checked: `Some(None)` expects no failure.
    pub(crate) failure: Option<Option<FailureClass>>,
    /// `expect.agents`, checked.
    pub(crate) agents: Vec<Agent>,
}

/// The cases of `plugin` (its `tests/`), sorted by name. No `tests/` is no cases.
pub(crate) fn read_cases(plugin: &Path) -> anyhow::Result<Vec<Case>> {
    let tests = plugin.join("tests");
    let meta = match std::fs::symlink_metadata(&tests) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", tests.display())),
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        bail!(
            "{} is not a folder (a symbolic link is not followed): a plugin's cases live in its own tests/ folder",
            tests.display()
        );
    }
    let mut names = Vec::new();
    for entry in
        std::fs::read_dir(&tests).with_context(|| format!("cannot read {}", tests.display()))?
    {
        let entry = entry.with_context(|| format!("cannot read {}", tests.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if name.ends_with(".json") || name.ends_with(".toml") {
            names.push(name.to_owned());
            if names.len() > MAX_CASES {
                bail!(
                    "{} holds more than {MAX_CASES} case files (MAX_CASES): split the plugin's cases, or remove generated ones",
                    tests.display()
                );
            }
        }
    }
    names.sort();
    names
        .iter()
        .map(|name| {
            let rel = Path::new("tests").join(name);
            let text = hookbox_core::files::read_file_beneath(plugin, &rel, MAX_CASE_BYTES)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            parse_case(&plugin.join(&rel), &rel, &text)
        })
        .collect()
}

/// Parses and checks one case; `shown` names the file in errors.
pub(crate) fn parse_case(shown: &Path, rel: &Path, text: &str) -> anyhow::Result<Case> {
    let spec: CaseFile = if rel.extension().is_some_and(|e| e == "toml") {
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{}: {e}", shown.display()))?
    } else {
        serde_json::from_str(text).map_err(|e| anyhow::anyhow!("{}: {e}", shown.display()))?
    };
    let name = rel
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    check(&spec).with_context(|| format!("{}", shown.display()))?;
    let failure = match spec.expect.failure.as_deref() {
        None => None,
        Some("none") => Some(None),
        Some(f) => Some(Some(
            FailureClass::ALL
                .into_iter()
                .find(|c| c.as_str() == f)
                .with_context(|| {
                    format!(
                        "{}: expect.failure `{f}` is not a failure class; one of none, {}",
                        shown.display(),
                        FailureClass::ALL.map(FailureClass::as_str).join(", ")
                    )
                })?,
        )),
    };
    let agents = agents_of(spec.expect.agents.as_ref())
        .with_context(|| format!("{}: expect.agents", shown.display()))?;
    Ok(Case {
        name,
        file: rel.to_owned(),
        spec,
        failure,
        agents,
    })
}

/// What serde cannot say: the event is known, the project paths stay inside, the bounds.
fn check(spec: &CaseFile) -> anyhow::Result<()> {
    match (&spec.agent, spec.event.as_deref()) {
        (None, None) => bail!(
            "`event` is missing: name hookbox's event (PreToolUse, UserPromptSubmit, Stop, …), or give `agent` and that agent's own payload"
        ),
        (None, Some(e)) => {
            e.parse::<EventName>().map_err(|_| {
                anyhow::anyhow!(
                    "event `{e}` is not a hookbox event; use a Claude Code event name such as PreToolUse, UserPromptSubmit, Stop (with `agent`, the agent's own name)"
                )
            })?;
        }
        (Some(_), _) => {}
    }
    if let Some(p) = &spec.project {
        if p.files.len() > MAX_PROJECT_FILES {
            bail!(
                "project.files names {} files, more than {MAX_PROJECT_FILES} (MAX_PROJECT_FILES)",
                p.files.len()
            );
        }
        for path in p.files.keys() {
            project_path(path)?;
        }
    }
    if spec.env.len() > MAX_ENV_VARS {
        bail!(
            "env sets {} variables, more than {MAX_ENV_VARS} (MAX_ENV_VARS)",
            spec.env.len()
        );
    }
    for name in spec.env.keys() {
        if name.is_empty() || name.contains(['=', '\0']) {
            bail!(
                "env: `{}` is not a variable name (no `=` or NUL, not empty)",
                name.escape_debug()
            );
        }
    }
    if spec.env.values().any(|v| v.contains('\0')) {
        bail!("env: a value holds a NUL byte, which no process environment can carry");
    }
    if let Some(ms) = spec.expect.max_ms
        && !(ms.is_finite() && ms > 0.0)
    {
        bail!("expect.max_ms must be a number of milliseconds above 0, not {ms}");
    }
    Ok(())
}

/// `path` as a path inside a case's project: relative, only plain names (no `..`, no `.`, no
/// root, no NUL), at most [`MAX_PROJECT_PATH_BYTES`]. The names, in order.
pub(crate) fn project_path(path: &str) -> anyhow::Result<Vec<String>> {
    let bad = |why: &str| {
        anyhow::anyhow!(
            "project.files: `{}` {why}: a case writes only inside its scratch project (a relative path of plain names, such as src/main.rs)",
            path.escape_debug()
        )
    };
    if path.is_empty() || path.len() > MAX_PROJECT_PATH_BYTES {
        return Err(bad("is empty or too long"));
    }
    if path.contains('\0') {
        return Err(bad("holds a NUL byte"));
    }
    let mut names = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(n) => names.push(n.to_string_lossy().into_owned()),
            Component::ParentDir => return Err(bad("leaves the project with `..`")),
            Component::RootDir | Component::Prefix(_) => return Err(bad("is absolute")),
            Component::CurDir => return Err(bad("holds `.`")),
        }
    }
    if path.ends_with('/') {
        return Err(bad("names a folder, not a file"));
    }
    Ok(names)
}

/// `expect.agents`: absent (none), `"all"`, or a list of agent names.
fn agents_of(v: Option<&Value>) -> anyhow::Result<Vec<Agent>> {
    let names = || Agent::ALL.map(Agent::as_str).join(", ");
    match v {
        None => Ok(Vec::new()),
        Some(Value::String(s)) if s == "all" => Ok(Agent::ALL.to_vec()),
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for item in items {
                let name = item
                    .as_str()
                    .with_context(|| format!("{item} is not an agent name; one of {}", names()))?;
                let agent: Agent = name.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
                if !out.contains(&agent) {
                    out.push(agent);
                }
            }
            Ok(out)
        }
        Some(other) => bail!(
            "must be \"all\" or a list of agent names ({}), not {other}",
            names()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Case> {
        parse_case(Path::new("p/tests/c.json"), Path::new("tests/c.json"), text)
    }

    #[test]
    fn a_case_reads_every_field() {
        let c = parse(
            r#"{"event": "PreToolUse", "payload": {"tool_name": "Bash"},
                "project": {"files": {"src/a.txt": "x"}}, "env": {"A": "1"},
                "expect": {"outcome": "block", "decision": "deny", "reason": "no", "context": "c",
                           "system_message": "m", "updated_input": null, "failure": "none",
                           "max_ms": 500, "agents": ["claude", "cursor", "claude"]}}"#,
        )
        .unwrap();
        assert_eq!(c.name, "c");
        assert_eq!(c.spec.expect.updated_input, Some(Value::Null));
        assert_eq!(c.failure, Some(None));
        assert_eq!(c.agents, vec![Agent::Claude, Agent::Cursor]);
        let all = parse(r#"{"event": "Stop", "expect": {"agents": "all"}}"#).unwrap();
        assert_eq!(all.agents, Agent::ALL.to_vec());
        assert_eq!(all.spec.expect.updated_input, None);
    }

    #[test]
    fn mistakes_are_named_with_their_field() {
        for (text, says) in [
            (
                r#"{"event": "PreToolUse", "expect": {"outcom": "block"}}"#,
                "unknown field `outcom`",
            ),
            (
                r#"{"event": "PreTool", "expect": {}}"#,
                "event `PreTool` is not a hookbox event",
            ),
            (r#"{"expect": {}}"#, "`event` is missing"),
            (
                r#"{"event": "Stop", "expect": {"failure": "slow"}}"#,
                "is not a failure class",
            ),
            (
                r#"{"event": "Stop", "expect": {"agents": ["claud"]}}"#,
                "unknown agent `claud`",
            ),
            (
                r#"{"event": "Stop", "expect": {"agents": "some"}}"#,
                "must be \"all\" or a list",
            ),
            (r#"{"event": "Stop", "expect": {"max_ms": 0}}"#, "above 0"),
            (
                r#"{"event": "Stop", "env": {"A=B": "1"}, "expect": {}}"#,
                "is not a variable name",
            ),
            (
                r#"{"event": "Stop", "expect": {"decision": "maybe"}}"#,
                "unknown variant `maybe`",
            ),
        ] {
            let e = format!("{:#}", parse(text).unwrap_err());
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.contains("p/tests/c.json"), "{text}: {e}");
        }
    }

    #[test]
    fn project_files_stay_inside_the_project() {
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "./a",
            "",
            "a\0b",
            "dir/",
        ] {
            let e = project_path(bad).unwrap_err().to_string();
            assert!(
                e.contains("writes only inside its scratch project"),
                "{bad:?}: {e}"
            );
        }
        assert_eq!(project_path("src/main.rs").unwrap(), ["src", "main.rs"]);
        assert_eq!(
            project_path(".hookbox/settings.json").unwrap(),
            [".hookbox", "settings.json"]
        );
        let long = "a/".repeat(MAX_PROJECT_PATH_BYTES);
        assert!(project_path(&long).is_err());
    }

    #[test]
    fn toml_cases_are_the_same_format() {
        let c = parse_case(
            Path::new("p/tests/c.toml"),
            Path::new("tests/c.toml"),
            "event = \"PreToolUse\"\n[payload]\ntool_name = \"Bash\"\n[payload.tool_input]\ncommand = \"ls\"\n[expect]\ndecision = \"none\"\n",
        )
        .unwrap();
        assert_eq!(c.spec.payload["tool_input"]["command"], "ls");
        assert_eq!(c.spec.expect.decision, Some(Decision::None));
    }
}
