//! Every integration test of this crate, in one binary.
mod golden;
