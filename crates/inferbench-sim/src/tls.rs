//! The simulated server over TLS (docs/tls.md): a certificate chain and key given as PEM,
//! and optionally a CA whose client certificates are required (mutual TLS).

use std::io;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpStream;

/// What the server presents and whom it lets in, as PEM text.
#[derive(Clone, Debug)]
pub struct SimTls {
    /// The server's certificate chain (leaf first).
    pub cert_pem: Vec<u8>,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key_pem: Vec<u8>,
    /// When set, a client must present a certificate signed by one of these CAs.
    pub client_ca_pem: Option<Vec<u8>>,
}

fn invalid(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{what}: {e}"))
}

fn certs(what: &str, pem: &[u8]) -> io::Result<Vec<CertificateDer<'static>>> {
    let v = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(what, e))?;
    if v.is_empty() {
        return Err(invalid(what, "no PEM certificate"));
    }
    Ok(v)
}

impl SimTls {
    /// The rustls server configuration (ALPN `http/1.1`); an error names the bad part.
    pub fn server_config(&self) -> io::Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = certs("TLS certificate", &self.cert_pem)?;
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem)
            .map_err(|e| invalid("TLS key: not a PEM private key", e))?;
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid("TLS set-up", e))?;
        let builder = match &self.client_ca_pem {
            None => builder.with_no_client_auth(),
            Some(pem) => {
                let mut roots = rustls::RootCertStore::empty();
                for c in certs("TLS client CA", pem)? {
                    roots.add(c).map_err(|e| invalid("TLS client CA", e))?;
                }
                let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| invalid("TLS client CA", e))?;
                builder.with_client_cert_verifier(v)
            }
        };
        let mut cfg = builder
            .with_single_cert(chain, key)
            .map_err(|e| invalid("TLS certificate and key", e))?;
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(cfg))
    }
}

/// Hand-shake TLS on an accepted connection, then serve HTTP on it as on plain TCP. A failed
/// handshake (a client that does not trust us, or without the required certificate) just
/// ends the connection.
pub(crate) async fn serve_tls(
    acceptor: tokio_rustls::TlsAcceptor,
    stream: TcpStream,
    shared: Arc<crate::server::Shared>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let fd = crate::server::raw_fd(&stream);
    if let Ok(s) = acceptor.accept(stream).await {
        // TLS reads are not stamped: a request's arrival is when its head was parsed.
        let arrival = std::sync::Arc::new(crate::arrival::ArrivalCell::default());
        crate::server::serve_connection(s, fd, arrival, shared, stop).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf() -> (String, String) {
        let k = rcgen::KeyPair::generate().unwrap();
        let c = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&k)
            .unwrap();
        (c.pem(), k.serialize_pem())
    }

    #[test]
    fn a_matching_pair_serves_and_bad_parts_are_named() {
        let (cert, key) = leaf();
        let (_, other_key) = leaf();
        let ok = SimTls {
            cert_pem: cert.clone().into_bytes(),
            key_pem: key.into_bytes(),
            client_ca_pem: None,
        };
        let cfg = ok.server_config().unwrap();
        assert_eq!(cfg.alpn_protocols, vec![b"http/1.1".to_vec()]);
        let e = SimTls {
            cert_pem: b"junk".to_vec(),
            ..ok.clone()
        }
        .server_config()
        .unwrap_err();
        assert!(e.to_string().starts_with("TLS certificate: "), "{e}");
        let e = SimTls {
            key_pem: other_key.into_bytes(),
            ..ok.clone()
        }
        .server_config()
        .unwrap_err();
        assert!(
            e.to_string().starts_with("TLS certificate and key: "),
            "{e}"
        );
        let e = SimTls {
            client_ca_pem: Some(b"junk".to_vec()),
            ..ok
        }
        .server_config()
        .unwrap_err();
        assert!(e.to_string().starts_with("TLS client CA: "), "{e}");
    }
}
