//! Importer of genai_perf artifact directories (being built).

use std::path::Path;

use crate::{ImportError, ImportedRun};

pub fn import(
    dir: &Path,
    count_tokens: &(dyn Fn(&str) -> u64 + Sync),
) -> Result<ImportedRun, ImportError> {
    let _ = count_tokens;
    Err(ImportError::Unrecognized {
        path: dir.to_path_buf(),
    })
}

/// True when `dir` (or its single run subfolder) holds this tool's artifacts.
pub fn looks_like(dir: &Path) -> bool {
    let _ = dir;
    false
}
