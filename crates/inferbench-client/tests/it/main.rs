//! Every integration test of this crate, in one binary: one link instead of one per file.
mod endpoints;
mod engine;
mod h1_wire;
mod sessions;
