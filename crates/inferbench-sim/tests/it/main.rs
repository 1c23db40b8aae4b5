//! Every integration test of this crate, in one binary: one link instead of one per file.
mod answers;
mod common;
mod endpoints;
mod media;
mod server;
mod serving;
