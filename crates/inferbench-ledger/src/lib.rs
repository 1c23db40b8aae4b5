//! The ledger of baseline epochs (docs/ledger.md): an append-only, hash-chained file of
//! canonical JSON entries (`ledger.jsonl`) that refer to each other by content id, and
//! content-addressed run packets (`packets/sha256-<hex>/`) that hold each run's evidence,
//! summary, grade and, for imports, the original files.
//!
//! Nothing here prints: every command returns data or a rendered `String`.

pub mod bridge;
pub mod comparisons;
pub mod entry;
pub mod epochs;
pub mod gates;
pub mod merge;
pub mod packet;
pub mod runs;
pub mod source;
pub mod store;
pub mod verify;
pub mod view;

pub use entry::{Entry, FORMAT_VERSION, GENESIS, LineError, Stamp, parse_line};
pub use store::{Ledger, append};
