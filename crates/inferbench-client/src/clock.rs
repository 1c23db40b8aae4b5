//! The run clock: one monotonic anchor, paired once with the wall clock.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Every timestamp of a run is u64 ns since `anchor`. The wall clock is read once, at the
/// anchor, so that `wall = anchor_unix_ns + t_ns` without ever mixing clocks in the data path.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    anchor: Instant,
    anchor_unix_ns: u64,
}

impl Clock {
    pub fn start() -> Self {
        let anchor = Instant::now();
        let anchor_unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Clock {
            anchor,
            anchor_unix_ns,
        }
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.anchor.elapsed().as_nanos() as u64
    }

    /// The `Instant` at `ns` after the anchor, for absolute deadlines.
    pub fn instant_at(&self, ns: u64) -> Instant {
        self.anchor + Duration::from_nanos(ns)
    }

    pub fn anchor_unix_ns(&self) -> u64 {
        self.anchor_unix_ns
    }

    /// The same anchor, its wall-clock reading shifted by `offset_ns`: a shard's hidden test
    /// flag simulates a host whose clock is off (docs/scale-out.md).
    pub fn with_wall_offset_ns(mut self, offset_ns: i64) -> Self {
        self.anchor_unix_ns = (self.anchor_unix_ns as i128 + offset_ns as i128).max(0) as u64;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_monotonic_and_instant_at_round_trips() {
        let c = Clock::start();
        let a = c.now_ns();
        let b = c.now_ns();
        assert!(b >= a);
        let i = c.instant_at(1_000_000);
        assert_eq!(i.duration_since(c.anchor), Duration::from_millis(1));
        assert!(c.anchor_unix_ns() > 1_600_000_000_000_000_000);
    }
}
