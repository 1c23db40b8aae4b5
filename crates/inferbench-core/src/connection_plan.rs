//! How connections are used: `--connection-reuse-strategy`, and the resend of a request whose reused connection died before any response byte.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ConnectionPlan {}
