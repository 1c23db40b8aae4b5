//! Core types of inferbench: the record (raw evidence of one request), the evidence file
//! lines, the run plan, the manifest, the frozen workload and metric results. No I/O here.

pub mod canonical;
pub mod connection_plan;
pub mod controls_plan;
pub mod dataset_plan;
pub mod endpoint_plan;
pub mod endpoint_type;
pub mod endpoint_url;
pub mod evidence;
pub mod grade;
pub mod identity;
pub mod inputs_json;
pub mod manifest;
pub mod media;
pub mod media_plan;
pub mod plan;
pub mod py;
pub mod rate_series;
pub mod record;
pub mod replay_plan;
pub mod routing_plan;
pub mod schedule;
pub mod seed;
pub mod shard;
pub mod summary;
pub mod time;
pub mod tls_plan;
pub mod workload;

pub use evidence::{Evidence, EvidenceEnd, EvidenceHeader, EvidenceLine, PhaseWindow, StopReason};
pub use plan::RunPlan;
pub use record::{ErrorKind, Event, EventKind, Frame, Phase, Record, RecordError, TokenCounts};
pub use summary::{MetricResult, MetricValue, Stats, Summary};

/// This tool's name and version, as written into artifacts.
pub const TOOL_NAME: &str = "inferbench";
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
