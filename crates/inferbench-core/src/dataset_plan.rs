//! What the dataset of a run is: synthetic (the default) or read from a file, and how it is
//! sampled. Filled from AIPerf's dataset and prompt flags; see `docs/workload.md`.

use serde::{Deserialize, Serialize};

/// Dataset options beyond the basic synthetic ISL/OSL (those stay on [`crate::RunPlan`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DatasetPlan {
    /// `--input-file`: a file or directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_file: Option<String>,
    /// `--custom-dataset-type`, e.g. `single_turn`, `mooncake_trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_dataset_type: Option<String>,
    /// `--dataset-sampling-strategy` (None: the loader's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_strategy: Option<String>,
}
