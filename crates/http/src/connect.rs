//! Opening a connection to a checked address: TCP, then TLS for `https` (the server name is
//! the URL host, so SNI and certificate checks are those of the name, whatever address it was
//! resolved to), then the HTTP/1.1 handshake. The connection's driver runs on its own task
//! until the request side is dropped.

use hyper::client::conn::http1;
use hyper::rt::{Read, Write};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;

use crate::pool::{Key, Sender};

/// Connects to `key.addr` and performs the handshakes. The error is a human reason.
pub(crate) async fn connect(
    key: &Key,
    tls: &TlsConnector,
    max_header_bytes: usize,
) -> Result<Sender, String> {
    let tcp = TcpStream::connect(key.addr)
        .await
        .map_err(|e| e.to_string())?;
    // Hook requests are small and answered at once: no Nagle delay.
    let _ = tcp.set_nodelay(true);
    if !key.https {
        return handshake(TokioIo::new(tcp), max_header_bytes).await;
    }
    let name = ServerName::try_from(key.host.clone())
        .map_err(|_| format!("`{}` is not a valid TLS server name", key.host))?;
    let stream = tls
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS handshake failed: {e}"))?;
    handshake(TokioIo::new(stream), max_header_bytes).await
}

async fn handshake<T>(io: T, max_header_bytes: usize) -> Result<Sender, String>
where
    T: Read + Write + Unpin + Send + 'static,
{
    let (sender, conn) = http1::Builder::new()
        .max_buf_size(max_header_bytes.max(8192))
        .handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "http hook connection ended with an error");
        }
    });
    Ok(sender)
}
