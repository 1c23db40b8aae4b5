//! The shared start: `--start-at T0` (wall time, the reference's clock when one was
//! measured) becomes a deadline on this host's monotonic clock, once, after the clock check;
//! every send time is then T0_mono + offset, so a clock step or slew during the run cannot
//! move the schedule. A shard that reaches T0 later than the tolerance is late: it exits
//! (exit 6) instead of catching up in a burst, and the merge refuses the set.

/// How long to wait from now until T0 (ns; ≤ 0: T0 has passed by that much).
///
/// `t0_ns` is in the reference's clock, `now_local_ns` this host's wall clock and `offset_ns`
/// θ (reference − local; 0 without a reference): T0 in local wall time is `t0 − θ`.
pub fn wait_ns(t0_ns: u64, now_local_ns: u64, offset_ns: i64) -> i128 {
    t0_ns as i128 - offset_ns as i128 - now_local_ns as i128
}

/// Start lag (ns): the actual start, in the reference's clock, minus T0.
pub fn lag_ns(started_local_ns: u64, offset_ns: i64, t0_ns: u64) -> i64 {
    let v = started_local_ns as i128 + offset_ns as i128 - t0_ns as i128;
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Late: the lag exceeds the tolerance (being early is never late: the deadline waits).
pub fn is_late(lag_ns: i64, tolerance_ns: u64) -> bool {
    lag_ns > 0 && lag_ns as u64 > tolerance_ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_clock_ahead_of_the_reference_waits_less_by_its_offset() {
        // T0 = 100 s (reference); local reads 95 s; local is 3 ms ahead (θ = −3 ms): T0 is
        // 100.003 s local, so wait 5.003 s.
        assert_eq!(
            wait_ns(100_000_000_000, 95_000_000_000, -3_000_000),
            5_003_000_000
        );
        // Already 2 s past.
        assert_eq!(wait_ns(100_000_000_000, 102_000_000_000, 0), -2_000_000_000);
    }

    #[test]
    fn late_means_past_the_tolerance() {
        assert!(!is_late(-5_000_000, 50_000_000));
        assert!(!is_late(50_000_000, 50_000_000));
        assert!(is_late(50_000_001, 50_000_000));
        // Started at local 100.06 s with θ = −3 ms: 100.057 s reference, 57 ms late.
        assert_eq!(
            lag_ns(100_060_000_000, -3_000_000, 100_000_000_000),
            57_000_000
        );
    }

    proptest! {
        /// Waiting exactly `wait_ns` from `now` starts at T0 in the reference's clock (lag 0),
        /// whatever the offset; starting `extra` ns later lags by `extra`.
        #[test]
        fn waiting_the_wait_starts_at_t0(
            t0 in 1_000_000_000_000u64..2_000_000_000_000,
            now in 1_000_000_000_000u64..2_000_000_000_000,
            theta in -10_000_000_000i64..10_000_000_000,
            extra in 0u64..1_000_000_000,
            tol in 0u64..1_000_000_000,
        ) {
            let w = wait_ns(t0, now, theta);
            let start = (now as i128 + w.max(0)) as u64 + extra;
            let lag = lag_ns(start, theta, t0);
            if w >= 0 {
                prop_assert_eq!(lag, extra as i64);
            } else {
                prop_assert_eq!(lag as i128, -w + extra as i128);
            }
            prop_assert_eq!(is_late(lag, tol), lag > tol as i64);
        }
    }
}
