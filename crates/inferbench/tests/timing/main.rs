//! Tests that judge measured rates (the client-saturation qualification) in a binary of their
//! own: cargo runs test binaries one after another, so these never share the two cores with
//! the rest of the suite, as they would inside `tests/it`.
#[path = "../it/common/mod.rs"]
mod common;
mod qualify;
