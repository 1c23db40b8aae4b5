//! HTTPS end to end (docs/tls.md): `profile` against `mock-server --tls-cert --tls-key`, with
//! a CA and leaves generated here.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

use crate::common::{bin, evidence_records, read_json, run, stderr, tmpdir, wait_bounded};

/// PEM files in `dir`: `ca.pem`, the server's `server.pem`/`server.key` (for `localhost` and
/// 127.0.0.1) and the client's `client.pem`/`client.key`, all signed by that CA.
fn pki(dir: &Path) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "inferbench test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    for (name, sans) in [
        (
            "server",
            vec!["localhost".to_string(), "127.0.0.1".to_string()],
        ),
        ("client", vec!["client".to_string()]),
    ] {
        let k = KeyPair::generate().unwrap();
        let c = CertificateParams::new(sans)
            .unwrap()
            .signed_by(&k, &issuer)
            .unwrap();
        std::fs::write(dir.join(format!("{name}.pem")), c.pem()).unwrap();
        std::fs::write(dir.join(format!("{name}.key")), k.serialize_pem()).unwrap();
    }
}

/// `mock-server` over TLS on 127.0.0.1:0; its `https://` URL, read from its first line.
struct TlsServer {
    child: Child,
    port: u16,
}

impl TlsServer {
    fn start(dir: &Path, extra: &[&str]) -> TlsServer {
        let p = |f: &str| dir.join(f).to_str().unwrap().to_string();
        let mut child = bin()
            .args(["mock-server", "--port", "0", "--fast"])
            .args([
                "--tls-cert",
                &p("server.pem"),
                "--tls-key",
                &p("server.key"),
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mock-server");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next().expect("a first line").expect("utf-8");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .unwrap_or_else(|| panic!("no https URL in {line:?}"));
        let port = url.rsplit(':').next().unwrap().parse().unwrap();
        std::thread::spawn(move || for _ in lines {});
        TlsServer { child, port }
    }

    fn url(&self, host: &str) -> String {
        format!("https://{host}:{}", self.port)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn profile(url: &str, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = bin();
    c.args(["profile", "-m", "mock-model", "-u", url, "--streaming"])
        .args(["--concurrency", "2", "--request-count", "6"])
        .args(["--isl", "8", "--osl", "4", "--ui", "none"])
        .args(["--artifact-dir", out.to_str().unwrap()])
        .args(extra)
        .env_remove("SSL_CERT_FILE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("spawn profile");
    wait_bounded(&mut child, std::time::Duration::from_secs(120));
    child.wait_with_output().expect("output")
}

fn setup(name: &str) -> (PathBuf, TlsServer) {
    let dir = tmpdir(name);
    pki(&dir);
    let s = TlsServer::start(&dir, &[]);
    (dir, s)
}

fn path(dir: &Path, f: &str) -> String {
    dir.join(f).to_str().unwrap().to_string()
}

#[test]
fn profile_over_https_with_a_ca_file_records_the_handshake() {
    let (dir, s) = setup("tls-ca");
    let out = dir.join("run");
    let ca = path(&dir, "ca.pem");
    let o = profile(&s.url("localhost"), &out, &["--ssl-ca-cert", &ca], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = evidence_records(&out);
    assert_eq!(recs.len(), 6);
    assert!(recs.iter().all(|r| r.get("error").is_none()), "{recs:?}");
    // Two connections (concurrency 2), each set up by the request that opened it.
    let opened: Vec<_> = recs
        .iter()
        .filter(|r| r["connection"]["tls_start_ns"].is_u64())
        .collect();
    assert_eq!(opened.len(), 2, "{recs:?}");
    for r in opened {
        let c = &r["connection"];
        let t = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k} in {c}"));
        let order = [
            t("dns_start_ns"),
            t("dns_end_ns"),
            t("connect_start_ns"),
            t("connect_end_ns"),
            t("tls_start_ns"),
            t("tls_end_ns"),
            r["sent_ns"].as_u64().unwrap(),
        ];
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{c} sent {order:?}");
        assert!(t("tls_start_ns") < t("tls_end_ns"));
        assert!(r["start_ns"].as_u64().unwrap() <= t("dns_start_ns"));
        assert_eq!(c["tls_version"], "TLSv1.3");
    }
    // The plan names the CA file by path and digest; verification is on.
    let m = read_json(&out.join("inferbench_manifest.json"));
    let tls = &m["plan"]["tls"];
    assert_eq!(tls["verification"], "enabled");
    assert_eq!(tls["trust"], "ca_file");
    assert_eq!(tls["ca_file"]["path"], ca.as_str());
    assert_eq!(tls["ca_file"]["from"], "--ssl-ca-cert");
    assert_eq!(tls["ca_file"]["sha256"].as_str().unwrap().len(), 64);
    assert!(!stderr(&o).contains("NOT verified"));
}

#[test]
fn ssl_cert_file_is_trusted_and_an_ip_address_is_verified() {
    let (dir, s) = setup("tls-env");
    let out = dir.join("run");
    let ca = path(&dir, "ca.pem");
    let o = profile(&s.url("127.0.0.1"), &out, &[], &[("SSL_CERT_FILE", &ca)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(evidence_records(&out).len(), 6);
    let m = read_json(&out.join("inferbench_manifest.json"));
    assert_eq!(m["plan"]["tls"]["ca_file"]["from"], "SSL_CERT_FILE");
    // By IP address there is no name to resolve.
    let rec = evidence_records(&out)
        .into_iter()
        .find(|r| r["connection"]["tls_end_ns"].is_u64())
        .unwrap();
    assert!(rec["connection"].get("dns_start_ns").is_none(), "{rec}");
}

#[test]
fn an_untrusted_server_fails_in_one_line_before_any_artifact() {
    let (dir, s) = setup("tls-untrusted");
    let out = dir.join("run");
    // The system store does not hold the test CA.
    let o = profile(&s.url("localhost"), &out, &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("TLS handshake with localhost:"), "{e}");
    assert!(
        e.contains("UnknownIssuer") || e.contains("unknown issuer"),
        "{e}"
    );
    assert!(!out.join("inferbench_manifest.json").exists());
    assert!(!out.join("profile_export_aiperf.json").exists());
}

#[test]
fn insecure_connects_anyway_and_says_so() {
    let (dir, s) = setup("tls-insecure");
    let out = dir.join("run");
    let o = profile(&s.url("localhost"), &out, &["--insecure"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warnings: Vec<_> = stderr(&o)
        .lines()
        .filter(|l| l.contains("warning: --insecure: TLS certificates are NOT verified"))
        .map(str::to_string)
        .collect();
    assert_eq!(warnings.len(), 1, "{}", stderr(&o));
    let m = read_json(&out.join("inferbench_manifest.json"));
    assert_eq!(m["plan"]["tls"]["verification"], "disabled");
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let dir = tmpdir("tls-mutual");
    pki(&dir);
    let s = TlsServer::start(&dir, &["--tls-client-ca", &path(&dir, "ca.pem")]);
    let ca = path(&dir, "ca.pem");
    // Without a client certificate: refused, and the run says why.
    let out = dir.join("without");
    let o = profile(&s.url("localhost"), &out, &["--ssl-ca-cert", &ca], &[]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).to_lowercase().contains("certificate"),
        "{}",
        stderr(&o)
    );
    // With it: every request answered; the key's path and digest are recorded, not the key.
    let out = dir.join("with");
    let (cert, key) = (path(&dir, "client.pem"), path(&dir, "client.key"));
    let o = profile(
        &s.url("localhost"),
        &out,
        &["--ssl-ca-cert", &ca, "--ssl-cert", &cert, "--ssl-key", &key],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(evidence_records(&out).len(), 6);
    let m = read_json(&out.join("inferbench_manifest.json"));
    assert_eq!(m["plan"]["tls"]["client_key"]["path"], key.as_str());
    let key_pem = std::fs::read_to_string(&key).unwrap();
    let body = key_pem.lines().nth(1).unwrap();
    for f in std::fs::read_dir(&out).unwrap() {
        let text = std::fs::read(f.unwrap().path()).unwrap();
        assert!(!String::from_utf8_lossy(&text).contains(body));
    }
}

#[test]
fn bad_tls_files_are_input_errors_naming_the_file() {
    let dir = tmpdir("tls-bad");
    pki(&dir);
    let junk = dir.join("junk.pem");
    std::fs::write(&junk, "hello\n").unwrap();
    let junk = junk.to_str().unwrap();
    let url = "https://127.0.0.1:9";
    let out = dir.join("run");
    let o = profile(url, &out, &["--ssl-ca-cert", junk], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("--ssl-ca-cert {junk}:")), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // A key that is not the certificate's.
    let (cert, key) = (path(&dir, "client.pem"), path(&dir, "server.key"));
    let o = profile(url, &out, &["--ssl-cert", &cert, "--ssl-key", &key], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("the key does not match the certificate"));
    // SSL_CERT_FILE that does not parse.
    let o = profile(url, &out, &[], &[("SSL_CERT_FILE", junk)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("SSL_CERT_FILE {junk}:")));
    // Verification off and a CA: contradictory.
    let ca = path(&dir, "ca.pem");
    let o = profile(url, &out, &["--insecure", "--ssl-ca-cert", &ca], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // An unreachable TLS host: exit 1, one line naming it.
    let o = profile(url, &out, &["--ssl-ca-cert", &ca], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("127.0.0.1:9"), "{}", stderr(&o));
    assert!(!out.join("inferbench_manifest.json").exists());
    // The server's own flags are checked too.
    let o = run(&[
        "mock-server",
        "--port",
        "0",
        "--tls-cert",
        &path(&dir, "server.pem"),
        "--tls-key",
        &path(&dir, "client.key"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--tls-cert"), "{}", stderr(&o));
}
