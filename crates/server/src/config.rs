//! The server's configuration: one TOML file (`hookbox serve --config FILE`) whose keys all have
//! a documented default — [`DEFAULT_CONFIG`] is that documentation, printed by
//! `hookbox serve --print-default-config`, and a test checks it parses to
//! [`ServerConfig::default`]. Unknown keys are refused; an out-of-range value is refused naming
//! its key, its value and the maximum, never clamped: durations are read as [`Duration`]s by a
//! deserializer that refuses a bad one where it is written (`hookbox_host::duration`), sizes and
//! counts are checked against their documented maxima when the file is loaded. Relative paths
//! in a file are resolved against the file's folder. The file is read like every file hookbox
//! reads: opened without blocking (a FIFO in its place is refused, never waited on), a regular
//! file, bounded in size.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hookbox_host::{TenantMaxima, TenantTrustSettings};
use serde::Deserialize;

use crate::token::TokenHash;

mod control;
mod limits;
mod replay;
mod runtime;

pub use control::{ControlSettings, MAX_POLL_INTERVAL_SECS};
pub use limits::Limits;
pub use replay::{MAX_STREAM_STALL_SECS, ReplaySettings, ReplaySinkKind};
pub use runtime::RuntimeKnobs;
use runtime::located;

/// Largest `limits.max_body_bytes`: a request body is held in memory while it is parsed.
pub const MAX_BODY_BYTES_LIMIT: u64 = 64 << 20;
/// Largest `limits.max_answer_bytes`.
pub const MAX_ANSWER_BYTES_LIMIT: usize = 64 << 20;
/// Largest `limits.max_header_bytes`.
pub const MAX_HEADER_BYTES_LIMIT: usize = 1 << 20;
/// Largest `runtime.admission_wait_ms` (a minute).
pub const MAX_ADMISSION_WAIT_MS: u64 = 60_000;
/// Largest `limits.shutdown_delay_secs` (an hour).
pub const MAX_SHUTDOWN_DELAY_SECS: u64 = 3600;
/// Largest `worker_threads`: more threads than any machine has cores only adds hand-offs.
pub const MAX_WORKER_THREADS: usize = 1024;

/// The default configuration file, every key with its default and what it does.
pub const DEFAULT_CONFIG: &str = include_str!("../default-config.toml");

/// The default port (`listen = "127.0.0.1:7433"`).
pub const DEFAULT_PORT: u16 = 7433;

/// A configuration file is small; a bigger one is refused rather than read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// How logs are written (on stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(ConfigError::Invalid {
                key: "log_format",
                reason: format!("is `{other}`: it must be `text` or `json`"),
            }),
        }
    }
}

