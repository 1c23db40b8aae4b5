//! Every integration test of this crate, in one binary: one link instead of one per file.
mod endpoints;
mod engine;
mod sessions;
