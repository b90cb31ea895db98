//! The user's own settings, `~/.config/hookbox/settings.json` (`$XDG_CONFIG_HOME/hookbox/…`):
//! the `trust` mode every command starts from, and the limits of what an approval copies and
//! pins. A project's `.hookbox/settings.json` may make the mode stricter, never looser; it sets
//! no limit (a checkout must not widen what your approvals take).
//!
//! `"trust"` is a mode (`"require"`) or a table of the mode and the limits:
//!
//! ```json
//! { "trust": { "mode": "require", "max_snapshot_files": 20000, "max_snapshot_bytes": 536870912,
//!              "max_pinned_file_bytes": 16777216, "max_program_bytes": 536870912 } }
//! ```
//!
//! Read like every other host file: without following a symlink at the end, without blocking,
//! a regular file of at most [`MAX_SETTINGS_BYTES`](crate::MAX_SETTINGS_BYTES). Unknown keys
//! at the top are ignored (a newer hookbox may know more); an unknown key of the `trust` table
//! is an error naming it (a misspelt limit must not be a silent default).

use std::path::{Path, PathBuf};

use hookbox_core::files::read_file_beneath;
use hookbox_trust::TrustMode;
use serde::{Deserialize, Deserializer};

use super::TrustPolicy;
use crate::settings::{MAX_SETTINGS_BYTES, SettingsError};

/// `~/.config/hookbox/settings.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserSettings {
    /// The trust mode (`off`, `warn`, `require`), unless `--trust` says otherwise.
    pub trust: Option<TrustMode>,
    /// The limits the `trust` table sets (each `None` keeps its default).
    pub trust_limits: TrustLimits,
}

/// The limits of `"trust": {…}` in the user's settings; each one unset keeps the
/// [`TrustPolicy`] default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrustLimits {
    /// `trust.max_snapshot_files`: regular files one approval's snapshot may copy.
    pub max_snapshot_files: Option<usize>,
    /// `trust.max_snapshot_bytes`: their bytes, together.
    pub max_snapshot_bytes: Option<u64>,
    /// `trust.max_pinned_file_bytes`: one file a rule runs, or a snapshot copies.
    pub max_pinned_file_bytes: Option<u64>,
    /// `trust.max_program_bytes`: one program found on `PATH` that is hashed.
    pub max_program_bytes: Option<u64>,
}

impl TrustLimits {
    /// Sets the limits given on `policy`; the others stay as they are.
    pub fn apply(&self, policy: &mut TrustPolicy) {
        if let Some(n) = self.max_snapshot_files {
            policy.max_snapshot_files = n;
        }
        if let Some(n) = self.max_snapshot_bytes {
            policy.max_snapshot_bytes = n;
        }
        if let Some(n) = self.max_pinned_file_bytes {
            policy.max_pinned_file_bytes = n;
        }
        if let Some(n) = self.max_program_bytes {
            policy.max_program_bytes = n;
        }
    }
}

/// The `trust` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustTable {
    #[serde(default)]
    mode: Option<TrustMode>,
    #[serde(default)]
    max_snapshot_files: Option<u64>,
    #[serde(default)]
    max_snapshot_bytes: Option<u64>,
    #[serde(default)]
    max_pinned_file_bytes: Option<u64>,
    #[serde(default)]
    max_program_bytes: Option<u64>,
}

/// A limit of the `trust` table: at least 1, named in the message when it is not.
fn limit(field: &str, value: Option<u64>, unit: &str) -> Result<Option<u64>, String> {
    match value {
        Some(0) => Err(format!(
            "trust.{field}: 0 is not a limit — give a number of {unit} of at least 1, or leave the key out for the default"
        )),
        v => Ok(v),
    }
}

#[derive(Deserialize)]
struct RawUserSettings {
    #[serde(default)]
    trust: Option<TrustForm>,
}

/// `"trust"` as written: a mode, or a table of the mode and the limits. Read by a visitor, so
/// an error keeps serde_json's line and column.
struct TrustForm(UserSettings);

impl<'de> Deserialize<'de> for TrustForm {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TrustVisitor)
    }
}

struct TrustVisitor;

impl<'de> serde::de::Visitor<'de> for TrustVisitor {
    type Value = TrustForm;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "trust: a mode (\"off\", \"warn\", \"require\") or a table ({\"mode\": \"require\", \"max_snapshot_files\": 10000, …})",
        )
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TrustForm, E> {
        let mode = TrustMode::deserialize(serde::de::value::StrDeserializer::<E>::new(v))
            .map_err(|e| E::custom(format!("trust: {e}")))?;
        Ok(TrustForm(UserSettings {
            trust: Some(mode),
            trust_limits: TrustLimits::default(),
        }))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<TrustForm, A::Error> {
        use serde::de::Error as _;
        let t = TrustTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        let limit = |field: &str, v: Option<u64>, unit: &str| {
            limit(field, v, unit).map_err(A::Error::custom)
        };
        let files = limit("max_snapshot_files", t.max_snapshot_files, "files")?;
        Ok(TrustForm(UserSettings {
            trust: t.mode,
            trust_limits: TrustLimits {
                max_snapshot_files: files.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                max_snapshot_bytes: limit("max_snapshot_bytes", t.max_snapshot_bytes, "bytes")?,
                max_pinned_file_bytes: limit(
                    "max_pinned_file_bytes",
                    t.max_pinned_file_bytes,
                    "bytes",
                )?,
                max_program_bytes: limit("max_program_bytes", t.max_program_bytes, "bytes")?,
            },
        }))
    }
}