/// Everything `hookbox serve` reads from its configuration file. See [`DEFAULT_CONFIG`] for
/// each key's meaning and default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on. Default **127.0.0.1:7433** (loopback).
    pub listen: SocketAddr,
    /// Folder of tenant folders. Default **`tenants`**.
    pub tenants_dir: PathBuf,
    /// Digest of the admin token. Default **none**: the admin routes answer 403.
    pub admin_token_sha256: Option<TokenHash>,
    /// Digest of a token that may read `/metrics`. Default **none** (only the admin token).
    pub metrics_token_sha256: Option<TokenHash>,
    /// Tenants' state folder. Default: `$HOOKBOX_STATE_DIR/tenants`, else
    /// `$XDG_STATE_HOME/hookbox/tenants`, else `~/.local/state/hookbox/tenants`.
    pub state_dir: Option<PathBuf>,
    /// Compiled-component cache. Default: `$HOOKBOX_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/hookbox/wasm`, else `~/.cache/hookbox/wasm`.
    pub cache_dir: Option<PathBuf>,
    /// Log format. Default **text**.
    pub log_format: LogFormat,
    /// Log filter. Default **info**.
    pub log_filter: String,
    /// Threads answering requests (the async runtime's workers). Default **none: one per core**
    /// (`std::thread::available_parallelism`), at least 1, at most [`MAX_WORKER_THREADS`]; see
    /// [`ServerConfig::worker_threads`]. More workers than cores only makes them wake each other.
    pub worker_threads: Option<usize>,
    /// HTTP limits.
    pub limits: Limits,
    /// The hook runtime shared by every tenant.
    pub runtime: RuntimeKnobs,
    /// The operator's caps on tenants' policies: a `tenant.toml` over one is refused.
    pub tenant_maxima: TenantMaxima,
    /// Whether a tenant's changed rules wait for an admin's approval (`[trust]`).
    pub trust: TenantTrustSettings,
    /// The control store replicas share, and the poll (`[control]`).
    pub control: ControlSettings,
    /// Where replay records go (`[replay]`).
    pub replay: ReplaySettings,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, DEFAULT_PORT)),
            tenants_dir: PathBuf::from("tenants"),
            admin_token_sha256: None,
            metrics_token_sha256: None,
            state_dir: None,
            cache_dir: None,
            log_format: LogFormat::Text,
            log_filter: "info".to_owned(),
            worker_threads: None,
            limits: Limits::default(),
            runtime: RuntimeKnobs::default(),
            tenant_maxima: TenantMaxima::default(),
            trust: TenantTrustSettings::default(),
            control: ControlSettings::default(),
            replay: ReplaySettings::default(),
        }
    }
}

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read (missing, not a regular file, not UTF-8, an I/O error).
    #[error("the configuration {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (core's reader's error, quoting the path).
        source: hookbox_core::files::ReadError,
    },
    /// The file is bigger than any configuration.
    #[error("the configuration {} is {size} bytes: over the {MAX_CONFIG_BYTES}-byte limit", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The file is not valid TOML or has an unknown key or a value of the wrong type.
    #[error("the configuration {} is invalid: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line, column and the offending text).
        message: String,
    },
    /// The text alone (no file: [`ServerConfig::parse`]) is not a valid configuration; loading
    /// a file turns this into [`ConfigError::Parse`], with the file.
    #[error("invalid configuration: {message}")]
    Syntax {
        /// The parser's message (with line, column and the offending text).
        message: String,
    },
    /// A value is out of range.
    #[error("configuration key `{key}` {reason}")]
    Invalid {
        /// The key (dotted inside tables).
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl ServerConfig {
    /// Reads `path`: TOML, every key optional, every value checked ([`ServerConfig::validate`]),
    /// relative paths resolved against its folder. The file is opened without blocking and must
    /// be a regular file of at most 1 MiB.
    pub fn load(path: &Path) -> Result<ServerConfig, ConfigError> {
        let text = read_config(path)?;
        let mut config = ServerConfig::parse(&text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: match e {
                ConfigError::Syntax { message } => message,
                other => other.to_string(),
            },
        })?;
        config.validate().map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        config.resolve_relative_to(base);
        Ok(config)
    }

    /// Parses TOML text (relative paths stay as written); [`ConfigError::Syntax`] carries the
    /// parser's message.
    pub fn parse(text: &str) -> Result<ServerConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Syntax {
            message: e.to_string().trim_end().to_owned(),
        })
    }

    /// Makes the relative paths absolute against `base`.
    pub fn resolve_relative_to(&mut self, base: &Path) {
        let fix = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        fix(&mut self.tenants_dir);
        if let Some(p) = &mut self.state_dir {
            fix(p);
        }
        if let Some(p) = &mut self.cache_dir {
            fix(p);
        }
        if let Some(p) = &mut self.control.dir {
            fix(p);
        }
    }

    /// Checks every value's range (durations were checked when parsed).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.runtime.pagemap_scan {
            // Every tenant's guests share one pool: a reset that can leave one guest's dirty page
            // to the next instance of its slot would let one tenant read another's data.
            return Err(ConfigError::Invalid {
                key: "runtime.pagemap_scan",
                reason: "cannot be on for `hookbox serve`: every tenant's guests share one pool, \
                         and wasmtime 48.0.8's PAGEMAP_SCAN reset keeps only pages that are \
                         present, so a dirty page that is swapped out or being migrated by the \
                         kernel (which happens without swap) survives into the next instance of \
                         its slot — another tenant's; fix: remove `pagemap_scan` (off is the \
                         default)"
                    .to_owned(),
            });
        }
        if self.control.poll_interval > Duration::from_secs(MAX_POLL_INTERVAL_SECS) {
            return Err(ConfigError::Invalid {
                key: "control.poll_interval_secs",
                reason: format!(
                    "is {}: it must be above 0 and at most {MAX_POLL_INTERVAL_SECS}",
                    self.control.poll_interval.as_secs_f64()
                ),
            });
        }
        if self.replay.stream_stall > Duration::from_secs(MAX_STREAM_STALL_SECS) {
            return Err(ConfigError::Invalid {
                key: "replay.stream_stall_secs",
                reason: format!(
                    "is {}: it must be above 0 and at most {MAX_STREAM_STALL_SECS}",
                    self.replay.stream_stall.as_secs_f64()
                ),
            });
        }
        if let Some(n) = self.worker_threads {
            within("worker_threads", n as u64, 1, MAX_WORKER_THREADS as u64)?;
        }
        let l = &self.limits;
        if l.shutdown_delay > Duration::from_secs(MAX_SHUTDOWN_DELAY_SECS) {
            return Err(ConfigError::Invalid {
                key: "limits.shutdown_delay",
                reason: format!(
                    "is {}: it must be a number of seconds from 0 to {MAX_SHUTDOWN_DELAY_SECS}",
                    l.shutdown_delay.as_secs_f64()
                ),
            });
        }
        within(
            "limits.max_body_bytes",
            l.max_body_bytes,
            1,
            MAX_BODY_BYTES_LIMIT,
        )?;
        // hyper needs room for a request line and a few headers.
        within(
            "limits.max_header_bytes",
            l.max_header_bytes as u64,
            1024,
            MAX_HEADER_BYTES_LIMIT as u64,
        )?;
        within(
            "limits.max_answer_bytes",
            l.max_answer_bytes as u64,
            1024,
            MAX_ANSWER_BYTES_LIMIT as u64,
        )?;
        at_least_one("limits.max_connections", l.max_connections as u64)?;
        at_least_one(
            "limits.max_connections_per_peer",
            l.max_connections_per_peer as u64,
        )?;
        within(
            "runtime.admission_wait_ms",
            self.runtime.admission_wait_ms,
            0,
            MAX_ADMISSION_WAIT_MS,
        )?;
        // The runtime's own values are checked by the runtime (one place, no copy here); its
        // error is located at the key that set the value.
        self.runtime_settings(Path::new(""))
            .validate()
            .map_err(located)?;
        if self.log_filter.trim().is_empty() {
            return Err(ConfigError::Invalid {
                key: "log_filter",
                reason: "is empty: use e.g. `info`".into(),
            });
        }
        Ok(())
    }

    /// The async runtime's worker threads: `worker_threads`, else one per core the process may
    /// use (1 when that cannot be read).
    pub fn worker_threads(&self) -> usize {
        self.worker_threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
        })
    }
}

