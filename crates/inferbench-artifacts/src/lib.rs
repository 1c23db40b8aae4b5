//! Artifact writers of inferbench: the evidence file (our own, append-only), the
//! AIPerf 0.13-compatible exports (`profile_export*.jsonl`, `profile_export_aiperf.{json,csv}`,
//! console table, `inputs.json`, `.aiperf_results_ready.json`) and the run manifest.
//!
//! Every writer takes data and a directory (or a `Write`) and returns
//! `Result<_, ArtifactError>`; errors name the file. Nothing here prints. Summary files are
//! written to a temporary name and renamed, so a file that exists is complete. See
//! `docs/file-formats.md` for every file's shape and how it differs from AIPerf.

pub mod aggregate;
mod atomic;
mod block;
pub mod console;
mod error;
pub mod evidence;
pub mod evidence_file;
mod evidence_line;
pub mod genai_perf_export;
pub mod http_trace;
pub mod input_config;
mod json_out;
mod names;
pub mod outputs_json;
pub mod phases;
pub mod raw;
pub mod records;
pub mod run;
pub mod small;
pub mod summary_csv;
pub mod summary_json;
pub mod timeslices;

pub use atomic::AtomicFile;
pub use console::render_console;
pub use error::ArtifactError;
pub use evidence::{EvidenceCompression, EvidenceWriter, read_evidence};
pub use evidence_file::{evidence_file_in, has_evidence, open_evidence};
pub use names::{FileNames, file_names};
pub use raw::{render_raw_line, write_raw_jsonl};
pub use records::{PhaseIndices, render_record_line, write_records_jsonl};
pub use run::{
    ExportStatus, RecordExportStream, RunArtifacts, SummaryArtifacts, Written, write_run_artifacts,
    write_summary_artifacts,
};
pub use small::{write_inputs_json, write_manifest, write_results_ready};
pub use summary_csv::{format_2f, render_summary_csv, write_summary_csv};
pub use summary_json::{
    AiperfSummaryInfo, RunConfig, SummaryInfo, render_aiperf_summary, render_summary_json,
    write_aiperf_summary, write_summary_json,
};

pub type Result<T, E = ArtifactError> = std::result::Result<T, E>;
