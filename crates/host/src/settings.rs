//! `.hookbox/settings.json` in the project: operator switches that are not rules. Today only the
//! replay capture flag (the main source's `replay.capture_flags.capture_plugin_hook_output_full`).

use std::path::Path;

use serde::Deserialize;

/// The project settings hookbox reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Settings {
    /// Replay settings.
    #[serde(default)]
    pub replay: ReplaySettings,
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

/// Why settings could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
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
    /// Reads `<project>/.hookbox/settings.json`; a missing file means defaults.
    pub fn load(project_dir: &Path) -> Result<Settings, SettingsError> {
        let path = project_dir.join(".hookbox").join("settings.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(source) => {
                return Err(SettingsError::Read {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|e| SettingsError::Parse {
            path: path.display().to_string(),
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
    fn missing_file_is_defaults_and_flag_is_read() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Settings::load(dir.path()).unwrap(), Settings::default());
        std::fs::create_dir_all(dir.path().join(".hookbox")).unwrap();
        std::fs::write(
            dir.path().join(".hookbox/settings.json"),
            r#"{"replay":{"capture_flags":{"capture_plugin_hook_output_full":true}},"other":1}"#,
        )
        .unwrap();
        assert!(
            Settings::load(dir.path())
                .unwrap()
                .replay
                .capture_flags
                .capture_plugin_hook_output_full
        );
        std::fs::write(dir.path().join(".hookbox/settings.json"), "{\"replay\": [}").unwrap();
        assert!(matches!(
            Settings::load(dir.path()),
            Err(SettingsError::Parse { line: 1, .. })
        ));
    }
}
