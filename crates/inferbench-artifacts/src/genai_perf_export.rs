//! GenAI-Perf's summary file shapes (being built).
