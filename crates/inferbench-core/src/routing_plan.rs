//! Several endpoints and several models: which request goes where (`--url` repeated, `--url-strategy`, `--model-selection-strategy`).

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RoutingPlan {}
