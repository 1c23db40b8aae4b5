//! HTTPS client set-up (docs/tls.md): the rustls configuration a run's `https://` connections
//! use, built once from the plan's [`TlsPlan`].
//!
//! Trust order: the CA file of the plan (`--ssl-ca-cert`, else `SSL_CERT_FILE`), alone; else
//! the system store (rustls-native-certs); else, when that holds no certificate, the Mozilla
//! roots compiled in (webpki-roots). `verification: disabled` accepts any certificate (the
//! handshake's signatures are still checked, so the peer holds the key it shows).

use std::sync::{Arc, OnceLock, RwLock};

use inferbench_core::tls_plan::{TlsFile, TlsPlan, Trust, Verification};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// The one crypto provider (ring: pure Rust and assembly, no OpenSSL, no cmake).
pub fn provider() -> Arc<CryptoProvider> {
    static P: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    P.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider()))
        .clone()
}

/// A file of the plan, with its SHA-256, read for the plan (`from` says which flag or
/// variable named it). The error names the flag and the file.
pub fn plan_file(path: &str, from: &str) -> Result<TlsFile, String> {
    use sha2::Digest;
    let bytes = std::fs::read(path).map_err(|e| format!("{from} {path}: cannot read: {e}"))?;
    Ok(TlsFile {
        path: path.to_string(),
        sha256: hex::encode(sha2::Sha256::digest(&bytes)),
        from: from.to_string(),
    })
}

/// The client configuration for a plan: trust, client certificate, ALPN `http/1.1`. Every
/// error is one line naming the flag (or variable) and the file.
pub fn client_config(plan: &TlsPlan) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up: {e}"))?;
    let builder = match plan.verification {
        Verification::Disabled => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider()))),
        Verification::Enabled => match (plan.trust, &plan.ca_file) {
            // A CA file also vouches for a self-signed CA certificate it holds, served as
            // the server's own (tls_self_signed.rs).
            (Trust::CaFile, Some(f)) => {
                let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots(plan)?),
                    provider(),
                )
                .build()
                .map_err(|e| format!("{} {}: {e}", f.from, f.path))?;
                let v = crate::tls_self_signed::CaFileVerifier::new(webpki, certificates(f)?);
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(v))
            }
            _ => builder.with_root_certificates(roots(plan)?),
        },
    };
    let mut cfg = match (&plan.client_cert, &plan.client_key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(cert), Some(key)) => {
            let chain = certificates(cert)?;
            let k = PrivateKeyDer::from_pem_file(&key.path).map_err(|e| {
                format!(
                    "{} {}: not a PEM private key (PKCS#8, PKCS#1 or SEC1): {e}",
                    key.from, key.path
                )
            })?;
            builder.with_client_auth_cert(chain, k).map_err(|e| {
                format!(
                    "{} {} / {} {}: {}",
                    cert.from,
                    cert.path,
                    key.from,
                    key.path,
                    match e {
                        rustls::Error::InconsistentKeys(_) =>
                            "the key does not match the certificate".to_string(),
                        e => e.to_string(),
                    }
                )
            })?
        }
        (Some(c), None) => return Err(format!("{} {}: needs --ssl-key", c.from, c.path)),
        (None, Some(k)) => return Err(format!("{} {}: needs --ssl-cert", k.from, k.path)),
    };
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// Parse the plan's files without reading the system store (the trust is checked only when
/// it is a CA file): for checking flags before anything runs.
pub fn check_files(plan: &TlsPlan) -> Result<(), String> {
    let mut p = plan.clone();
    if p.trust == Trust::System {
        // Any trust will do to check the client certificate and key; the system store is
        // read when an https run starts.
        p.verification = Verification::Disabled;
    }
    client_config(&p).map(|_| ())
}

/// The plan of an https run: `SSL_CERT_FILE` (its value given) is the CA file when no
/// `--ssl-ca-cert` was given and verification is on. An empty value is ignored.
pub fn with_env_ca(plan: &TlsPlan, ssl_cert_file: Option<String>) -> Result<TlsPlan, String> {
    let mut p = plan.clone();
    if let Some(path) = ssl_cert_file.filter(|s| !s.is_empty())
        && p.ca_file.is_none()
        && p.verifies()
    {
        p.ca_file = Some(plan_file(&path, "SSL_CERT_FILE")?);
        p.trust = Trust::CaFile;
    }
    Ok(p)
}

/// The PEM certificates of a file: at least one, every one parsed.
fn certificates(f: &TlsFile) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(&f.path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{} {}: not a PEM certificate file: {e}", f.from, f.path))?;
    if certs.is_empty() {
        return Err(format!(
            "{} {}: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file",
            f.from, f.path
        ));
    }
    Ok(certs)
}

fn roots(plan: &TlsPlan) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match (plan.trust, &plan.ca_file) {
        (Trust::CaFile, Some(f)) => {
            for c in certificates(f)? {
                roots
                    .add(c)
                    .map_err(|e| format!("{} {}: not a usable CA: {e}", f.from, f.path))?;
            }
        }
        (Trust::CaFile, None) => return Err("TLS trust ca_file without a CA file".into()),
        (Trust::System, _) => {
            // Unreadable entries of the system store are skipped, as curl and Python do.
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
            if roots.is_empty() {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
        }
    }
    Ok(roots)
}

/// The configuration `https://` targets get from [`crate::transport::Target::from_uri`]:
/// the one the run installed, else the default plan's (system trust, verification on).
pub fn current() -> Result<Arc<ClientConfig>, String> {
    if let Some(c) = INSTALLED.read().ok().and_then(|g| g.clone()) {
        return Ok(c);
    }
    static DEFAULT: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| client_config(&TlsPlan::default()))
        .clone()
}

/// Make `cfg` the configuration of every `https://` target made from a URL from now on. A
/// run installs its plan's before its first connection (the probe included): the probe and
/// the scrapers build their targets from URLs alone, so the configuration cannot travel
/// with them.
pub fn install(cfg: Arc<ClientConfig>) {
    if let Ok(mut g) = INSTALLED.write() {
        *g = Some(cfg);
    }
}

/// [`client_config`] then [`install`]: the run's one call.
pub fn install_plan(plan: &TlsPlan) -> Result<(), String> {
    install(client_config(plan)?);
    Ok(())
}

static INSTALLED: RwLock<Option<Arc<ClientConfig>>> = RwLock::new(None);

/// The name to send (SNI) and verify: a DNS name, or an IP address (brackets of an IPv6
/// literal dropped).
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(h.to_string()).map_err(|e| format!("{host}: not a TLS server name: {e}"))
}

/// `TLSv1.3`, `TLSv1.2`: the spelling of OpenSSL and Python's `ssl`.
pub fn version_name(v: rustls::ProtocolVersion) -> String {
    match v {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".into(),
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".into(),
        other => format!("{other:?}"),
    }
}

/// `--insecure`: every certificate is accepted, whoever it names and whoever signed it. The
/// handshake signatures are still verified with the provider's algorithms.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
