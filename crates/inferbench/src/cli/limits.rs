//! Time values from flags: finite, ≥ 0, and small enough for both a `Duration` and the run
//! clock's u64 nanoseconds, so that a large value is one error naming the flag, never a
//! panic in `Duration::from_secs_f64` or an overflowed deadline.

use std::time::Duration;

use inferbench_core::schedule::MAX_OFFSET_NS;

/// The longest time a flag may give, in seconds (about 292 years): the clock's headroom,
/// the same bound as the latest planned send of a rate schedule.
pub const MAX_SECONDS: f64 = MAX_OFFSET_NS as f64 / 1e9;

/// Seconds ≥ 0 (`positive`: > 0), as a `Duration`.
fn checked(flag: &str, v: f64, positive: bool, unit: &str, per_s: f64) -> Result<Duration, String> {
    let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 };
    if !ok {
        let rule = if positive { "> 0" } else { "≥ 0" };
        return Err(format!("{flag} {v}: must be a number {rule}"));
    }
    let max = MAX_SECONDS * per_s;
    if v > max {
        return Err(format!(
            "{flag} {v:?}: too large (at most {} {unit})",
            max.floor()
        ));
    }
    Duration::try_from_secs_f64(v / per_s).map_err(|e| format!("{flag} {v:?}: {e}"))
}

/// A flag in seconds, ≥ 0.
pub fn seconds(flag: &str, v: f64) -> Result<Duration, String> {
    checked(flag, v, false, "s", 1.0)
}

/// A flag in seconds, > 0.
pub fn positive_seconds(flag: &str, v: f64) -> Result<Duration, String> {
    checked(flag, v, true, "s", 1.0)
}

/// A flag in milliseconds, ≥ 0.
pub fn millis(flag: &str, v: f64) -> Result<Duration, String> {
    checked(flag, v, false, "ms", 1e3)
}

/// A flag in whole milliseconds, whose nanoseconds must fit the clock.
pub fn whole_millis(flag: &str, v: u64) -> Result<u64, String> {
    match v.checked_mul(1_000_000) {
        Some(ns) if ns <= MAX_OFFSET_NS => Ok(v),
        _ => Err(format!(
            "{flag} {v}: too large (at most {} ms)",
            MAX_OFFSET_NS / 1_000_000
        )),
    }
}

/// A request rate whose planned sends fit the clock: `count` requests at `rate` per second
/// (after a ramp of `ramp_s`), or with a duration, up to one gap past it. Without this, a
/// tiny rate plans sends beyond the u64 ns clock.
pub fn rate_fits(
    flag: &str,
    rate: f64,
    count: u64,
    ramp_s: f64,
    duration_s: Option<f64>,
) -> Result<(), String> {
    let span = ramp_s
        + match duration_s {
            Some(d) => d + 1.0 / rate,
            None => count as f64 / rate,
        };
    if span > MAX_SECONDS {
        let what = match duration_s {
            Some(d) => format!("one gap ({:?} s) after a {d:?} s run", 1.0 / rate),
            None => format!("{count} requests over {:?} s", count as f64 / rate),
        };
        return Err(format!(
            "{flag} {rate:?}: too low: {what} would pass the run clock's {} s",
            MAX_SECONDS.floor()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_by_hand() {
        // u64::MAX / 2 ns = 9_223_372_036.854… s.
        assert_eq!(MAX_SECONDS.floor(), 9_223_372_036.0);
        assert_eq!(seconds("--x", 1.5).unwrap(), Duration::from_millis(1500));
        assert_eq!(millis("--x", 20.0).unwrap(), Duration::from_millis(20));
        let e = seconds("--benchmark-duration", 1e300).unwrap_err();
        assert_eq!(
            e,
            "--benchmark-duration 1e300: too large (at most 9223372036 s)"
        );
        let e = millis("--sim-ttft-ms", 1e300).unwrap_err();
        assert_eq!(
            e,
            "--sim-ttft-ms 1e300: too large (at most 9223372036854 ms)"
        );
        assert!(positive_seconds("--x", 0.0).unwrap_err().contains("> 0"));
        assert!(seconds("--x", f64::NAN).is_err());
        assert!(seconds("--x", -1.0).is_err());
        assert!(seconds("--x", 0.0).is_ok());
        assert_eq!(whole_millis("--x", 5).unwrap(), 5);
        assert!(whole_millis("--x", u64::MAX / 1000).is_err());
    }

    #[test]
    fn rates_that_fit() {
        // 10 requests at 1 req/s plan 10 s; at 1e-300 req/s, 1e301 s.
        assert!(rate_fits("--request-rate", 1.0, 10, 0.0, None).is_ok());
        let e = rate_fits("--request-rate", 1e-300, 10, 0.0, None).unwrap_err();
        assert!(e.starts_with("--request-rate 1e-300: too low"), "{e}");
        // 1e-9 req/s: one gap is 1e9 s, inside the clock; 10 gaps are 1e10 s, past it.
        assert!(rate_fits("--request-rate", 1e-9, 1, 0.0, None).is_ok());
        assert!(rate_fits("--request-rate", 1e-9, 10, 0.0, None).is_err());
        assert!(rate_fits("--request-rate", 1e-9, 1000, 0.0, Some(60.0)).is_ok());
        assert!(rate_fits("--request-rate", 1e-10, 1, 0.0, Some(60.0)).is_err());
    }
}
