//! The server's life: [`Server::bind`] checks the configuration and its folders, builds the one
//! hook runtime (fuel metering, the disk compile cache) and binds the port; [`Server::run`]
//! serves at once (`/healthz` answers, `/readyz` says `loading`) while every tenant of the
//! tenants folder loads — several at once, each tenant serving as soon as its own rules are in
//! — until [`ServerHandle::shutdown`]; then it drains — stops accepting,
//! answers every accepted request (within `limits.shutdown_grace_secs`), waits for background
//! hooks (within `limits.drain_grace_secs`) and flushes the replay files.
//! [`Server::run_until_signal`] wires SIGTERM/SIGINT to the shutdown and SIGHUP to
//! [`ServerHandle::reload_all`].

use std::net::SocketAddr;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use hookbox_host::tenant_control::folder::FolderControl;
use hookbox_host::{DrainReport, HookRuntime, RuntimeError, Tenants, default_state_root};
use hookbox_wasm::default_cache_dir;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use crate::app::App;
use crate::config::{ConfigError, ServerConfig};
use crate::token::TokenHash;
use crate::{listener, loader, routes, watch as poll};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A configuration value is out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A folder cannot be used.
    #[error("`{key}` {}: {reason}", path.display())]
    Folder {
        /// The configuration key naming it.
        key: &'static str,
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No folder was configured and no default applies (no `$HOME`).
    #[error("no `{key}` configured and none of {env} is set: set `{key}` in the configuration")]
    NoDefault {
        /// The configuration key.
        key: &'static str,
        /// The variables the default is built from.
        env: &'static str,
    },
    /// The port could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The hook runtime (wasm engine) could not start.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The thread building the runtime panicked or was cancelled before it finished.
    #[error("the hook runtime's build did not finish (its thread panicked or was cancelled)")]
    RuntimeBuildLost,
    /// A signal handler could not be installed.
    #[error("cannot handle signals: {0}")]
    Signals(std::io::Error),
}

/// What a shutdown did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Connections still open at the end of the grace period, and cut.
    pub connections_cut: usize,
    /// Background hooks: finished in time, cancelled.
    pub background: DrainReport,
}

/// What reloading every tenant did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReloadSummary {
    /// Tenants (re)loaded.
    pub loaded: usize,
    /// Tenants whose folder did not load (a served one keeps its previous rules).
    pub failed: usize,
    /// Tenants removed because their folder is gone.
    pub removed: usize,
}

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    app: Arc<App>,
    listener: TcpListener,
    shutdown: Arc<watch::Sender<bool>>,
}

/// Controls a running server from another task.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    app: Arc<App>,
    shutdown: Arc<watch::Sender<bool>>,
}

