//! Definition set module: vllm_bench (being built).
