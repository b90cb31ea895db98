//! `.hookbox/settings.json` in the project: operator switches that are not rules — the replay
//! capture flag (the main source's `replay.capture_flags.capture_plugin_hook_output_full`), the
//! Stop re-entry cap (`stop.reentry_cap`) and `trust` (stricter only).
//!
//! Settings are **policy input**: a host never reads this file by itself. The caller that trusts
//! the project as its own (the CLI) reads it with [`Settings::load`] and sets the policy's fields
//! with [`Settings::apply`]; a tenant's folder is never read for settings — its policy is its
//! operator's alone.
//!
//! The project is a checkout someone else may have written, so the file is read like a hook
//! file: beneath the project without following any symlink (`.hookbox` and `settings.json`
//! must be a real folder and a real file), without blocking on a FIFO, regular files only, and
//! at most [`MAX_SETTINGS_BYTES`].

use std::path::Path;

use hookbox_core::files::{ReadError, read_file_beneath};
use serde::Deserialize;

/// Largest settings file read: far above any real one, far below what could hurt the host.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// The project settings hookbox reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Settings {
    /// Replay settings.
    #[serde(default)]
    pub replay: ReplaySettings,
    /// Stop-loop settings.
    #[serde(default)]
    pub stop: StopSettings,
    /// `trust`: `off`, `warn` or `require`. It can make the host's mode stricter, never looser
    /// (a checkout must not switch off the approvals of the user who runs it).
    #[serde(default)]
    pub trust: Option<hookbox_trust::TrustMode>,
}

/// `replay` in settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ReplaySettings {
    /// `capture_flags`.
    #[serde(default)]
    pub capture_flags: CaptureFlags,
}

/// `replay.capture_flags`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct CaptureFlags {
    /// Keep hook output whole in replay instead of a 500-character preview (secrets are still
    /// redacted).
    #[serde(default)]
    pub capture_plugin_hook_output_full: bool,
}

/// `stop` in settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct StopSettings {
    /// Times a turn's Stop hooks may make it continue; overrides the host policy's
    /// `stop_reentry_cap` (the main source's 3; Claude Code's is 8).
    #[serde(default)]
    pub reentry_cap: Option<u32>,
}

/// Why settings could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but cannot be read safely (a symlink, a FIFO, too large, not UTF-8…).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The file is not valid settings JSON.
    #[error("{path}:{line}:{column}: invalid settings: {message}")]
    Parse {
        /// The file.
        path: String,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// serde's message.
        message: String,
    },
}

impl Settings {
    /// Reads `<project>/.hookbox/settings.json` with core's reader for untrusted small files
    /// (beneath the project, no symlink on the way, no FIFO, at most [`MAX_SETTINGS_BYTES`]); a
    /// missing file (or folder, or project) means defaults.
    pub fn load(project_dir: &Path) -> Result<Settings, SettingsError> {
        let rel = Path::new(".hookbox").join("settings.json");
        let text = match read_file_beneath(project_dir, &rel, MAX_SETTINGS_BYTES) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Ok(Settings::default()),
            Err(e) => return Err(e.into()),
        };
        serde_json::from_str(&text).map_err(|e| SettingsError::Parse {
            path: project_dir.join(rel).display().to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }
}

impl Settings {
    /// Sets the policy fields these settings name (the Stop re-entry cap when set, the replay
    /// capture flag, the trust mode — made stricter, never looser); the others stay as they are.
    pub fn apply(&self, policy: &mut crate::HostPolicy) {
        if let Some(cap) = self.stop.reentry_cap {
            policy.stop_reentry_cap = cap;
        }
        policy.capture_full_output = self.replay.capture_flags.capture_plugin_hook_output_full;
        if let Some(mode) = self.trust {
            policy.trust.mode = policy.trust.mode.stricter(mode);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".hookbox")).unwrap();
        dir
    }

    #[test]
    fn missing_file_is_defaults_and_flags_are_read() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Settings::load(dir.path()).unwrap(), Settings::default());
        std::fs::create_dir_all(dir.path().join(".hookbox")).unwrap();
        assert_eq!(Settings::load(dir.path()).unwrap(), Settings::default());
        std::fs::write(
            dir.path().join(".hookbox/settings.json"),
            r#"{"replay":{"capture_flags":{"capture_plugin_hook_output_full":true}},"stop":{"reentry_cap":8},"other":1}"#,
        )
        .unwrap();
        let s = Settings::load(dir.path()).unwrap();
        assert!(s.replay.capture_flags.capture_plugin_hook_output_full);
        assert_eq!(s.stop.reentry_cap, Some(8));
        std::fs::write(dir.path().join(".hookbox/settings.json"), "{\"replay\": [}").unwrap();
        assert!(matches!(
            Settings::load(dir.path()),
            Err(SettingsError::Parse { line: 1, .. })
        ));
    }

    #[test]
    fn settings_apply_to_the_fields_they_name() {
        let mut policy = crate::HostPolicy::default();
        Settings::default().apply(&mut policy);
        assert_eq!(
            (policy.stop_reentry_cap, policy.capture_full_output),
            (3, false)
        );
        let s: Settings = serde_json::from_str(
            r#"{"replay":{"capture_flags":{"capture_plugin_hook_output_full":true}},"stop":{"reentry_cap":8}}"#,
        )
        .unwrap();
        s.apply(&mut policy);
        assert_eq!(
            (policy.stop_reentry_cap, policy.capture_full_output),
            (8, true)
        );
    }

    #[test]
    fn hostile_checkouts_are_refused_without_hanging_or_reading_forever() {
        // A symlink to /dev/zero (read until out of memory), a FIFO (hang), an oversize file,
        // and a `.hookbox` that is a symlink: each is an error naming the file, and quick.
        let p = project();
        let file = p.path().join(".hookbox/settings.json");
        std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        let e = Settings::load(p.path()).unwrap_err().to_string();
        assert!(
            e.contains("symbolic link") && e.contains("settings.json"),
            "{e}"
        );

        let p = project();
        let file = p.path().join(".hookbox/settings.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&file)
                .status()
                .unwrap()
                .success()
        );
        let e = Settings::load(p.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");

        let p = project();
        let file = p.path().join(".hookbox/settings.json");
        std::fs::write(&file, vec![b' '; (MAX_SETTINGS_BYTES + 1) as usize]).unwrap();
        let e = Settings::load(p.path()).unwrap_err().to_string();
        assert!(e.contains("over the limit"), "{e}");

        let p = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("settings.json"), "{}").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), p.path().join(".hookbox")).unwrap();
        let e = Settings::load(p.path()).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }
}
