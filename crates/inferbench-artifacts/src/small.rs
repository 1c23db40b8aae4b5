//! The small files: `inputs.json`, `.aiperf_results_ready.json` and the run manifest.

use std::path::{Path, PathBuf};

use inferbench_core::manifest::{MANIFEST_FILE, Manifest};
use serde::Serialize;

use crate::atomic::write_atomic;
use crate::{ArtifactError, Result};

/// `inputs.json` as built by the workload crate (`{"data":[{"session_id", "payloads"}]}`),
/// pretty-printed with a 2-space indent and no final newline, like AIPerf's.
pub fn write_inputs_json(dir: &Path, inputs: &serde_json::Value) -> Result<PathBuf> {
    let path = dir.join("inputs.json");
    let bytes = serde_json::to_vec_pretty(inputs).map_err(|e| ArtifactError::json(&path, e))?;
    write_atomic(dir, "inputs.json", &bytes)
}

#[derive(Serialize)]
struct Ready {
    ready: bool,
    was_cancelled: bool,
    partial: bool,
}

/// `.aiperf_results_ready.json`: `{"ready":true,"was_cancelled":B,"partial":B}`. Write it
/// last: its presence says every other file of the run is complete.
pub fn write_results_ready(dir: &Path, was_cancelled: bool, partial: bool) -> Result<PathBuf> {
    let bytes = serde_json::to_vec(&Ready {
        ready: true,
        was_cancelled,
        partial,
    })
    .expect("a plain struct serializes");
    write_atomic(dir, ".aiperf_results_ready.json", &bytes)
}

/// `inferbench_manifest.json`, pretty-printed with a final newline.
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<PathBuf> {
    let path = dir.join(MANIFEST_FILE);
    let mut bytes =
        serde_json::to_vec_pretty(manifest).map_err(|e| ArtifactError::json(&path, e))?;
    bytes.push(b'\n');
    write_atomic(dir, MANIFEST_FILE, &bytes)
}