impl<'de> Deserialize<'de> for UserSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawUserSettings::deserialize(d)?;
        Ok(raw.trust.map(|t| t.0).unwrap_or_default())
    }
}

/// hookbox's configuration folder: `$XDG_CONFIG_HOME/hookbox`, else `$HOME/.config/hookbox`;
/// `None` when neither is set.
pub fn default_config_dir() -> Option<PathBuf> {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("XDG_CONFIG_HOME")
        .map(|d| d.join("hookbox"))
        .or_else(|| var("HOME").map(|d| d.join(".config").join("hookbox")))
}

impl UserSettings {
    /// Reads `<dir>/settings.json`; a missing file or folder means defaults.
    pub fn load(dir: &Path) -> Result<UserSettings, SettingsError> {
        let shown = dir.join("settings.json").display().to_string();
        let text = match read_file_beneath(dir, Path::new("settings.json"), MAX_SETTINGS_BYTES) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Ok(UserSettings::default()),
            Err(e) => return Err(e.into()),
        };
        serde_json::from_str(&text).map_err(|e| SettingsError::Parse {
            path: shown,
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_trust_mode_is_read_and_bad_values_are_located() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(
            UserSettings::load(&t.path().join("none")).unwrap(),
            UserSettings::default()
        );
        assert_eq!(UserSettings::load(t.path()).unwrap().trust, None);
        std::fs::write(
            t.path().join("settings.json"),
            r#"{"trust": "require", "later": 1}"#,
        )
        .unwrap();
        assert_eq!(
            UserSettings::load(t.path()).unwrap().trust,
            Some(TrustMode::Require)
        );
        std::fs::write(t.path().join("settings.json"), "{\n \"trust\": \"strict\"}").unwrap();
        let e = UserSettings::load(t.path()).unwrap_err().to_string();
        assert!(
            e.contains("settings.json:2:") && e.contains("unknown variant `strict`"),
            "{e}"
        );
        std::fs::remove_file(t.path().join("settings.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", t.path().join("settings.json")).unwrap();
        let e = UserSettings::load(t.path()).unwrap_err().to_string();
        assert!(e.contains("settings.json"), "{e}");
    }

    #[test]
    fn the_trust_table_sets_the_mode_and_the_limits_and_bad_values_are_named() {
        let t = tempfile::tempdir().unwrap();
        let write = |text: &str| std::fs::write(t.path().join("settings.json"), text).unwrap();
        write(
            r#"{"trust": {"mode": "require", "max_snapshot_files": 20, "max_snapshot_bytes": 4096, "max_pinned_file_bytes": 1024}}"#,
        );
        let s = UserSettings::load(t.path()).unwrap();
        assert_eq!(s.trust, Some(TrustMode::Require));
        let mut policy = TrustPolicy::default();
        s.trust_limits.apply(&mut policy);
        assert_eq!(
            (
                policy.max_snapshot_files,
                policy.max_snapshot_bytes,
                policy.max_pinned_file_bytes
            ),
            (20, 4096, 1024)
        );
        // Only some: the others keep their defaults; no mode: none set.
        write(r#"{"trust": {"max_snapshot_bytes": 4096}}"#);
        let s = UserSettings::load(t.path()).unwrap();
        assert_eq!(s.trust, None);
        let mut policy = TrustPolicy::default();
        s.trust_limits.apply(&mut policy);
        assert_eq!(policy.max_snapshot_bytes, 4096);
        assert_eq!(
            policy.max_snapshot_files,
            TrustPolicy::default().max_snapshot_files
        );
        for (text, said) in [
            (
                r#"{"trust": {"max_snapshot_files": 0}}"#,
                "trust.max_snapshot_files: 0 is not a limit",
            ),
            (
                r#"{"trust": {"max_snapshot_bytes": -1}}"#,
                "invalid value: integer `-1`",
            ),
            (
                r#"{"trust": {"max_snapshot_file": 10}}"#,
                "unknown field `max_snapshot_file`, expected one of",
            ),
            (r#"{"trust": 3}"#, "expected trust: a mode"),
            (
                r#"{"trust": {"mode": "strict"}}"#,
                "unknown variant `strict`",
            ),
        ] {
            write(text);
            let e = UserSettings::load(t.path()).unwrap_err().to_string();
            assert!(
                e.contains("settings.json:") && e.contains(said),
                "{text}: {e}"
            );
        }
    }
}
