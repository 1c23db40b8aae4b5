//! Every integration test of this crate, in one binary: one link instead of one per file.
mod by_hand;
mod confidence;
mod fixtures;
mod genai_perf_by_hand;
mod mlperf;
mod per_chunk;
mod stats_prop;
mod sweepline;
mod vllm_bench;