/// Reads the configuration file with core's reader for untrusted small files: opened without
/// blocking, a regular file, at most [`MAX_CONFIG_BYTES`], UTF-8.
fn read_config(path: &Path) -> Result<String, ConfigError> {
    use hookbox_core::files::{ReadErrorKind, Symlinks, read_file};
    // The operator names this file: a symlink to it (a ConfigMap mount) is followed.
    read_file(path, MAX_CONFIG_BYTES, Symlinks::Follow).map_err(|source| match source.kind {
        ReadErrorKind::TooLarge { size, .. } => ConfigError::TooLarge {
            path: path.to_owned(),
            size,
        },
        _ => ConfigError::Read {
            path: path.to_owned(),
            source,
        },
    })
}

fn within(key: &'static str, v: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if v < min || v > max {
        return Err(ConfigError::Invalid {
            key,
            reason: format!("is {v}: it must be from {min} to {max}"),
        });
    }
    Ok(())
}

fn at_least_one(key: &'static str, v: u64) -> Result<(), ConfigError> {
    if v == 0 {
        return Err(ConfigError::Invalid {
            key,
            reason: "is 0: it must be at least 1".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_defaults_are_the_defaults() {
        let parsed = ServerConfig::parse(DEFAULT_CONFIG).unwrap();
        assert_eq!(parsed, ServerConfig::default());
        parsed.validate().unwrap();
        assert!(parsed.listen.ip().is_loopback());
        assert_eq!(parsed.limits.max_body_bytes, 1 << 20);
        assert!(parsed.runtime.fuel_metering);
        assert!(
            !parsed.runtime.pagemap_scan,
            "the safe reset is the default"
        );
    }

    #[test]
    fn pagemap_scan_is_refused_because_tenants_share_the_pool() {
        let on = ServerConfig::parse("[runtime]\npagemap_scan = true").unwrap();
        let e = on.validate().unwrap_err().to_string();
        assert!(
            e.starts_with(
                "configuration key `runtime.pagemap_scan` cannot be on for `hookbox serve`"
            ),
            "{e}"
        );
        assert!(e.contains("fix: remove `pagemap_scan`"), "{e}");
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_refused_by_name() {
        let e = ServerConfig::parse("listn = \"127.0.0.1:1\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("listn"), "{e}");
        let e = ServerConfig::parse("[limits]\nmax_body_byte = 5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_body_byte"), "{e}");
        let e = ServerConfig::parse("[limits]\nmax_body_bytes = \"big\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_body_bytes"), "{e}");
        let e = ServerConfig::parse("listen = \"localhost\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("listen"), "{e}");
        let e = ServerConfig::parse("admin_token_sha256 = \"hunter2\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("hunter2") && e.contains("sha256sum"), "{e}");
    }

    #[test]
    fn worker_threads_default_to_the_cores_and_zero_or_too_many_are_refused_by_key() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        assert_eq!(ServerConfig::default().worker_threads(), cores);
        let two = ServerConfig::parse("worker_threads = 2").unwrap();
        two.validate().unwrap();
        assert_eq!(two.worker_threads(), 2);
        for text in ["worker_threads = 0", "worker_threads = 1025"] {
            let e = ServerConfig::parse(text)
                .unwrap()
                .validate()
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("`worker_threads`") && e.contains("from 1 to 1024"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn the_replay_sink_is_files_or_stdout_and_reaches_the_runtime() {
        let c = ServerConfig::parse("[replay]\nsink = \"stdout\"").unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.runtime_settings(Path::new("")).replay_output,
            hookbox_host::replay::ReplayOutput::Stdout
        );
        assert_eq!(
            ServerConfig::default()
                .runtime_settings(Path::new(""))
                .replay_output,
            hookbox_host::replay::ReplayOutput::Files
        );
        let e = ServerConfig::parse("[replay]\nsink = \"syslog\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("syslog") && e.contains("stdout"), "{e}");
    }

    #[test]
    fn out_of_range_values_name_their_key() {
        let cases = [
            (
                "[limits]\nmax_requests_in_flight = 0",
                "limits.max_requests_in_flight",
            ),
            ("[limits]\nmax_header_bytes = 10", "limits.max_header_bytes"),
            (
                "[limits]\nmax_connections_per_peer = 0",
                "limits.max_connections_per_peer",
            ),
            ("[runtime]\nreserved_slots = 300", "runtime.reserved_slots"),
            (
                "[runtime]\nreplay_max_files = 0",
                "runtime.replay_max_files",
            ),
            // Checked by the runtime (its `RuntimeError::Invalid`), located at the key here.
            ("[runtime]\nreserved_hooks = 256", "runtime.reserved_hooks"),
            ("[runtime]\npool_slots = 0", "runtime.pool_slots"),
            (
                "[limits]\nreserved_requests = 256",
                "limits.reserved_requests",
            ),
            (
                "[runtime]\nmax_session_dirs = 0",
                "runtime.max_session_dirs",
            ),
            (
                "[runtime]\nreplay_queue_bytes = 0",
                "runtime.replay_queue_bytes",
            ),
            ("log_filter = \" \"", "log_filter"),
            (
                "[replay]\nstream_stall_secs = 61",
                "replay.stream_stall_secs",
            ),
        ];
        for (text, key) in cases {
            let c = ServerConfig::parse(text).unwrap();
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
    }

    #[test]
    fn durations_are_refused_where_they_are_written() {
        // 1e19 s once overflowed the time arithmetic instead of being refused.
        for (text, key) in [
            (
                "[limits]\nbody_read_timeout_secs = 0",
                "body_read_timeout_secs",
            ),
            ("[limits]\nshutdown_grace_secs = -1", "shutdown_grace_secs"),
            ("[limits]\nsse_keepalive_secs = 1e19", "sse_keepalive_secs"),
            ("[limits]\ndrain_grace_secs = nan", "drain_grace_secs"),
            ("[limits]\nidle_timeout_secs = 0", "idle_timeout_secs"),
            ("[limits]\nidle_timeout_secs = 1e300", "idle_timeout_secs"),
            (
                "[tenant_maxima]\nmax_timeout_secs = 1e19",
                "max_timeout_secs",
            ),
        ] {
            let e = ServerConfig::parse(text).unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        let c = ServerConfig::parse("[limits]\nbody_read_timeout_secs = 0.5").unwrap();
        assert_eq!(c.limits.body_read_timeout, Duration::from_millis(500));
        let e = ServerConfig::parse("[limits]\nshutdown_delay_secs = 7200")
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("limits.shutdown_delay"), "{e}");
    }

    #[test]
    fn sizes_over_their_maximum_are_refused_when_the_file_is_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("serve.toml");
        for (text, key) in [
            (
                "[limits]\nmax_body_bytes = 1000000000000",
                "limits.max_body_bytes",
            ),
            ("[limits]\nmax_answer_bytes = 10", "limits.max_answer_bytes"),
            (
                "[limits]\nreserved_requests = 256",
                "limits.reserved_requests",
            ),
            (
                "[runtime]\nadmission_wait_ms = 100000000",
                "runtime.admission_wait_ms",
            ),
        ] {
            std::fs::write(&file, text).unwrap();
            let e = ServerConfig::load(&file).unwrap_err().to_string();
            assert!(e.contains("serve.toml") && e.contains(key), "{text}: {e}");
        }
    }

    #[test]
    fn a_fifo_in_place_of_the_configuration_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("serve.toml");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&file)
                .status()
                .unwrap()
                .success()
        );
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(ServerConfig::load(&file).map(|_| ()));
        });
        let e = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the read returned instead of waiting for a writer")
            .unwrap_err()
            .to_string();
        assert!(e.contains("FIFO"), "{e}");
    }

    #[test]
    fn relative_paths_follow_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("serve.toml");
        std::fs::write(
            &file,
            "tenants_dir = \"t\"\nstate_dir = \"/abs/state\"\ncache_dir = \"c\"\nlisten = \"0.0.0.0:0\"\n",
        )
        .unwrap();
        let c = ServerConfig::load(&file).unwrap();
        assert_eq!(c.tenants_dir, dir.path().join("t"));
        assert_eq!(c.state_dir.as_deref(), Some(Path::new("/abs/state")));
        assert_eq!(c.cache_dir, Some(dir.path().join("c")));
        assert_eq!(c.listen.port(), 0);
    }

    #[test]
    fn runtime_settings_carry_the_knobs() {
        let mut c = ServerConfig::default();
        c.runtime.pool_slots = 32;
        c.runtime.admission_wait_ms = 250;
        let s = c.runtime_settings(Path::new("/cache"));
        assert_eq!(s.wasm.pool.slots, 32);
        assert!(s.wasm.fuel);
        assert_eq!(s.wasm.cache_dir.as_deref(), Some(Path::new("/cache")));
        assert_eq!(s.admission_wait, Duration::from_millis(250));
    }
}
