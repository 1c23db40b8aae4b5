//! Command-line flags, with AIPerf's names, aliases and defaults, and their validation into a
//! [`RunPlan`](inferbench_core::plan::RunPlan).
//!
//! - `args` / `profile_args`: the clap schema;
//! - `unbuilt`: AIPerf flags accepted by name only to refuse them clearly;
//! - `values`: header, extra-input and URL parsing, and the redacted command line;
//! - `given`: flags given without the flag that gives them an effect (error or warning);
//! - `limits`: time values bounded to what a `Duration` and the run clock can hold;
//! - `cells`: sweep cells (the magic lists expanded, grid or zip);
//! - `variants`: the cells of `--variant` (a hand-picked sweep);
//! - `plan`: plan building (every value checked, one error naming the flag).

mod aiperf_args;
mod args;
mod bridge_args;
mod cells;
mod chat_args;
mod config_flag;
mod connection_args;
mod controls_args;
mod declare;
mod gate_args;
mod given;
mod limits;
mod load_shape_args;
mod media_args;
mod plan;
mod plan_args;
mod profile_args;
mod qualify_args;
pub(crate) mod replay_args;
mod routing_args;
mod service_args;
mod shard_args;
mod telemetry_args;
mod tls_args;
mod tokenizer_flag;
mod unbuilt;
mod values;
mod variants;

pub use aiperf_args::{ConfigArgs, ConfigCommand, ConfigInitArgs, SweepModeArg, SweepTypeArg};
pub use args::EvidenceCompressionArg;
pub use args::PlotArgs;
pub use args::PlotFormat;
pub use args::ReportArgs;
pub use args::{
    ArrivalArg, Cli, Command, CompareArgs, CompletionsArgs, CrosswalkArgs, EndpointArg,
    ExportLevelArg, GradeArgs, InspectArgs, ManArgs, MetricsArgs, MockServerArgs, UiArg,
};
pub use args::{LedgerArgs, LedgerBaselineCommand, LedgerCommand, LedgerEpochCommand};
#[allow(unused_imports)]
pub use bridge_args::{BridgeArgs, BridgeCommand};
pub use chat_args::ChatArgs;
pub use config_flag::{apply_config, scenario_cells, service_notes};
pub use declare::declarations;
pub use gate_args::GateArgs;
pub use given::check_given;
pub use limits::millis;
pub use plan::{build_plan, cells};
#[allow(unused_imports)]
pub use plan_args::{PlanArgs, PlanCommand};
pub use qualify_args::QualifyArgs;
pub use service_args::log_settings;
pub use shard_args::{
    KubeArgs, KubeCollectArgs, KubeCommand, KubeRenderArgs, MergeArgs, TimeServerArgs,
};
pub use tls_args::tls_plan;
pub use values::one_authorization;
// The rest of the cli's interface, for callers outside this binary's current modules (the
// run pipeline moving to its own crate, tests); unused here for now.
#[allow(unused_imports)]
pub use plan::{CellValues, DEFAULT_ARTIFACT_DIR, SIM_MODEL, endpoint_type};
pub use profile_args::ProfileArgs;
#[allow(unused_imports)]
pub use unbuilt::UNBUILT_FLAGS;
pub use unbuilt::{check_unbuilt, command_with_unbuilt, refusal};
pub use values::{
    normalize_url, parse_extra_inputs, parse_headers, recorded_command_line, redacted_command_line,
    split_url_credentials, url_and_credentials, utf8_args, without_url_credentials,
};
pub use variants::{VariantCell, variant_cells};

#[cfg(test)]
mod flag_list_tests;
#[cfg(test)]
pub(crate) mod tests;
