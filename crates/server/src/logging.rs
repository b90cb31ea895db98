//! Logs of `hookbox serve`, on stderr: human-readable lines or one JSON object a line
//! (`log_format`), filtered by `log_filter` (tracing's syntax: `info`, `warn,hookbox_server=debug`).

use crate::config::{ConfigError, LogFormat};

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// `log_filter` does not parse.
    #[error(transparent)]
    Filter(#[from] ConfigError),
    /// A global logger was installed already (by the embedding program).
    #[error("a logger is already installed; {0} logs go to it")]
    AlreadySet(&'static str),
}

/// Installs the process's logger.
pub fn init(format: LogFormat, filter: &str) -> Result<(), LogError> {
    let filter =
        tracing_subscriber::EnvFilter::try_new(filter).map_err(|e| ConfigError::Invalid {
            key: "log_filter",
            reason: format!("is `{filter}`: {e}"),
        })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never into a log file or collector.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    installed.map_err(|_| {
        LogError::AlreadySet(match format {
            LogFormat::Text => "text",
            LogFormat::Json => "json",
        })
    })
}
