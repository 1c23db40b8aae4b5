//! A self-signed CA certificate served as the server's own certificate, trusted by the CA
//! file that holds it (docs/tls.md, "Self-signed certificates").
//!
//! The usual one-line self-signed certificate (`openssl req -x509 -newkey … -subj
//! /CN=host`) carries `basicConstraints CA:TRUE`. webpki refuses a CA certificate as an end
//! entity (`CaUsedAsEndEntity`) even when the CA file holds that very certificate, while
//! OpenSSL (curl, Python, so AIPerf) and Go accept it as a chain of one trust anchor. This
//! verifier accepts it in that case only: the error is that one, the server's certificate is
//! byte for byte one of the CA file's, and it names the server. Its validity period was
//! checked already: webpki checks it before the basic constraints, and an expired
//! certificate fails with its own error. The handshake signatures are verified as always.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

#[derive(Debug)]
pub(crate) struct CaFileVerifier {
    inner: Arc<WebPkiServerVerifier>,
    /// The CA file's certificates.
    pinned: Vec<CertificateDer<'static>>,
}

impl CaFileVerifier {
    pub(crate) fn new(
        inner: Arc<WebPkiServerVerifier>,
        pinned: Vec<CertificateDer<'static>>,
    ) -> CaFileVerifier {
        CaFileVerifier { inner, pinned }
    }
}

/// webpki's refusal of a CA certificate as the server's own.
fn is_ca_as_end_entity(e: &rustls::Error) -> bool {
    match e {
        rustls::Error::InvalidCertificate(CertificateError::Other(o)) => {
            o.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::CaUsedAsEndEntity)
        }
        _ => false,
    }
}

/// What to add to a failed handshake's message when webpki refused a CA certificate as the
/// server's own: its own words (`CaUsedAsEndEntity`) do not say what to do.
pub(crate) fn hint(e: &std::io::Error) -> &'static str {
    let refused = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<rustls::Error>())
        .is_some_and(is_ca_as_end_entity);
    if refused {
        " (the server's certificate is a CA certificate, CA:TRUE, used as its own, as \
         `openssl req -x509` makes them: trusted only when --ssl-ca-cert or SSL_CERT_FILE \
         holds this very certificate; docs/tls.md)"
    } else {
        ""
    }
}

impl ServerCertVerifier for CaFileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let e = match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        if !(is_ca_as_end_entity(&e) && self.pinned.iter().any(|c| c == end_entity)) {
            return Err(e);
        }
        let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_name(&cert, server_name)?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
