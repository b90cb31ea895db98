//! The TLS client configuration: rustls with the ring provider, Mozilla's root certificates
//! (webpki-roots, compiled in, as Node.js bundles its own) plus any the host adds, HTTP/1.1
//! by ALPN.
//!
//! ring, not aws-lc-rs: it builds from a few C and assembly files with the C compiler alone,
//! where aws-lc-rs needs CMake (and, on some targets, NASM or bindgen) and several times the
//! build time; both are maintained providers of rustls.

use std::sync::Arc;

use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto};

use crate::error::HttpError;

/// A connector trusting Mozilla's roots and `extra_pem` (PEM certificates, may be empty).
pub(crate) fn connector(extra_pem: &[u8]) -> Result<TlsConnector, HttpError> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if !extra_pem.is_empty() {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(extra_pem) {
            let cert = cert.map_err(|e| HttpError::Tls(e.to_string()))?;
            roots.add(cert).map_err(|e| HttpError::Tls(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(HttpError::Tls(
                "no `-----BEGIN CERTIFICATE-----` block in the PEM text".into(),
            ));
        }
    }
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| HttpError::Tls(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}
