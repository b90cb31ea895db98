//! Per-connection bookkeeping for the listener: how many connections each peer holds (so one
//! client cannot take every slot), and whether a connection is idle — no request in progress
//! (a request counts until its answer's last byte was handed to the socket, so a long event
//! stream is never idle) and nothing received for a while.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::Service;
use hyper::{Request, Response};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
// The runtime's clock, so the idle timer and the activity stamps agree.
use tokio::time::Instant;

/// The peer a connection is counted against: an IPv4 address (also when it arrives as an
/// IPv4-mapped IPv6 address), or the /64 of an IPv6 address — one host is commonly given a
/// whole /64, so counting single IPv6 addresses would let it open 2^64 "peers".
pub(crate) fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

/// Open connections per peer, each at most `cap`.
#[derive(Debug)]
pub(crate) struct Peers {
    cap: usize,
    /// Only peers with a connection open: an entry is removed when its count reaches zero,
    /// so the map holds at most `max_connections` (+1 being refused) entries.
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Peers {
    pub(crate) fn new(cap: usize) -> Arc<Peers> {
        Arc::new(Peers {
            cap,
            open: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for one more connection from `ip`, or `None` when its peer holds `cap` already.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<PeerSlot> {
        let key = peer_key(ip);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.entry(key).or_insert(0);
        if *n >= self.cap {
            return None;
        }
        *n += 1;
        Some(PeerSlot {
            peers: self.clone(),
            key,
        })
    }

    /// Connections `ip`'s peer holds now.
    #[cfg(test)]
    fn held(&self, ip: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(&peer_key(ip)).copied().unwrap_or(0)
    }
}

/// One connection's place in its peer's count, given back when dropped.
#[derive(Debug)]
pub(crate) struct PeerSlot {
    peers: Arc<Peers>,
    key: IpAddr,
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self
            .peers
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// What a connection is doing: requests in progress, and when it last received a byte or
/// finished an answer.
#[derive(Debug)]
pub(crate) struct Activity {
    start: Instant,
    /// Milliseconds after `start` of the last byte received or answer finished.
    last_ms: AtomicU64,
    busy: AtomicUsize,
}

impl Activity {
    pub(crate) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
        })
    }

    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::SeqCst);
    }

    /// A request began; it ends when the returned guard (carried by its answer's body) drops.
    fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    /// Resolves once the connection has had no request in progress and received nothing for
    /// `idle`.
    pub(crate) async fn idle_for(&self, idle: Duration) {
        loop {
            let now = Instant::now();
            let deadline = if self.busy.load(Ordering::SeqCst) > 0 {
                now + idle
            } else {
                let last = self.start + Duration::from_millis(self.last_ms.load(Ordering::SeqCst));
                let deadline = last + idle;
                if deadline <= now {
                    return;
                }
                deadline
            };
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// A request in progress; dropping it ends it (and counts as activity).
#[derive(Debug)]
pub(crate) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        // Touch before leaving: whoever sees no request in progress sees this moment too.
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection's socket, noting each read that brought bytes.
#[derive(Debug)]
pub(crate) struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Watched<S> {
    pub(crate) fn new(inner: S, activity: Arc<Activity>) -> Watched<S> {
        Watched { inner, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The connection's service, counting each request as in progress from its head until its
/// answer's body is done.
#[derive(Debug, Clone)]
pub(crate) struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Tracked<S> {
    pub(crate) fn new(inner: S, activity: Arc<Activity>) -> Tracked<S> {
        Tracked { inner, activity }
    }
}

type Answer<B, E> = Pin<Box<dyn Future<Output = Result<Response<TrackedBody<B>>, E>> + Send>>;

impl<S, B> Service<Request<Incoming>> for Tracked<S>
where
    S: Service<Request<Incoming>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: Body + Unpin,
{
    type Response = Response<TrackedBody<B>>;
    type Error = S::Error;
    type Future = Answer<B, S::Error>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let busy = self.activity.begin();
        let answer = self.inner.call(req);
        Box::pin(async move {
            let res = answer.await?;
            Ok(res.map(|body| TrackedBody { body, _busy: busy }))
        })
    }
}

/// An answer's body holding its request's [`Busy`] guard until hyper drops it (after the last
/// frame, or when the connection ends).
#[derive(Debug)]
pub(crate) struct TrackedBody<B> {
    body: B,
    _busy: Busy,
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn peers_are_addresses_ipv6_64s_and_mapped_ipv4() {
        assert_eq!(peer_key(ip("10.0.0.1")), ip("10.0.0.1"));
        assert_eq!(peer_key(ip("::ffff:10.0.0.1")), ip("10.0.0.1"));
        assert_eq!(peer_key(ip("2001:db8:1:2:a:b:c:d")), ip("2001:db8:1:2::"));
        assert_eq!(
            peer_key(ip("2001:db8:1:2::1")),
            peer_key(ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(
            peer_key(ip("2001:db8:1:2::1")),
            peer_key(ip("2001:db8:1:3::1"))
        );
    }

    #[test]
    fn a_peer_holds_at_most_its_cap_and_gets_slots_back() {
        let peers = Peers::new(2);
        let a = ip("192.0.2.1");
        let one = peers.admit(a).unwrap();
        let two = peers.admit(ip("::ffff:192.0.2.1")).unwrap();
        assert!(peers.admit(a).is_none(), "a third from the same peer");
        assert!(peers.admit(ip("192.0.2.2")).is_some(), "another peer");
        drop(one);
        let three = peers.admit(a).unwrap();
        assert_eq!(peers.held(a), 2);
        drop((two, three));
        assert_eq!(peers.held(a), 0);
        assert!(
            peers.open.lock().unwrap().is_empty(),
            "no entry is kept for a peer without connections"
        );
    }

    #[tokio::test]
    async fn a_connection_is_idle_only_with_nothing_in_progress_and_nothing_received() {
        let activity = Activity::new();
        let idle = Duration::from_millis(50);
        // Fresh and silent: idle after `idle`.
        let started = Instant::now();
        activity.idle_for(idle).await;
        assert!(started.elapsed() >= idle);
        // A request in progress (a long event stream) is never idle.
        let busy = activity.begin();
        let waited = tokio::time::timeout(idle * 6, activity.idle_for(idle)).await;
        assert!(waited.is_err(), "idle while a request was in progress");
        // Its end counts as activity: idle `idle` after it, not at once.
        drop(busy);
        let ended = Instant::now();
        activity.idle_for(idle).await;
        assert!(ended.elapsed() >= idle);
    }
}
