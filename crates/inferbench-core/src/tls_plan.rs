//! HTTPS: trust store, CA file, client certificate, verification opt-out (docs/tls.md).
//!
//! What the plan (and so the manifest) says about TLS: which certificates the run trusts, the
//! client certificate it presents, and whether it verifies the server at all. Files appear by
//! path and SHA-256 only: key material never enters the plan.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct TlsPlan {
    /// `"enabled"` (the default) or `"disabled"` (`--insecure`: any certificate is accepted).
    #[serde(default)]
    pub verification: Verification,
    /// Where the trusted roots come from.
    #[serde(default)]
    pub trust: Trust,
    /// The CA bundle (PEM) when `trust` is `ca_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<TlsFile>,
    /// The client certificate chain (PEM) presented for mutual TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<TlsFile>,
    /// The client certificate's private key (PEM): its path and digest, never its contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<TlsFile>,
}

impl TlsPlan {
    pub fn verifies(&self) -> bool {
        self.verification == Verification::Enabled
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    #[default]
    Enabled,
    Disabled,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// The operating system's store (rustls-native-certs); when it holds no certificate,
    /// the Mozilla roots compiled into the binary (webpki-roots).
    #[default]
    System,
    /// Only the certificates of `ca_file` (`--ssl-ca-cert`, else `SSL_CERT_FILE`).
    CaFile,
}

/// A file the TLS set-up reads, as the plan records it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TlsFile {
    pub path: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// Where the path came from: the flag (`--ssl-ca-cert`) or the variable (`SSL_CERT_FILE`).
    pub from: String,
}
