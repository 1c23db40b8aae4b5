use std::net::SocketAddr;

use inferbench_core::tls_plan::{TlsFile, TlsPlan, Trust, Verification};
use inferbench_sim::{SimConfig, SimServer, SimTls};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

use super::*;
use crate::transport::{Target, connect};

/// A CA and, signed by it, a server leaf for `names` and a client leaf.
struct Pki {
    ca_pem: String,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
}

fn pki(names: &[&str]) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // A name of its own: two CAs of one name would make the other's leaf a bad signature
    // rather than an unknown issuer.
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, format!("inferbench test CA {n}"));
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf = |names: Vec<String>| {
        let k = KeyPair::generate().unwrap();
        let c = CertificateParams::new(names)
            .unwrap()
            .signed_by(&k, &issuer)
            .unwrap();
        (c.pem(), k.serialize_pem())
    };
    let (server_cert, server_key) = leaf(names.iter().map(|s| s.to_string()).collect());
    let (client_cert, client_key) = leaf(vec!["client".into()]);
    Pki {
        ca_pem: ca_cert.pem(),
        server_cert,
        server_key,
        client_cert,
        client_key,
    }
}

fn file(dir: &std::path::Path, name: &str, text: &str, from: &str) -> TlsFile {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    plan_file(p.to_str().unwrap(), from).unwrap()
}

/// A fresh directory, removed when the guard drops.
fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("inferbench-tls-{name}-"))
        .tempdir()
        .unwrap()
}

fn ca_plan(dir: &std::path::Path, ca_pem: &str) -> TlsPlan {
    TlsPlan {
        trust: Trust::CaFile,
        ca_file: Some(file(dir, "ca.pem", ca_pem, "--ssl-ca-cert")),
        ..TlsPlan::default()
    }
}

async fn server(p: &Pki, client_ca: bool) -> SimServer {
    let tls = SimTls {
        cert_pem: p.server_cert.clone().into_bytes(),
        key_pem: p.server_key.clone().into_bytes(),
        client_ca_pem: client_ca.then(|| p.ca_pem.clone().into_bytes()),
    };
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    SimServer::start_tls(SimConfig::default(), addr, Some(&tls))
        .await
        .unwrap()
}

fn target(host: &str, addr: SocketAddr, cfg: Arc<ClientConfig>) -> Target {
    let uri: hyper::Uri = format!("https://{host}:{}/v1/models", addr.port())
        .parse()
        .unwrap();
    Target::from_uri_tls(&uri, Some(Ok(cfg)))
}

/// GET /v1/models on `c`: the status.
async fn get(c: crate::transport::Conn, t: &Target) -> Result<u16, String> {
    let crate::transport::Conn { mut sender, io, .. } = c;
    tokio::spawn(async move {
        let _ = io.await;
    });
    let req = hyper::Request::get(t.path.clone())
        .header(http::header::HOST, t.host_header.clone())
        .body(crate::transport::TimedBody::empty(crate::Clock::start()))
        .unwrap();
    sender
        .send_request(req)
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| crate::transport::error_chain(&e))
}

#[tokio::test]
async fn https_to_the_simulated_server_with_a_ca_file_times_every_phase() {
    let p = pki(&["localhost", "127.0.0.1"]);
    let dir = tmp("ok");
    let cfg = client_config(&ca_plan(dir.path(), &p.ca_pem)).unwrap();
    let s = server(&p, false).await;
    let clock = crate::Clock::start();
    // By name: resolved (timed), then connected, then the handshake, in that order.
    let t = target("localhost", s.local_addr(), cfg.clone());
    let c = connect(&t, clock).await.unwrap();
    let st = c.setup.clone();
    let (ds, de) = (st.dns_start_ns.unwrap(), st.dns_end_ns.unwrap());
    let (ts, te) = (st.tls_start_ns.unwrap(), st.tls_end_ns.unwrap());
    assert!(ds <= de && de <= st.connect_start_ns, "{st:?}");
    assert!(st.connect_start_ns <= st.connect_end_ns && st.connect_end_ns <= ts && ts < te);
    assert_eq!(st.tls_version.as_deref(), Some("TLSv1.3"));
    assert!(
        st.tls_cipher.as_deref().unwrap().starts_with("TLS13_"),
        "{st:?}"
    );
    // The handshake read the socket: the stamp is the TCP read's, under the TLS layer.
    let stamp = c.stamp.clone();
    assert!(stamp.get().is_some_and(|t| t > ts && t <= te), "{stamp:?}");
    assert_eq!(get(c, &t).await.unwrap(), 200);
    assert!(stamp.get().unwrap() > te);
    // By IP address: no resolution, the certificate's IP name verified.
    let t = target("127.0.0.1", s.local_addr(), cfg);
    let c = connect(&t, clock).await.unwrap();
    assert_eq!((c.setup.dns_start_ns, c.setup.dns_end_ns), (None, None));
    assert_eq!(get(c, &t).await.unwrap(), 200);
    s.shutdown().await;
}

