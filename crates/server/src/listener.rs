//! Accepting connections and serving HTTP/1.1 on them with hyper directly (not `axum::serve`),
//! for the bounds axum does not expose: a request head must arrive within
//! `limits.header_read_timeout_secs`, heads are capped at `limits.max_header_bytes`, at most
//! `limits.max_connections` are open and at most `limits.max_connections_per_peer` from one
//! peer (one more is closed as soon as it is accepted), a connection with no request in
//! progress that received nothing for `limits.idle_timeout_secs` is closed, and a shutdown
//! drains: no new connection is accepted, every connection finishes the request it is on and
//! closes, and after `limits.shutdown_grace_secs` whatever is left is cut.
//!
//! The per-peer cap is what keeps one unauthenticated client from holding every slot (issue 16:
//! 48 idle sockets locked a tenant out); the idle timeout is what makes a slot come back soon
//! when a client walks away.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::app::App;
use crate::connection::{Activity, Peers, Tracked, Watched};

/// What the drain of connections found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DrainedConnections {
    /// Connections still open when the grace period ended, and cut.
    pub(crate) cut: usize,
}

/// Serves `router` on `listener` until `shutdown` turns true, then drains.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    app: Arc<App>,
    mut shutdown: watch::Receiver<bool>,
) -> DrainedConnections {
    let limits = &app.config.limits;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .keep_alive(true);
    let idle = limits.idle_timeout;
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let peers = Peers::new(limits.max_connections_per_peer);
    let mut conns = JoinSet::new();
    loop {
        // Finished connections are reaped as we go, so the set holds only live ones.
        while conns.try_join_next().is_some() {}
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = signalled(&mut shutdown) => break,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: pause instead of spinning on the error.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // The peer's own cap first: a peer at its cap must not take a global slot either.
        let Some(peer_slot) = peers.admit(peer.ip()) else {
            app.http
                .connections_refused_per_peer
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(%peer, "connection refused: limits.max_connections_per_peer");
            drop(stream);
            continue;
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            app.http.connections_refused.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            continue;
        };
        // Small answers must not wait for Nagle's timer.
        let _ = stream.set_nodelay(true);
        let activity = Activity::new();
        let conn = builder.serve_connection(
            TokioIo::new(Watched::new(stream, activity.clone())),
            Tracked::new(TowerToHyperService::new(router.clone()), activity.clone()),
        );
        let mut down = shutdown.clone();
        let app = app.clone();
        app.http.connections_open.fetch_add(1, Ordering::Relaxed);
        conns.spawn(async move {
            let mut conn = std::pin::pin!(conn);
            let result = tokio::select! {
                // The connection first: bytes that arrived with the idle timer are read (and
                // count as activity) before the timer is looked at.
                biased;
                r = conn.as_mut() => r,
                () = signalled(&mut down) => {
                    // Finish the request in progress (answered with `Connection: close`), or
                    // close at once if the connection is idle.
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
                () = activity.idle_for(idle) => {
                    app.http.connections_idle_closed.fetch_add(1, Ordering::Relaxed);
                    // Idle by our count; should a request have begun since, it is answered
                    // (with `Connection: close`) before the connection closes.
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
            app.http.connections_open.fetch_sub(1, Ordering::Relaxed);
            drop(slot);
            drop(peer_slot);
        });
    }
    drop(listener);
    let grace = app.config.limits.shutdown_grace;
    let drained =
        tokio::time::timeout(grace, async { while conns.join_next().await.is_some() {} }).await;
    let cut = if drained.is_err() { conns.len() } else { 0 };
    conns.abort_all();
    DrainedConnections { cut }
}

/// Resolves once the shutdown began (or its sender is gone). The `watch::Ref` that `wait_for`
/// yields is dropped here: holding it across an await would make the task not `Send`.
pub(crate) async fn signalled(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|down| *down).await;
}
