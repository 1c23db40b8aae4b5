//! Every integration test of this crate, in one binary: one link instead of one per file.
mod aggregate;
mod common;
mod fixture_exports;
mod genai_perf_shapes;
mod input_config;
mod props;
mod run_artifacts;
mod sample;
mod schemas;