#[tokio::test]
async fn verification_fails_on_an_unknown_ca_and_a_wrong_name_unless_disabled() {
    let p = pki(&["localhost"]);
    let other = pki(&["localhost"]);
    let dir = tmp("verify");
    let s = server(&p, false).await;
    let clock = crate::Clock::start();
    let untrusting = client_config(&ca_plan(dir.path(), &other.ca_pem)).unwrap();
    let e = connect(&target("localhost", s.local_addr(), untrusting), clock)
        .await
        .err()
        .unwrap();
    assert!(e.starts_with("TLS handshake with localhost:"), "{e}");
    assert!(
        e.contains("UnknownIssuer") || e.contains("unknown issuer"),
        "{e}"
    );
    // The leaf names localhost only: 127.0.0.1 is a name mismatch.
    let trusting = client_config(&ca_plan(dir.path(), &p.ca_pem)).unwrap();
    let e = connect(&target("127.0.0.1", s.local_addr(), trusting), clock)
        .await
        .err()
        .unwrap();
    assert!(
        e.contains("NotValidForName") || e.contains("not valid for name"),
        "{e}"
    );
    // --insecure: both connect.
    let off = client_config(&TlsPlan {
        verification: Verification::Disabled,
        ..TlsPlan::default()
    })
    .unwrap();
    let t = target("127.0.0.1", s.local_addr(), off);
    let c = connect(&t, clock).await.unwrap();
    assert_eq!(get(c, &t).await.unwrap(), 200);
    s.shutdown().await;
}

#[tokio::test]
async fn mutual_tls_needs_the_client_certificate() {
    let p = pki(&["localhost"]);
    let dir = tmp("mtls");
    let s = server(&p, true).await;
    let clock = crate::Clock::start();
    let mut plan = ca_plan(dir.path(), &p.ca_pem);
    let without = client_config(&plan).unwrap();
    // TLS 1.3: the client's handshake ends before the server checks it; the refusal comes
    // with the first read.
    let t = target("localhost", s.local_addr(), without);
    let refused = match connect(&t, clock).await {
        Err(e) => e,
        Ok(c) => get(c, &t).await.err().unwrap(),
    };
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");
    plan.client_cert = Some(file(dir.path(), "c.pem", &p.client_cert, "--ssl-cert"));
    plan.client_key = Some(file(dir.path(), "k.pem", &p.client_key, "--ssl-key"));
    let t = target("localhost", s.local_addr(), client_config(&plan).unwrap());
    let c = connect(&t, clock).await.unwrap();
    assert_eq!(get(c, &t).await.unwrap(), 200);
    s.shutdown().await;
}

#[test]
fn bad_files_are_one_line_naming_the_flag_and_the_file() {
    let p = pki(&["localhost"]);
    let other = pki(&["localhost"]);
    let dir = tmp("bad");
    let junk = ca_plan(dir.path(), "not a certificate\n");
    let e = client_config(&junk).unwrap_err();
    let path = junk.ca_file.as_ref().unwrap().path.clone();
    assert!(e.starts_with(&format!("--ssl-ca-cert {path}: ")), "{e}");
    assert!(!e.contains('\n'));
    // A key that is not the certificate's.
    let plan = TlsPlan {
        client_cert: Some(file(dir.path(), "c.pem", &p.client_cert, "--ssl-cert")),
        client_key: Some(file(dir.path(), "k.pem", &other.client_key, "--ssl-key")),
        ..TlsPlan::default()
    };
    let e = client_config(&plan).unwrap_err();
    assert!(e.ends_with("the key does not match the certificate"), "{e}");
    assert!(e.contains("--ssl-cert") && e.contains("--ssl-key"), "{e}");
    // A certificate file given as the key.
    let plan = TlsPlan {
        client_key: Some(file(dir.path(), "k2.pem", &p.client_cert, "--ssl-key")),
        ..plan
    };
    let e = client_config(&plan).unwrap_err();
    assert!(
        e.contains("--ssl-key") && e.contains("not a PEM private key"),
        "{e}"
    );
    let e = plan_file("/nonexistent/ca.pem", "SSL_CERT_FILE").unwrap_err();
    assert!(
        e.starts_with("SSL_CERT_FILE /nonexistent/ca.pem: cannot read"),
        "{e}"
    );
}

