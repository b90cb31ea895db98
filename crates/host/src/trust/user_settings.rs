//! The user's own settings, `~/.config/hookbox/settings.json` (`$XDG_CONFIG_HOME/hookbox/…`):
//! the `trust` mode every command starts from (a project's `.hookbox/settings.json` may make
//! it stricter, never looser), and `trust_namespace` (how approved hooks run under `require`;
//! the user's alone: a checkout cannot switch it).
//!
//! Read like every other host file: without following a symlink at the end, without blocking,
//! a regular file of at most [`MAX_SETTINGS_BYTES`](crate::MAX_SETTINGS_BYTES). Unknown keys
//! are ignored (a newer hookbox may know more).

use std::path::{Path, PathBuf};

use hookbox_core::files::read_file_beneath;
use hookbox_trust::TrustMode;
use serde::Deserialize;

use crate::settings::{MAX_SETTINGS_BYTES, SettingsError};

/// `~/.config/hookbox/settings.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct UserSettings {
    /// The trust mode (`off`, `warn`, `require`), unless `--trust` says otherwise.
    #[serde(default)]
    pub trust: Option<TrustMode>,
    /// Whether approved hooks run in a private mount namespace under `require`: `"auto"`
    /// (default), `"user-namespace"` (always inside a user namespace too), `"off"`.
    #[serde(default)]
    pub trust_namespace: Option<super::TrustNamespace>,
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
}
