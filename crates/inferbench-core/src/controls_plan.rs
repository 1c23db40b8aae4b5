//! Server controls and extra exports AIPerf users rely on: `--wait-for-model-timeout`, `--reset-kv-cache`, `--session-header`, `--export-outputs-json`, `--per-chunk-usage`, `--apply-chat-template`.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ControlsPlan {}
