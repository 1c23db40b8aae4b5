//! `--log-level`, `-v`/`-vv`: which of inferbench's own stderr lines print. Info lines (the
//! run, its cells, its artifacts, the client's load) print at INFO and below, notes at
//! NOTICE and below, warnings at WARNING and below; errors always. inferbench has no lines
//! below INFO, so DEBUG and TRACE print what INFO prints. Progress is the UI's (`--ui`).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Index into `cli::LOG_LEVELS` (2 = INFO, the default).
static LEVEL: AtomicUsize = AtomicUsize::new(2);

pub fn set(level: usize) {
    LEVEL.store(level, Ordering::Relaxed);
}

fn at_most(level: usize) -> bool {
    LEVEL.load(Ordering::Relaxed) <= level
}

/// INFO lines.
pub fn info() -> bool {
    at_most(2)
}

/// `note:` lines (NOTICE).
pub fn notes() -> bool {
    at_most(3)
}

/// `warning:` lines (WARNING).
pub fn warnings() -> bool {
    at_most(5)
}