#[test]
fn plan_files_carry_the_sha256_of_their_bytes() {
    let dir = tmp("sha");
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    let f = file(dir.path(), "abc", "abc", "--ssl-ca-cert");
    assert_eq!(
        f.sha256,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn server_names_and_versions() {
    assert!(matches!(
        server_name("[::1]").unwrap(),
        ServerName::IpAddress(_)
    ));
    assert!(matches!(
        server_name("example.com").unwrap(),
        ServerName::DnsName(_)
    ));
    assert_eq!(version_name(rustls::ProtocolVersion::TLSv1_2), "TLSv1.2");
    // Plain http targets carry no TLS; https ones default to port 443.
    let t = Target::from_uri(&"http://h/x".parse().unwrap());
    assert!(t.tls.is_none() && t.port == 80);
    let t = Target::from_uri(&"https://h/x".parse().unwrap());
    assert!(t.tls.is_some() && t.port == 443);
}

/// A self-signed CA certificate (`CA:TRUE`, as `openssl req -x509` makes them) for `names`,
/// with its key; `expired` makes it a certificate of 2020.
fn self_signed_ca(names: &[&str], expired: bool) -> (String, String) {
    let k = KeyPair::generate().unwrap();
    let mut c =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    c.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    if expired {
        c.not_before = rcgen::date_time_ymd(2020, 1, 1);
        c.not_after = rcgen::date_time_ymd(2020, 12, 31);
    }
    (c.self_signed(&k).unwrap().pem(), k.serialize_pem())
}

async fn serving(cert: &str, key: &str) -> SimServer {
    let tls = SimTls {
        cert_pem: cert.as_bytes().to_vec(),
        key_pem: key.as_bytes().to_vec(),
        client_ca_pem: None,
    };
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    SimServer::start_tls(SimConfig::default(), addr, Some(&tls))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_self_signed_ca_certificate_is_trusted_by_the_ca_file_holding_it() {
    let (cert, key) = self_signed_ca(&["localhost"], false);
    let dir = tmp("self-signed");
    let s = serving(&cert, &key).await;
    let clock = crate::Clock::start();
    // The CA file holds this very certificate: trusted, as OpenSSL and Go trust it.
    let cfg = client_config(&ca_plan(dir.path(), &cert)).unwrap();
    let t = target("localhost", s.local_addr(), cfg.clone());
    let c = connect(&t, clock).await.unwrap();
    assert_eq!(get(c, &t).await.unwrap(), 200);
    // Not a name it gives: refused.
    let e = connect(&target("127.0.0.1", s.local_addr(), cfg), clock)
        .await
        .err()
        .unwrap();
    assert!(
        e.contains("NotValidForName") || e.contains("not valid for name"),
        "{e}"
    );
    // Another self-signed certificate in the CA file: refused, saying what would trust it.
    let (other, _) = self_signed_ca(&["localhost"], false);
    let cfg = client_config(&ca_plan(dir.path(), &other)).unwrap();
    let e = connect(&target("localhost", s.local_addr(), cfg), clock)
        .await
        .err()
        .unwrap();
    assert!(e.contains("CaUsedAsEndEntity"), "{e}");
    assert!(
        e.contains("trusted only when --ssl-ca-cert or SSL_CERT_FILE holds this very certificate"),
        "{e}"
    );
    // The system's trust (no CA file) does not take it either.
    let cfg = client_config(&TlsPlan::default()).unwrap();
    assert!(
        connect(&target("localhost", s.local_addr(), cfg), clock)
            .await
            .is_err()
    );
    s.shutdown().await;
}

#[tokio::test]
async fn an_expired_self_signed_certificate_is_refused_even_when_held() {
    let (cert, key) = self_signed_ca(&["localhost"], true);
    let dir = tmp("self-signed-expired");
    let s = serving(&cert, &key).await;
    let cfg = client_config(&ca_plan(dir.path(), &cert)).unwrap();
    let e = connect(
        &target("localhost", s.local_addr(), cfg),
        crate::Clock::start(),
    )
    .await
    .err()
    .unwrap();
    assert!(e.contains("expired"), "{e}");
    s.shutdown().await;
}
