//! Importers: a GenAI-Perf or AIPerf artifact directory becomes inferbench evidence (records
//! with their timelines, as far as the files keep them), so that it can be re-scored under
//! any definition set. An importer keeps all it can and says what it could not recover.

pub mod aiperf;
pub mod genai_perf;
pub mod identity;

use std::path::{Path, PathBuf};

use inferbench_core::Evidence;

/// Which tool wrote an artifact directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceTool {
    GenaiPerf,
    Aiperf,
}

impl SourceTool {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceTool::GenaiPerf => "genai-perf",
            SourceTool::Aiperf => "aiperf",
        }
    }
}

/// An imported run.
#[derive(Clone, Debug)]
pub struct ImportedRun {
    pub tool: SourceTool,
    /// The tool's version as detected from the files (e.g. `0.0.16`, `0.0.12`, `0.13.0`),
    /// or a range when the files cannot tell versions apart (e.g. `0.0.13-0.0.16`).
    pub version: String,
    /// The definition set that reproduces the tool's own summary (e.g. `genai-perf-0.0.13`).
    pub native_definitions: String,
    /// The directory the files were read from (after descending into a single run folder).
    pub dir: PathBuf,
    /// The records, rebuilt from the files, in the tool's order.
    pub evidence: Evidence,
    /// The tool's own summary file, parsed, when present.
    pub original_summary: Option<serde_json::Value>,
    /// What the files do not let us recover, one sentence each (e.g. "exported at records
    /// level: no chunk timeline, so chunk-gap metrics cannot be computed").
    pub losses: Vec<String>,
    /// The pins recovered from the files, each with its file and key; the rest listed as
    /// missing ("not in the artifact").
    pub identity: inferbench_core::identity::Identity,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    /// A file is not what it should be: names the file, where, and what was expected.
    #[error("{path}{}: {message}", location.as_ref().map(|l| format!(":{l}")).unwrap_or_default())]
    Format {
        path: PathBuf,
        /// Line number, or a JSON path such as `experiments[0].requests[3].response_timestamps`.
        location: Option<String>,
        message: String,
    },
    #[error(
        "{path}: not a GenAI-Perf or AIPerf artifact directory (expected profile_export.json, or profile_export.jsonl / profile_export_aiperf.json)"
    )]
    Unrecognized { path: PathBuf },
}

/// Which tool wrote `dir`, if either did (looks one level down for a single run folder too).
pub fn detect(dir: &Path) -> Option<SourceTool> {
    if genai_perf::looks_like(dir) {
        Some(SourceTool::GenaiPerf)
    } else if aiperf::looks_like(dir) {
        Some(SourceTool::Aiperf)
    } else {
        None
    }
}

/// Imports `dir`, written by either tool. `count_tokens` is the tokenizer used to count
/// tokens of texts the files keep (GenAI-Perf keeps response texts but no counts).
pub fn import(
    dir: &Path,
    count_tokens: &(dyn Fn(&str) -> u64 + Sync),
) -> Result<ImportedRun, ImportError> {
    match detect(dir) {
        Some(SourceTool::GenaiPerf) => genai_perf::import(dir, count_tokens),
        Some(SourceTool::Aiperf) => aiperf::import(dir, count_tokens),
        None => Err(ImportError::Unrecognized {
            path: dir.to_path_buf(),
        }),
    }
}

/// The goodput SLOs the imported run was made with, from its own summary's input config, as
/// a `--goodput` value (`"tag:value tag:value"`, display units, the file's order): AIPerf's
/// `slos` (`{tag: bound}`), GenAI-Perf's `goodput` (the same shape), at the top of the
/// input config or one level down. None when the run had none.
pub fn own_goodput(run: &ImportedRun) -> Option<String> {
    let cfg = run.original_summary.as_ref()?.get("input_config")?;
    let key = match run.tool {
        SourceTool::Aiperf => "slos",
        SourceTool::GenaiPerf => "goodput",
    };
    let found = cfg.get(key).filter(|v| v.is_object()).or_else(|| {
        cfg.as_object()?
            .values()
            .find_map(|v| v.get(key).filter(|v| v.is_object()))
    })?;
    let parts: Vec<String> = found
        .as_object()?
        .iter()
        .filter_map(|(tag, v)| v.as_f64().map(|b| format!("{tag}:{b}")))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}
