//! Every integration test of this crate, in one binary: one link instead of one per file.
mod agentic;
mod answers;
mod baseten;
mod common;
mod corpora;
mod datasets;
mod datasets_errors;
mod traces;
