//! HTTPS: trust store, CA file, client certificate, verification opt-out (docs/tls.md).

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct TlsPlan {}
