//! Turning a host name into addresses. Pluggable, so a host can use its own resolver and tests
//! can make a name resolve to a private address without any network.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;

/// The future a [`Resolve`] returns.
pub type Resolving<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>>;

/// A DNS resolver. The runner resolves once per request, checks every address against the
/// policy, and connects only to an address it checked (never resolving the name again).
pub trait Resolve: Send + Sync + 'static {
    /// The addresses of `host` (a name, never an IP literal) with `port`.
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> Resolving<'a>;
}

/// The system resolver (`getaddrinfo`, on tokio's blocking threads).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> Resolving<'a> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) })
    }
}