impl Server {
    /// Checks `config`, prepares the folders, builds the hook runtime and binds the port.
    pub async fn bind(mut config: ServerConfig) -> Result<Server, ServeError> {
        config.validate()?;
        let tenants_dir = existing_folder("tenants_dir", &config.tenants_dir)?;
        let state_dir =
            match &config.state_dir {
                Some(d) => d.clone(),
                None => default_state_root().map(|r| r.join("tenants")).ok_or(
                    ServeError::NoDefault {
                        key: "state_dir",
                        env: "HOOKBOX_STATE_DIR, XDG_STATE_HOME, HOME",
                    },
                )?,
            };
        let cache_dir = match &config.cache_dir {
            Some(d) => d.clone(),
            None => default_cache_dir().ok_or(ServeError::NoDefault {
                key: "cache_dir",
                env: "HOOKBOX_CACHE_DIR, XDG_CACHE_HOME, HOME",
            })?,
        };
        let state_dir = private_folder("state_dir", &state_dir, &tenants_dir)?;
        let cache_dir = private_folder("cache_dir", &cache_dir, &tenants_dir)?;
        let settings = config.runtime_settings(&cache_dir);
        let runtime = tokio::task::spawn_blocking(move || HookRuntime::new(settings))
            .await
            .map_err(|_| ServeError::RuntimeBuildLost)??;
        let mut tenants = Tenants::<TokenHash>::new(runtime, &state_dir).with_trust(config.trust);
        if let Some(dir) = &config.control.dir {
            let dir = private_folder("control.dir", dir, &tenants_dir)?;
            if dir.starts_with(&state_dir) || state_dir.starts_with(&dir) {
                return Err(ServeError::Folder {
                    key: "control.dir",
                    path: dir,
                    reason: format!(
                        "overlaps the state folder {}, where tenants' hooks keep their data; put it elsewhere",
                        state_dir.display()
                    ),
                });
            }
            let store = FolderControl::open(&dir).map_err(|e| ServeError::Folder {
                key: "control.dir",
                path: dir.clone(),
                reason: e.to_string(),
            })?;
            tenants = tenants.with_control(Arc::new(store));
            config.control.dir = Some(dir);
        }
        let tenants = Arc::new(tenants);
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ServeError::Bind {
                    addr: config.listen,
                    source,
                })?;
        config.tenants_dir = tenants_dir;
        config.state_dir = Some(state_dir);
        config.cache_dir = Some(cache_dir);
        let (tx, rx) = watch::channel(false);
        let app = Arc::new(App::new(config, tenants, rx));
        Ok(Server {
            app,
            listener,
            shutdown: Arc::new(tx),
        })
    }

    /// The address bound (with the real port when the configuration said 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A handle to shut the server down or reload its tenants while it runs.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            app: self.app.clone(),
            shutdown: self.shutdown.clone(),
        }
    }

    /// Serves until [`ServerHandle::shutdown`], loading every tenant meanwhile; then drains.
    pub async fn run(self) -> ShutdownReport {
        let Server {
            app,
            listener,
            shutdown,
        } = self;
        let router = routes::router(app.clone());
        let loading = if app.config.control.dir.is_some() {
            tokio::spawn(poll::load_then_poll(app.clone()))
        } else {
            let app = app.clone();
            tokio::spawn(async move {
                let summary = loader::load_all(&app).await;
                app.loaded.store(true, Ordering::Release);
                tracing::info!(
                    loaded = summary.loaded.len(),
                    failed = summary.failed.len(),
                    skipped = summary.skipped.len(),
                    "tenants loaded: ready"
                );
            })
        };
        let drained = listener::serve(listener, router, app.clone(), shutdown.subscribe()).await;
        // A load (or the poll) still running at shutdown is not waited for (a blocking load already started
        // finishes on its own thread).
        loading.abort();
        if drained.cut > 0 {
            tracing::warn!(
                cut = drained.cut,
                "connections still open after limits.shutdown_grace_secs were closed"
            );
        }
        let background = app
            .tenants
            .runtime()
            .drain(app.config.limits.drain_grace)
            .await;
        tracing::info!(
            finished = background.finished,
            cancelled = background.cancelled,
            "background hooks drained, replay flushed: stopped"
        );
        ShutdownReport {
            connections_cut: drained.cut,
            background,
        }
    }

    /// [`Server::run`], with SIGTERM and SIGINT starting the shutdown and SIGHUP reloading every
    /// tenant from disk.
    pub async fn run_until_signal(self) -> Result<ShutdownReport, ServeError> {
        let mut term = signal(SignalKind::terminate()).map_err(ServeError::Signals)?;
        let mut int = signal(SignalKind::interrupt()).map_err(ServeError::Signals)?;
        let mut hup = signal(SignalKind::hangup()).map_err(ServeError::Signals)?;
        let handle = self.handle();
        let signals = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = term.recv() => {
                        tracing::info!("SIGTERM: shutting down");
                        break;
                    }
                    _ = int.recv() => {
                        tracing::info!("SIGINT: shutting down");
                        break;
                    }
                    _ = hup.recv() => {
                        tracing::info!("SIGHUP: reloading every tenant from disk");
                        let s = handle.reload_all().await;
                        tracing::info!(loaded = s.loaded, failed = s.failed, removed = s.removed, "reload done");
                    }
                }
            }
            handle.shutdown().await;
        });
        let report = self.run().await;
        signals.abort();
        Ok(report)
    }
}

impl ServerHandle {
    /// Starts the shutdown: `/readyz` answers 503 at once; after `limits.shutdown_delay_secs`
    /// the port closes and the drain begins ([`Server::run`] returns when it is done).
    pub async fn shutdown(&self) {
        self.app.draining.store(true, Ordering::Release);
        let delay = self.app.config.limits.shutdown_delay;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        self.shutdown.send_replace(true);
    }

    /// Reloads every tenant from the tenants folder, validate-then-swap each (a tenant whose
    /// folder does not load keeps its previous rules), adds new folders and removes tenants
    /// whose folder is gone.
    pub async fn reload_all(&self) -> ReloadSummary {
        let s = loader::load_all(&self.app).await;
        ReloadSummary {
            loaded: s.loaded.len(),
            failed: s.failed.len(),
            removed: s.removed.len(),
        }
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.app.ready()
    }

    /// The tenants being served, for an embedder that also dispatches in-process (and for
    /// `hookbox bench --serve`, which compares the two).
    pub fn tenants(&self) -> &Arc<Tenants<TokenHash>> {
        &self.app.tenants
    }
}

/// `path` made absolute; it must be an existing folder.
fn existing_folder(key: &'static str, path: &Path) -> Result<PathBuf, ServeError> {
    let canon = path.canonicalize().map_err(|e| ServeError::Folder {
        key,
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    if !canon.is_dir() {
        return Err(ServeError::Folder {
            key,
            path: path.to_owned(),
            reason: "is not a folder".into(),
        });
    }
    Ok(canon)
}

/// A folder of the server's own (state, compile cache): created if missing (owner-only), and
/// refused inside the tenants folder, where a tenant's hooks could mount it.
fn private_folder(key: &'static str, path: &Path, tenants: &Path) -> Result<PathBuf, ServeError> {
    let fail = |reason: String| ServeError::Folder {
        key,
        path: path.to_owned(),
        reason,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| fail(format!("cannot create it: {e}")))?;
    let canon = path.canonicalize().map_err(|e| fail(e.to_string()))?;
    if canon.starts_with(tenants) || tenants.starts_with(&canon) {
        return Err(fail(format!(
            "overlaps the tenants folder {}: tenants' hooks could reach it; put it elsewhere",
            tenants.display()
        )));
    }
    Ok(canon)
}
