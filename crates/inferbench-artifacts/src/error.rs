use std::path::Path;

/// An artifact could not be written or read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: JSON: {source}")]
    Json {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Evidence(#[from] inferbench_core::evidence::EvidenceError),
}

impl ArtifactError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ArtifactError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    pub(crate) fn json(path: &Path, source: serde_json::Error) -> Self {
        // serde_json wraps writer failures; keep them as I/O errors so callers see the cause.
        if source.is_io() {
            let kind = source.io_error_kind().unwrap_or(std::io::ErrorKind::Other);
            return ArtifactError::io(path, std::io::Error::new(kind, source));
        }
        ArtifactError::Json {
            path: path.display().to_string(),
            source,
        }
    }

    /// The file this error is about (empty for evidence parse errors, whose message has it).
    pub fn path(&self) -> &str {
        match self {
            ArtifactError::Io { path, .. } | ArtifactError::Json { path, .. } => path,
            ArtifactError::Evidence(_) => "",
        }
    }
}
