//! `profile` flags: HTTPS flags (docs/tls.md), and their checks.
//!
//! AIPerf 0.13 has no TLS flags (only its `AIPERF_HTTP_SSL_VERIFY` variable): the names are
//! ours, after Python's and curl's wording.

use clap::Args;
use inferbench_core::tls_plan::{TlsPlan, Trust, Verification};

#[derive(Args, Debug, Clone, Default)]
pub struct TlsArgs {
    /// Trust only the CA certificates of this PEM file for https:// URLs (default:
    /// $SSL_CERT_FILE when set, else the system store).
    #[arg(long = "ssl-ca-cert", value_name = "FILE")]
    pub ssl_ca_cert: Option<String>,
    /// Client certificate chain (PEM) for mutual TLS; needs --ssl-key.
    #[arg(long = "ssl-cert", value_name = "FILE")]
    pub ssl_cert: Option<String>,
    /// Private key (PEM) of --ssl-cert.
    #[arg(long = "ssl-key", value_name = "FILE")]
    pub ssl_key: Option<String>,
    /// Do NOT verify the server's certificate (any name, any issuer). Marked in the manifest
    /// (`tls.verification: "disabled"`) and warned about on stderr.
    #[arg(long = "insecure")]
    pub insecure: bool,
}

/// The plan these flags give (every value checked; an error names the flag). The flags'
/// files are read (their digest goes into the plan) and parsed now, so that a bad one is an
/// input error before anything runs. `SSL_CERT_FILE` and the system store are read only when
/// an https run starts ([`inferbench_client::tls::with_env_ca`]): a plain-http run never
/// depends on them.
pub fn tls_plan(a: &TlsArgs) -> Result<TlsPlan, String> {
    use inferbench_client::tls::plan_file;
    if a.insecure && a.ssl_ca_cert.is_some() {
        return Err("--insecure with --ssl-ca-cert: verification is either off or against the CA file, not both".into());
    }
    let mut plan = TlsPlan::default();
    if a.insecure {
        plan.verification = Verification::Disabled;
    }
    if let Some(p) = &a.ssl_ca_cert {
        plan.trust = Trust::CaFile;
        plan.ca_file = Some(plan_file(p, "--ssl-ca-cert")?);
    }
    plan.client_cert = a
        .ssl_cert
        .as_deref()
        .map(|p| plan_file(p, "--ssl-cert"))
        .transpose()?;
    plan.client_key = a
        .ssl_key
        .as_deref()
        .map(|p| plan_file(p, "--ssl-key"))
        .transpose()?;
    if plan.ca_file.is_some() || plan.client_cert.is_some() || plan.client_key.is_some() {
        inferbench_client::tls::check_files(&plan)?;
    }
    Ok(plan)
}
