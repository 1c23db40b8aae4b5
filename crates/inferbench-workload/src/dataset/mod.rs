//! Datasets read from files, and synthetic extras (being built).
