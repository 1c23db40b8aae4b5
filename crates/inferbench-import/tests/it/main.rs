//! Every integration test of this crate, in one binary: one link instead of one per file.
mod aiperf_import;
mod aiperf_parity;
mod aiperf_prop;
mod genai_perf_format;
mod genai_perf_parity;
mod identity;
